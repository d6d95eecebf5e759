/// What a registration ceremony proved, for the caller to store as the
/// credential record (WebAuthn §7.1's last step) next to the user handle
/// it put in the creation options. Checking that `credentialID` is not yet
/// registered to anyone (§7.1: "Verify that the credentialId is not yet
/// registered for any user") needs the store, so it is the caller's.
public struct RegisteredCredential: Equatable, Sendable {
    public let credentialID: [UInt8]
    /// The COSE_Key exactly as the authenticator encoded it.
    public let publicKeyCOSE: [UInt8]
    /// Its COSE algorithm identifier: -7, -8 or -257.
    public let algorithm: Int
    public let signCount: UInt32
    public let aaguid: [UInt8]
    public let backupEligible: Bool
    public let backupState: Bool
    public let userVerified: Bool
}

/// §7.1 "Registering a New Credential": the relying party's checks of what
/// `navigator.credentials.create()` returned, in the specification's order,
/// each a function of its own quoting its step. The steps before (making
/// the options, calling the API) are the page's; the one after (storing the
/// credential record) is the caller's.
///
/// Attestation: `none` only (§8.7). The issuer asks for
/// `attestation: "none"` and has no use for an authenticator's make and
/// model, and a client honouring that request replaces whatever the
/// authenticator made with `none` (Chromium, its virtual authenticator
/// included, sends `fmt: "none"` with an empty `attStmt`). Another format
/// is refused rather than accepted unverified: a `packed` self attestation
/// from a client that passes attestation through would need its signature
/// checked (§8.2 verification procedure), which is not written yet.
public enum WebAuthnRegistration {
    /// Hundreds of bytes under `none`; an attestation certificate chain
    /// would be a few kilobytes.
    public static let maximumAttestationObjectLength = 64 * 1024

    public static func verify(clientDataJSON: [UInt8], attestationObject: [UInt8], expectedChallenge: [UInt8],
                              relyingParty: WebAuthnRelyingParty, allowedAlgorithms: [Int] = [-7, -8, -257]) throws -> RegisteredCredential {
        try verify(clientDataJSON: clientDataJSON, attestationObject: attestationObject, expectedChallenge: expectedChallenge,
                   relyingParty: relyingParty, allowedAlgorithms: allowedAlgorithms, requireUserVerification: true)
    }

    /// The steps, with user verification optional only so that the
    /// specification's own test vectors (UV not set) can be checked whole.
    static func verify(clientDataJSON: [UInt8], attestationObject: [UInt8], expectedChallenge: [UInt8],
                       relyingParty: WebAuthnRelyingParty, allowedAlgorithms: [Int],
                       requireUserVerification: Bool) throws -> RegisteredCredential {
        // "Let JSONtext be the result of running UTF-8 decode on the value of
        // response.clientDataJSON." "Let C, the client data claimed as
        // collected during the credential creation, be the result of running
        // an implementation-specific JSON parser on JSONtext."
        let client = try CollectedClientData.parse(clientDataJSON)
        try WebAuthnSteps.checkType(client, is: "webauthn.create")
        try WebAuthnSteps.checkChallenge(client, expected: expectedChallenge)
        try WebAuthnSteps.checkOrigin(client, relyingParty)
        try WebAuthnSteps.checkCrossOrigin(client)
        try WebAuthnSteps.checkTopOrigin(client)
        // "Let hash be the result of computing a hash over
        // response.clientDataJSON using SHA-256": only an attestation
        // statement's verification procedure takes it, and `none` has none.
        let attestation = try AttestationObject(decoding: attestationObject)
        let authData = attestation.authData
        try WebAuthnSteps.checkRpIdHash(authData, relyingParty)
        try WebAuthnSteps.checkUserPresent(authData)
        try WebAuthnSteps.checkUserVerified(authData, required: requireUserVerification)
        try WebAuthnSteps.checkBackupFlags(authData)
        // "If the Relying Party uses the credential's backup eligibility [and
        // backup state] to inform its user experience flows and/or policies,
        // evaluate the BE [BS] bit": returned, for the caller to keep.
        let (credential, algorithm) = try checkAlgorithm(authData, allowed: allowedAlgorithms)
        // "Verify that the values of the client extension outputs ... and the
        // authenticator extension outputs in the extensions in authData are
        // as expected": none are requested, and unsolicited ones (a security
        // key's credProtect) are ignored, as "Relying Parties MUST be
        // prepared to handle such situations, whether it be to ignore the
        // unsolicited extensions or reject the attestation".
        try checkAttestationFormat(attestation)
        try checkAttestationStatement(attestation)
        // "If no attestation was provided, verify that None attestation is
        // acceptable under Relying Party policy": it is the policy.
        try checkCredentialIDLength(credential)
        return RegisteredCredential(
            credentialID: credential.credentialID, publicKeyCOSE: credential.credentialPublicKey, algorithm: algorithm.rawValue,
            signCount: authData.signCount, aaguid: credential.aaguid, backupEligible: authData.backupEligible,
            backupState: authData.backupState, userVerified: authData.userVerified)
    }

    /// "Verify that the "alg" parameter in the credential public key in
    /// authData matches the alg attribute of one of the items in
    /// pkOptions.pubKeyCredParams." The key is built here too, so a key
    /// that could never verify an assertion is refused now, not at sign-in.
    static func checkAlgorithm(_ authData: AuthenticatorData,
                               allowed: [Int]) throws -> (AuthenticatorData.AttestedCredentialData, COSEAlgorithm) {
        // §6.5.1: "For attestation signatures, the authenticator MUST set the
        // AT flag and include the attestedCredentialData."
        guard let credential = authData.attestedCredentialData else {
            throw WebAuthnError(.missingCredentialData, "AT is not set: no credential public key")
        }
        let key = try COSEPublicKey.parse(credential.credentialPublicKey)
        guard allowed.contains(key.algorithm.rawValue) else {
            throw WebAuthnError(.unsupportedAlgorithm, "alg \(key.algorithm.rawValue) is not one of \(allowed)")
        }
        return (credential, key.algorithm)
    }

    /// "Determine the attestation statement format by performing a USASCII
    /// case-sensitive match on fmt against the set of supported WebAuthn
    /// Attestation Statement Format Identifier values": {"none"}.
    static func checkAttestationFormat(_ attestation: AttestationObject) throws {
        guard attestation.format.bytesEqual("none") else {
            throw WebAuthnError(.unsupportedAttestation, "fmt \(attestation.format.prefix(32).debugDescription)")
        }
    }

    /// "Verify that attStmt is a correct attestation statement, conveying a
    /// valid attestation signature, by using the attestation statement
    /// format fmt's verification procedure": §8.7 `none` is
    /// "attStmt: emptyMap".
    static func checkAttestationStatement(_ attestation: AttestationObject) throws {
        guard attestation.statement.isEmpty else {
            throw WebAuthnError(.unsupportedAttestation, "none with \(attestation.statement.count) attStmt members")
        }
    }

    /// "Verify that the credentialId is ≤ 1023 bytes. Credential IDs larger
    /// than this many bytes SHOULD cause the RP to fail this registration
    /// ceremony." (The parser already refuses a longer credentialIdLength,
    /// §6.5.1; this is the ceremony's own check of the same rule.) An empty
    /// one names nothing an assertion could present, and the passkeys
    /// table refuses it: a 400 here, not a constraint's 500 later.
    static func checkCredentialIDLength(_ credential: AuthenticatorData.AttestedCredentialData) throws {
        guard !credential.credentialID.isEmpty else { throw WebAuthnError(.credentialIDEmpty, "credential ID of 0 bytes") }
        guard credential.credentialID.count <= AuthenticatorData.maximumCredentialIDLength else {
            throw WebAuthnError(.credentialIDTooLong, "credential ID of \(credential.credentialID.count) bytes")
        }
    }
}

/// §6.5.4 "attObj = { authData: bytes, fmt: text, attStmt: { * tstr => any } }".
struct AttestationObject {
    let format: String
    let statement: [CBORMapKey: CBORValue]
    let authDataBytes: [UInt8]
    let authData: AuthenticatorData

    /// "Perform CBOR decoding on the attestationObject field of the
    /// AuthenticatorAttestationResponse structure to obtain the attestation
    /// statement format fmt, the authenticator data authData, and the
    /// attestation statement attStmt."
    init(decoding bytes: [UInt8]) throws {
        guard bytes.count <= WebAuthnRegistration.maximumAttestationObjectLength else {
            throw WebAuthnError(.malformedAttestationObject, "attestation object of \(bytes.count) bytes")
        }
        let value: CBORValue
        do {
            value = try CBOR.decode(bytes)
        } catch let error as CBORError {
            throw WebAuthnError(.malformedCBOR, "attestation object: \(error)")
        }
        guard let map = value.mapValue else { throw WebAuthnError(.malformedAttestationObject, "attestation object is not a map") }
        guard let format = map["fmt"]?.textValue, let statement = map["attStmt"]?.mapValue, let authData = map["authData"]?.bytesValue else {
            throw WebAuthnError(.malformedAttestationObject, "fmt (text), attStmt (map) or authData (bytes) missing")
        }
        // attStmt is "{ * tstr => any }".
        guard statement.keys.allSatisfy({ if case .text = $0 { true } else { false } }) else {
            throw WebAuthnError(.malformedAttestationObject, "attStmt has a key that is not text")
        }
        self.format = format
        self.statement = statement
        authDataBytes = authData
        self.authData = try AuthenticatorData(parsing: authData)
    }
}
