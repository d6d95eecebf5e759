import AuthServer
import Foundation
import IssuerStorage
import SSOCore

/// The `--json` forms of the list commands: one array of objects, keys in
/// snake_case and sorted, times in seconds since the epoch (null when
/// absent; every key is always present). Never a secret or a hash.
func printJSON<T: Encodable>(_ value: T) {
    print(String(decoding: attempt { try JSON.encode(value) }, as: UTF8.self))
}

/// `ssoctl user list --json`.
struct UserJSON: Encodable {
    let email: String
    let name: String
    let roles: [String]
    let disabled: Bool
    let sub: String

    init(_ user: User) {
        email = user.email
        name = user.name
        roles = user.roles
        disabled = user.disabled
        sub = user.subject
    }
}

/// `ssoctl keys list --json`: the key's state now, and its times.
struct SigningKeyJSON: Encodable {
    let kid: String
    let state: String
    let createdAt: Int64
    let activatesAt: Int64
    let retiredAt: Int64?

    init(_ key: SigningKeyRecord) {
        kid = key.kid
        state = key.state.rawValue
        createdAt = key.createdAt
        activatesAt = key.activatesAt
        retiredAt = key.retiredAt
    }

    enum CodingKeys: String, CodingKey {
        case kid, state
        case createdAt = "created_at", activatesAt = "activates_at", retiredAt = "retired_at"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kid, forKey: .kid)
        try container.encode(state, forKey: .state)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(activatesAt, forKey: .activatesAt)
        try container.encode(retiredAt, forKey: .retiredAt)   // null while not retired
    }
}

/// `ssoctl sessions list --json`: the public sid (tokens carry it), never
/// the cookie secret or its hash.
struct SessionJSON: Encodable {
    let sid: String
    let email: String
    let state: String
    let amr: [String]
    let authTime: Int64
    let createdAt: Int64
    let expiresAt: Int64
    let endedAt: Int64?

    init(_ session: SSOSessionListing) {
        sid = session.sid
        email = session.email
        state = session.state.rawValue
        amr = session.amr
        authTime = session.authTime
        createdAt = session.createdAt
        expiresAt = session.expiresAt
        endedAt = session.endedAt
    }

    enum CodingKeys: String, CodingKey {
        case sid, email, state, amr
        case authTime = "auth_time", createdAt = "created_at", expiresAt = "expires_at", endedAt = "ended_at"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sid, forKey: .sid)
        try container.encode(email, forKey: .email)
        try container.encode(state, forKey: .state)
        try container.encode(amr, forKey: .amr)
        try container.encode(authTime, forKey: .authTime)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(endedAt, forKey: .endedAt)   // null while not ended
    }
}
