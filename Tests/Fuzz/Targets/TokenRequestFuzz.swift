// libFuzzer target: POST /token, in-process, against a temporary issuer home
// (migrated database, demo clients, a confidential client).
// Input: an optional Authorization header line, then the form body:
//   if the input holds a "\n", the bytes before the first one are the
//   Authorization header and the rest is the body; otherwise all is body.
// Oracles (docs/ARCHITECTURE.md "Bad input gets a clear 4xx ... never a 5xx or a
// crash"): no crash; the response is never 5xx and never 200 (no valid code
// or refresh token exists in the fuzz database); every JSON error response
// carries Cache-Control: no-store.
import Foundation
@testable import AuthServer
import FuzzIssuerFixture
import SSOCore

enum FuzzToken {
    /// On FuzzIssuer's fixed clock, so refusals do not depend on the time of the run.
    static let responder = try! TokenResponder(services: FuzzIssuer.shared.services)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTokenRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var headers = ["content-type": "application/x-www-form-urlencoded"]
    var body = bytes[...]
    if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
        headers["authorization"] = String(decoding: bytes[..<newline], as: UTF8.self)
        body = bytes[(newline + 1)...]
    }
    let request = Request(method: "POST", path: "/token", headers: headers, body: Array(body))
    let (response, logDetail) = ResponderOutcome.run(FuzzToken.responder, request)
    precondition(response.status < 500, "token endpoint answered \(response.status): \(logDetail ?? "")")
    precondition(response.status != 200, "token endpoint issued tokens for a fuzzed request")
    if response.status == 400 || response.status == 401 {
        if response.header("Content-Type") == "application/json" {
            precondition(response.header("Cache-Control") == "no-store", "error without no-store")
        }
    }
    return 0
}
