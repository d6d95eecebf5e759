import CCurl

/// libcurl's process-wide setup, done once, before the first handle: Swift
/// runs a global's initialiser exactly once, on first use, thread-safely.
private let curlGlobalInit: CURLcode = gatehouse_curl_global_init()

/// Owns one `CURL*` easy handle and everything libcurl holds pointers to
/// while it lives: the recipient list, the upload and the error buffer.
/// All freed in `deinit`, on every path, including a failed init.
final class CurlEasyHandle {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var recipients: UnsafeMutablePointer<curl_slist>?
    private var upload: Upload?

    init() throws {
        guard curlGlobalInit == CURLE_OK else {
            throw Failure(description: "curl_global_init: \(String(cString: curl_easy_strerror(curlGlobalInit)))")
        }
        guard let handle = curl_easy_init() else { throw Failure(description: "curl_easy_init failed") }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        try check(gatehouse_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), CURLOPT_ERRORBUFFER)
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(recipients)
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) throws {
        try check(gatehouse_curl_setopt_long(handle, option, value), option)
    }

    /// libcurl copies strings it is given (since 7.17), so `value` need not outlive the call.
    func set(_ option: CURLoption, _ value: String) throws {
        try check(gatehouse_curl_setopt_string(handle, option, value), option)
    }

    /// A blob option (CURLOPT_CAINFO_BLOB): libcurl keeps a copy.
    func set(_ option: CURLoption, blob: [UInt8]) throws {
        try check(blob.withUnsafeBytes { gatehouse_curl_setopt_blob_copy(handle, option, $0.baseAddress, $0.count) }, option)
    }

    func setRecipients(_ addresses: [String]) throws {
        var list: UnsafeMutablePointer<curl_slist>?
        for address in addresses {
            guard let longer = curl_slist_append(list, address) else {
                curl_slist_free_all(list)
                throw Failure(description: "curl_slist_append failed")
            }
            list = longer
        }
        curl_slist_free_all(recipients)
        recipients = list
        try check(gatehouse_curl_setopt_slist(handle, CURLOPT_MAIL_RCPT, list), CURLOPT_MAIL_RCPT)
    }

    /// The bytes libcurl reads through its read callback while performing.
    func setUpload(_ bytes: [UInt8]) throws {
        let upload = Upload(bytes)
        self.upload = upload
        try set(CURLOPT_UPLOAD, 1)
        try check(gatehouse_curl_setopt_off(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(bytes.count)), CURLOPT_INFILESIZE_LARGE)
        try check(gatehouse_curl_setopt_read_function(handle, readUpload), CURLOPT_READFUNCTION)
        try check(gatehouse_curl_setopt_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(upload).toOpaque()),
                  CURLOPT_READDATA)
    }

    /// Runs the transfer; nil when it succeeded, else libcurl's code and text.
    func perform() -> (code: Int, text: String)? {
        upload?.rewind()
        errorBuffer[0] = 0
        let code = curl_easy_perform(handle)
        guard code != CURLE_OK else { return nil }
        let buffered = String(cString: errorBuffer)
        return (Int(code.rawValue), buffered.isEmpty ? String(cString: curl_easy_strerror(code)) : buffered)
    }

    /// The last reply code the server sent (for SMTP: 250, 451, 550, ...); 0 when none.
    func responseCode() -> Int {
        var code = 0
        return gatehouse_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK ? code : 0
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws {
        guard code == CURLE_OK else {
            throw Failure(description: "curl_easy_setopt(\(option.rawValue)): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}

/// The message bytes and how far libcurl has read them.
private final class Upload {
    let bytes: [UInt8]
    var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    func rewind() { offset = 0 }

    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = min(capacity, bytes.count - offset)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}

/// CURLOPT_READFUNCTION: a C function, so no captures; the `Upload` comes
/// back through CURLOPT_READDATA. The handle owns the `Upload` for as long
/// as libcurl may call this.
private let readUpload: curl_read_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return Int(CURL_READFUNC_ABORT) }
    return Unmanaged<Upload>.fromOpaque(userdata).takeUnretainedValue().read(into: buffer, capacity: size * count)
}
