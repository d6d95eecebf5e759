import SSOCore

/// How a rotated refresh token's successor is sealed for the grace window
/// (`refresh_tokens.successor_sealed`): AES-256-GCM under the refresh
/// sealing key, the spent token's hash as authenticated data, so a sealed
/// successor moved to another row does not open. Written once, for the
/// rotation and for `ssoctl migrate`, which seals it again under another key.
enum RefreshSuccessorSealing {
    static func seal(_ successor: [UInt8], key: [UInt8], spentTokenHash: [UInt8]) throws -> [UInt8] {
        try AESGCM.seal(successor, key: key, authenticating: spentTokenHash)
    }

    static func open(_ sealed: [UInt8], key: [UInt8], spentTokenHash: [UInt8]) throws -> [UInt8] {
        try AESGCM.open(sealed, key: key, authenticating: spentTokenHash)
    }
}
