import COpenSSL

/// scrypt password hashes through OpenSSL's EVP_PBE_scrypt, stored as
/// `$scrypt$ln=13,r=8,p=10$<salt>$<hash>` so the parameters travel with the
/// hash and can be raised later without breaking old ones.
///
/// ln=13, r=8, p=10 is one of OWASP's equivalent scrypt settings; it needs
/// 8 MiB per hash (128·r·N bytes) instead of the 32–128 MiB of the others,
/// which keeps the login responder small while costing an attacker the same.
public struct PasswordHasher: Sendable {
    public struct Parameters: Equatable, Sendable {
        public var logN: Int
        public var r: Int
        public var p: Int
        public init(logN: Int, r: Int, p: Int) { self.logN = logN; self.r = r; self.p = p }
        public static let standard = Parameters(logN: 13, r: 8, p: 10)
        /// Limits for hashes read back from storage, so a tampered row cannot
        /// make a login allocate gigabytes or spin for minutes.
        func isWithinLimits() -> Bool {
            (10...20).contains(logN) && (1...16).contains(r) && (1...16).contains(p)
        }
    }

    public let parameters: Parameters
    public init(parameters: Parameters = .standard) { self.parameters = parameters }

    public func hash(password: String) throws -> String {
        let salt = SecureRandom.bytes(16)
        let derived = try Self.derive(password: password, salt: salt, parameters: parameters)
        return "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$\(Base64URL.encode(salt))$\(Base64URL.encode(derived))"
    }

    /// Verifies in constant time against the stored hash's own parameters.
    /// A malformed stored hash verifies nothing.
    public func verify(password: String, against stored: String) -> Bool {
        guard let parsed = Self.parse(stored),
              let derived = try? Self.derive(password: password, salt: parsed.salt, parameters: parsed.parameters, length: parsed.hash.count)
        else { return false }
        return ConstantTime.equals(derived, parsed.hash)
    }

    static func parse(_ stored: String) -> (parameters: Parameters, salt: [UInt8], hash: [UInt8])? {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else { return nil }
        var values: [Substring: Int] = [:]
        for pair in parts[2].split(separator: ",") {
            let keyValue = pair.split(separator: "=")
            guard keyValue.count == 2, let number = Int(keyValue[1]) else { return nil }
            values[keyValue[0]] = number
        }
        guard let logN = values["ln"], let r = values["r"], let p = values["p"],
              let salt = Base64URL.decode(parts[3]), let hash = Base64URL.decode(parts[4]),
              salt.count >= 16, (16...64).contains(hash.count) else { return nil }
        let parameters = Parameters(logN: logN, r: r, p: p)
        guard parameters.isWithinLimits() else { return nil }
        return (parameters, salt, hash)
    }

    static func derive(password: String, salt: [UInt8], parameters: Parameters, length: Int = 32) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        let passwordBytes = Array(password.utf8)
        let memoryLimit = UInt64(128 * parameters.r) * (UInt64(1) << UInt64(parameters.logN)) * 2 + (1 << 20)
        let ok = passwordBytes.withUnsafeBufferPointer { passwordBuffer in
            salt.withUnsafeBufferPointer { saltBuffer in
                passwordBuffer.withMemoryRebound(to: CChar.self) { passwordChars in
                    EVP_PBE_scrypt(passwordChars.baseAddress, passwordBytes.count,
                                   saltBuffer.baseAddress, salt.count,
                                   UInt64(1) << UInt64(parameters.logN), UInt64(parameters.r), UInt64(parameters.p),
                                   memoryLimit, &output, length)
                }
            }
        }
        guard ok == 1 else { throw OpenSSLError("scrypt") }
        return output
    }
}
