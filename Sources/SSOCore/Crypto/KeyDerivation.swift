/// Keys derived from one master key, one per purpose (label): NIST SP
/// 800-108 KDF in counter mode with HMAC-SHA-256, one block:
/// K = HMAC(master, [1]₃₂ || label || 0x00 || [256]₃₂).
public enum KeyDerivation {
    public static func derive(_ master: [UInt8], label: String) -> [UInt8] {
        HMACSHA256.authenticate([0, 0, 0, 1] + Array(label.utf8) + [0] + [0, 0, 1, 0], key: master)
    }
}
