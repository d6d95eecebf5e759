import IssuerStorage
import SSOCore

/// The scope a Native SSO exchange may grant: never more than app #1's
/// sign-in granted, nor more than app #2 is registered for; never
/// `device_sso`. Run last by NativeSSOChecks.run, once the grant itself
/// passed, so the descriptions may name what the caller asked for.
extension NativeSSOChecks {
    // RFC 8693 §5: "The use of the "scope" claim (in addition to other
    // typical constraints such as a limited token lifetime) is suggested to
    // mitigate potential for such abuse, as it restricts the contexts in
    // which the delegated rights can be exercised." RFC 6749 §3.3: the
    // server "MAY fully or partially ignore the scope requested by the
    // client, based on the authorization server policy or the resource
    // owner's instructions." The resource owner's instructions are what the
    // sign-in granted (recorded on its device secret row); app #2 may have
    // no more than that, and no more than it is registered for. Rows from
    // before IssuerMigration6 did not record it: the original app's
    // registration stands in. `openid` is always in: the subject token
    // proves the sign-in granted it. In app #2's registration order.
    func scopeBound(signIn: DeviceSecretRecord, original: Client, requesting client: Client) -> [String] {
        let granted = signIn.scope ?? original.scopes
        return client.scopes.filter { $0.bytesEqual("openid") || granted.containsBytes($0) }
    }

    // RFC 8693 §2.1: "scope OPTIONAL. A list of space-delimited,
    // case-sensitive strings, as defined in Section 3.3 of [RFC6749], that
    // allow the client to specify the desired scope of the requested
    // security token". RFC 6749 §5.2 invalid_scope: "The requested scope is
    // invalid, unknown, malformed, or exceeds the scope granted by the
    // resource owner." Without `scope`: the whole bound but `device_sso`.
    // `openid` is always granted: the response carries an id_token.
    func grantedScope(_ requested: [String]?, bound: [String], client: Client) throws -> [String] {
        guard client.scopes.containsBytes("openid") else { throw OAuthError(.invalidScope, "this client may not request openid") }
        guard let requested else { return ["openid"] + bound.filter { !$0.bytesEqual("openid") && !$0.bytesEqual("device_sso") } }
        try checkNoDeviceSSO(requested)
        try checkWithinBound(requested, bound: bound, client: client)
        return requested.containsBytes("openid") ? requested : ["openid"] + requested
    }

    // Native SSO §3.1 and §4.4 (paraphrased): the device_sso scope asks for a
    // device_secret, which the code exchange returns; a token exchange
    // returns none, so it does not grant the scope either (app #2 shares
    // app #1's secret).
    func checkNoDeviceSSO(_ requested: [String]) throws {
        if requested.containsBytes("device_sso") { throw OAuthError(.invalidScope, "device_sso cannot be granted by a token exchange") }
    }

    // RFC 6749 §5.2 invalid_scope (above): named, since the caller sent it
    // and has passed every other check (it holds the ID token and the
    // device credential); a value that is not even a scope token was
    // refused when the request was parsed (ScopeParameter.parse).
    func checkWithinBound(_ requested: [String], bound: [String], client: Client) throws {
        guard let first = requested.first(where: { !bound.containsBytes($0) }) else { return }
        throw OAuthError(.invalidScope, client.scopes.containsBytes(first)
            ? "scope \(first) was not granted by the sign-in this exchange comes from"
            : "scope \(first) is not registered for this client")
    }
}
