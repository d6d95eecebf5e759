/// Authenticator data (WebAuthn §6.1): what the authenticator signs, parsed.
/// Only the layout is checked here; what the flags must say is each
/// ceremony's own step (§7.1, §7.2).
public struct AuthenticatorData: Sendable {
    /// §6.1 flags: "bit 0 is the least significant bit".
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Bit 0: User Present.
        public static let userPresent = Flags(rawValue: 0x01)
        /// Bit 2: User Verified.
        public static let userVerified = Flags(rawValue: 0x04)
        /// Bit 3: Backup Eligibility.
        public static let backupEligible = Flags(rawValue: 0x08)
        /// Bit 4: Backup State.
        public static let backupState = Flags(rawValue: 0x10)
        /// Bit 6: Attested credential data included.
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        /// Bit 7: Extension data included.
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// §6.5.1 attested credential data.
    public struct AttestedCredentialData: Sendable {
        /// "The AAGUID of the authenticator" (16 bytes; zero under `none` from many clients).
        public let aaguid: [UInt8]
        public let credentialID: [UInt8]
        /// The credential public key's exact bytes, as the authenticator
        /// encoded them: what is stored, and parsed again to verify.
        public let credentialPublicKey: [UInt8]
    }

    /// §6.5.1: "credentialIdLength ... Value MUST be ≤ 1023."
    public static let maximumCredentialIDLength = 1023
    /// The fixed part: rpIdHash (32), flags (1), signCount (4).
    public static let minimumLength = 37

    public let rpIdHash: [UInt8]
    public let flags: Flags
    /// "Signature counter, 32-bit unsigned big-endian integer."
    public let signCount: UInt32
    public let attestedCredentialData: AttestedCredentialData?
    /// "A CBOR map with extension identifiers as keys, and authenticator
    /// extension outputs as values"; kept, not acted on.
    public let extensions: [CBORMapKey: CBORValue]?

    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count >= Self.minimumLength else {
            throw WebAuthnError(.malformedAuthenticatorData, "authenticator data of \(bytes.count) bytes")
        }
        rpIdHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var rest = bytes[37...]

        // §6.1: attestedCredentialData "(if present)": AT says whether it is.
        if flags.contains(.attestedCredentialData) {
            // aaguid (16) and credentialIdLength (2, big-endian).
            guard rest.count >= 18 else { throw WebAuthnError(.malformedAuthenticatorData, "attested credential data truncated") }
            let aaguid = Array(rest.prefix(16))
            let length = Int(rest[rest.startIndex + 16]) << 8 | Int(rest[rest.startIndex + 17])
            rest = rest.dropFirst(18)
            guard length <= Self.maximumCredentialIDLength else {
                throw WebAuthnError(.credentialIDTooLong, "credentialIdLength \(length)")
            }
            guard rest.count >= length else { throw WebAuthnError(.malformedAuthenticatorData, "credential ID truncated") }
            let credentialID = Array(rest.prefix(length))
            rest = rest.dropFirst(length)
            // "credentialPublicKey: variable length ... The credential public
            // key encoded in COSE_Key format": exactly one CBOR item, whose
            // end is where the extensions (or the data) end.
            let (_, afterKey) = try Self.decoding("credential public key") { try CBOR.decodeItem(rest) }
            attestedCredentialData = AttestedCredentialData(aaguid: aaguid, credentialID: credentialID,
                                                            credentialPublicKey: Array(rest[..<afterKey.startIndex]))
            rest = afterKey
        } else {
            attestedCredentialData = nil
        }

        // ED: "Indicates if the authenticator data has extensions."
        if flags.contains(.extensionData) {
            let (value, afterExtensions) = try Self.decoding("extensions") { try CBOR.decodeItem(rest) }
            guard let map = value.mapValue else { throw WebAuthnError(.malformedAuthenticatorData, "extensions are not a CBOR map") }
            extensions = map
            rest = afterExtensions
        } else {
            extensions = nil
        }

        // §6.1 note: authenticator data "describes its own length"; bytes
        // beyond it are not part of it.
        guard rest.isEmpty else { throw WebAuthnError(.malformedAuthenticatorData, "\(rest.count) bytes left over") }
    }

    private static func decoding<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CBORError {
            throw WebAuthnError(.malformedCBOR, "\(what): \(error)")
        }
    }

    public var userPresent: Bool { flags.contains(.userPresent) }
    public var userVerified: Bool { flags.contains(.userVerified) }
    public var backupEligible: Bool { flags.contains(.backupEligible) }
    public var backupState: Bool { flags.contains(.backupState) }

    /// §6.1.3: BE 0 with BS 1 — "This combination is not allowed."
    public var backupFlagsAreValid: Bool { backupEligible || !backupState }
}
