/// What the browser asked for on the loopback listener.
struct BrowserRequest {
    let method: String
    let path: String
    /// The raw (still percent-encoded) query, without the "?".
    let query: String
}
