/// The relying party a ceremony is for: its RP ID (WebAuthn §5.1.2, a
/// registrable domain such as "login.example.com") and the origins its
/// pages run the ceremonies from ("https://login.example.com"), compared
/// byte for byte.
public struct WebAuthnRelyingParty: Sendable {
    public let id: String
    public let origins: [String]

    public init(id: String, origins: [String]) {
        self.id = id
        self.origins = origins
    }
}

/// The steps §7.1 (registration) and §7.2 (authentication) share, one
/// function each, with the text of the step they implement.
enum WebAuthnSteps {
    /// The challenge is at least 16 random bytes (§13.4.3); a shorter
    /// expected value is the caller's mistake and nothing verifies against it.
    static let minimumChallengeLength = 16

    /// §7.1 "Verify that the value of C.type is webauthn.create";
    /// §7.2 "Verify that the value of C.type is the string webauthn.get".
    static func checkType(_ client: CollectedClientData, is expected: String) throws {
        guard client.type.bytesEqual(expected) else { throw WebAuthnError(.wrongType, "type \(client.type.prefix(32).debugDescription)") }
    }

    /// "Verify that the value of C.challenge equals the base64url encoding
    /// of options.challenge." Compared in constant time.
    static func checkChallenge(_ client: CollectedClientData, expected: [UInt8]) throws {
        guard expected.count >= minimumChallengeLength else {
            throw WebAuthnError(.challengeMismatch, "expected challenge of \(expected.count) bytes")
        }
        guard ConstantTime.equals(Array(client.challenge.utf8), Array(Base64URL.encode(expected).utf8)) else {
            throw WebAuthnError(.challengeMismatch, "challenge is not the one issued")
        }
    }

    /// "Verify that the value of C.origin is an origin expected by the
    /// Relying Party." Exactly one of its origins, byte for byte.
    static func checkOrigin(_ client: CollectedClientData, _ relyingParty: WebAuthnRelyingParty) throws {
        guard relyingParty.origins.containsBytes(client.origin) else {
            throw WebAuthnError(.originNotAllowed, "origin \(client.origin.prefix(64).debugDescription)")
        }
    }

    /// "If C.crossOrigin is present and set to true, verify that the Relying
    /// Party expects that this credential would have been created [used]
    /// within an iframe that is not same-origin with its ancestors." This
    /// relying party never runs a ceremony inside another site's iframe.
    static func checkCrossOrigin(_ client: CollectedClientData) throws {
        guard client.crossOrigin != true else { throw WebAuthnError(.crossOrigin, "crossOrigin is true") }
    }

    /// "If C.topOrigin is present: Verify that the Relying Party expects
    /// that this credential would have been created [used] within an iframe
    /// that is not same-origin with its ancestors." As above: never.
    static func checkTopOrigin(_ client: CollectedClientData) throws {
        guard client.topOrigin == nil else { throw WebAuthnError(.crossOrigin, "topOrigin \(client.topOrigin!.prefix(64).debugDescription)") }
    }

    /// "Verify that the rpIdHash in authData is the SHA-256 hash of the RP
    /// ID expected by the Relying Party."
    static func checkRpIdHash(_ authenticatorData: AuthenticatorData, _ relyingParty: WebAuthnRelyingParty) throws {
        guard ConstantTime.equals(authenticatorData.rpIdHash, SHA256.hash(relyingParty.id)) else {
            throw WebAuthnError(.rpIdMismatch, "rpIdHash is not SHA-256(\(relyingParty.id))")
        }
    }

    /// "Verify that the UP bit of the flags in authData is set."
    static func checkUserPresent(_ authenticatorData: AuthenticatorData) throws {
        guard authenticatorData.userPresent else { throw WebAuthnError(.userNotPresent, "UP is not set") }
    }

    /// §7.1 "If the Relying Party requires user verification for this
    /// registration, verify that the UV bit of the flags in authData is
    /// set"; §7.2 "If user verification is required, verify that the UV bit
    /// of the flags in authData is set." A passkey is the whole sign-in
    /// here, so it is required.
    static func checkUserVerified(_ authenticatorData: AuthenticatorData, required: Bool) throws {
        guard authenticatorData.userVerified || !required else { throw WebAuthnError(.userNotVerified, "UV is not set") }
    }

    /// "If the BE bit of the flags in authData is not set, verify that the
    /// BS bit is not set." (§6.1.3: BE 0, BS 1 "is not allowed".)
    static func checkBackupFlags(_ authenticatorData: AuthenticatorData) throws {
        guard authenticatorData.backupFlagsAreValid else { throw WebAuthnError(.backupFlagsInvalid, "BS is set without BE") }
    }
}
