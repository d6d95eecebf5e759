// libFuzzer target: CookieParser.parse (the Cookie request header) and the
// Request.cookies path that every session-aware responder takes.
// Oracles: no crash; at most 50 cookies; no empty name; names and values
// carry no surrounding space or tab (Character-level, as the parser splits); every name appears in the header.
import SSOCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCookieParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let cookies = CookieParser.parse(header)
    precondition(cookies.count <= 50, "more than 50 cookies")
    for (name, value) in cookies {
        precondition(!name.isEmpty, "empty cookie name")
        precondition(!name.contains(Character("=")) && !name.contains(Character(";")), "name holds a separator: \(name.debugDescription)")
        precondition(!value.contains(Character(";")), "value holds a separator: \(value.debugDescription)")
        precondition(name.first != " " && name.first != "\t" && name.last != " " && name.last != "\t", "untrimmed name")
        precondition(header.contains(name), "name not in the header")
    }
    let request = Request(method: "GET", path: "/", headers: ["cookie": header])
    precondition(request.cookies == cookies, "Request.cookies disagrees with CookieParser.parse")
    return 0
}
