import FoundationEssentials
import IssuerStorage
import SSOCore

/// `keys.private-key`: the active key's private half exists, loads, and is
/// the key its kid names (the kid is the JWK thumbprint, RFC 7638), so
/// tokens verify. A key file in the keys directory (the single-node layout)
/// must also be readable by its owner only (0600).
struct ActivePrivateKeyCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard let keys = context.keys, let algorithms = try? keys.activeAlgorithms() else { return [] }
        // Each algorithm's active key signs someone's tokens.
        return algorithms.compactMap { algorithm in
            (try? keys.activeKID(algorithm: algorithm)).flatMap { $0 }.map {
                Self.finding(kid: $0, keys: keys, config: context.config, check: "keys.private-key", algorithm: algorithm)
            }
        }
    }

    /// With PostgreSQL the private half is sealed in the database (every
    /// node reads it there); with SQLite it is a file beside the database.
    static func finding(kid: String, keys: SigningKeys, config: GatehouseConfig, check: String,
                        algorithm: JWSAlgorithm = .rs256) -> DoctorFinding {
        let path = config.keysDirectory + "/" + kid + ".pem"
        let sealed = config.databaseURL != nil
        let mode = sealed ? nil : FileStatus(path: path)
        if let mode, mode.groupOrOther != 0 {
            return DoctorFinding(.fail, check, "\(path) is mode \(mode.octal) (\(FilePermissionsCheck.who(mode.groupOrOther))): "
                                 + "a private key must be its owner's alone; chmod 600 it")
        }
        let place = sealed ? "sealed in the database" : mode.map { "\(path), mode \($0.octal)" } ?? path
        do {
            guard let pem = try keys.storage.read.signingKeys.privateKeyPEM(kid: kid) else {
                return DoctorFinding(.fail, check, "\(sealed ? "the sealed key" : path) is missing: \(kid) cannot sign")
            }
            let key = try IssuerSigningKey.load(pem: pem, algorithm: algorithm)
            let thumbprint = try key.thumbprint()
            guard thumbprint == kid else {
                return DoctorFinding(.fail, check, "\(place) holds another key (thumbprint \(thumbprint)), not \(kid)")
            }
            let kind = switch key {
            case .rs256(let rsa): "RSA-\(rsa.bits)"
            case .es256: "ES256 (P-256)"
            case .edDSA: "EdDSA (Ed25519)"
            }
            return DoctorFinding(.ok, check, "\(place), \(kind), matches its kid")
        } catch {
            return DoctorFinding(.fail, check, "\(place) does not load: \(error)")
        }
    }
}
