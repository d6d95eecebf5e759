import IssuerStorage
import PostgreSQLClient

/// Where this schema differs from SQLite's on purpose, and what a copy
/// (`ssoctl migrate`) makes of those columns. Everything else is copied
/// as it is; a difference not named here is a schema mismatch, refused.
struct PostgreSQLImportRules {
    /// Columns only this schema has, made from the rest of the row.
    /// (Identity columns the source lacks, `signing_keys.seq` and
    /// `device_secrets.id`, are generated, in the source's row order.)
    static let derivedColumns: [String: Set<String>] = ["users": ["email_key"], "signing_keys": ["private_sealed"]]

    let source: any IssuerStateSource
    let keySealing: SigningKeySealing
    let resealing: any SealedValueResealing

    func derive(_ column: String, of table: String, _ row: ImportRow) throws -> PostgreSQLValue {
        switch (table, column) {
        // The ASCII-folded email the unique index and the lookups use.
        case ("users", "email_key"):
            return .text(EmailKey.of(try row.text("email")))
        // On SQLite a private key is a 0600 file beside the database; here it
        // is sealed under the master key with its kid as authenticated data.
        // A retired key has none on either side.
        case ("signing_keys", "private_sealed"):
            let kid = try row.text("kid")
            guard row.value("retired_at") == .null else { return .null }
            guard let pem = try source.privateKeyPEM(kid: kid) else {
                throw StateTransferError(.unmovableRow, "the private key of signing key \(kid) is missing (keys/\(kid).pem), "
                                         + "and the key is not retired: retire it on SQLite first (ssoctl keys retire), or restore the file")
            }
            return .bytes(try keySealing.seal(pem, kid: kid))
        default:
            throw StateTransferError(.schemaMismatch, "\(table).\(column) has no rule to make it")
        }
    }

    /// A copied value, sealed again under this backend's keys where it is
    /// sealed at rest.
    func carry(_ value: TransferValue, column: String, of table: String, _ row: ImportRow) throws -> TransferValue {
        guard case .bytes(let sealed) = value, let kind = try sealedValue(column, of: table, row) else { return value }
        do {
            return .bytes(try resealing.reseal(sealed, as: kind))
        } catch {
            throw StateTransferError(.unmovableRow, "\(table).\(column) does not open with the home's sealing key: \(error)")
        }
    }

    func sealedValue(_ column: String, of table: String, _ row: ImportRow) throws -> SealedValue? {
        switch (table, column) {
        case ("totp_credentials", "sealed_secret"): .totpSeed(userID: try row.integer("user_id"))
        case ("refresh_tokens", "successor_sealed"): .refreshSuccessor(spentTokenHash: try row.bytes("token_hash"))
        case ("identity_providers", "secret_sealed"), ("identity_providers", "apple_key_sealed"):
            .identityProviderSecret(name: try row.text("name"), column: column)
        default: nil
        }
    }
}

/// One source row, its values found by column name.
struct ImportRow {
    let table: String
    let columnIndex: [String: Int]
    let values: [TransferValue]

    func value(_ column: String) -> TransferValue? { columnIndex[column].map { values[$0] } }

    func text(_ column: String) throws -> String {
        guard let text = value(column)?.string else { throw missing(column) }
        return text
    }

    func integer(_ column: String) throws -> Int64 {
        guard let number = value(column)?.int else { throw missing(column) }
        return number
    }

    func bytes(_ column: String) throws -> [UInt8] {
        guard let bytes = value(column)?.byteArray else { throw missing(column) }
        return bytes
    }

    private func missing(_ column: String) -> StateTransferError {
        StateTransferError(.unmovableRow, "a row of \(table) has no usable \(column)")
    }
}
