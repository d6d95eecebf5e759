import FoundationEssentials
import IssuerStorage
import SSOCore

/// Passkeys at the issuer (WebAuthn Level 3): the options a page hands to
/// `navigator.credentials.create()` / `.get()`, each with a challenge of its
/// own, and the verification of what the authenticator answered.
///
/// A challenge is random (32 bytes), stored only as its SHA-256, used once
/// (claimed by one atomic statement, WebAuthnChallengeStore.claim), good for
/// `challengeLifetime` seconds, and bound to what asked for it: for a
/// registration the signed-in session, for a sign-in the browser's pending
/// authorization request. A response with another binding's challenge is
/// refused, so a challenge cannot be carried from one browser to another.
///
/// The relying party is the issuer: its host is the RP ID and its origin
/// the only origin accepted (§13.4.9 "Validating the origin of a credential").
public final class PasskeyCeremonies {
    let storage: any IssuerStorage
    let users: UserAccounts
    let clock: Clock
    public let relyingParty: WebAuthnRelyingParty
    /// WebAuthn §5.4.1 `rp.name`, "a human-palatable identifier for the
    /// Relying Party, intended only for display": the passkey dialog shows
    /// it, so it is the deployment's brand name (`GATEHOUSE_BRAND_NAME`).
    let displayName: String

    /// §15.1 recommends 300–600 s when user verification is required; the
    /// challenge lives as long as the ceremony may take.
    public static let challengeLifetime = 300
    /// Passkeys one account may hold.
    public static let maximumPerUser = 20
    public static let maximumNameBytes = 64

    public enum Purpose: String { case register, authenticate }

    public init(storage: any IssuerStorage, users: UserAccounts, issuer: String, displayName: String = BrandSettings.standardName,
                clock: @escaping Clock = systemClock) {
        self.storage = storage
        self.users = users
        self.clock = clock
        self.displayName = displayName
        relyingParty = WebAuthnRelyingParty(id: Self.host(of: issuer), origins: [issuer])
    }

    /// The host of an origin: "https://login.example.com:8443" → "login.example.com".
    static func host(of origin: String) -> String {
        var rest = Substring(origin)
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") { rest = rest[rest.index(colon, offsetBy: 3)...] }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") { return String(rest[...close]) }
        if let colon = rest.lastIndex(of: ":") { rest = rest[..<colon] }
        return String(rest)
    }

    // MARK: Challenges

    /// A new challenge for `purpose`, stored (hashed) with its binding.
    func newChallenge(_ purpose: Purpose, userID: Int64?, binding: [UInt8]) throws -> [UInt8] {
        let challenge = SecureRandom.bytes(32)
        let record = WebAuthnChallengeRecord(purpose: purpose.rawValue, userID: userID, binding: binding,
                                             expiresAt: clock() + Int64(Self.challengeLifetime))
        try storage.write { tx in try tx.webAuthnChallenges.issue(challengeHash: SHA256.hash(challenge), record) }
        return challenge
    }

    /// The challenge the client data names, claimed once: it must have been
    /// issued here for `purpose`, be unexpired and unused, and carry this
    /// binding (and user, for a registration). Claimed in a write unit of
    /// its own, before the response is verified: a response that fails
    /// verification has still spent its challenge, so no challenge serves
    /// two attempts.
    func claimChallenge(_ clientDataJSON: [UInt8], _ purpose: Purpose, userID: Int64?, binding: [UInt8]) throws -> [UInt8] {
        guard let clientData = try? JSON.decoder.decode(ChallengeOnly.self, from: Data(clientDataJSON)),
              let challenge = Base64URL.decode(clientData.challenge), challenge.count == 32 else {
            throw PasskeyRefusal(.malformed, "clientDataJSON has no challenge of ours")
        }
        let claimed = try storage.write { tx in
            try tx.webAuthnChallenges.claim(challengeHash: SHA256.hash(challenge), purpose: purpose.rawValue, now: clock())
        }
        guard let record = claimed else {
            throw PasskeyRefusal(.challenge, "the challenge is unknown, used or expired")
        }
        guard let stored = record.binding, ConstantTime.equals(stored, binding), record.userID == userID else {
            throw PasskeyRefusal(.challenge, "the challenge was issued to another sign-in or session")
        }
        return challenge
    }

    struct ChallengeOnly: Decodable { let challenge: String }

    // MARK: Registration (§7.1)

    /// Options for `navigator.credentials.create()`: a discoverable
    /// credential (resident key required, so the login page needs no
    /// username), user verification required, no attestation, and the
    /// user's passkeys excluded so one authenticator is not registered twice.
    public func registrationOptions(for user: User, binding: [UInt8]) throws -> PasskeyCreationOptions {
        let existing = try storage.read.passkeys.list(userID: user.id)
        guard existing.count < Self.maximumPerUser else { throw PasskeyRefusal(.limit, "\(Self.maximumPerUser) passkeys already") }
        let challenge = try newChallenge(.register, userID: user.id, binding: binding)
        return PasskeyCreationOptions(
            challenge: Base64URL.encode(challenge), rp: .init(id: relyingParty.id, name: displayName),
            user: .init(id: Base64URL.encode(Self.userHandle(user)), name: user.email, displayName: user.name),
            pubKeyCredParams: [-7, -8, -257].map { .init(type: "public-key", alg: $0) },
            timeout: Self.challengeLifetime * 1000,
            excludeCredentials: existing.map { .init(type: "public-key", id: Base64URL.encode($0.credentialID)) },
            authenticatorSelection: .init(residentKey: "required", requireResidentKey: true, userVerification: "required"),
            attestation: "none")
    }

    /// The user handle (WebAuthn `user.id`): the account's OIDC subject,
    /// random and stable, never the email (§14.6.1: "the user handle ...
    /// MUST NOT contain personally identifying information").
    public static func userHandle(_ user: User) -> [UInt8] { Array(user.subject.utf8) }

    /// Verifies and stores a new passkey for `user`; its name is `name`
    /// (trimmed; a default when empty).
    public func register(_ response: PasskeyRegistrationResponse, for user: User, binding: [UInt8]) throws -> PasskeyRecord {
        let name = try Self.checkedName(response.name, default: "Passkey")
        guard let clientDataJSON = Base64URL.decode(response.clientDataJSON),
              let attestationObject = Base64URL.decode(response.attestationObject) else {
            throw PasskeyRefusal(.malformed, "clientDataJSON or attestationObject is not base64url")
        }
        let challenge = try claimChallenge(clientDataJSON, .register, userID: user.id, binding: binding)
        return try storage.write { tx in
            // Counted again here: two pages may each hold options from before the limit.
            guard try tx.passkeys.list(userID: user.id).count < Self.maximumPerUser else {
                throw PasskeyRefusal(.limit, "\(Self.maximumPerUser) passkeys already")
            }
            let credential: RegisteredCredential
            do {
                credential = try WebAuthnRegistration.verify(clientDataJSON: clientDataJSON, attestationObject: attestationObject,
                                                             expectedChallenge: challenge, relyingParty: relyingParty)
            } catch let error as WebAuthnError {
                throw PasskeyRefusal(.verification, error.description)
            }
            let record = PasskeyRecord(credentialID: credential.credentialID, userID: user.id, publicKeyCOSE: credential.publicKeyCOSE,
                                       algorithm: credential.algorithm, signCount: Int64(credential.signCount), name: name,
                                       aaguid: credential.aaguid, backupEligible: credential.backupEligible,
                                       backupState: credential.backupState, transports: response.transports ?? [],
                                       createdAt: clock(), lastUsedAt: nil)
            // §7.1 step 26: "Verify that the credentialId is not yet registered
            // for any user."
            guard try tx.passkeys.add(record) else { throw PasskeyRefusal(.duplicate, "this credential is already registered") }
            return record
        }
    }

    static func checkedName(_ name: String?, default fallback: String) throws -> String {
        let trimmed = (name ?? "").trimmingASCIIWhitespace()
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw PasskeyRefusal(.malformed, "the name contains a control character")
        }
        guard trimmed.utf8.count <= maximumNameBytes else { throw PasskeyRefusal(.malformed, "the name is over \(maximumNameBytes) bytes") }
        return trimmed.isEmpty ? fallback : trimmed
    }

    // MARK: Authentication (§7.2)

    /// Options for `navigator.credentials.get()` on the login page: no
    /// allowCredentials (a discoverable credential names its user), user
    /// verification required.
    public func authenticationOptions(binding: [UInt8]) throws -> PasskeyRequestOptions {
        let challenge = try newChallenge(.authenticate, userID: nil, binding: binding)
        return PasskeyRequestOptions(challenge: Base64URL.encode(challenge), rpId: relyingParty.id,
                                     timeout: Self.challengeLifetime * 1000, userVerification: "required")
    }

    /// Verifies an assertion and records the use; the account it signs in.
    /// A disabled account is refused like an unknown credential.
    public func authenticate(_ response: PasskeyAssertionResponse, binding: [UInt8]) throws -> (User, PasskeyRecord) {
        guard let credentialID = Base64URL.decode(response.id), !credentialID.isEmpty, credentialID.count <= 1023,
              let clientDataJSON = Base64URL.decode(response.clientDataJSON),
              let authenticatorData = Base64URL.decode(response.authenticatorData),
              let signature = Base64URL.decode(response.signature),
              let userHandle = Base64URL.decode(response.userHandle ?? "") else {
            throw PasskeyRefusal(.malformed, "a member of the assertion is missing or not base64url")
        }
        let challenge = try claimChallenge(clientDataJSON, .authenticate, userID: nil, binding: binding)
        return try storage.write { tx in
            // §7.2 step 6: identify the user; with a discoverable credential
            // the response's userHandle must be the credential's owner's.
            guard let passkey = try tx.passkeys.find(credentialID: credentialID),
                  let user = try tx.users.find(id: passkey.userID), !user.disabled else {
                throw PasskeyRefusal(.unknownCredential, "no usable account has this credential")
            }
            let verified: VerifiedAssertion
            do {
                verified = try WebAuthnAssertion.verify(
                    clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
                    userHandle: userHandle.isEmpty ? nil : userHandle, expectedChallenge: challenge, relyingParty: relyingParty,
                    credential: StoredCredential(publicKeyCOSE: passkey.publicKeyCOSE, signCount: UInt32(clamping: passkey.signCount),
                                                 backupEligible: passkey.backupEligible, userHandle: Self.userHandle(user)))
            } catch let error as WebAuthnError {
                throw PasskeyRefusal(.verification, error.description)
            }
            // §7.2 step 22 (signature counter), atomically: of two uses with
            // one counter value only one is recorded.
            guard try tx.passkeys.recordUse(credentialID: credentialID, signCount: Int64(verified.signCount),
                                            backupState: verified.backupState, now: clock()) else {
                throw PasskeyRefusal(.verification, "the signature counter did not increase (a replay or a cloned authenticator)")
            }
            return (user, passkey)
        }
    }

    /// RFC 8176 §2 `amr` of a passkey sign-in: "hwk" (a key bound to its
    /// device) or "swk" (a synced passkey, backup eligible: its private key
    /// leaves the device), and "mfa": the key is one factor and the user
    /// verification it required (biometric or PIN) another.
    public static func authenticationMethods(of passkey: PasskeyRecord) -> [String] {
        [passkey.backupEligible ? AuthenticationMethods.softwareKey : AuthenticationMethods.hardwareKey, AuthenticationMethods.multiFactor]
    }
}

/// Why a passkey ceremony was refused: the page says "that passkey did not
/// work"; the log says which check.
public struct PasskeyRefusal: Error, CustomStringConvertible, Equatable {
    public enum Reason: String, Sendable { case malformed, challenge, verification, unknownCredential, duplicate, limit }
    public let reason: Reason
    public let detail: String
    init(_ reason: Reason, _ detail: String) { self.reason = reason; self.detail = detail }
    public var description: String { "\(reason.rawValue): \(detail)" }
}
