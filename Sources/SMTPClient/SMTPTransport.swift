import CCurl
import FoundationEssentials
import SSOCore

/// Sends one message at a time to one SMTP server through libcurl
/// (`GATEHOUSE_SMTP_URL`; see `SMTPServerURL`). Each delivery is its own
/// connection on its own easy handle: the sender delivers a few messages
/// a minute, and a fresh handle carries no state from a failed attempt.
///
/// TLS: implicit for smtps; for smtp, STARTTLS is required
/// (`CURLUSESSL_ALL`) unless the server is on loopback, where it is used
/// when offered (`CURLUSESSL_TRY`). TLS 1.2 or later, the peer's
/// certificate and name verified against the system store and, when
/// given, more CA files (`GATEHOUSE_CA_FILE`, the development layout's
/// local CA: see `TrustedCAFiles`).
///
/// Blocking: connect within 10 s, the whole exchange within 30 s.
public struct SMTPTransport: Sendable, CustomStringConvertible {
    public let server: SMTPServerURL
    /// PEM files of CAs trusted besides the system store; empty: the system store alone.
    public let caFiles: [String]
    public var connectTimeoutSeconds = 10
    public var totalTimeoutSeconds = 30

    /// - Throws: `SMTPServerURL.Invalid` when `url` is not a usable SMTP URL.
    public init(url: String, caFile: String? = nil) throws {
        try self.init(url: url, caFiles: caFile.map { [$0] } ?? [])
    }

    /// - Throws: `SMTPServerURL.Invalid` when `url` is not a usable SMTP URL.
    public init(url: String, caFiles: [String]) throws {
        server = try SMTPServerURL(url)
        self.caFiles = caFiles
    }

    /// `SMTPTransport(smtp://host:587, STARTTLS required, with credentials)`: log-safe.
    public var description: String {
        "SMTPTransport(\(server), \(server.security.rawValue)\(server.hasCredentials ? ", with credentials" : ""))"
    }

    /// Envelope: MAIL FROM the message's From address, RCPT TO its To
    /// address (one recipient); the data is `message.serialized()`.
    /// Never throws: every outcome is a `MailDelivery`.
    public func deliver(_ message: MailMessage) -> MailDelivery {
        deliver(QueuedMail(message))
    }

    /// Sends `mail.bytes` as they are, MAIL FROM `mail.from`, RCPT TO
    /// `mail.to`: the outbox's stored message, so a retry sends the same
    /// message (the same Message-ID), never a rebuilt one.
    public func deliver(_ mail: QueuedMail) -> MailDelivery {
        let easy: CurlEasyHandle
        do {
            easy = try CurlEasyHandle()
            try configure(easy, for: mail)
        } catch {
            return .temporaryFailure(detail: logSafe("\(server): setting up libcurl: \(error)"))
        }
        guard let failure = easy.perform() else { return .delivered }
        let reply = easy.responseCode()
        let detail = logSafe("\(server): \(failure.text) (curl error \(failure.code)\(reply > 0 ? ", last SMTP reply \(reply)" : ""))")
        return Self.classify(reply: reply, loginRefused: failure.code == Int(CURLE_LOGIN_DENIED.rawValue), detail: detail)
    }

    /// RFC 5321 §4.2.1: 4yz is a transient negative completion ("the
    /// action may be requested again"), 5yz a permanent one. No reply at
    /// all (refused connection, timeout, TLS failure) is transient too.
    /// A refused login (535) is kept transient although it is 5yz: it is
    /// this server's account that is wrong, for every message alike, and
    /// the queue should hold them until an operator fixes it.
    static func classify(reply: Int, loginRefused: Bool, detail: String) -> MailDelivery {
        if reply / 100 == 5 && !loginRefused { return .permanentFailure(detail: detail) }
        return .temporaryFailure(detail: detail)
    }

    private func configure(_ easy: CurlEasyHandle, for mail: QueuedMail) throws {
        try easy.set(CURLOPT_URL, server.curlURL)
        // Nothing but SMTP, whatever the URL says.
        try easy.set(CURLOPT_PROTOCOLS_STR, "smtp,smtps")
        try easy.set(CURLOPT_NOSIGNAL, 1)
        try easy.set(CURLOPT_CONNECTTIMEOUT, connectTimeoutSeconds)
        try easy.set(CURLOPT_TIMEOUT, totalTimeoutSeconds)
        let useSSL = server.security == .startTLSIfOffered ? CURLUSESSL_TRY : CURLUSESSL_ALL
        try easy.set(CURLOPT_USE_SSL, Int(useSSL.rawValue))
        try easy.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        try easy.set(CURLOPT_SSL_VERIFYPEER, 1)
        try easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        // CAINFO_BLOB replaces only libcurl's CA bundle file; its CA
        // directory (CAPATH, /etc/ssl/certs on Debian) stays, and the
        // OpenSSL backend trusts both: the system store plus these files.
        // One blob, because CAINFO names one file and there may be two.
        if !caFiles.isEmpty { try easy.set(CURLOPT_CAINFO_BLOB, blob: try Self.concatenatedPEM(caFiles)) }
        if let username = server.username {
            try easy.set(CURLOPT_USERNAME, username)
            try easy.set(CURLOPT_PASSWORD, server.password ?? "")
        }
        // MailAddress admits no CR, LF, space or angle bracket: nothing
        // here can end or extend the SMTP command line.
        try easy.set(CURLOPT_MAIL_FROM, "<\(mail.from.address)>")
        try easy.setRecipients(["<\(mail.to.address)>"])
        // libcurl dot-stuffs the upload for SMTP and ends it with CRLF "." CRLF.
        try easy.setUpload(mail.bytes)
    }

    /// The CA files one after another, each ending in a line end.
    static func concatenatedPEM(_ files: [String]) throws -> [UInt8] {
        var bundle: [UInt8] = []
        for file in files {
            guard let contents = FileManager.default.contents(atPath: file), !contents.isEmpty else {
                throw CurlEasyHandle.Failure(description: "cannot read the CA file \(file)")
            }
            bundle += contents
            if bundle.last != UInt8(ascii: "\n") { bundle.append(UInt8(ascii: "\n")) }
        }
        return bundle
    }

    /// Belt and braces: libcurl is never given the credentials inside a
    /// URL, so its error texts have no userinfo to quote; should the
    /// password turn up in one all the same, it goes.
    private func logSafe(_ text: String) -> String {
        guard let password = server.password, !password.isEmpty else { return text }
        return text.replacing(password, with: "***")
    }
}
