/// The scopes the issuer itself defines: OpenID Connect's (Core §5.4,
/// §11) and Native SSO's. Every other scope belongs to a registered API.
public enum StandardScopes {
    public static let all = ["openid", "profile", "email", "offline_access", "device_sso"]

    public static func contains<Token: StringProtocol>(_ scope: Token) -> Bool {
        all.contains { $0.utf8.elementsEqual(scope.utf8) }
    }
}
