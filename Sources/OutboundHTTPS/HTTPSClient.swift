import CCurlLoader
import FoundationEssentials

/// A small blocking HTTPS client on libcurl, for every request a Gatehouse
/// process makes: the resource servers' JWKS fetch, gatehouse-login's calls,
/// and the issuer's outbound calls (upstream providers, back-channel logout,
/// a client's `jwks_uri`). One transfer per call, no connection kept.
///
/// The rules, the same for every caller:
/// - https only, for the URL and anything libcurl might be sent on to
///   (CURLOPT_PROTOCOLS_STR and CURLOPT_REDIR_PROTOCOLS_STR): never
///   plain http (loopback included), file://, smtp:// or any other scheme;
/// - the certificate verified, with its host name, against `trust`;
///   TLS 1.2 or later;
/// - no redirect followed: a 3xx is returned like any other status;
/// - the whole exchange bounded by `timeout` (10 s by default), the
///   connection by `connectTimeout`;
/// - at most `maximumResponseBytes` of headers and body together;
/// - no proxy, whatever `https_proxy` or `all_proxy` say: an outbound call
///   goes straight to its host, so a variable inherited from a shell can
///   neither reroute nor break it;
/// - no decompression, cookies, .netrc or authentication of libcurl's own.
///
/// Whatever the status, the reply comes back: a 4xx with an OAuth error
/// body is an answer, not a failure. Throws `HTTPSClientError` only when
/// there is no complete reply. Thread-safe: each call has its own handle.
public struct HTTPSClient: Sendable {
    public var trust: OutboundTrust
    /// Longest the whole exchange may take: resolve, connect, TLS, request, reply.
    public var timeout: Double
    /// Longest the resolution, TCP and TLS handshakes may take.
    public var connectTimeout: Double
    /// Header and body bytes together.
    public var maximumResponseBytes: Int
    public var userAgent: String
    /// Unload libcurl once no transfer holds it (see `CurlLibrary`): for
    /// processes that call rarely and must stay small.
    public var unloadsLibraryWhenIdle: Bool

    public init(trust: OutboundTrust, timeout: Double = 10, connectTimeout: Double = 5, maximumResponseBytes: Int = 1024 * 1024,
                userAgent: String = "gatehouse", unloadsLibraryWhenIdle: Bool = false) {
        self.trust = trust
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.maximumResponseBytes = maximumResponseBytes
        self.userAgent = userAgent
        self.unloadsLibraryWhenIdle = unloadsLibraryWhenIdle
    }

    public func get(_ url: String, headers: [(name: String, value: String)] = []) throws -> HTTPSResponse {
        try send(HTTPSRequest(url: url, headers: headers))
    }

    public func postForm(_ url: String, _ fields: [(String, String)], headers: [(name: String, value: String)] = []) throws -> HTTPSResponse {
        try send(.form(url, fields, headers: headers))
    }

    public func send(_ request: HTTPSRequest) throws -> HTTPSResponse {
        // Checked before libcurl is even loaded: a bad URL, header or CA file
        // is this side's mistake and says so without touching the network.
        let url = try HTTPSURL(request.url)
        let headerLines = try request.headerLines()
        let extraCAs = try trust.extraCertificates()
        return try CurlLibrary.withLoaded(unloadWhenIdle: unloadsLibraryWhenIdle) {
            let transfer = try CurlTransfer(responseLimit: maximumResponseBytes)
            try configure(transfer, url: url)
            try applyTrust(to: transfer, extraCAs: extraCAs)
            try setMethod(of: transfer, request)
            try transfer.setHeaders(headerLines)
            if let failure = transfer.perform() {
                throw Self.error(failure.code, text: failure.text, overLimit: transfer.collector.overLimit, limit: maximumResponseBytes)
            }
            let status = transfer.responseCode()
            guard (100...599).contains(status) else { throw HTTPSClientError(.malformedResponse, detail: "status \(status)") }
            return HTTPSResponse(status: status, headers: transfer.collector.headers, body: transfer.collector.body)
        }
    }

    private func configure(_ transfer: CurlTransfer, url: HTTPSURL) throws {
        try transfer.set(CURLOPT_URL, url.text)
        try transfer.set(CURLOPT_PROTOCOLS_STR, "https")
        try transfer.set(CURLOPT_REDIR_PROTOCOLS_STR, "https")
        try transfer.set(CURLOPT_FOLLOWLOCATION, 0)
        // "" turns proxies off, environment variables included.
        try transfer.set(CURLOPT_PROXY, "")
        // No signals (SIGALRM for resolver timeouts) in a threaded process.
        try transfer.set(CURLOPT_NOSIGNAL, 1)
        try transfer.set(CURLOPT_TIMEOUT_MS, Self.milliseconds(timeout))
        try transfer.set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(min(connectTimeout, timeout)))
        try transfer.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        try transfer.set(CURLOPT_USERAGENT, userAgent)
        // Refused from the announced length; the collector stops a body that announced none.
        try transfer.set(CURLOPT_MAXFILESIZE_LARGE, limit: maximumResponseBytes)
    }

    /// RFC 9110 §4.3.4 / RFC 6125: the certificate must chain to a trusted CA
    /// and name the host asked for.
    private func applyTrust(to transfer: CurlTransfer, extraCAs: [UInt8]?) throws {
        try transfer.set(CURLOPT_SSL_VERIFYPEER, 1)
        try transfer.set(CURLOPT_SSL_VERIFYHOST, 2)
        try transfer.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        guard var bundle = extraCAs else { return }  // libcurl's defaults: the system's store
        if trust.systemStore {
            // CURLOPT_CAINFO_BLOB takes the place of libcurl's CA file (the
            // system bundle) but not of its CA directory (Debian's
            // /etc/ssl/certs), which keeps the system's CAs. A libcurl built
            // without a directory gets the bundle's text in the blob instead.
            if transfer.info(CURLINFO_CAPATH) == nil, let file = transfer.info(CURLINFO_CAINFO),
               let system = FileManager.default.contents(atPath: file) {
                bundle = [UInt8](system) + [10] + bundle
            }
        } else {
            try transfer.set(CURLOPT_CAPATH, nil)
            try transfer.set(CURLOPT_CAINFO, nil)
        }
        try transfer.set(CURLOPT_CAINFO_BLOB, copying: bundle)
    }

    private func setMethod(of transfer: CurlTransfer, _ request: HTTPSRequest) throws {
        switch request.method {
        case "GET" where request.body.isEmpty:
            try transfer.set(CURLOPT_HTTPGET, 1)
        case "HEAD" where request.body.isEmpty:
            try transfer.set(CURLOPT_NOBODY, 1)
        case "POST":
            try transfer.set(CURLOPT_POST, 1)
            try transfer.setBody(request.body)
        default:
            try transfer.set(CURLOPT_CUSTOMREQUEST, request.method)
            if !request.body.isEmpty { try transfer.setBody(request.body) }
        }
    }

    private static func milliseconds(_ seconds: Double) -> Int { max(1, Int((seconds * 1000).rounded(.up))) }

    /// libcurl's outcome in the client's few codes; the text stays for logs.
    static func error(_ code: CURLcode, text: String, overLimit: Bool, limit: Int) -> HTTPSClientError {
        if overLimit || code == CURLE_FILESIZE_EXCEEDED {
            return HTTPSClientError(.responseTooLarge, detail: "over \(limit) bytes")
        }
        let kind: HTTPSClientError.Code = switch code {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: .invalidURL
        case CURLE_COULDNT_RESOLVE_HOST: .resolve
        case CURLE_COULDNT_CONNECT: .connect
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_PEER_FAILED_VERIFICATION: .certificate
        case CURLE_SSL_CACERT_BADFILE: .caFile
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER: .tls
        case CURLE_WEIRD_SERVER_REPLY, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_BAD_CONTENT_ENCODING: .malformedResponse
        default: .io
        }
        return HTTPSClientError(kind, detail: text)
    }
}
