/// Server-provided DPoP nonces (RFC 9449 §8, §9) that need no shared
/// state: a nonce is the number of the current period and an HMAC of it
/// under a key every responder process (and, with PostgreSQL, every node)
/// derives alike, so a nonce one process hands out is good at all of them.
/// It is accepted during its own period and the next, so a client that
/// keeps the newest `DPoP-Nonce` it was sent is never refused for it.
public struct DPoPNonces: Sendable {
    /// Seconds one nonce is handed out for.
    public static let period: Int64 = 300

    let key: [UInt8]
    let purpose: String

    /// `purpose` keeps the issuer's nonces apart from a resource server's.
    public init(key: [UInt8], purpose: String) {
        self.key = key
        self.purpose = purpose
    }

    public func current(now: Int64) -> String { nonce(period: now / Self.period) }

    public func isValid(_ nonce: String, now: Int64) -> Bool {
        let current = now / Self.period
        let presented = Array(nonce.utf8)
        return [current, current - 1].contains { ConstantTime.equals(presented, Array(self.nonce(period: $0).utf8)) }
    }

    func nonce(period: Int64) -> String {
        let counter = withUnsafeBytes(of: period.bigEndian) { Array($0) }
        let mac = HMACSHA256.authenticate(Array(purpose.utf8) + [0] + counter, key: key)
        return Base64URL.encode(counter.suffix(4) + mac.prefix(16))
    }
}
