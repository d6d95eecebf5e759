import COpenSSL
import Foundation
@testable import SSOCore
import XCTest

/// WebAuthn Level 3 §7.1 (registration) and §7.2 (authentication): the
/// specification's own test vectors verify, vectors made by another
/// implementation (Python `cryptography`) verify, each algorithm works end
/// to end with keys made here, and every check refuses what it must.
final class WebAuthnTests: XCTestCase {
    static let relyingParty = WebAuthnRelyingParty(id: "login.example.com", origins: ["https://login.example.com", "https://example.com"])
    static let origin = "https://login.example.com"
    /// Made once: RSA key generation is slow.
    fileprivate static let rsaAuthenticator = try! TestAuthenticator(.rsa(RSAKey.generate(bits: 2048)))

    // MARK: Known answers

    /// §16.2 "ES256 Credential with No Attestation" verifies as published.
    /// Its flags carry no UV (0x59: UP, BE, BS, AT), so the steps run with
    /// user verification optional; the public API, which requires UV,
    /// refuses it for that reason and no other.
    func testTheSpecificationsRegistrationVectorVerifies() throws {
        let registered = try WebAuthnRegistration.verify(
            clientDataJSON: W3CVectors.registrationClientData, attestationObject: W3CVectors.attestationObject,
            expectedChallenge: W3CVectors.registrationChallenge, relyingParty: W3CVectors.relyingParty,
            allowedAlgorithms: [-7], requireUserVerification: false)
        XCTAssertEqual(registered.credentialID, W3CVectors.credentialID)
        XCTAssertEqual(registered.aaguid, W3CVectors.aaguid)
        XCTAssertEqual(registered.publicKeyCOSE, W3CVectors.credentialPublicKey, "the COSE_Key's exact bytes")
        XCTAssertEqual(registered.algorithm, -7)
        XCTAssertEqual(registered.signCount, 0)
        XCTAssertTrue(registered.backupEligible)
        XCTAssertTrue(registered.backupState)
        XCTAssertFalse(registered.userVerified)
        assertRefused(.userNotVerified) {
            try WebAuthnRegistration.verify(clientDataJSON: W3CVectors.registrationClientData, attestationObject: W3CVectors.attestationObject,
                                            expectedChallenge: W3CVectors.registrationChallenge, relyingParty: W3CVectors.relyingParty)
        }
        // The client data's challenge is the published challenge's base64url.
        XCTAssertEqual(try CollectedClientData.parse(W3CVectors.registrationClientData).challenge,
                       Base64URL.encode(W3CVectors.registrationChallenge))
    }

    /// §16.2's authentication example, against the key its registration
    /// example stored: both counters zero ("the authenticator does not
    /// implement a counter"), which is accepted.
    func testTheSpecificationsAuthenticationVectorVerifies() throws {
        let stored = StoredCredential(publicKeyCOSE: W3CVectors.credentialPublicKey, signCount: 0, backupEligible: true,
                                      userHandle: Array("user".utf8))
        func verify(signature: [UInt8] = W3CVectors.assertionSignature, challenge: [UInt8] = W3CVectors.assertionChallenge,
                    requireUserVerification: Bool = false) throws -> VerifiedAssertion {
            try WebAuthnAssertion.verify(clientDataJSON: W3CVectors.assertionClientData, authenticatorData: W3CVectors.assertionAuthenticatorData,
                                         signature: signature, userHandle: nil, expectedChallenge: challenge,
                                         relyingParty: W3CVectors.relyingParty, credential: stored,
                                         requireUserVerification: requireUserVerification)
        }
        XCTAssertEqual(try verify(), VerifiedAssertion(signCount: 0, backupState: true, userVerified: false))
        assertRefused(.userNotVerified) { try verify(requireUserVerification: true) }
        assertRefused(.challengeMismatch) { try verify(challenge: W3CVectors.registrationChallenge) }
        var flipped = W3CVectors.assertionSignature
        flipped[40] ^= 0x01
        assertRefused(.badSignature) { try verify(signature: flipped) }
    }

    /// The published COSE_Key is in CTAP2 canonical form, which is what
    /// CBORValue.encoded writes; its rpIdHash is SHA-256("example.org").
    func testTheSpecificationsVectorsDecodeAsPublished() throws {
        XCTAssertEqual(try CBOR.decode(W3CVectors.credentialPublicKey).encoded, W3CVectors.credentialPublicKey)
        XCTAssertEqual(try CBOR.decode(W3CVectors.attestationObject).encoded, W3CVectors.attestationObject)
        let authData = try AuthenticatorData(parsing: W3CVectors.assertionAuthenticatorData)
        XCTAssertEqual(authData.rpIdHash, SHA256.hash("example.org"))
        XCTAssertEqual(authData.flags, [.userPresent, .backupEligible, .backupState])
        XCTAssertNil(authData.attestedCredentialData)
        XCTAssertNil(authData.extensions)
    }

    /// Vectors made offline by Python `cryptography` (and a CBOR encoder
    /// written there): an Ed25519 registration and assertion, and an RS256
    /// assertion. Another implementation's bytes, not this one's round trip.
    func testVectorsMadeByPythonCryptographyVerify() throws {
        let registered = try WebAuthnRegistration.verify(
            clientDataJSON: PythonVectors.registrationClientData, attestationObject: PythonVectors.attestationObject,
            expectedChallenge: PythonVectors.registrationChallenge, relyingParty: Self.relyingParty)
        XCTAssertEqual(registered, RegisteredCredential(
            credentialID: Array(0xA0...0xAF), publicKeyCOSE: PythonVectors.ed25519COSE, algorithm: -8, signCount: 0,
            aaguid: [UInt8](repeating: 0, count: 16), backupEligible: true, backupState: false, userVerified: true))
        let handle = Array("user-1234".utf8)
        let stored = StoredCredential(publicKeyCOSE: registered.publicKeyCOSE, signCount: registered.signCount,
                                      backupEligible: registered.backupEligible, userHandle: handle)
        XCTAssertEqual(try WebAuthnAssertion.verify(
            clientDataJSON: PythonVectors.assertionClientData, authenticatorData: PythonVectors.ed25519AuthenticatorData,
            signature: PythonVectors.ed25519Signature, userHandle: handle, expectedChallenge: PythonVectors.assertionChallenge,
            relyingParty: Self.relyingParty, credential: stored), VerifiedAssertion(signCount: 7, backupState: false, userVerified: true))

        let rsa = StoredCredential(publicKeyCOSE: PythonVectors.rsaCOSE, signCount: 41, backupEligible: false, userHandle: handle)
        func verifyRSA(_ signature: [UInt8]) throws -> VerifiedAssertion {
            try WebAuthnAssertion.verify(
                clientDataJSON: PythonVectors.assertionClientData, authenticatorData: PythonVectors.rsaAuthenticatorData,
                signature: signature, userHandle: nil, expectedChallenge: PythonVectors.assertionChallenge,
                relyingParty: Self.relyingParty, credential: rsa)
        }
        XCTAssertEqual(try verifyRSA(PythonVectors.rsaSignature), VerifiedAssertion(signCount: 42, backupState: false, userVerified: true))
        var flipped = PythonVectors.rsaSignature
        flipped[100] ^= 0x80
        assertRefused(.badSignature) { try verifyRSA(flipped) }
    }

    // MARK: End to end, each algorithm

    func testEachAlgorithmRegistersAndSignsIn() throws {
        for authenticator in [try TestAuthenticator(.es256(ES256PrivateKey.generate())), TestAuthenticator(.ed25519(Ed25519TestKey())),
                              Self.rsaAuthenticator] {
            let registration = RegistrationResponse(authenticator, flags: 0x5D)
            let registered = try registration.verify()
            XCTAssertEqual(registered.credentialID, authenticator.credentialID)
            XCTAssertEqual(registered.algorithm, authenticator.algorithm)
            XCTAssertEqual(registered.publicKeyCOSE, authenticator.publicKeyCOSE)
            XCTAssertEqual(registered.aaguid, registration.aaguid)
            XCTAssertTrue(registered.backupEligible && registered.backupState && registered.userVerified)
            var stored = StoredCredential(publicKeyCOSE: registered.publicKeyCOSE, signCount: registered.signCount,
                                          backupEligible: registered.backupEligible, userHandle: [1, 2, 3])
            for count: UInt32 in [1, 2, 100] {
                let verified = try AssertionResponse(authenticator, flags: 0x0D, signCount: count).verify(stored, userHandle: [1, 2, 3])
                XCTAssertEqual(verified, VerifiedAssertion(signCount: count, backupState: false, userVerified: true), "\(authenticator.algorithm)")
                stored = StoredCredential(publicKeyCOSE: stored.publicKeyCOSE, signCount: verified.signCount,
                                          backupEligible: stored.backupEligible, userHandle: stored.userHandle)
            }
        }
    }

    // MARK: §7.1, every step refusing

    func testEveryRegistrationStepRefuses() throws {
        let authenticator = try TestAuthenticator(.es256(ES256PrivateKey.generate()))
        let good = RegistrationResponse(authenticator)
        XCTAssertNoThrow(try good.verify())
        func refused(_ reason: WebAuthnError.Reason, allowed: [Int] = [-7, -8, -257], file: StaticString = #filePath, line: UInt = #line,
                     _ change: (inout RegistrationResponse) -> Void) {
            var response = good
            change(&response)
            assertRefused(reason, file: file, line: line) { try response.verify(allowed: allowed) }
        }
        // C: JSON with the members of §5.8.1.
        refused(.malformedClientData) { $0.clientDataOverride = Array("not json".utf8) }
        refused(.malformedClientData) { $0.clientDataOverride = Array(#"{"type":"webauthn.create","origin":"https://login.example.com"}"#.utf8) }
        refused(.malformedClientData) { $0.clientDataOverride = [0x7B, 0xFF, 0x7D] }
        refused(.malformedClientData) { $0.crossOriginJSON = #""yes""# }
        // "Verify that the value of C.type is webauthn.create."
        refused(.wrongType) { $0.type = "webauthn.get" }
        refused(.wrongType) { $0.type = "Webauthn.create" }
        // "Verify that the value of C.challenge equals the base64url encoding of options.challenge."
        refused(.challengeMismatch) { $0.challengeText = Base64URL.encode($0.expectedChallenge); $0.expectedChallenge = SecureRandom.bytes(32) }
        refused(.challengeMismatch) { $0.challengeText = Base64URL.encode($0.expectedChallenge) + "=" }
        refused(.challengeMismatch) { $0.expectedChallenge = []; $0.challengeText = "" }
        // "Verify that the value of C.origin is an origin expected by the Relying Party."
        refused(.originNotAllowed) { $0.origin = "https://evil.example" }
        refused(.originNotAllowed) { $0.origin = "https://login.example.com/" }
        refused(.originNotAllowed) { $0.origin = "http://login.example.com" }
        refused(.originNotAllowed) { $0.origin = "https://login.example.com:443" }
        // crossOrigin true, or a topOrigin: never expected here.
        refused(.crossOrigin) { $0.crossOriginJSON = "true" }
        refused(.crossOrigin) { $0.topOrigin = "https://evil.example" }
        // "Perform CBOR decoding on the attestationObject ..."
        refused(.malformedCBOR) { $0.attestationOverride = [0xFF] }
        refused(.malformedCBOR) { $0.attestationOverride = Array($0.attestationObject.dropLast()) }
        refused(.malformedCBOR) { $0.attestationOverride = $0.attestationObject + [0x00] }
        refused(.malformedAttestationObject) { $0.attestationOverride = CBORValue.array([]).encoded }
        refused(.malformedAttestationObject) { $0.attestationOverride = CBORValue.map(["fmt": .text("none"), "attStmt": .map([:])]).encoded }
        refused(.malformedAttestationObject) { $0.attestationOverride = CBORValue.map(["fmt": .int(1), "attStmt": .map([:]),
                                                                                           "authData": .bytes($0.authenticatorData)]).encoded }
        refused(.malformedAttestationObject) { $0.attStmt = [1: .int(1)] }
        refused(.malformedAttestationObject) {
            $0.attestationOverride = [UInt8](repeating: 0, count: WebAuthnRegistration.maximumAttestationObjectLength + 1)
        }
        // authData's own layout (§6.1).
        refused(.malformedAuthenticatorData) { $0.trailing = [0x00] }
        refused(.malformedAuthenticatorData) { $0.authenticatorDataOverride = Array($0.authenticatorData.prefix(36)) }
        refused(.malformedCBOR) { $0.flags |= 0x80 }  // ED set, no extensions
        refused(.malformedAuthenticatorData) { $0.flags |= 0x80; $0.trailing = CBORValue.array([]).encoded }
        refused(.malformedCBOR) { $0.flags |= 0x80; $0.trailing = [0xA1, 0x61, 0x78] }
        refused(.malformedCBOR) { $0.coseOverride = [0xA5, 0x01] }
        refused(.credentialIDTooLong) { $0.credentialID = [UInt8](repeating: 7, count: 1024) }
        // Found by review: an empty ID reached the table's CHECK, a 500.
        refused(.credentialIDEmpty) { $0.credentialID = [] }
        // "Verify that the rpIdHash in authData is the SHA-256 hash of the RP ID expected by the Relying Party."
        refused(.rpIdMismatch) { $0.rpId = "example.com" }
        refused(.rpIdMismatch) { $0.rpId = "LOGIN.example.com" }
        // "Verify that the UP bit of the flags in authData is set."
        refused(.userNotPresent) { $0.flags &= ~0x01 }
        // "... verify that the UV bit of the flags in authData is set."
        refused(.userNotVerified) { $0.flags &= ~0x04 }
        // "If the BE bit of the flags in authData is not set, verify that the BS bit is not set."
        refused(.backupFlagsInvalid) { $0.flags = $0.flags & ~0x08 | 0x10 }
        // The credential public key (AT) must be there.
        refused(.missingCredentialData) { $0.flags &= ~0x40; $0.credentialIncluded = false }
        // "Verify that the "alg" parameter in the credential public key ... matches ... pubKeyCredParams."
        refused(.unsupportedAlgorithm, allowed: [-8, -257]) { _ in }
        refused(.unsupportedAlgorithm) { $0.coseKey[3] = .int(-35) }  // ES384
        refused(.badPublicKey) { $0.coseKey[3] = .int(-8) }  // an EC2 key saying EdDSA
        refused(.badPublicKey) { $0.coseKey[-1] = .int(2) }  // P-384
        refused(.badPublicKey) { $0.coseKey[-2] = .bytes([UInt8](repeating: 1, count: 32)) }  // not on the curve
        refused(.badPublicKey) { $0.coseKey[-3] = .bytes(Array(($0.coseKey[-3]!.bytesValue!).prefix(31))) }
        refused(.badPublicKey) { $0.coseKey[-3] = .bool(true) }  // a compressed point
        refused(.badPublicKey) { $0.coseKey[1] = nil }
        refused(.badPublicKey) { $0.coseKey[3] = nil }
        refused(.badPublicKey) { $0.coseKey["kty"] = .int(2) }
        refused(.privateKeyIncluded) { $0.coseKey[-4] = .bytes(SecureRandom.bytes(32)) }
        // "Determine the attestation statement format ... USASCII case-sensitive match on fmt": none only.
        refused(.unsupportedAttestation) { $0.fmt = "packed"; $0.attStmt = ["alg": .int(-7), "sig": .bytes([0x30, 0x00])] }
        refused(.unsupportedAttestation) { $0.fmt = "None" }
        // "Verify that attStmt is a correct attestation statement": none's is the empty map.
        refused(.unsupportedAttestation) { $0.attStmt = ["x5c": .array([])] }
    }

    /// The credential ID limit is 1023 bytes inclusive; extension outputs
    /// are kept and otherwise ignored; the key's exact bytes are returned.
    func testRegistrationEdges() throws {
        let authenticator = TestAuthenticator(.ed25519(Ed25519TestKey()), credentialID: [UInt8](repeating: 9, count: 1023))
        var response = RegistrationResponse(authenticator)
        response.flags |= 0x80
        response.trailing = CBORValue.map(["credProtect": .int(2)]).encoded
        XCTAssertEqual(try response.verify().credentialID.count, 1023)
        let authData = try AuthenticatorData(parsing: response.authenticatorData)
        XCTAssertEqual(authData.extensions, ["credProtect": .int(2)])
        XCTAssertEqual(authData.attestedCredentialData?.credentialPublicKey, authenticator.publicKeyCOSE)
        // A key encoded with a longer head than it needs is still one COSE_Key:
        // the bytes kept are the authenticator's, not a re-encoding.
        var longHead = RegistrationResponse(authenticator)
        longHead.coseOverride = [0xB8, 0x04] + Array(authenticator.publicKeyCOSE.dropFirst())
        XCTAssertEqual(try longHead.verify().publicKeyCOSE, longHead.coseOverride)
    }

    /// An RSA key must be 2048 bits or more; an Ed25519 key must be on
    /// Ed25519; private members of any key type are refused.
    func testCredentialPublicKeyRefusals() throws {
        func refused(_ reason: WebAuthnError.Reason, _ key: [CBORMapKey: CBORValue], file: StaticString = #filePath, line: UInt = #line) {
            assertRefused(reason, file: file, line: line) { try COSEPublicKey.parse(CBORValue.map(key).encoded) }
        }
        let small = try RSAKey.generate(bits: 1024)
        let (n1024, e1024) = try small.publicComponents()
        refused(.badPublicKey, [1: .int(3), 3: .int(-257), -1: .bytes(n1024), -2: .bytes(e1024)])
        let (n, e) = try Self.rsaAuthenticator.rsaComponents()
        XCTAssertNoThrow(try COSEPublicKey.parse(CBORValue.map([1: .int(3), 3: .int(-257), -1: .bytes(n), -2: .bytes(e)]).encoded))
        for label in -12 ... -3 {
            refused(.privateKeyIncluded, [1: .int(3), 3: .int(-257), -1: .bytes(n), -2: .bytes(e), CBORMapKey.int(label): .bytes([1])])
        }
        refused(.badPublicKey, [1: .int(3), 3: .int(-257), -1: .bytes(n), -2: .bytes([0x01, 0x00, 0x00])])  // even exponent
        refused(.badPublicKey, [1: .int(3), 3: .int(-257), -1: .bytes(n), -2: .bytes([0x01])])  // e = 1
        refused(.badPublicKey, [1: .int(3), 3: .int(-257), -1: .bytes(n)])
        let ed = Ed25519TestKey()
        XCTAssertNoThrow(try COSEPublicKey.parse(CBORValue.map([1: .int(1), 3: .int(-8), -1: .int(6), -2: .bytes(ed.publicKey)]).encoded))
        refused(.privateKeyIncluded, [1: .int(1), 3: .int(-8), -1: .int(6), -2: .bytes(ed.publicKey), -4: .bytes(SecureRandom.bytes(32))])
        refused(.unsupportedAlgorithm, [1: .int(1), 3: .int(-8), -1: .int(7), -2: .bytes(ed.publicKey)])  // Ed448
        refused(.unsupportedAlgorithm, [1: .int(1), 3: .int(-8), -1: .int(4), -2: .bytes(ed.publicKey)])  // X25519
        refused(.badPublicKey, [1: .int(1), 3: .int(-8), -1: .int(6), -2: .bytes(Array(ed.publicKey.prefix(31)))])
        refused(.badPublicKey, [1: .int(2), 3: .int(-8), -1: .int(6), -2: .bytes(ed.publicKey)])
        // Review R3: the identity point verifies an all-zero signature.
        refused(.badPublicKey, [1: .int(1), 3: .int(-8), -1: .int(6), -2: .bytes([1] + [UInt8](repeating: 0, count: 31))])
        refused(.unsupportedAlgorithm, [1: .int(4), 3: .int(5), -1: .bytes(SecureRandom.bytes(32))])  // a symmetric key, HMAC
        refused(.badPublicKey, [1: .text("EC2"), 3: .int(-7)])
        assertRefused(.badPublicKey) { try COSEPublicKey.parse(CBORValue.array([]).encoded) }
        assertRefused(.malformedCBOR) { try COSEPublicKey.parse(W3CVectors.credentialPublicKey + [0]) }
    }

    // MARK: §7.2, every step refusing

    func testEveryAssertionStepRefuses() throws {
        let authenticator = try TestAuthenticator(.es256(ES256PrivateKey.generate()))
        let stored = StoredCredential(publicKeyCOSE: authenticator.publicKeyCOSE, signCount: 5, backupEligible: true, userHandle: [7, 7, 7])
        let good = AssertionResponse(authenticator, flags: 0x0D, signCount: 6)
        XCTAssertEqual(try good.verify(stored, userHandle: [7, 7, 7]), VerifiedAssertion(signCount: 6, backupState: false, userVerified: true))
        XCTAssertNoThrow(try good.verify(stored, userHandle: nil), "a userHandle is optional when the user was identified first")
        func refused(_ reason: WebAuthnError.Reason, stored credential: StoredCredential = stored, userHandle: [UInt8]? = [7, 7, 7],
                     file: StaticString = #filePath, line: UInt = #line, _ change: (inout AssertionResponse) -> Void) {
            var response = good
            change(&response)
            assertRefused(reason, file: file, line: line) { try response.verify(credential, userHandle: userHandle) }
        }
        // "If response.userHandle is present, verify that it equals the user handle of the user account."
        refused(.userHandleMismatch, userHandle: [7, 7]) { _ in }
        refused(.userHandleMismatch, userHandle: []) { _ in }
        // C: JSON.
        refused(.malformedClientData) { $0.clientDataOverride = Array("[]".utf8) }
        // "Verify that the value of C.type is the string webauthn.get."
        refused(.wrongType) { $0.type = "webauthn.create" }
        // "Verify that the value of C.challenge equals the base64url encoding of options.challenge."
        refused(.challengeMismatch) { $0.challengeText = Base64URL.encode($0.expectedChallenge); $0.expectedChallenge = SecureRandom.bytes(32) }
        refused(.challengeMismatch) { $0.challengeText = Base64URL.encode($0.expectedChallenge.dropLast()) }
        // "Verify that the value of C.origin is an origin expected by the Relying Party."
        refused(.originNotAllowed) { $0.origin = "https://login.example.com.evil.example" }
        // "If C.crossOrigin is present and set to true ..."; "If C.topOrigin is present ..."
        refused(.crossOrigin) { $0.crossOriginJSON = "true" }
        refused(.crossOrigin) { $0.topOrigin = "https://login.example.com" }
        // authData's layout.
        refused(.malformedAuthenticatorData) { $0.authenticatorDataOverride = Array($0.authenticatorData.prefix(36)) }
        refused(.malformedAuthenticatorData) { $0.trailing = [0] }
        refused(.malformedAuthenticatorData) {
            $0.authenticatorDataOverride = [UInt8](repeating: 0, count: WebAuthnAssertion.maximumAuthenticatorDataLength + 1)
        }
        // "Verify that the rpIdHash in authData is the SHA-256 hash of the RP ID expected by the Relying Party."
        refused(.rpIdMismatch) { $0.rpId = "evil.example" }
        // §6.1: "For assertion signatures, the AT flag MUST NOT be set".
        refused(.unexpectedCredentialData) {
            $0.flags |= 0x40
            $0.trailing = [UInt8](repeating: 0, count: 16) + [0, 1, 0xAA] + authenticator.publicKeyCOSE
        }
        // "Verify that the UP bit of the flags in authData is set."
        refused(.userNotPresent) { $0.flags &= ~0x01 }
        // "If user verification is required, verify that the UV bit of the flags in authData is set."
        refused(.userNotVerified) { $0.flags &= ~0x04 }
        // "If the BE bit of the flags in authData is not set, verify that the BS bit is not set."
        refused(.backupFlagsInvalid, stored: StoredCredential(publicKeyCOSE: stored.publicKeyCOSE, signCount: 5, backupEligible: false,
                                                              userHandle: [7, 7, 7])) { $0.flags = 0x15 }
        // "If credentialRecord.backupEligible is set, verify that currentBe is set" — and not set, not set.
        refused(.backupEligibilityChanged) { $0.flags &= ~0x08 }
        refused(.backupEligibilityChanged, stored: StoredCredential(publicKeyCOSE: stored.publicKeyCOSE, signCount: 5, backupEligible: false,
                                                                    userHandle: [7, 7, 7])) { _ in }
        // "... verify that sig is a valid signature over the binary concatenation of authData and hash."
        refused(.badSignature) { $0.signatureOverride = { signature in var s = signature; s[s.count - 1] ^= 1; return s } }
        refused(.badSignature) { $0.signatureOverride = { _ in [] } }
        refused(.badSignature) { $0.signatureOverride = { signature in signature + [0] } }
        refused(.badSignature) { $0.signatureOverride = { signature in ProofVerificationKey.rawSignature(der: signature)! } }  // R || S, not DER
        refused(.badSignature) { $0.signatureOverride = { _ in [UInt8](repeating: 0x30, count: WebAuthnAssertion.maximumSignatureLength + 1) } }
        refused(.badSignature) { $0.signedClientDataOverride = Array(#"{"type":"webauthn.get"}"#.utf8) }  // signed other client data
        refused(.badSignature) { $0.signer = try! TestAuthenticator(.es256(ES256PrivateKey.generate())) }
        refused(.badPublicKey, stored: StoredCredential(publicKeyCOSE: CBORValue.map([1: .int(2), 3: .int(-7)]).encoded, signCount: 5,
                                                        backupEligible: true, userHandle: [7, 7, 7])) { _ in }
        // §6.1.1: "If either is non-zero, and the new signCount value is less than or equal to the stored value, a cloned authenticator may exist".
        refused(.signCountNotIncreased) { $0.signCount = 5 }
        refused(.signCountNotIncreased) { $0.signCount = 4 }
        refused(.signCountNotIncreased) { $0.signCount = 0 }
    }

    /// §6.1.1: both zero is an authenticator without a counter; from zero
    /// any increase counts; a stored count at UInt32.max refuses all.
    func testSignatureCounterRules() throws {
        let authenticator = TestAuthenticator(.ed25519(Ed25519TestKey()))
        func verify(stored: UInt32, new: UInt32) throws -> VerifiedAssertion {
            let credential = StoredCredential(publicKeyCOSE: authenticator.publicKeyCOSE, signCount: stored, backupEligible: false, userHandle: [1])
            return try AssertionResponse(authenticator, signCount: new).verify(credential, userHandle: nil)
        }
        XCTAssertEqual(try verify(stored: 0, new: 0).signCount, 0, "both zero: no counter, accepted")
        XCTAssertEqual(try verify(stored: 0, new: 1).signCount, 1)
        XCTAssertEqual(try verify(stored: 5, new: 6).signCount, 6)
        XCTAssertEqual(try verify(stored: 5, new: UInt32.max).signCount, UInt32.max)
        assertRefused(.signCountNotIncreased) { try verify(stored: 5, new: 0) }
        assertRefused(.signCountNotIncreased) { try verify(stored: 7, new: 7) }
        assertRefused(.signCountNotIncreased) { try verify(stored: UInt32.max, new: UInt32.max) }
    }

    // MARK: Parts

    func testAuthenticatorDataLayout() throws {
        let key = Array(W3CVectors.credentialPublicKey)
        func data(flags: UInt8, _ tail: [UInt8]) -> [UInt8] { SHA256.hash("example.org") + [flags, 0x01, 0x02, 0x03, 0x04] + tail }
        let attested = [UInt8](repeating: 0xAB, count: 16) + [0x00, 0x02, 0xC1, 0xC2] + key
        let parsed = try AuthenticatorData(parsing: data(flags: 0xC5, attested + CBORValue.map(["a": .int(1)]).encoded))
        XCTAssertEqual(parsed.signCount, 0x0102_0304, "big-endian")
        XCTAssertTrue(parsed.userPresent && parsed.userVerified && !parsed.backupEligible && !parsed.backupState)
        XCTAssertEqual(parsed.attestedCredentialData?.aaguid, [UInt8](repeating: 0xAB, count: 16))
        XCTAssertEqual(parsed.attestedCredentialData?.credentialID, [0xC1, 0xC2])
        XCTAssertEqual(parsed.attestedCredentialData?.credentialPublicKey, key)
        XCTAssertEqual(parsed.extensions, ["a": .int(1)])
        XCTAssertFalse(try AuthenticatorData(parsing: data(flags: 0x11, [])).backupFlagsAreValid, "§6.1.3: BS without BE")
        XCTAssertTrue(try AuthenticatorData(parsing: data(flags: 0x19, [])).backupFlagsAreValid)
        // Every truncation of attested credential data is refused, as malformed or as bad CBOR.
        let whole = data(flags: 0x41, attested)
        for length in 0..<whole.count {
            XCTAssertThrowsError(try AuthenticatorData(parsing: Array(whole.prefix(length))), "\(length) bytes") { error in
                let reason = (error as? WebAuthnError)?.reason
                XCTAssertTrue(reason == .malformedAuthenticatorData || reason == .malformedCBOR, "\(length): \(error)")
            }
        }
        assertRefused(.credentialIDTooLong) {
            try AuthenticatorData(parsing: data(flags: 0x41, [UInt8](repeating: 0, count: 16) + [0x04, 0x00] + [UInt8](repeating: 1, count: 1024) + key))
        }
        assertRefused(.credentialIDTooLong) { try AuthenticatorData(parsing: data(flags: 0x41, [UInt8](repeating: 0, count: 16) + [0xFF, 0xFF])) }
        assertRefused(.malformedAuthenticatorData) { try AuthenticatorData(parsing: data(flags: 0x41, [UInt8](repeating: 0, count: 16) + [0x00, 0x10, 1])) }
    }

    func testClientDataParsing() throws {
        let json = #"{"type":"webauthn.get","challenge":"AAEC","origin":"https:\/\/a.example","crossOrigin":false,"topOrigin":"https://t.example","other":{"x":[1]}}"#
        let client = try CollectedClientData.parse(Array(json.utf8))
        XCTAssertEqual(client.origin, "https://a.example")
        XCTAssertEqual(client.crossOrigin, false)
        XCTAssertEqual(client.topOrigin, "https://t.example")
        XCTAssertEqual(try CollectedClientData.parse([0xEF, 0xBB, 0xBF] + Array(json.utf8)).challenge, "AAEC", "a BOM is stripped")
        assertRefused(.malformedClientData) { try CollectedClientData.parse(Array(#"{"type":1,"challenge":"","origin":""}"#.utf8)) }
        assertRefused(.malformedClientData) { try CollectedClientData.parse([UInt8](repeating: 0x20, count: CollectedClientData.maximumLength + 1)) }
    }

    /// WebAuthn's ES256 signatures are DER; only DER is taken, so one
    /// signature has one encoding.
    func testES256SignaturesMustBeStrictDER() throws {
        let key = try ES256PrivateKey.generate()
        let jwk = try key.publicJWK()
        let verifier = try ProofVerificationKey.p256(x: Base64URL.decode(jwk.x!)!, y: Base64URL.decode(jwk.y!)!)
        let message = Array("message".utf8)
        let raw = try key.sign(message)
        let der = try XCTUnwrap(ProofVerificationKey.derSignature(raw: raw))
        XCTAssertTrue(verifier.verify(derSignature: der, message: message))
        XCTAssertEqual(ProofVerificationKey.rawSignature(der: der), raw)
        XCTAssertFalse(verifier.verify(derSignature: raw, message: message), "R || S is JOSE's form, not WebAuthn's")
        XCTAssertFalse(verifier.verify(derSignature: der + [0], message: message), "a trailing byte")
        // The same integers with a superfluous leading zero, and with a long-form length: BER, not DER.
        let rLength = Int(der[3])
        let padded = [0x30, der[1] + 1, 0x02, UInt8(rLength + 1), 0x00] + der[4...]
        XCTAssertNil(ProofVerificationKey.rawSignature(der: padded))
        let longForm = [0x30, 0x81] + der[1...]
        XCTAssertNil(ProofVerificationKey.rawSignature(der: longForm))
        XCTAssertNil(ProofVerificationKey.rawSignature(der: []))
        XCTAssertNil(ProofVerificationKey.rawSignature(der: [0x30, 0x00]))
        // A negative r (its top bit set, no leading zero).
        let negative: [UInt8] = [0x30, 0x06, 0x02, 0x01, 0x80, 0x02, 0x01, 0x01]
        XCTAssertNil(ProofVerificationKey.rawSignature(der: negative))
    }

    func testErrorsDescribeTheirReason() {
        XCTAssertEqual(WebAuthnError(.badSignature, "why").description, "badSignature: why")
        XCTAssertEqual(Set(WebAuthnError.Reason.allCases.map(\.rawValue)).count, WebAuthnError.Reason.allCases.count)
    }
}

// MARK: - Helpers

fileprivate func assertRefused<T>(_ reason: WebAuthnError.Reason, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T) {
    XCTAssertThrowsError(try body(), "expected \(reason)", file: file, line: line) { error in
        XCTAssertEqual((error as? WebAuthnError)?.reason, reason, "\(error)", file: file, line: line)
    }
}

fileprivate func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8).filter { !$0.isASCIIWhitespace }
    precondition(digits.count % 2 == 0, "odd hex")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
}

private extension UInt8 {
    var isASCIIWhitespace: Bool { self == 0x20 || self == 0x0A || self == 0x0D || self == 0x09 }
}

/// An Ed25519 key that signs, for the tests (SSOCore verifies Ed25519 only).
private final class Ed25519TestKey {
    let pkey: OpaquePointer

    init() {
        let context = EVP_PKEY_CTX_new_from_name(nil, "ED25519", nil)!
        defer { EVP_PKEY_CTX_free(context) }
        var created: OpaquePointer?
        precondition(EVP_PKEY_keygen_init(context) == 1 && EVP_PKEY_generate(context, &created) == 1)
        pkey = created!
    }
    deinit { EVP_PKEY_free(pkey) }

    var publicKey: [UInt8] {
        var key = [UInt8](repeating: 0, count: 32)
        var length = 32
        precondition(EVP_PKEY_get_raw_public_key(pkey, &key, &length) == 1 && length == 32)
        return key
    }

    func sign(_ message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        precondition(EVP_DigestSignInit(context, nil, nil, nil, pkey) == 1
            && EVP_DigestSign(context, &signature, &length, message, message.count) == 1 && length == 64)
        return signature
    }
}

/// A software authenticator holding one credential: its COSE_Key and its
/// signatures in WebAuthn's forms (§6.5.5: ES256 as DER).
private final class TestAuthenticator {
    enum Key {
        case es256(ES256PrivateKey)
        case ed25519(Ed25519TestKey)
        case rsa(RSAKey)
    }
    let key: Key
    let credentialID: [UInt8]

    init(_ key: Key, credentialID: [UInt8] = SecureRandom.bytes(32)) {
        self.key = key
        self.credentialID = credentialID
    }

    var algorithm: Int {
        switch key {
        case .es256: -7
        case .ed25519: -8
        case .rsa: -257
        }
    }

    func rsaComponents() throws -> (n: [UInt8], e: [UInt8]) {
        guard case .rsa(let rsa) = key else { throw OpenSSLTestError() }
        let (n, e) = try rsa.publicComponents()
        return (n, e)
    }

    var coseKey: [CBORMapKey: CBORValue] {
        switch key {
        case .es256(let key):
            let jwk = try! key.publicJWK()
            return [1: .int(2), 3: .int(-7), -1: .int(1), -2: .bytes(Base64URL.decode(jwk.x!)!), -3: .bytes(Base64URL.decode(jwk.y!)!)]
        case .ed25519(let key):
            return [1: .int(1), 3: .int(-8), -1: .int(6), -2: .bytes(key.publicKey)]
        case .rsa:
            let (n, e) = try! rsaComponents()
            return [1: .int(3), 3: .int(-257), -1: .bytes(n), -2: .bytes(e)]
        }
    }

    var publicKeyCOSE: [UInt8] { CBORValue.map(coseKey).encoded }

    func sign(_ message: [UInt8]) -> [UInt8] {
        switch key {
        case .es256(let key): ProofVerificationKey.derSignature(raw: try! key.sign(message))!
        case .ed25519(let key): key.sign(message)
        case .rsa(let key): try! key.signRS256(message)
        }
    }
}

private struct OpenSSLTestError: Error {}

/// Client data as a browser serializes it (§5.8.1.1), members optional.
private func clientDataJSON(type: String, challenge: String, origin: String, crossOrigin: String?, topOrigin: String?) -> [UInt8] {
    var members = [#""type":"\#(type)""#, #""challenge":"\#(challenge)""#, #""origin":"\#(origin)""#]
    if let crossOrigin { members.append(#""crossOrigin":\#(crossOrigin)"#) }
    if let topOrigin { members.append(#""topOrigin":"\#(topOrigin)""#) }
    return Array(("{" + members.joined(separator: ",") + "}").utf8)
}

/// What `navigator.credentials.create()` returns, built field by field so
/// a test can change one (flags: UP | UV | AT unless told).
private struct RegistrationResponse {
    var type = "webauthn.create"
    var expectedChallenge = SecureRandom.bytes(32)
    var challengeText: String?
    var origin = WebAuthnTests.origin
    var crossOriginJSON: String? = "false"
    var topOrigin: String?
    var clientDataOverride: [UInt8]?
    var rpId = WebAuthnTests.relyingParty.id
    var flags: UInt8
    var signCount: UInt32 = 0
    var aaguid = SecureRandom.bytes(16)
    var credentialID: [UInt8]
    var credentialIncluded = true
    var coseKey: [CBORMapKey: CBORValue]
    var coseOverride: [UInt8]?
    var trailing: [UInt8] = []
    var authenticatorDataOverride: [UInt8]?
    var fmt = "none"
    var attStmt: [CBORMapKey: CBORValue] = [:]
    var attestationOverride: [UInt8]?

    init(_ authenticator: TestAuthenticator, flags: UInt8 = 0x45) {
        self.flags = flags
        credentialID = authenticator.credentialID
        coseKey = authenticator.coseKey
    }

    var clientData: [UInt8] {
        clientDataOverride ?? clientDataJSON(type: type, challenge: challengeText ?? Base64URL.encode(expectedChallenge), origin: origin,
                                             crossOrigin: crossOriginJSON, topOrigin: topOrigin)
    }

    var authenticatorData: [UInt8] {
        if let authenticatorDataOverride { return authenticatorDataOverride }
        var bytes = SHA256.hash(rpId) + [flags] + withUnsafeBytes(of: signCount.bigEndian, Array.init)
        if credentialIncluded {
            bytes += aaguid + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID
            bytes += coseOverride ?? CBORValue.map(coseKey).encoded
        }
        return bytes + trailing
    }

    var attestationObject: [UInt8] {
        attestationOverride ?? CBORValue.map(["fmt": .text(fmt), "attStmt": .map(attStmt), "authData": .bytes(authenticatorData)]).encoded
    }

    func verify(allowed: [Int] = [-7, -8, -257]) throws -> RegisteredCredential {
        try WebAuthnRegistration.verify(clientDataJSON: clientData, attestationObject: attestationObject, expectedChallenge: expectedChallenge,
                                        relyingParty: WebAuthnTests.relyingParty, allowedAlgorithms: allowed)
    }
}

/// What `navigator.credentials.get()` returns, signed by `signer` over
/// authenticatorData || SHA-256(clientDataJSON) (flags: UP | UV unless told).
private struct AssertionResponse {
    var signer: TestAuthenticator
    var type = "webauthn.get"
    var expectedChallenge = SecureRandom.bytes(32)
    var challengeText: String?
    var origin = WebAuthnTests.origin
    var crossOriginJSON: String? = "false"
    var topOrigin: String?
    var clientDataOverride: [UInt8]?
    var signedClientDataOverride: [UInt8]?
    var rpId = WebAuthnTests.relyingParty.id
    var flags: UInt8
    var signCount: UInt32
    var trailing: [UInt8] = []
    var authenticatorDataOverride: [UInt8]?
    var signatureOverride: (([UInt8]) -> [UInt8])?

    init(_ authenticator: TestAuthenticator, flags: UInt8 = 0x05, signCount: UInt32 = 1) {
        signer = authenticator
        self.flags = flags
        self.signCount = signCount
    }

    var clientData: [UInt8] {
        clientDataOverride ?? clientDataJSON(type: type, challenge: challengeText ?? Base64URL.encode(expectedChallenge), origin: origin,
                                             crossOrigin: crossOriginJSON, topOrigin: topOrigin)
    }

    var authenticatorData: [UInt8] {
        authenticatorDataOverride ?? SHA256.hash(rpId) + [flags] + withUnsafeBytes(of: signCount.bigEndian, Array.init) + trailing
    }

    func verify(_ credential: StoredCredential, userHandle: [UInt8]?) throws -> VerifiedAssertion {
        let signature = signer.sign(authenticatorData + SHA256.hash(signedClientDataOverride ?? clientData))
        return try WebAuthnAssertion.verify(clientDataJSON: clientData, authenticatorData: authenticatorData,
                                            signature: signatureOverride?(signature) ?? signature, userHandle: userHandle,
                                            expectedChallenge: expectedChallenge, relyingParty: WebAuthnTests.relyingParty,
                                            credential: credential)
    }
}

/// W3C Web Authentication Level 3, §16.2 "ES256 Credential with No
/// Attestation" (https://www.w3.org/TR/webauthn-3/#sctn-test-vectors-none-es256),
/// as published, in hex: RP ID example.org, origin https://example.org.
/// The registration's clientDataJSON carries the specification's
/// deliberate `extraData` member.
private enum W3CVectors {
    static let relyingParty = WebAuthnRelyingParty(id: "example.org", origins: ["https://example.org"])
    static let registrationChallenge = hex("00c30fb78531c464d2b6771dab8d7b603c01162f2fa486bea70f283ae556e130")
    static let registrationClientData = hex("""
        7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a22414d4d50743455787847
        5453746e63647134313759447742466938767049612d7077386f4f755657345441222c226f726967696e223a2268747470
        733a2f2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73652c22657874726144617461223a
        22636c69656e74446174614a534f4e206d617920626520657874656e6465642077697468206164646974696f6e616c2066
        69656c647320696e20746865206675747572652c207375636820617320746869733a20426b5165446a6463544272584269
        41774a544c453551227d
        """)
    static let attestationObject = hex("""
        a363666d74646e6f6e656761747453746d74a068617574684461746158a4bfabc37432958b063360d3ad6461c9c4735ae7
        f8edd46592a5e0f01452b2e4b559000000008446ccb9ab1db374750b2367ff6f3a1f0020f91f391db4c9b2fde0ea70189c
        ba3fb63f579ba6122b33ad94ff3ec330084be4a5010203262001215820afefa16f97ca9b2d23eb86ccb64098d20db90856
        062eb249c33a9b672f26df61225820930a56b87a2fca66334b03458abf879717c12cc68ed73290af2e2664796b9220
        """)
    static let credentialID = hex("f91f391db4c9b2fde0ea70189cba3fb63f579ba6122b33ad94ff3ec330084be4")
    static let aaguid = hex("8446ccb9ab1db374750b2367ff6f3a1f")
    static let credentialPublicKey = hex("""
        a5010203262001215820afefa16f97ca9b2d23eb86ccb64098d20db90856062eb249c33a9b672f26df61225820930a56b8
        7a2fca66334b03458abf879717c12cc68ed73290af2e2664796b9220
        """)
    static let assertionChallenge = hex("39c0e7521417ba54d43e8dc95174f423dee9bf3cd804ff6d65c857c9abf4d408")
    static let assertionAuthenticatorData = hex("bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b51900000000")
    static let assertionClientData = hex("""
        7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a224f63446e55685158756c545550
        6f334a5558543049393770767a7a59425039745a63685879617630314167222c226f726967696e223a2268747470733a2f
        2f6578616d706c652e6f7267222c2263726f73734f726967696e223a66616c73657d
        """)
    static let assertionSignature = hex("""
        3046022100f50a4e2e4409249c4a853ba361282f09841df4dd4547a13a87780218deffcd380221008480ac0f0b93538174
        f575bf11a1dd5d78c6e486013f937295ea13653e331e87
        """)
}

/// Made offline with Python `cryptography` 48 (Ed25519 from the seed
/// 00 01 ... 1f, signatures deterministic; a fresh RSA-2048 key, PKCS #1
/// v1.5) and a CBOR encoder written in that script: RP ID
/// login.example.com, origin https://login.example.com. Registration:
/// flags UP | UV | BE | AT, zero AAGUID (as clients send under `none`),
/// credential ID a0 ... af. Assertions: Ed25519 flags UP | UV | BE,
/// signCount 7; RS256 flags UP | UV, signCount 42.
private enum PythonVectors {
    static let ed25519COSE = hex("a401010327200621582003a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8")
    static let registrationChallenge = hex("101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f")
    static let registrationClientData = hex("""
        7b2274797065223a22776562617574686e2e637265617465222c226368616c6c656e6765223a22454245534578515646
        68635947526f62484230654879416849694d6b4a53596e4b436b714b7977744c6938222c226f726967696e223a226874
        7470733a2f2f6c6f67696e2e6578616d706c652e636f6d222c2263726f73734f726967696e223a66616c73657d
        """)
    static let attestationObject = hex("""
        a363666d74646e6f6e656761747453746d74a068617574684461746158710c6ca0839c3a5683557833f618a2556665df
        2a088964787d53850b4ad4d3bedc4d00000000000000000000000000000000000000000010a0a1a2a3a4a5a6a7a8a9aa
        abacadaeafa401010327200621582003a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8
        """)
    static let assertionChallenge = hex("303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f")
    static let ed25519AuthenticatorData = hex("0c6ca0839c3a5683557833f618a2556665df2a088964787d53850b4ad4d3bedc0d00000007")
    static let assertionClientData = hex("""
        7b2274797065223a22776562617574686e2e676574222c226368616c6c656e6765223a224d4445794d7a51314e6a6334
        4f546f375044302d50304242516b4e4552555a4853456c4b5330784e546b38222c226f726967696e223a226874747073
        3a2f2f6c6f67696e2e6578616d706c652e636f6d222c2263726f73734f726967696e223a66616c73657d
        """)
    static let ed25519Signature = hex("""
        8290f3571458621973ba2ce3d8421a843c823a16f33e09b4d120b352b0b03a67d20c04b48ebec48393522bf8e609a22b
        f0ee6758d171b5e51bb81d3adc0acd07
        """)
    static let rsaCOSE = hex("""
        a401030339010020590100bc1c1d2535e622e7ac4af3519303b32446820fe52fd61cfb1de19b1fe95b00383c5b2ad588
        feee679d9c997cc4d852f271ea6439965705e62b3e4ba770f483d11fc8dc081de679a5afdf6af128ede9f24ff779d0d4
        d309213207a5e82ec93f121e2873b89063547ef6fa04455bd27bc7b6cc79ac6a5b5c1c06d95b2dbb1b6b46c910986480
        72f4c4c75aff08b145636267fb8ecd4f78e740a694bac04d14bc2cc777dab30f4378837962546a913750c7d6d45120a7
        c30e58cf276b6d8c893b79d971549716976b170cb279d0030c78046aaf82bfd4e825575f14de1fb5f0dc041f21d3cc2d
        c33f4177725eb42ccbdee7cbaddade600c6a9aa3a92f4913df473d2143010001
        """)
    static let rsaAuthenticatorData = hex("0c6ca0839c3a5683557833f618a2556665df2a088964787d53850b4ad4d3bedc050000002a")
    static let rsaSignature = hex("""
        aaa8d01fae07c07a78eb058ade6c41295a2e7c2b7253a3035d0e34567036227cbee07d5b9c4e9ee839ddb24676eb2d26
        27573731a1400f9dd47b261ca9982f324ead5131abf850248f967e1af949e3aafe9c102f7164e121ae94d928706d51d9
        f6d5a2c692054e4896d9214aa4fbbfc371c65ac855363375ef73fb58c983a7a2887985f3d3870973ece7eb6cc8867559
        9a73667749750d7fe009a147a4ef36fea2adf515ce17e435c4862ebae311a8ee5f1b0e7d06df1f78540d651ea160bfd9
        8094167a457d80d4af7114bdca847d70c498543e8a06beb5b1f0e3b46c9a77cc30e41cbc258a4c62e39b5db3ade3af96
        9f4c02f95b68fa2bb3e4c5ff32118e66
        """)
}
