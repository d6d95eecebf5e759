import CFastCGI
import FoundationEssentials
import Glibc
import Dispatch

/// Owns one libfcgi `FCGX_Request` and its storage.
final class FastCGIRequestHandle {
    let pointer: UnsafeMutablePointer<FCGX_Request>

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

    func accept() -> Bool { FCGX_Accept_r(pointer) >= 0 }
    func finish() { FCGX_Finish_r(pointer) }

    /// Every FastCGI parameter, copied: libfcgi frees them at `finish()`.
    func parameters() -> [String: String] {
        var result: [String: String] = [:]
        guard var cursor = pointer.pointee.envp else { return result }
        // Split on the byte "=", not on Characters: a combining mark after it
        // would make "=" part of a larger Character and move the split (and
        // Character iteration cost ~90% of an empty request's instructions).
        while let entry = cursor.pointee {
            let bytes = UnsafeRawBufferPointer(start: entry, count: strlen(entry)).bindMemory(to: UInt8.self)
            if let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(decoding: bytes[..<equals], as: UTF8.self)
                let value = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
                if let earlier = result.updateValue(value, forKey: name), name.hasPrefix("HTTP_") {
                    result[name] = Self.combinedHeader(name: name, earlier: earlier, later: value)
                }
            }
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
        earlier + (name == "HTTP_COOKIE" ? "; " : ", ") + later
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
        let handle = FastCGIRequestHandle(listeningSocket: 0)
        RequestLog.event(endpoint: endpoint, message: "ready, pid \(getpid())")
        while handle.accept() {
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

    /// `HTTP_X_FORWARDED_FOR` → `x-forwarded-for` (RFC 3875 §4.1.18), on
    /// bytes: the names are ASCII, and the String algorithms cost more than
    /// the rest of the request.
    static func headerName(parameter: String) -> String {
        String(decoding: parameter.utf8.dropFirst(5).map { byte in
            byte == UInt8(ascii: "_") ? UInt8(ascii: "-") : (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
        }, as: UTF8.self)
    }

    static func makeRequest(_ parameters: [String: String], handle: FastCGIRequestHandle, limit: Int) -> (Request, Bool) {
        var headers: [String: String] = [:]
        for (name, value) in parameters where name.hasPrefix("HTTP_") {
            headers[headerName(parameter: name)] = value
        }
        if let contentType = parameters["CONTENT_TYPE"], !contentType.isEmpty { headers["content-type"] = contentType }
        let expected = Int(parameters["CONTENT_LENGTH"] ?? "") ?? 0
        let body = expected > 0 ? handle.readBody(expected: expected, limit: limit) : []
        let request = Request(
            method: parameters["REQUEST_METHOD"] ?? "GET",
            path: parameters["DOCUMENT_URI"] ?? parameters["SCRIPT_NAME"] ?? "/",
            query: parameters["QUERY_STRING"] ?? "",
            headers: headers,
            body: body ?? [],
            remoteAddress: parameters["REMOTE_ADDR"] ?? "",
            requestID: parameters["REQUEST_ID"] ?? "")
        return (request, body == nil)
    }
}
