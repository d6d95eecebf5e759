import IssuerStorage
import SSOCore

/// What the account page hands the browser and must get back unaltered:
/// an expiry (and a payload) sealed with AES-256-GCM under the TOTP sealing
/// key, authenticated with a purpose, the user and this session's sid, so
/// it opens only for that purpose, that user and that session. The
/// confirmed window's cookie (AccountReauthentication) and the pending TOTP
/// seed of the setup form (AccountTOTPForms) are the two.
final class SessionBoundSeal {
    let purpose: String
    let sealingKeys: any SealingKeySource
    private var cachedKey: [UInt8]?

    /// `purpose`: a versioned name of its own, so one kind never opens as another.
    init(purpose: String, sealingKeys: any SealingKeySource) {
        self.purpose = purpose
        self.sealingKeys = sealingKeys
    }

    func context(userID: Int64, sid: String) -> [UInt8] { Array("\(purpose) user \(userID) sid \(sid)".utf8) }

    /// The key, read once per process (created on first use).
    func key() throws -> [UInt8] {
        if let cachedKey { return cachedKey }
        guard let key = try sealingKeys.key(.totp, create: true) else {
            throw TOTPSealError(description: "the account page's sealing key is missing")
        }
        cachedKey = key
        return key
    }

    /// Base64URL of AES-GCM(expiry as 8 bytes big-endian || payload).
    func seal(expiresAt: Int64, payload: [UInt8] = [], userID: Int64, sid: String) throws -> String {
        let expiry = (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: expiresAt) >> (56 - 8 * UInt64($0))) }
        return Base64URL.encode(try AESGCM.seal(expiry + payload, key: key(), authenticating: context(userID: userID, sid: sid)))
    }

    /// The expiry and payload, or nil when `sealed` is longer than
    /// `maximumLength`, not ours for this user and session, or altered.
    /// Whether it has expired is the caller's to judge.
    func open(_ sealed: String, maximumLength: Int, userID: Int64, sid: String) -> (expiresAt: Int64, payload: [UInt8])? {
        guard sealed.utf8.count <= maximumLength, let bytes = Base64URL.decode(sealed), let key = try? key(),
              let plain = try? AESGCM.open(bytes, key: key, authenticating: context(userID: userID, sid: sid)), plain.count >= 8 else { return nil }
        return (Int64(bitPattern: plain.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }), Array(plain.dropFirst(8)))
    }
}
