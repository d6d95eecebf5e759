import IssuerStorage
import SSOCore

/// The rules of `ssoctl idp add`, checked before anything is fetched or
/// stored; the preset's defaults filled in.
enum ProviderRules {
    struct Checked {
        let issuer: String
        let scopes: [String]
        let label: String
        let appleKey: (teamID: String, keyID: String, pem: [UInt8])?
    }

    static func check(_ registration: ProviderRegistration) throws -> Checked {
        try checkName(registration.name)
        try checkPrintable(registration.clientID, "the client id", maximum: 255)
        let preset = registration.preset
        guard [.generic, .apple, .google].contains(preset) else { throw ValidationError("unknown preset \(preset.rawValue.debugDescription)") }
        let issuer: String
        switch preset {
        case .apple: issuer = registration.issuer ?? IdentityProviderRegistry.appleIssuer
        case .google: issuer = registration.issuer ?? IdentityProviderRegistry.googleIssuer
        default:
            guard let given = registration.issuer else { throw ValidationError("--issuer is required (the provider's issuer URL)") }
            issuer = given
        }
        let scopes = registration.scopes.isEmpty ? (preset == .apple ? ["openid", "email", "name"] : ["openid", "email", "profile"])
            : registration.scopes
        guard scopes.contains("openid") else { throw ValidationError("the scopes must include openid") }
        for scope in scopes { try checkScope(scope) }
        let label = registration.label ?? (preset == .apple ? "Apple" : preset == .google ? "Google" : registration.name)
        try checkPrintable(label, "the label", maximum: 64)
        if let domain = registration.hostedDomain {
            guard preset == .google else { throw ValidationError("--hosted-domain is for --preset google") }
            try checkPrintable(domain, "the hosted domain", maximum: 253)
        }
        guard preset == .apple else {
            guard let secret = registration.secret, !secret.isEmpty else { throw ValidationError("a client secret is required (--secret-stdin)") }
            guard registration.appleTeamID == nil, registration.appleKeyID == nil, registration.appleKeyPEM == nil else {
                throw ValidationError("--team-id, --key-id and --private-key-file are for --preset apple")
            }
            try checkPrintable(secret, "the client secret", maximum: 1024)
            return Checked(issuer: issuer, scopes: scopes, label: label, appleKey: nil)
        }
        // Sign in with Apple: the client secret is an ES256 JWT the issuer
        // signs with the team's key, so the key is required and a secret is not.
        guard registration.secret == nil else { throw ValidationError("--preset apple takes no secret: it signs one with --private-key-file") }
        guard let teamID = registration.appleTeamID, let keyID = registration.appleKeyID, let pem = registration.appleKeyPEM else {
            throw ValidationError("--preset apple needs --team-id, --key-id and --private-key-file (the .p8 key from Apple)")
        }
        try checkAppleIdentifier(teamID, "the team id")
        try checkAppleIdentifier(keyID, "the key id")
        guard (try? ES256PrivateKey.privateKey(pem: pem)) != nil else {
            throw ValidationError("the private key file is not a P-256 private key in PEM (Apple's .p8)")
        }
        return Checked(issuer: issuer, scopes: scopes, label: label, appleKey: (teamID, keyID, pem))
    }

    /// `[a-z0-9-]`, 1 to 32, starting with a letter or digit: it appears in
    /// the `idp` claim, in the login page's form and in commands.
    static func checkName(_ name: String) throws {
        guard (1...32).contains(name.utf8.count), name.utf8.first != UInt8(ascii: "-"),
              name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }) else {
            throw ValidationError("the name must be 1 to 32 of a-z, 0-9 and -, not starting with -: \(name.debugDescription)")
        }
    }

    /// Apple's team and key ids: ten upper-case letters and digits.
    static func checkAppleIdentifier(_ value: String, _ what: String) throws {
        guard value.utf8.count == 10, value.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }) else {
            throw ValidationError("\(what) must be Apple's ten upper-case letters and digits: \(value.debugDescription)")
        }
    }

    /// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
    static func checkScope(_ scope: String) throws {
        guard !scope.isEmpty, scope.utf8.allSatisfy({ $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }) else {
            throw ValidationError("not a scope: \(scope.debugDescription)")
        }
    }

    static func checkPrintable(_ value: String, _ what: String, maximum: Int) throws {
        guard !value.isEmpty, value.utf8.count <= maximum,
              value.unicodeScalars.allSatisfy({ $0.value >= 32 && $0.value != 127 && !(0x80...0x9F).contains($0.value) }) else {
            throw ValidationError("\(what) must be 1 to \(maximum) bytes without control characters")
        }
    }
}
