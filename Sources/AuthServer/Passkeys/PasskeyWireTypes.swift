/// The JSON the pages exchange with the passkey endpoints: WebAuthn Level 3's
/// `PublicKeyCredentialCreationOptionsJSON` / `...RequestOptionsJSON`
/// (§5.1.8, §5.1.9: binary members as base64url), which
/// `PublicKeyCredential.parseCreationOptionsFromJSON()` and the page's own
/// script turn into the browser's options, and the browser's answers in the
/// shape of `toJSON()` (§5.1.8 `RegistrationResponseJSON`, flattened).

public struct PasskeyCreationOptions: Encodable, Equatable, Sendable {
    public struct RelyingParty: Encodable, Equatable, Sendable { public let id: String; public let name: String }
    public struct UserEntity: Encodable, Equatable, Sendable { public let id: String; public let name: String; public let displayName: String }
    public struct Parameter: Encodable, Equatable, Sendable { public let type: String; public let alg: Int }
    public struct Descriptor: Encodable, Equatable, Sendable { public let type: String; public let id: String }
    public struct Selection: Encodable, Equatable, Sendable {
        public let residentKey: String
        public let requireResidentKey: Bool
        public let userVerification: String
    }

    public let challenge: String
    public let rp: RelyingParty
    public let user: UserEntity
    public let pubKeyCredParams: [Parameter]
    public let timeout: Int
    public let excludeCredentials: [Descriptor]
    public let authenticatorSelection: Selection
    public let attestation: String
}

public struct PasskeyRequestOptions: Encodable, Equatable, Sendable {
    public let challenge: String
    public let rpId: String
    public let timeout: Int
    public let userVerification: String
}

/// A new credential: `response.clientDataJSON` and
/// `response.attestationObject` (base64url), the transports the browser
/// reported, and the name the user gave it.
public struct PasskeyRegistrationResponse: Decodable, Sendable {
    public let clientDataJSON: String
    public let attestationObject: String
    public let transports: [String]?
    public let name: String?
}

/// An assertion: the credential id and `response.*` (base64url).
public struct PasskeyAssertionResponse: Decodable, Sendable {
    public let id: String
    public let clientDataJSON: String
    public let authenticatorData: String
    public let signature: String
    public let userHandle: String?
}
