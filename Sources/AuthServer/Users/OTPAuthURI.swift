import FoundationEssentials
import IssuerStorage
import SSOCore

/// The enrolment URI authenticator apps read from a QR code (the Key Uri
/// Format of Google Authenticator, which every app follows):
/// `otpauth://totp/ISSUER:ACCOUNT?secret=BASE32&issuer=ISSUER&algorithm=SHA1&digits=6&period=30`.
public enum OTPAuthURI {
    public static let issuer = "Gatehouse"

    public static func totp(email: String, secret: [UInt8]) -> String {
        "otpauth://totp/\(issuer):\(encodeLabel(email))?secret=\(Base32.encode(secret))&issuer=\(issuer)"
            + "&algorithm=SHA1&digits=\(TOTP.digits)&period=\(TOTP.period)"
    }

    /// Percent-encodes the account name for the label: RFC 3986 unreserved
    /// characters and "@" stay (an address reads as itself), the rest,
    /// including ":" and "+", is escaped.
    static func encodeLabel(_ text: String) -> String {
        FormParser.encodeComponent(text).replacing("%40", with: "@")
    }
}
