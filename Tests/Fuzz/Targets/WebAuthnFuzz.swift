// libFuzzer target: WebAuthn's server side in SSOCore: AuthenticatorData
// parsing (§6.1), the registration checks (§7.1) and the assertion checks
// (§7.2), for the relying party example.org / https://example.org, whose
// expected challenges and stored credential are the W3C test vectors'
// (§16.2, the seeds in corpus/webauthn).
//
// The first byte chooses what the rest is (bit 2 set: user verification
// required, as the public API has it; clear: optional, as the vectors need):
// - 0: authenticator data. Parsed; put in a `none` attestation object and
//   registered; and signed by the target's own ES256 key (with the
//   vectors' assertion client data) and verified as an assertion, so the
//   checks after the signature are reachable by mutation.
// - 1: client data JSON. Verified as an assertion (the vectors'
//   authenticator data, signed by the target) and as a registration (the
//   vectors' attestation object).
// - 2: raw assertion: u16 length, authenticator data, u16 length, client
//   data, signature; verified against the vectors' credential.
// - 3: raw registration: u16 length, client data, attestation object.
// Oracles: no crash, only WebAuthnError thrown, and whatever is accepted
// passes every check again when re-read here: type, challenge, origin,
// no cross-origin, rpIdHash, UP (and UV when required), BE/BS valid, BE
// unchanged, the counter rule, no AT in an assertion, `none` with an empty
// attStmt, an allowed alg, a credential ID of at most 1023 bytes.
@testable import SSOCore

enum FuzzWebAuthn {
    static let relyingParty = WebAuthnRelyingParty(id: "example.org", origins: ["https://example.org"])
    static let registrationChallenge = hex("00c30fb78531c464d2b6771dab8d7b603c01162f2fa486bea70f283ae556e130")
    static let assertionChallenge = hex("39c0e7521417ba54d43e8dc95174f423dee9bf3cd804ff6d65c857c9abf4d408")
    static let registrationClientData = Array(#"{"type":"webauthn.create","challenge":"AMMPt4UxxGTStncdq417YDwBFi8vpIa-pw8oOuVW4TA","origin":"https://example.org","crossOrigin":false}"#.utf8)
    static let assertionClientData = Array(#"{"type":"webauthn.get","challenge":"OcDnUhQXulTUPo3JUXT0I97pvzzYBP9tZchXyav01Ag","origin":"https://example.org","crossOrigin":false}"#.utf8)
    static let assertionAuthenticatorData = hex("bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b51900000000")
    static let attestationObject = hex("a363666d74646e6f6e656761747453746d74a068617574684461746158a4bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b559000000008446ccb9ab1db374750b2367ff6f3a1f0020f91f391db4c9b2fde0ea70189cba3fb63f579ba6122b33ad94ff3ec330084be4a5010203262001215820afefa16f97ca9b2d23eb86ccb64098d20db90856062eb249c33a9b672f26df61225820930a56b87a2fca66334b03458abf879717c12cc68ed73290af2e2664796b9220")
    static let userHandle = Array("fuzz-user".utf8)
    /// The vectors' credential (§16.2): counter 0, backup eligible.
    static let specCredential = StoredCredential(
        publicKeyCOSE: hex("a5010203262001215820afefa16f97ca9b2d23eb86ccb64098d20db90856062eb249c33a9b672f26df61225820930a56b87a2fca66334b03458abf879717c12cc68ed73290af2e2664796b9220"),
        signCount: 0, backupEligible: true, userHandle: userHandle)
    /// The target's own authenticator key, for the modes it signs in.
    static let key = try! ES256PrivateKey.generate()
    static let ownCredential: StoredCredential = {
        let jwk = try! key.publicJWK()
        let cose = CBORValue.map([1: .int(2), 3: .int(-7), -1: .int(1), -2: .bytes(Base64URL.decode(jwk.x!)!),
                                  -3: .bytes(Base64URL.decode(jwk.y!)!)]).encoded
        return StoredCredential(publicKeyCOSE: cose, signCount: 0, backupEligible: true, userHandle: userHandle)
    }()

    static func sign(_ message: [UInt8]) -> [UInt8] { ProofVerificationKey.derSignature(raw: try! key.sign(message))! }

    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }

    /// A u16 big-endian length and that many bytes, from the front of `input`.
    static func chunk(_ input: inout ArraySlice<UInt8>) -> [UInt8]? {
        guard input.count >= 2 else { return nil }
        let length = Int(input[input.startIndex]) << 8 | Int(input[input.startIndex + 1])
        input = input.dropFirst(2)
        guard input.count >= length else { return nil }
        defer { input = input.dropFirst(length) }
        return Array(input.prefix(length))
    }

    static func clientDataIsAcceptable(_ clientDataJSON: [UInt8], type: String, challenge: [UInt8]) -> Bool {
        guard let client = try? CollectedClientData.parse(clientDataJSON) else { return false }
        return client.type.bytesEqual(type) && client.challenge.bytesEqual(Base64URL.encode(challenge))
            && relyingParty.origins.containsBytes(client.origin) && client.crossOrigin != true && client.topOrigin == nil
    }

    static func assertion(clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], credential: StoredCredential,
                          requireUserVerification: Bool) {
        let verified: VerifiedAssertion
        do {
            verified = try WebAuthnAssertion.verify(
                clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature, userHandle: userHandle,
                expectedChallenge: assertionChallenge, relyingParty: relyingParty, credential: credential,
                requireUserVerification: requireUserVerification)
        } catch is WebAuthnError {
            return
        } catch {
            preconditionFailure("WebAuthnAssertion.verify threw \(error)")
        }
        precondition(clientDataIsAcceptable(clientDataJSON, type: "webauthn.get", challenge: assertionChallenge), "client data accepted wrongly")
        guard let data = try? AuthenticatorData(parsing: authenticatorData) else { preconditionFailure("accepted unparseable authenticator data") }
        precondition(data.rpIdHash == SHA256.hash(relyingParty.id), "rpIdHash")
        precondition(data.userPresent && (data.userVerified || !requireUserVerification), "UP/UV")
        precondition(data.backupFlagsAreValid && data.backupEligible == credential.backupEligible, "BE/BS")
        precondition(data.attestedCredentialData == nil, "AT in an assertion")
        precondition((data.signCount == 0 && credential.signCount == 0) || data.signCount > credential.signCount, "counter")
        precondition(verified == VerifiedAssertion(signCount: data.signCount, backupState: data.backupState, userVerified: data.userVerified),
                     "result disagrees with the authenticator data")
    }

    static func registration(clientDataJSON: [UInt8], attestationObject: [UInt8], requireUserVerification: Bool) {
        let registered: RegisteredCredential
        do {
            registered = try WebAuthnRegistration.verify(
                clientDataJSON: clientDataJSON, attestationObject: attestationObject, expectedChallenge: registrationChallenge,
                relyingParty: relyingParty, allowedAlgorithms: [-7, -8, -257], requireUserVerification: requireUserVerification)
        } catch is WebAuthnError {
            return
        } catch {
            preconditionFailure("WebAuthnRegistration.verify threw \(error)")
        }
        precondition(clientDataIsAcceptable(clientDataJSON, type: "webauthn.create", challenge: registrationChallenge),
                     "client data accepted wrongly")
        guard let object = try? CBOR.decode(attestationObject), let authData = object["authData"]?.bytesValue,
              let data = try? AuthenticatorData(parsing: authData), let credential = data.attestedCredentialData else {
            preconditionFailure("accepted an attestation object that does not parse")
        }
        precondition(object["fmt"] == .text("none") && object["attStmt"] == .map([:]), "attestation other than none")
        precondition(data.rpIdHash == SHA256.hash(relyingParty.id), "rpIdHash")
        precondition(data.userPresent && (data.userVerified || !requireUserVerification) && data.backupFlagsAreValid, "flags")
        precondition(credential.credentialID.count <= 1023 && credential.aaguid.count == 16, "attested credential data")
        guard let key = try? COSEPublicKey.parse(registered.publicKeyCOSE) else { preconditionFailure("stored key does not parse") }
        precondition(key.algorithm.rawValue == registered.algorithm && [-7, -8, -257].contains(registered.algorithm), "alg")
        precondition(registered.publicKeyCOSE == credential.credentialPublicKey && registered.credentialID == credential.credentialID
                     && registered.signCount == data.signCount && registered.backupEligible == data.backupEligible
                     && registered.backupState == data.backupState && registered.userVerified == data.userVerified,
                     "result disagrees with the authenticator data")
    }

    /// AuthenticatorData's own layout, whatever a ceremony makes of it.
    static func parse(_ bytes: [UInt8]) {
        let data: AuthenticatorData
        do {
            data = try AuthenticatorData(parsing: bytes)
        } catch is WebAuthnError {
            return
        } catch {
            preconditionFailure("AuthenticatorData threw \(error)")
        }
        precondition(data.rpIdHash.count == 32, "rpIdHash length")
        precondition((data.attestedCredentialData != nil) == data.flags.contains(.attestedCredentialData), "AT and the data disagree")
        precondition((data.extensions != nil) == data.flags.contains(.extensionData), "ED and the extensions disagree")
        if let credential = data.attestedCredentialData {
            precondition(credential.credentialID.count <= 1023, "credential ID over 1023 bytes")
            precondition((try? CBOR.decode(credential.credentialPublicKey)) != nil, "credential public key is not one CBOR item")
            precondition(bytes.count >= 37 + 18 + credential.credentialID.count + credential.credentialPublicKey.count, "lengths")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebAuthn(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let mode = data[0]
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let requireUserVerification = mode & 0x04 != 0
    switch mode & 0x03 {
    case 0:
        FuzzWebAuthn.parse(input)
        let attestation = CBORValue.map(["fmt": .text("none"), "attStmt": .map([:]), "authData": .bytes(input)]).encoded
        FuzzWebAuthn.registration(clientDataJSON: FuzzWebAuthn.registrationClientData, attestationObject: attestation,
                                  requireUserVerification: requireUserVerification)
        let signature = FuzzWebAuthn.sign(input + SHA256.hash(FuzzWebAuthn.assertionClientData))
        FuzzWebAuthn.assertion(clientDataJSON: FuzzWebAuthn.assertionClientData, authenticatorData: input, signature: signature,
                               credential: FuzzWebAuthn.ownCredential, requireUserVerification: requireUserVerification)
    case 1:
        let signature = FuzzWebAuthn.sign(FuzzWebAuthn.assertionAuthenticatorData + SHA256.hash(input))
        FuzzWebAuthn.assertion(clientDataJSON: input, authenticatorData: FuzzWebAuthn.assertionAuthenticatorData, signature: signature,
                               credential: FuzzWebAuthn.ownCredential, requireUserVerification: requireUserVerification)
        FuzzWebAuthn.registration(clientDataJSON: input, attestationObject: FuzzWebAuthn.attestationObject,
                                  requireUserVerification: requireUserVerification)
    case 2:
        var slice = input[...]
        guard let authenticatorData = FuzzWebAuthn.chunk(&slice), let clientData = FuzzWebAuthn.chunk(&slice) else { return 0 }
        FuzzWebAuthn.parse(authenticatorData)
        FuzzWebAuthn.assertion(clientDataJSON: clientData, authenticatorData: authenticatorData, signature: Array(slice),
                               credential: FuzzWebAuthn.specCredential, requireUserVerification: requireUserVerification)
    default:
        var slice = input[...]
        guard let clientData = FuzzWebAuthn.chunk(&slice) else { return 0 }
        FuzzWebAuthn.registration(clientDataJSON: clientData, attestationObject: Array(slice), requireUserVerification: requireUserVerification)
    }
    return 0
}
