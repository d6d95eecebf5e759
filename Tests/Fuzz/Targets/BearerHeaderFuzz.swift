// libFuzzer target: the Authorization header parsers.
// - ResourceServer's BearerCredentials.extract (api-a, api-b), checked
//   against the issuer's own Bearer parser (userinfo): both implement
//   RFC 6750 §2.1 and must agree on every header;
// - AuthServer's ClientAuthenticator.basicCredentials (POST /token,
//   RFC 6749 §2.3.1 + RFC 7617).
// Oracles: no crash; an extracted token is a non-empty b64token with no
// space; the two Bearer parsers agree; Basic either throws invalid_client
// or yields an id and a secret.
@testable import AuthServer
import ResourceServer
import SSOCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBearerHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let header = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let resource = BearerCredentials.extract(fromAuthorization: header)
    let issuer: BearerAuthorization.Outcome?
    do { issuer = try BearerAuthorization.fromHeader(header) } catch { issuer = nil }
    switch resource {
    case .token(let token):
        precondition(!token.isEmpty && !token.contains(" ") && BearerSyntax.isB64Token(Substring(token).utf8), "bad token accepted")
        precondition(header.hasSuffix(token), "token is not the end of the header")
        if case .token(let other)? = issuer { precondition(other == token, "Bearer parsers disagree on the token") }
        else { preconditionFailure("resource server took a token the issuer refuses: \(header.debugDescription)") }
    case .absent:
        if case .token? = issuer { preconditionFailure("issuer took a token the resource server ignores: \(header.debugDescription)") }
    case .malformed:
        if case .token? = issuer { preconditionFailure("issuer took a token the resource server refuses: \(header.debugDescription)") }
    }
    do {
        if let basic = try ClientAuthenticator.basicCredentials(header) {
            _ = basic.id.utf8.count + basic.secret.utf8.count
        }
    } catch let error as OAuthError {
        precondition(error.usedBasicAuthentication, "Basic failure without the Basic flag")
    } catch {
        preconditionFailure("basicCredentials threw a non-OAuth error: \(error)")
    }
    return 0
}
