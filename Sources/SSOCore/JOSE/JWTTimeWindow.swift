/// The one check of a JWT's validity window, with `now` passed in (jwt-kit's
/// typed claim checks): the resource servers, the issuer and gatehouse-login
/// each hold one with their own leeway and word the violation their own way.
///
/// RFC 7519 §4.1.4: "the current date/time MUST be before the expiration
/// date/time listed in the "exp" claim." §4.1.5: "the current date/time
/// MUST be after or equal to the not-before date/time listed in the "nbf"
/// claim." §4.1.4-4.1.5: "Implementers MAY provide for some small leeway,
/// usually no more than a few minutes, to account for clock skew." A token
/// issued (`iat`) further in the future than the leeway is refused too: a
/// clock or the token is wrong. NumericDates may be non-integer (RFC 7519
/// §2), hence `Double`; integer claims convert exactly.
public struct JWTTimeWindow: Sendable {
    public enum Violation: Sendable, Equatable {
        /// now ≥ exp + leeway.
        case expired
        /// now + leeway < nbf.
        case notYetValid
        /// iat > now + leeway.
        case issuedInFuture
    }

    /// Seconds of clock difference tolerated on each bound.
    public let leeway: Double

    public init(leeway: Double) { self.leeway = leeway }

    /// The first bound `now` is outside of, exp first; nil inside the window.
    public func violation(expiresAt: Double, notBefore: Double?, issuedAt: Double?, now: Double) -> Violation? {
        guard now < expiresAt + leeway else { return .expired }
        if let notBefore, now + leeway < notBefore { return .notYetValid }
        if let issuedAt, !(issuedAt <= now + leeway) { return .issuedInFuture }
        return nil
    }
}
