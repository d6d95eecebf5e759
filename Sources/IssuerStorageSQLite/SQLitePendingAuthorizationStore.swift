import IssuerStorage
import SQLiteClient

/// `pending_authorizations`, by the hash of the `gh_login` cookie secret;
/// the password-verified mark lives on the same row.
final class SQLitePendingAuthorizationStore: PendingAuthorizationStore {
    let database: SQLiteDatabase
    init(database: SQLiteDatabase) { self.database = database }

    static let columns = """
        client_id, redirect_uri, scope, state, nonce, code_challenge, max_age, replaces_sid, form_token_hash, expected_subject, dpop_jkt
        """

    func find(secretHash: [UInt8], now: Int64) throws -> PendingAuthorization? {
        try database.queryOne("SELECT \(Self.columns) FROM pending_authorizations WHERE secret_hash = ? AND expires_at > ?",
                              [.blob(secretHash), .integer(now)]).map(Self.pending)
    }

    func markedUserID(secretHash: [UInt8], now: Int64, markedAfter: Int64) throws -> Int64? {
        try database.queryOne("""
            SELECT password_verified_user_id FROM pending_authorizations
            WHERE secret_hash = ? AND expires_at > ? AND password_verified_user_id IS NOT NULL AND password_verified_at > ?
            """, [.blob(secretHash), .integer(now), .integer(markedAfter)])?.optionalInt(0)
    }

    func insert(_ pending: PendingAuthorization, secretHash: [UInt8], createdAt: Int64, expiresAt: Int64) throws {
        // Opportunistic sweep: expired pending requests are worthless.
        try database.execute("DELETE FROM pending_authorizations WHERE expires_at <= ?", [.integer(createdAt)])
        let request = pending.request
        try database.execute("""
            INSERT INTO pending_authorizations (secret_hash, form_token_hash, client_id, redirect_uri, scope, state, nonce,
                code_challenge, max_age, replaces_sid, created_at, expires_at, expected_subject, dpop_jkt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.blob(secretHash), .blob(pending.formTokenHash), .text(request.clientID), .text(request.redirectURI),
                  .text(StoredList.encode(request.scope)), SQLiteValue(request.state), SQLiteValue(request.nonce),
                  .text(request.codeChallenge), request.maxAge.map { .integer(Int64($0)) } ?? .null, SQLiteValue(pending.replacesSID),
                  .integer(createdAt), .integer(expiresAt), SQLiteValue(request.expectedSubject),
                  SQLiteValue(request.dpopJKT)])
    }

    func consume(secretHash: [UInt8], now: Int64) throws -> PendingAuthorization? {
        try database.queryOne("DELETE FROM pending_authorizations WHERE secret_hash = ? AND expires_at > ? RETURNING \(Self.columns)",
                              [.blob(secretHash), .integer(now)]).map(Self.pending)
    }

    func mark(secretHash: [UInt8], userID: Int64, now: Int64) throws -> Bool {
        try database.execute("""
            UPDATE pending_authorizations SET password_verified_user_id = ?, password_verified_at = ?
            WHERE secret_hash = ? AND expires_at > ?
            """, [.integer(userID), .integer(now), .blob(secretHash), .integer(now)]) == 1
    }

    func consumeMarked(secretHash: [UInt8], userID: Int64, now: Int64, markedAfter: Int64) throws -> PendingAuthorization? {
        try database.queryOne("""
            DELETE FROM pending_authorizations
            WHERE secret_hash = ? AND expires_at > ? AND password_verified_user_id = ? AND password_verified_at > ?
            RETURNING \(Self.columns)
            """, [.blob(secretHash), .integer(now), .integer(userID), .integer(markedAfter)]).map(Self.pending)
    }

    func clearMarks(userID: Int64) throws {
        try database.execute("""
            UPDATE pending_authorizations SET password_verified_user_id = NULL, password_verified_at = NULL
            WHERE password_verified_user_id = ?
            """, [.integer(userID)])
    }

    func deleteAll(userID: Int64, subject: String) throws -> Int {
        try database.execute("DELETE FROM pending_authorizations WHERE password_verified_user_id = ? OR expected_subject = ?",
                             [.integer(userID), .text(subject)])
    }

    static func pending(_ row: SQLiteRow) -> PendingAuthorization {
        var request = AuthorizationRequest(
            clientID: row.string(0), redirectURI: row.string(1), scope: StoredList.decode(row.string(2)), state: row.optionalString(3),
            nonce: row.optionalString(4), codeChallenge: row.string(5), prompt: [], maxAge: row.optionalInt(6).map(Int.init),
            loginHint: nil, expectedSubject: row.optionalString(9))
        request.dpopJKT = row.optionalString(10)
        return PendingAuthorization(request: request, formTokenHash: row.bytes(8), replacesSID: row.optionalString(7))
    }
}
