import IssuerStorage

/// The app behind a client, as the association files name it.
enum AppIdentity {
    /// Apple: "<Team ID>.<bundle ID>": a ten-character team id of
    /// upper-case letters and digits, then the reverse-DNS bundle id
    /// (letters, digits, '-' and '.').
    static func isAppleAppID(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count > 11, bytes.count <= 155, bytes[10] == UInt8(ascii: ".") else { return false }
        let team = bytes[..<10].allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
        let bundle = bytes[11...]
        return team && bundle.first != UInt8(ascii: ".") && bundle.last != UInt8(ascii: ".")
            && bundle.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// Android: an application id, at least two segments, each a letter
    /// then letters, digits or '_'.
    static func isAndroidPackage(_ value: String) -> Bool {
        let segments = value.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return value.utf8.count <= 255 && segments.count >= 2 && segments.allSatisfy { segment in
            guard let first = segment.first, isLetter(first) else { return false }
            return segment.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "_") }
        }
    }

    /// Digital Asset Links: the SHA-256 of the signing certificate as 32
    /// upper-case hex pairs joined by ':'.
    static func isCertificateFingerprint(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count == 95 else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            index % 3 == 2 ? byte == UInt8(ascii: ":") : (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte)
        }
    }

    static func check(iosAppID: String?, androidPackage: String?, fingerprints: [String]) throws {
        if let iosAppID, !isAppleAppID(iosAppID) {
            throw ValidationError("--ios-app-id is TEAMID.bundle.id (a ten-character team id): \(iosAppID.debugDescription)")
        }
        if let androidPackage, !isAndroidPackage(androidPackage) {
            throw ValidationError("--android-package is an application id like com.example.app: \(androidPackage.debugDescription)")
        }
        if let bad = fingerprints.first(where: { !isCertificateFingerprint($0) }) {
            throw ValidationError("--android-cert-fingerprint is a SHA-256 as 32 hex pairs joined by ':': \(bad.debugDescription)")
        }
        if (androidPackage == nil) != fingerprints.isEmpty {
            throw ValidationError("an Android app needs both --android-package and at least one --android-cert-fingerprint")
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    private static func isLetterOrDigit(_ byte: UInt8) -> Bool { isLetter(byte) || (0x30...0x39).contains(byte) }
}
