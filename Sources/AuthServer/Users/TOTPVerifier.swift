import IssuerStorage
import SSOCore

/// Checks a submitted TOTP code (RFC 6238, 30 s steps, 6 digits, HMAC-SHA-1).
public enum TOTPVerifier {
    /// RFC 6238 §5.2: "We RECOMMEND that at most one time step is allowed
    /// as the network delay."
    public static let allowedStepDrift: Int64 = 1

    /// Exactly six ASCII digits (what the form's pattern asks for).
    public static func isWellFormed(_ code: String) -> Bool {
        code.utf8.count == TOTP.digits && code.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The time step `code` belongs to, within one step either side of
    /// `time`, and later than `lastUsedStep`; nil otherwise. Every candidate
    /// is computed and compared in constant time, with no early exit.
    public static func matchingStep(code: String, secret: [UInt8], at time: Int64, after lastUsedStep: Int64) -> Int64? {
        guard isWellFormed(code) else { return nil }
        let current = TOTP.step(at: time)
        let submitted = Array(code.utf8)
        var matched: Int64?
        for step in (current - allowedStepDrift)...(current + allowedStepDrift) {
            let matches = ConstantTime.equals(Array(TOTP.code(secret: secret, step: step).utf8), submitted)
            // RFC 6238 §5.2: "the verifier MUST NOT accept the second attempt
            // of the OTP after the successful validation has been issued for
            // the first OTP, which ensures one-time only use of an OTP."
            if matches && step > lastUsedStep { matched = step }
        }
        return matched
    }
}
