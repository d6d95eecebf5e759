import CCurlLoader

/// libcurl, loaded while a transfer holds it (see CCurlLoader for why it is
/// not linked). `curl_global_init` runs at each load, under the loader's
/// lock, before any handle exists: thread-safe whatever the caller.
enum CurlLibrary {
    /// Runs `body` with libcurl loaded. `unloadWhenIdle`: when no other
    /// transfer holds it afterwards, unload it again (the resource servers,
    /// which fetch once an hour and must stay small); otherwise it stays
    /// for the next transfer (a sender that makes many).
    static func withLoaded<T>(unloadWhenIdle: Bool, _ body: () throws -> T) throws -> T {
        guard gatehouse_dlcurl_acquire() == 1 else {
            throw HTTPSClientError(.library, detail: "libcurl: \(String(cString: gatehouse_dlcurl_error()))")
        }
        defer { gatehouse_dlcurl_release(unloadWhenIdle ? 1 : 0) }
        return try body()
    }

    /// Whether libcurl is mapped right now (for tests of the unloading).
    static var isLoaded: Bool { gatehouse_dlcurl_is_loaded() == 1 }
}
