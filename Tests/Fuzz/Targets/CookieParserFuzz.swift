// libFuzzer target: CookieParser.parse (the Cookie request header) and the
// Request.cookies path that every session-aware responder takes.
// Oracles: no crash; at most 50 cookies; no empty name; no separator byte in
// a name or value; no surrounding space or tab; every name's bytes appear in
// the header. All on bytes, as the parser splits (RFC 6265 §5.4): Swift's
// Character comparison is canonical, so U+037E would "contain" ";" (a crash
// the 10-minute run found in an earlier, Character-level oracle).
import SSOCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCookieParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let cookies = CookieParser.parse(header)
    precondition(cookies.count <= 50, "more than 50 cookies")
    for (name, value) in cookies {
        precondition(!name.isEmpty, "empty cookie name")
        let nameBytes = Array(name.utf8), valueBytes = Array(value.utf8), blank: Set<UInt8> = [0x20, 0x09]
        precondition(!nameBytes.contains(0x3D) && !nameBytes.contains(0x3B), "name holds a separator: \(name.debugDescription)")
        precondition(!valueBytes.contains(0x3B), "value holds a separator: \(value.debugDescription)")
        precondition(!blank.contains(nameBytes.first!) && !blank.contains(nameBytes.last!), "untrimmed name")
        precondition(contains(Array(header.utf8), nameBytes), "name not in the header")
    }
    let request = Request(method: "GET", path: "/", headers: ["cookie": header])
    precondition(request.cookies == cookies, "Request.cookies disagrees with CookieParser.parse")
    return 0
}

private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}
