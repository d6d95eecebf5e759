import CFastCGI
import FoundationEssentials
import Glibc
import Dispatch

/// Owns one libfcgi `FCGX_Request` and its storage.
final class FastCGIRequestHandle {
    let pointer: UnsafeMutablePointer<FCGX_Request>

    /// When this handle last took a request (FastCGIConnections' fairness).
    var lastServed = 0

    /// Binds to the listening socket on `fd` (0: what spawn-fcgi or a systemd
    /// socket unit hands the process).
    init(listeningSocket fd: Int32) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: FCGX_Request())
        FCGX_InitRequest(pointer, fd, 0)
    }

    deinit {
        FCGX_Free(pointer, 1)
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// libfcgi's status: 0 with a request; negative otherwise (`-EAGAIN`:
    /// the connection it was to accept was gone, see FastCGIConnections).
    func accept() -> Int32 { FCGX_Accept_r(pointer) }

    /// The connection libfcgi kept after a request that asked for it
    /// (FCGI_KEEP_CONN), or nil.
    var keptConnection: Int32? {
        let fd = gatehouse_fcgx_kept_connection(pointer)
        return fd >= 0 ? fd : nil
    }

    func dropKeptConnection() { gatehouse_fcgx_drop_kept_connection(pointer) }

    /// Ends the request. The rest of its stdin is read first: on a kept
    /// connection the next request's records follow it, and libfcgi, which
    /// never skips what the application left unread, would take a leftover
    /// body (a POST refused with 405, a body over the limit) for the next
    /// request's header, drop the connection and wait in accept() while
    /// requests queue on the others. nginx sends the whole body before the
    /// answer is read (request buffering), so this never waits on a client.
    /// A connection nginx will close is then closed at once rather than
    /// with libfcgi's wait for nginx's close (the shim's
    /// gatehouse_fcgx_close_at_once_if_drained says when that is safe): the
    /// wait kept a token responder from its next request until nginx got
    /// the CPU, and left the machine idle a tenth of a refresh run.
    func finish() {
        if FCGX_HasSeenEOF(pointer.pointee.in) == 0 {
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4096) { scratch in
                while FCGX_GetStr(scratch.baseAddress, Int32(scratch.count), pointer.pointee.in) > 0 {}
            }
        }
        gatehouse_fcgx_close_at_once_if_drained(pointer)
        FCGX_Finish_r(pointer)
    }

    /// The request's FastCGI parameters, copied (libfcgi frees them at
    /// `finish()`) in one pass: the `HTTP_*` headers and the few CGI
    /// variables a `Request` has. nginx sends some thirty; building a String
    /// and a hash for every one of them was a fifth of an empty request.
    func parameters() -> RequestParameters {
        var result = RequestParameters()
        guard var cursor = pointer.pointee.envp else { return result }
        while let entry = cursor.pointee {
            result.add(UnsafeBufferPointer(start: UnsafeRawPointer(entry).assumingMemoryBound(to: UInt8.self), count: strlen(entry)))
            cursor += 1
        }
        return result
    }

    /// A request header sent on several lines: nginx before 1.23 (Debian
    /// 12 ships 1.22) passes each line as a parameter of the same name,
    /// and a dictionary would silently keep only the last one, hiding that
    /// there were two (RFC 9449 §4.3 check 1 needs to know: "there is not
    /// more than one DPoP HTTP request header field"). Combined as nginx
    /// 1.23 and later combine them, and as RFC 9110 §5.3 allows: in order,
    /// separated by a comma (`Cookie` by "; ", RFC 6265 §5.4).
    static func combinedHeader(name: String, earlier: String, later: String) -> String {
        earlier + (name == "cookie" ? "; " : ", ") + later
    }

    /// Reads up to `limit` body bytes; nil when the body is larger.
    func readBody(expected: Int, limit: Int) -> [UInt8]? {
        guard expected <= limit else { return nil }
        var body = [UInt8](repeating: 0, count: expected)
        var filled = 0
        while filled < expected {
            let read = body.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress!.advanced(by: filled).withMemoryRebound(to: CChar.self, capacity: expected - filled) {
                    FCGX_GetStr($0, Int32(expected - filled), pointer.pointee.in)
                }
            }
            if read <= 0 { break }
            filled += Int(read)
        }
        return Array(body.prefix(filled))
    }

    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                _ = FCGX_PutStr(chars.baseAddress, Int32(bytes.count), pointer.pointee.out)
            }
        }
    }
}

/// The one accept loop every responder runs: accept, copy the request into
/// Swift, respond, write, finish, count, log. Single-threaded and long-lived: the
/// responder is built once, before the first request.
public enum FastCGIServer {
    public static func serve(endpoint: String, responder: Responder, maximumBodyBytes: Int = 64 * 1024) -> Never {
        signal(SIGPIPE, SIG_IGN)
        guard FCGX_Init() == 0 else {
            RequestLog.event(endpoint: endpoint, message: "FCGX_Init failed")
            exit(1)
        }
        FastCGIConnections.installStopHandlers()
        let connections = FastCGIConnections(listeningSocket: 0)
        RequestLog.event(endpoint: endpoint, message: "ready, pid \(getpid())")
        while true {
            guard let handle = connections.next(beforeWaiting: RequestLog.hasPending ? RequestLog.flush : nil) else { break }
            let accepted = handle.accept()
            if accepted == -EAGAIN || accepted == -EWOULDBLOCK { continue }
            guard accepted >= 0 else { break }
            let started = DispatchTime.now().uptimeNanoseconds
            let parameters = handle.parameters()
            let (request, bodyTooLarge) = makeRequest(parameters, handle: handle, limit: maximumBodyBytes)
            var (response, detail): (Response, String?)
            if bodyTooLarge {
                (response, detail) = (.plainError(413, "request_too_large"), "body over \(maximumBodyBytes) bytes")
            } else {
                (response, detail) = ResponderOutcome.run(responder, request)
            }
            if !request.requestID.isEmpty { response.setHeader("X-Request-Id", request.requestID) }
            handle.write(response.serialized())
            handle.finish()
            let nanoseconds = DispatchTime.now().uptimeNanoseconds - started
            Metrics.request(status: response.status, nanoseconds: nanoseconds)
            RequestLog.request(endpoint: endpoint, request: request, status: response.status, milliseconds: Double(nanoseconds) / 1_000_000,
                               detail: detail)
        }
        RequestLog.event(endpoint: endpoint, message: "accept failed, exiting")
        exit(0)
    }

    /// The header name of a parameter's bytes after "HTTP_":
    /// `HTTP_X_FORWARDED_FOR` → `x-forwarded-for` (RFC 3875 §4.1.18), on
    /// bytes: the names are ASCII, and the String algorithms cost more than
    /// the rest of the request.
    static func headerName(parameterBytes name: UnsafeBufferPointer<UInt8>) -> String {
        // Written into the String's own storage: decoding a lazily mapped
        // sequence went through String's slow generic path.
        String(unsafeUninitializedCapacity: name.count) { storage in
            for (index, byte) in name.enumerated() {
                storage[index] = byte == UInt8(ascii: "_") ? UInt8(ascii: "-") : (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            }
            return name.count
        }
    }

    static func makeRequest(_ parameters: RequestParameters, handle: FastCGIRequestHandle, limit: Int) -> (Request, Bool) {
        var headers = parameters.headers
        if !parameters.contentType.isEmpty { headers["content-type"] = parameters.contentType }
        let expected = Int(parameters.contentLength) ?? 0
        let body = expected > 0 ? handle.readBody(expected: expected, limit: limit) : []
        let request = Request(
            method: parameters.method ?? "GET",
            path: parameters.documentURI ?? parameters.scriptName ?? "/",
            query: parameters.query,
            headers: headers,
            body: body ?? [],
            remoteAddress: parameters.remoteAddress,
            requestID: parameters.requestID)
        return (request, body == nil)
    }
}

/// What a request's FastCGI parameters say, read one `NAME=value` entry at
/// a time: the headers (`HTTP_*`, RFC 3875 §4.1.18) and the CGI variables a
/// `Request` is made of; every other parameter is skipped without a copy.
struct RequestParameters {
    var method: String?
    var documentURI: String?
    var scriptName: String?
    var query = ""
    var contentType = ""
    var contentLength = ""
    var remoteAddress = ""
    var requestID = ""
    var headers: [String: String] = [:]

    /// One parameter. It is split on the byte "=", not on Characters: a
    /// combining mark after it would make "=" part of a larger Character
    /// and move the split.
    mutating func add(_ entry: UnsafeBufferPointer<UInt8>) {
        guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { return }
        let name = UnsafeBufferPointer(rebasing: entry[..<equals])
        let valueBytes = UnsafeBufferPointer(rebasing: entry[(equals + 1)...])
        func value() -> String { String(decoding: valueBytes, as: UTF8.self) }
        if Self.starts(name, with: "HTTP_") {
            let header = FastCGIServer.headerName(parameterBytes: UnsafeBufferPointer(rebasing: name[5...]))
            let later = value()
            if let earlier = headers.updateValue(later, forKey: header) {
                headers[header] = FastCGIRequestHandle.combinedHeader(name: header, earlier: earlier, later: later)
            }
        } else if Self.equal(name, "REQUEST_METHOD") {
            method = value()
        } else if Self.equal(name, "DOCUMENT_URI") {
            documentURI = value()
        } else if Self.equal(name, "SCRIPT_NAME") {
            scriptName = value()
        } else if Self.equal(name, "QUERY_STRING") {
            query = value()
        } else if Self.equal(name, "CONTENT_TYPE") {
            contentType = value()
        } else if Self.equal(name, "CONTENT_LENGTH") {
            contentLength = value()
        } else if Self.equal(name, "REMOTE_ADDR") {
            remoteAddress = value()
        } else if Self.equal(name, "REQUEST_ID") {
            requestID = value()
        }
    }

    /// "NAME=value" from a String (the tests').
    mutating func add(_ entry: String) {
        Array(entry.utf8).withUnsafeBufferPointer { add($0) }
    }

    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        name.utf8CodeUnitCount == bytes.count && starts(bytes, with: name)
    }

    static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: StaticString) -> Bool {
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { prefix in
            for index in 0..<prefix.count where bytes[index] != prefix[index] { return false }
            return true
        }
    }
}
