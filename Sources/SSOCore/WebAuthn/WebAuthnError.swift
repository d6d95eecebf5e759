/// Why a WebAuthn ceremony's response was refused (W3C Web Authentication
/// Level 3 §7.1 and §7.2): one reason per check. `detail` is for the log
/// only; a browser is told no more than that the ceremony failed.
public struct WebAuthnError: Error, Equatable, CustomStringConvertible {
    public enum Reason: String, CaseIterable, Sendable {
        // The encodings.
        case malformedCBOR, malformedClientData, malformedAttestationObject, malformedAuthenticatorData
        // The client data (§5.8.1).
        case wrongType, challengeMismatch, originNotAllowed, crossOrigin
        // The authenticator data (§6.1).
        case rpIdMismatch, userNotPresent, userNotVerified, backupFlagsInvalid, backupEligibilityChanged
        case missingCredentialData, unexpectedCredentialData, credentialIDTooLong, credentialIDEmpty
        // The credential public key (§6.5.1.1, RFC 9052/9053/8230).
        case unsupportedAlgorithm, badPublicKey, privateKeyIncluded
        // The attestation statement (§8).
        case unsupportedAttestation
        // The assertion (§7.2).
        case badSignature, signCountNotIncreased, userHandleMismatch
    }

    public let reason: Reason
    public let detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}
