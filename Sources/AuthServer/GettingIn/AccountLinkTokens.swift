import IssuerStorage
import SSOCore

/// The mailed links' tokens: 128 bits from OpenSSL's CSPRNG, base64url in
/// the link, only their SHA-256 stored (AccountLinkStore), so a copy of the
/// database opens no account. How long each kind lives is here, once.
enum AccountLinkTokens {
    static let verificationLifetime: Int64 = 24 * 3600
    static let passwordResetLifetime: Int64 = 30 * 60
    static let invitationLifetime: Int64 = 7 * 86_400
    /// An email change's link to the new address lives as a verification
    /// link; the old address's "it wasn't me" link a week, because the
    /// owner of a taken-over account may not read mail every day.
    static let emailChangeLifetime: Int64 = verificationLifetime
    static let emailRevertLifetime: Int64 = 7 * 86_400

    /// A new token (22 base64url characters).
    static func make() -> String { SecureRandom.token(byteCount: 16) }

    /// The stored form of a presented token; nil for text that cannot be
    /// one of ours (a link mangled by a mail client, a guess of any
    /// length), which then matches no row without a lookup.
    static func hash(_ presented: String) -> [UInt8]? {
        guard presented.utf8.count == 22, Base64URL.decode(presented)?.count == 16 else { return nil }
        return SecretHash.of(presented)
    }

    static func lifetime(_ purpose: AccountLinkPurpose) -> Int64 {
        switch purpose {
        case .passwordReset: passwordResetLifetime
        case .invitation: invitationLifetime
        case .emailRevert: emailRevertLifetime
        default: verificationLifetime
        }
    }
}
