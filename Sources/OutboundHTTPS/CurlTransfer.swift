import CCurlLoader

/// Owns one `CURL*` easy handle and everything libcurl holds pointers to
/// while it lives: the header list, the error buffer and the response
/// collector. Freed in `deinit`, on every path, including a failed init.
/// Made and dropped inside `CurlLibrary.withLoaded`, never kept.
final class CurlTransfer {
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headerList: UnsafeMutablePointer<curl_slist>?
    let collector: ResponseCollector

    init(responseLimit: Int) throws {
        guard let handle = gatehouse_dlcurl_easy_init() else { throw HTTPSClientError(.library, detail: "curl_easy_init failed") }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        collector = ResponseCollector(limit: responseLimit)
        try check(gatehouse_dlcurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), CURLOPT_ERRORBUFFER)
        let user = Unmanaged.passUnretained(collector).toOpaque()
        try check(gatehouse_dlcurl_setopt_write_function(handle, CURLOPT_WRITEFUNCTION, collectBody), CURLOPT_WRITEFUNCTION)
        try check(gatehouse_dlcurl_setopt_pointer(handle, CURLOPT_WRITEDATA, user), CURLOPT_WRITEDATA)
        try check(gatehouse_dlcurl_setopt_write_function(handle, CURLOPT_HEADERFUNCTION, collectHeader), CURLOPT_HEADERFUNCTION)
        try check(gatehouse_dlcurl_setopt_pointer(handle, CURLOPT_HEADERDATA, user), CURLOPT_HEADERDATA)
    }

    deinit {
        gatehouse_dlcurl_easy_cleanup(handle)
        gatehouse_dlcurl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) throws {
        try check(gatehouse_dlcurl_setopt_long(handle, option, value), option)
    }

    /// libcurl copies strings it is given, so `value` need not outlive the
    /// call; nil resets the option (for CURLOPT_CAPATH: no directory).
    func set(_ option: CURLoption, _ value: String?) throws {
        try check(gatehouse_dlcurl_setopt_string(handle, option, value), option)
    }

    func set(_ option: CURLoption, copying bytes: [UInt8]) throws {
        try check(bytes.withUnsafeBytes { gatehouse_dlcurl_setopt_blob_copy(handle, option, $0.baseAddress, $0.count) }, option)
    }

    /// The request body: its length first, then CURLOPT_COPYPOSTFIELDS,
    /// which copies that many bytes (NULs included).
    func setBody(_ bytes: [UInt8]) throws {
        try check(gatehouse_dlcurl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)), CURLOPT_POSTFIELDSIZE_LARGE)
        var copy = bytes.isEmpty ? [0] : bytes
        try check(copy.withUnsafeMutableBytes { gatehouse_dlcurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) },
                  CURLOPT_COPYPOSTFIELDS)
    }

    func set(_ option: CURLoption, limit: Int) throws {
        try check(gatehouse_dlcurl_setopt_off(handle, option, curl_off_t(limit)), option)
    }

    func setHeaders(_ lines: [String]) throws {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let longer = gatehouse_dlcurl_slist_append(list, line) else {
                gatehouse_dlcurl_slist_free_all(list)
                throw HTTPSClientError(.library, detail: "curl_slist_append failed")
            }
            list = longer
        }
        gatehouse_dlcurl_slist_free_all(headerList)
        headerList = list
        try check(gatehouse_dlcurl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)), CURLOPT_HTTPHEADER)
    }

    /// Runs the transfer; nil when it succeeded, else libcurl's code and text.
    func perform() -> (code: CURLcode, text: String)? {
        errorBuffer[0] = 0
        let code = gatehouse_dlcurl_easy_perform(handle)
        guard code != CURLE_OK else { return nil }
        let buffered = String(cString: errorBuffer)
        return (code, buffered.isEmpty ? String(cString: gatehouse_dlcurl_easy_strerror(code)) : buffered)
    }

    /// The status of the last response; 0 when none came.
    func responseCode() -> Int {
        var code = 0
        return gatehouse_dlcurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK ? code : 0
    }

    /// A string libcurl knows, such as its built-in CA directory (CURLINFO_CAPATH).
    func info(_ info: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>?
        guard gatehouse_dlcurl_getinfo_string(handle, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws {
        guard code == CURLE_OK else {
            throw HTTPSClientError(.library, detail: "curl_easy_setopt(\(option.rawValue)): \(String(cString: gatehouse_dlcurl_easy_strerror(code)))")
        }
    }
}
