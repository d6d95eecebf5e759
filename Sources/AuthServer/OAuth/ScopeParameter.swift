import IssuerStorage
import SSOCore

/// The `scope` parameter (RFC 6749 §3.3), parsed one way at /authorize,
/// /token and registration.
public enum ScopeParameter {
    /// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ): ASCII,
    /// so two tokens are equal exactly when their bytes are (Swift's `==`
    /// on non-ASCII text is canonical equivalence, not byte equality).
    public static func isScopeToken<Token: StringProtocol>(_ token: Token) -> Bool {
        (1...128).contains(token.utf8.count)
            && token.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    /// RFC 6749 §3.3: scope = scope-token *( SP scope-token ). Duplicates are
    /// dropped, order kept. A value outside the syntax is invalid_scope (§5.2:
    /// "The requested scope is invalid, unknown, malformed").
    public static func parse(_ text: String) throws -> [String] {
        var scope: [String] = []
        for token in text.split(separator: " ", omittingEmptySubsequences: true) {
            guard isScopeToken(token) else {
                throw OAuthError(.invalidScope, "scope holds a value that is not a scope token (RFC 6749 §3.3)",
                                 detail: "scope token of \(token.utf8.count) bytes outside the RFC 6749 §3.3 syntax")
            }
            if !scope.containsBytes(token) { scope.append(String(token)) }
        }
        return scope
    }

    /// RFC 6749 §5.2 invalid_scope: "The requested scope is invalid,
    /// unknown, malformed, or exceeds the scope granted by the resource
    /// owner." Known: a standard scope, or one a registered API owns.
    public static func checkKnown(_ scope: [String], apis: APIRegistry) throws {
        let registered = try apis.all()
        if let unknown = scope.first(where: { !registered.isKnown($0) }) {
            throw OAuthError(.invalidScope, "\(named(unknown)) is unknown to this server",
                             detail: "scope \(unknown.debugDescription) is neither standard nor owned by a registered API")
        }
    }

    /// RFC 6749 §3.3: "The authorization server MAY fully or partially ignore
    /// the scope requested by the client, based on the authorization server
    /// policy"; here a scope the client is not registered for is refused, and
    /// the error names it (the caller sent it; it is a checked scope token).
    public static func checkAllowed(_ scope: [String], for client: Client) throws {
        if let refused = scope.first(where: { !client.scopes.containsBytes($0) }) {
            throw OAuthError(.invalidScope, "\(named(refused)) is not allowed for this client",
                             detail: "client \(client.clientID) is not registered for scope \(refused.debugDescription)")
        }
    }

    /// "scope api:orders" when the token reads as a scope name (letters,
    /// digits, `.:/_-`, at most 64), so the app's developer sees which one;
    /// anything else (markup, quotes) is not echoed into an error an app may
    /// show: "a requested scope".
    public static func named(_ token: String) -> String {
        let readable = token.utf8.count <= 64 && token.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || ".:/_-".utf8.contains(byte)
        }
        return readable ? "scope \(token)" : "a requested scope"
    }
}
