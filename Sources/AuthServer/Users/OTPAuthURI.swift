import FoundationEssentials
import IssuerStorage
import SSOCore

/// The enrolment URI authenticator apps read from a QR code (the Key Uri
/// Format of Google Authenticator, which every app follows):
/// `otpauth://totp/ISSUER:ACCOUNT?secret=BASE32&issuer=ISSUER&algorithm=SHA1&digits=6&period=30`.
/// ISSUER is the deployment's brand name (`GATEHOUSE_BRAND_NAME`), so the
/// app lists the account under the name users know the service by.
public enum OTPAuthURI {
    public static func totp(email: String, secret: [UInt8], issuer: String) -> String {
        // Key Uri Format, "Label": "Neither issuer nor account name may
        // themselves contain a colon." A name with one goes in the issuer
        // parameter only, which the format calls the preferred place anyway.
        let prefix = issuer.contains(":") ? "" : encode(issuer) + ":"
        return "otpauth://totp/\(prefix)\(encodeLabel(email))?secret=\(Base32.encode(secret))&issuer=\(encode(issuer))"
            + "&algorithm=SHA1&digits=\(TOTP.digits)&period=\(TOTP.period)"
    }

    /// Key Uri Format: the label and the issuer parameter are "URL-encoded
    /// according to RFC 3986": every byte but the unreserved characters is
    /// escaped, so a space is "%20" (never "+", which apps would show).
    static func encode(_ text: String) -> String { FormParser.encodeComponent(text) }

    /// The account name: as `encode`, but "@" stays (an address reads as
    /// itself); ":" and "+" are escaped.
    static func encodeLabel(_ text: String) -> String {
        encode(text).replacing("%40", with: "@")
    }
}
