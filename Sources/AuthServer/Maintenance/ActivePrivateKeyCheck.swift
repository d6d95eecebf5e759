import FoundationEssentials
import SSOCore

/// `keys.private-key`: the active key's private half is on disk, readable
/// by its owner only (DESIGN "Storage": 0600), loads, and is the key its
/// kid names (the kid is the JWK thumbprint, RFC 7638), so tokens verify.
struct ActivePrivateKeyCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard let keys = context.keys, let kid = try? keys.activeKID() else { return [] }
        return [Self.finding(kid: kid, path: keys.privateKeyPath(kid), check: "keys.private-key")]
    }

    /// Shared with the next key's check: the same rules for a key about to sign.
    static func finding(kid: String, path: String, check: String) -> DoctorFinding {
        guard let mode = FileStatus(path: path) else { return DoctorFinding(.fail, check, "\(path) is missing: \(kid) cannot sign") }
        if mode.groupOrOther != 0 {
            return DoctorFinding(.fail, check, "\(path) is mode \(mode.octal) (\(FilePermissionsCheck.who(mode.groupOrOther))): "
                                 + "a private key must be its owner's alone; chmod 600 it")
        }
        do {
            guard let pem = FileManager.default.contents(atPath: path) else { return DoctorFinding(.fail, check, "\(path) cannot be read") }
            let key = try RSAKey.privateKey(pem: Array(pem))
            let thumbprint = try JWK.thumbprint(of: key)
            guard thumbprint == kid else {
                return DoctorFinding(.fail, check, "\(path) holds another key (thumbprint \(thumbprint)), not \(kid)")
            }
            return DoctorFinding(.ok, check, "\(path), mode \(mode.octal), RSA-\(key.bits), matches its kid")
        } catch {
            return DoctorFinding(.fail, check, "\(path) does not load: \(error)")
        }
    }
}
