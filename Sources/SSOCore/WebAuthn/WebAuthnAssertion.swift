/// The credential record (WebAuthn §4 "credential record") an assertion is
/// checked against: what registration returned, as the caller stored it.
public struct StoredCredential: Sendable {
    /// RegisteredCredential.publicKeyCOSE.
    public let publicKeyCOSE: [UInt8]
    /// The counter of the last successful ceremony.
    public let signCount: UInt32
    /// BE at registration, which "MUST NOT change" (§6.1.3).
    public let backupEligible: Bool
    /// The user handle (`user.id`) the credential was created for.
    public let userHandle: [UInt8]

    public init(publicKeyCOSE: [UInt8], signCount: UInt32, backupEligible: Bool, userHandle: [UInt8]) {
        self.publicKeyCOSE = publicKeyCOSE
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.userHandle = userHandle
    }
}

/// What a verified assertion says, for the caller to update the credential
/// record with (§7.2: "Update credentialRecord with new state values":
/// signCount, backupState, and uvInitialized once UV was seen).
public struct VerifiedAssertion: Equatable, Sendable {
    public let signCount: UInt32
    public let backupState: Bool
    public let userVerified: Bool
}

/// §7.2 "Verifying an Authentication Assertion": the relying party's checks
/// of what `navigator.credentials.get()` returned, in the specification's
/// order, each a function of its own quoting its step. Finding the
/// credential record by `credential.rawId` (and, for a discoverable
/// credential, the account by `response.userHandle`) is the caller's, who
/// has the store; it passes the record in.
public enum WebAuthnAssertion {
    /// 37 bytes plus extension outputs.
    public static let maximumAuthenticatorDataLength = 16 * 1024
    /// An RSA-8192 signature is 1024 bytes; ES256 72 at most, EdDSA 64.
    public static let maximumSignatureLength = 1024

    public static func verify(clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?,
                              expectedChallenge: [UInt8], relyingParty: WebAuthnRelyingParty,
                              credential: StoredCredential) throws -> VerifiedAssertion {
        try verify(clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature, userHandle: userHandle,
                   expectedChallenge: expectedChallenge, relyingParty: relyingParty, credential: credential,
                   requireUserVerification: true)
    }

    /// The steps, with user verification optional only so that the
    /// specification's own test vectors (UV not set) can be checked whole.
    static func verify(clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?,
                       expectedChallenge: [UInt8], relyingParty: WebAuthnRelyingParty, credential: StoredCredential,
                       requireUserVerification: Bool) throws -> VerifiedAssertion {
        try checkUserHandle(userHandle, credential)
        // "Let cData, authData and sig denote the value of response's
        // clientDataJSON, authenticatorData, and signature respectively."
        // "Let JSONtext be the result of running UTF-8 decode on the value of
        // cData." "Let C, the client data claimed as used for the signature,
        // be the result of running an implementation-specific JSON parser on
        // JSONtext."
        let client = try CollectedClientData.parse(clientDataJSON)
        try WebAuthnSteps.checkType(client, is: "webauthn.get")
        try WebAuthnSteps.checkChallenge(client, expected: expectedChallenge)
        try WebAuthnSteps.checkOrigin(client, relyingParty)
        try WebAuthnSteps.checkCrossOrigin(client)
        try WebAuthnSteps.checkTopOrigin(client)
        // authData is parsed where a step first reads it.
        guard authenticatorData.count <= maximumAuthenticatorDataLength else {
            throw WebAuthnError(.malformedAuthenticatorData, "authenticator data of \(authenticatorData.count) bytes")
        }
        let authData = try AuthenticatorData(parsing: authenticatorData)
        try WebAuthnSteps.checkRpIdHash(authData, relyingParty)
        try checkNoCredentialData(authData)
        try WebAuthnSteps.checkUserPresent(authData)
        try WebAuthnSteps.checkUserVerified(authData, required: requireUserVerification)
        try WebAuthnSteps.checkBackupFlags(authData)
        try checkBackupEligibility(authData, credential)
        // "Verify that the values of the client extension outputs ... and the
        // authenticator extension outputs in the extensions in authData are
        // as expected": none are requested; unsolicited ones are ignored.
        try checkSignature(signature, authenticatorData: authenticatorData, clientDataJSON: clientDataJSON, credential)
        try checkSignCount(authData, credential)
        return VerifiedAssertion(signCount: authData.signCount, backupState: authData.backupState, userVerified: authData.userVerified)
    }

    /// "If the user was identified before the authentication ceremony was
    /// initiated ... If response.userHandle is present, verify that it
    /// equals the user handle of the user account." (Without a user
    /// identified first, the caller found the account by this user handle.)
    static func checkUserHandle(_ userHandle: [UInt8]?, _ credential: StoredCredential) throws {
        guard let userHandle else { return }
        guard ConstantTime.equals(userHandle, credential.userHandle) else {
            throw WebAuthnError(.userHandleMismatch, "userHandle is not the credential's user")
        }
    }

    /// §6.1: "For assertion signatures, the AT flag MUST NOT be set and the
    /// attestedCredentialData MUST NOT be included."
    static func checkNoCredentialData(_ authData: AuthenticatorData) throws {
        guard authData.attestedCredentialData == nil else {
            throw WebAuthnError(.unexpectedCredentialData, "AT is set in an assertion")
        }
    }

    /// "If credentialRecord.backupEligible is set, verify that currentBe is
    /// set. If credentialRecord.backupEligible is not set, verify that
    /// currentBe is not set." (§6.1.3: BE "MUST NOT change".)
    static func checkBackupEligibility(_ authData: AuthenticatorData, _ credential: StoredCredential) throws {
        guard authData.backupEligible == credential.backupEligible else {
            throw WebAuthnError(.backupEligibilityChanged, "BE is \(authData.backupEligible), registered \(credential.backupEligible)")
        }
    }

    /// "Let hash be the result of computing a hash over the cData using
    /// SHA-256." "Using credentialRecord.publicKey, verify that sig is a
    /// valid signature over the binary concatenation of authData and hash."
    static func checkSignature(_ signature: [UInt8], authenticatorData: [UInt8], clientDataJSON: [UInt8],
                               _ credential: StoredCredential) throws {
        let key = try COSEPublicKey.parse(credential.publicKeyCOSE)
        let hash = SHA256.hash(clientDataJSON)
        guard signature.count <= maximumSignatureLength, key.verify(signature: signature, message: authenticatorData + hash) else {
            throw WebAuthnError(.badSignature, "\(key.algorithm) signature of \(signature.count) bytes does not verify")
        }
    }

    /// "If authData.signCount is nonzero or credentialRecord.signCount is
    /// nonzero, then ...: If authData.signCount is greater than
    /// credentialRecord.signCount: The signature counter is valid. If
    /// authData.signCount is less than or equal to credentialRecord.signCount:
    /// This is a signal that the authenticator may be cloned ... Whether the
    /// Relying Party ... fails the authentication ceremony or not, is
    /// Relying Party-specific." Here it fails: a possible clone does not
    /// sign in. Both zero is an authenticator without a counter (§6.1.1).
    static func checkSignCount(_ authData: AuthenticatorData, _ credential: StoredCredential) throws {
        guard authData.signCount != 0 || credential.signCount != 0 else { return }
        guard authData.signCount > credential.signCount else {
            throw WebAuthnError(.signCountNotIncreased, "signCount \(authData.signCount), stored \(credential.signCount)")
        }
    }
}
