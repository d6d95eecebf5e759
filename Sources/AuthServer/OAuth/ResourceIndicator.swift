import IssuerStorage
import SSOCore

/// RFC 8707 resource indicators: the `resource` parameter at /authorize
/// and /token, and the audiences `ssoctl api add` registers.
public enum ResourceIndicator {
    static let maximumBytes = 255

    /// RFC 8707 §2: "The value of the resource parameter MUST be an
    /// absolute URI, as specified by Section 4.3 of [RFC3986], which MAY
    /// include a query component, but MUST NOT include a fragment
    /// component." RFC 3986 §4.3: absolute-URI = scheme ":" hier-part
    /// [ "?" query ]; scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
    /// Visible ASCII only (no space, no control character), so the value
    /// compares, logs and prints as its bytes.
    public static func isAbsoluteURI(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard (1...maximumBytes).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }), !bytes.contains(UInt8(ascii: "#")),
              let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, colon < bytes.count - 1 else { return false }
        let isAlpha = { (byte: UInt8) in (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        return isAlpha(bytes[0]) && bytes[1..<colon].allSatisfy { isAlpha($0) || (0x30...0x39).contains($0) || "+-.".utf8.contains($0) }
    }

    /// An API's audience at registration: an absolute URI as above, and no
    /// query either (RFC 8707 §2: it "SHOULD NOT include a query
    /// component"), so one API is named one way.
    public static func validateForRegistration(_ audience: String) throws {
        guard isAbsoluteURI(audience), !audience.utf8.contains(UInt8(ascii: "?")) else {
            throw ValidationError("an API audience is an absolute URI (usually its origin, https://api.example.com) of at most "
                                  + "\(maximumBytes) bytes, without query or fragment: \(audience.debugDescription)")
        }
    }

    /// The `resource` values of a request (RFC 8707 §2: "may be used
    /// multiple times"), nil when there are none. A malformed one is
    /// `invalid_target` (§2: "the requested resource is invalid, missing,
    /// unknown, or malformed").
    public static func parse(_ form: FormParameters) throws -> [String]? {
        let values = form.values("resource")
        guard !values.isEmpty else { return nil }
        var resources: [String] = []
        for value in values {
            guard isAbsoluteURI(value) else {
                throw OAuthError(.invalidTarget, "resource must be an absolute URI without a fragment (RFC 8707 §2)",
                                 detail: "malformed resource of \(value.utf8.count) bytes")
            }
            if !resources.containsBytes(value) { resources.append(value) }
        }
        return resources
    }
}

/// Where an access token is good (`aud`) and what it may do there
/// (`scope`), chosen from a grant's scope and the requested resources.
public struct TokenTarget: Equatable, Sendable {
    public let audience: [String]
    public let scope: [String]

    /// RFC 9068 §3: the `aud` of an access token names the resource
    /// servers it is for: here every registered API that owns a granted
    /// scope. Without one the token is good only at the issuer itself
    /// (userinfo), whose identifier is then its audience.
    ///
    /// RFC 8707 §2: with `resource`, "the authorization server ... SHOULD
    /// audience-restrict issued access tokens to the resource(s)
    /// indicated": `aud` is exactly the named APIs, and the token's scope
    /// keeps the standard scopes and only the API scopes those own
    /// (downscoping). §2: a resource the server does not know, or one the
    /// grant gives no scope at, is `invalid_target`.
    public static func select(scope: [String], resources: [String]?, apis: [RegisteredAPI], issuer: String) throws -> TokenTarget {
        let owners = apis.filter { api in scope.contains { api.scopes.containsBytes($0) } }
        guard let resources else {
            return TokenTarget(audience: owners.isEmpty ? [issuer] : owners.map(\.audience), scope: scope)
        }
        var chosen: [RegisteredAPI] = []
        for resource in resources {
            guard let api = apis.first(where: { $0.audience.bytesEqual(resource) }) else {
                throw OAuthError(.invalidTarget, "resource is not a registered API", detail: "unregistered resource \(resource.debugDescription)")
            }
            guard owners.contains(where: { $0.audience.bytesEqual(resource) }) else {
                throw OAuthError(.invalidTarget, "the grant has no scope at the requested resource",
                                 detail: "resource \(resource) owns none of \(scope.joined(separator: " "))")
            }
            chosen.append(api)
        }
        let kept = scope.filter { chosen.isKnown($0) }
        return TokenTarget(audience: chosen.map(\.audience), scope: kept)
    }
}
