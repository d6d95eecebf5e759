import FoundationEssentials
import IssuerStorage
import SSOCore

/// Who the provider says signed in, once its ID token has passed every
/// check of OIDC Core §3.1.3.7.
public struct UpstreamIdentity: Equatable, Sendable {
    public let issuer: String
    public let subject: String
    /// Present only when the provider says it is verified.
    public let verifiedEmail: String?
    public let name: String?
    /// The provider's `amr` values that RFC 8176 registers; others dropped.
    public let amr: [String]
    /// Apple: the address is a private relay (`is_private_email`).
    public let isPrivateEmail: Bool
}

/// The checks of an upstream ID token, each refusal its own reason.
public struct UpstreamIDTokenError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// An upstream provider's ID token, verified through the one JWS pipeline
/// (CompactJWT.verify: the algorithm pinned to RS256 or ES256, `crit`
/// refused, the key by `kid` from the provider's JWKS only) and then its
/// claims, in OIDC Core §3.1.3.7's order.
public enum UpstreamIDToken {
    /// Leeway on `exp` and `iat` for clocks that differ.
    public static let leeway: Double = 60
    /// §3.1.3.7 step 10: "The iat Claim can be used to reject tokens that
    /// were issued too far away from the current time": the code it was
    /// exchanged for was issued moments ago, so ten minutes is generous.
    public static let oldestIssuedAt: Double = 600

    struct Claims: Decodable {
        let iss: String?
        let sub: String?
        let aud: AudienceClaim?
        let azp: String?
        let exp: Double?
        let iat: Double?
        let nonce: String?
        let email: String?
        let email_verified: LenientBool?
        let name: String?
        let given_name: String?
        let family_name: String?
        let amr: [String]?
        let hd: String?
        let is_private_email: LenientBool?
    }

    /// Apple sends `email_verified` and `is_private_email` as the strings
    /// "true" and "false" as well as booleans; anything else is false.
    struct LenientBool: Decodable {
        let value: Bool
        init(from decoder: Decoder) throws {
            let single = try decoder.singleValueContainer()
            if let flag = try? single.decode(Bool.self) { value = flag } else { value = (try? single.decode(String.self)) == "true" }
        }
    }

    public static func verify(_ token: String, provider: IdentityProvider, nonce: String, now: Int64,
                              keys: (String) throws -> (any JWSVerificationKey)?) throws -> UpstreamIdentity {
        let verified: VerifiedJWT
        do {
            // §3.1.3.7 step 6-8: the signature, with the algorithm this
            // issuer accepts (RS256 is §15.1's default; Apple and Google use it).
            verified = try CompactJWT(parsing: token).verify(algorithms: [.rs256, .es256],
                                                              types: .ifPresent(["JWT"], allowingApplicationPrefix: true), keys: keys)
        } catch let error as JWTError {
            throw UpstreamIDTokenError("signature: \(error)")
        }
        let claims = try verified.claims(as: Claims.self)
        // Step 2: "The Issuer Identifier for the OpenID Provider ... MUST
        // exactly match the value of the iss (issuer) Claim."
        guard let iss = claims.iss, iss.utf8.elementsEqual(provider.issuer.utf8) else { throw UpstreamIDTokenError("iss is not the provider's") }
        // Step 3: "The Client MUST validate that the aud (audience) Claim
        // contains its client_id value registered at the Issuer".
        guard let audience = claims.aud?.values, audience.contains(where: { $0.utf8.elementsEqual(provider.clientID.utf8) }) else {
            throw UpstreamIDTokenError("aud does not name this issuer's client_id")
        }
        // Steps 4-5: "If the ID Token contains multiple audiences, the Client
        // SHOULD verify that an azp Claim is present. If an azp (authorized
        // party) Claim is present, the Client SHOULD verify that its client_id
        // is the Claim Value."
        if audience.count > 1, claims.azp == nil { throw UpstreamIDTokenError("several audiences and no azp") }
        if let azp = claims.azp, !azp.utf8.elementsEqual(provider.clientID.utf8) { throw UpstreamIDTokenError("azp is another client") }
        // Step 9: "The current time MUST be before the time represented by
        // the exp Claim". Step 10: iat too far from now is refused.
        guard let exp = claims.exp, let iat = claims.iat else { throw UpstreamIDTokenError("exp or iat missing") }
        if let violation = JWTTimeWindow(leeway: leeway).violation(expiresAt: exp, notBefore: nil, issuedAt: iat, now: Double(now)) {
            throw UpstreamIDTokenError("time window: \(violation)")
        }
        guard iat >= Double(now) - oldestIssuedAt - leeway else { throw UpstreamIDTokenError("issued too long ago") }
        // Step 11: "If a nonce value was sent in the Authentication Request,
        // a nonce Claim MUST be present and its value checked to verify that
        // it is the same value as the one that was sent".
        guard let got = claims.nonce, ConstantTime.equals(Array(got.utf8), Array(nonce.utf8)) else {
            throw UpstreamIDTokenError("nonce is not this sign-in's")
        }
        // §2 sub: "It MUST NOT exceed 255 ASCII characters in length."
        guard let sub = claims.sub, (1...255).contains(sub.utf8.count), sub.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw UpstreamIDTokenError("sub missing, too long or not printable ASCII")
        }
        // Google: "hd" names the Workspace domain of the account; the
        // authorization request's hd only narrows the chooser, so the claim
        // is what decides.
        if let domain = provider.hostedDomain, claims.hd.map({ !$0.utf8.elementsEqual(domain.utf8) }) ?? true {
            throw UpstreamIDTokenError("hd is not \(domain)")
        }
        // The provider's address is held to the rules a sign-up's is: it
        // becomes this issuer's account name.
        let email = claims.email.flatMap { (try? UserAccounts.validate(email: $0)) != nil ? $0 : nil }
        return UpstreamIdentity(issuer: iss, subject: sub, verifiedEmail: claims.email_verified?.value == true ? email : nil,
                                name: displayName(claims.name, or: [claims.given_name, claims.family_name]), amr: (claims.amr ?? []).filter(registeredMethods.contains).prefix(8).map { $0 },
                                isPrivateEmail: claims.is_private_email?.value ?? false)
    }

    /// RFC 8176 §2's registered values: an upstream's own words are not passed on.
    static let registeredMethods: Swift.Set<String> = ["face", "fpt", "geo", "hwk", "iris", "kba", "mca", "mfa", "otp", "pin", "pwd", "rba",
                                                        "retina", "sc", "sms", "swk", "tel", "user", "vbm", "wia"]

    /// A display name: `full` when it has something to show, else the
    /// parts that have, joined; nil when nothing is left.
    static func displayName(_ full: String?, or parts: [String?]) -> String? {
        if let full = full.map(cleanName), !full.isEmpty { return full }
        let cleaned = parts.compactMap { $0.map(cleanName) }.filter { !$0.isEmpty }
        return cleaned.isEmpty ? nil : cleaned.joined(separator: " ")
    }

    /// Control characters and bidirectional overrides out (a name is shown
    /// on pages and in mail: "evil\u{202E}gnp.exe" must not read reversed),
    /// surrounding white space trimmed, at most 200 characters.
    static func cleanName(_ name: String) -> String {
        let kept = name.unicodeScalars.filter {
            !($0.value < 32 || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value))
        }
        let trimmed = String(String.UnicodeScalarView(kept)).drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
        return String(String(trimmed).prefix(200))
    }
}
