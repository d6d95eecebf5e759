import FoundationEssentials

/// The client data (WebAuthn §5.8.1) a browser collected and the
/// authenticator signed the hash of. Members this does not name (the
/// specification's test vectors carry `extraData`, and "clientDataJSON may
/// be extended with additional fields in the future") are ignored.
public struct CollectedClientData: Decodable, Sendable {
    /// "webauthn.create" or "webauthn.get".
    public let type: String
    /// "the base64url encoding of the challenge provided by the Relying Party".
    public let challenge: String
    /// "The fully qualified origin of the requester".
    public let origin: String
    /// "the inverse of the sameOriginWithAncestors argument".
    public let crossOrigin: Bool?
    /// "the fully qualified top-level origin of the requester", present
    /// only when called from a cross-origin iframe.
    public let topOrigin: String?

    /// A few hundred bytes from every browser; far more is not client data.
    public static let maximumLength = 16 * 1024

    /// §7.1 and §7.2: "Let JSONtext be the result of running UTF-8 decode on
    /// the value of ... clientDataJSON" (a leading byte order mark is
    /// stripped: "any leading byte order mark (BOM) MUST be stripped"),
    /// then "Let C ... be the result of running an implementation-specific
    /// JSON parser on JSONtext".
    public static func parse(_ clientDataJSON: [UInt8]) throws -> CollectedClientData {
        guard clientDataJSON.count <= maximumLength else {
            throw WebAuthnError(.malformedClientData, "clientDataJSON of \(clientDataJSON.count) bytes")
        }
        var text = clientDataJSON[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        guard String(validating: text, as: UTF8.self) != nil else { throw WebAuthnError(.malformedClientData, "clientDataJSON is not UTF-8") }
        do {
            return try JSON.decoder.decode(CollectedClientData.self, from: Data(text))
        } catch {
            throw WebAuthnError(.malformedClientData, "clientDataJSON is not an object with string type, challenge and origin")
        }
    }
}
