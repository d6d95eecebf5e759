import SSOCore

/// The ID token claims this tool checks or shows (OIDC Core §2).
struct IDTokenClaims: Decodable {
    let iss: String
    let sub: String
    let aud: AudienceClaim
    let exp: Int64
    let iat: Int64
    let azp: String?
    let nonce: String?
    let email: String?
    let name: String?
}
