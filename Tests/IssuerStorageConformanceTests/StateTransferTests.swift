import Foundation
import IssuerStorage
import IssuerStoragePostgreSQL
import IssuerStorageSQLite
import PostgreSQLClient
import SQLiteClient
import XCTest

/// `ssoctl migrate`'s copy, SQLite to PostgreSQL: every table, every row,
/// counted; refusals that change nothing. (The resealing itself is
/// AuthServer's, SealedSecretsMoveTests; here a marker stands in for it.)
final class StateTransferTests: XCTestCase {
    /// One row (or more) in every table of the SQLite schema, with the foreign
    /// keys they need. A table added to the schema without a row here fails
    /// `testEveryTableOfTheSchemaIsCoveredByTheFixture`: add one, and the
    /// copy test shows it arrives.
    static let fixture: [(table: String, sql: String)] = [
        ("users", """
            INSERT INTO users (id, subject, email, name, password_hash, roles, disabled, created_at, email_verified)
            VALUES (5, 'sub-alice', 'Alice@Example.com', 'Alice', 'scrypt$hash', 'user admin', 0, 10, 1),
                   (9, 'sub-bob', 'bob@example.com', 'Bob', 'scrypt$hash2', 'user', 1, 11, 0)
            """),
        ("apis", "INSERT INTO apis (audience, name, created_at) VALUES ('https://api.example', 'API', 12)"),
        ("api_scopes", "INSERT INTO api_scopes (scope, audience) VALUES ('api:read', 'https://api.example')"),
        ("clients", """
            INSERT INTO clients (client_id, secret_hash, scopes, native_sso_group, created_at, require_dpop, access_token_lifetime)
            VALUES ('app', NULL, 'openid api:read', 'demo', 13, 1, 300), ('machine', 'scrypt$secret', 'api:read', NULL, 14, 0, NULL)
            """),
        ("client_redirect_uris", "INSERT INTO client_redirect_uris (client_id, kind, uri) VALUES ('app', 'login', 'myapp:/cb'), ('app', 'post_logout', 'myapp:/out')"),
        ("native_sso_groups", "INSERT INTO native_sso_groups (name, allow_device_id) VALUES ('demo', 1)"),
        ("sso_sessions", """
            INSERT INTO sso_sessions (sid, secret_hash, user_id, auth_time, created_at, expires_at, amr, created_ip, user_agent)
            VALUES ('sid-1', x'0101', 5, 20, 20, 9000000000, 'pwd otp', '192.0.2.1', 'Test/1.0')
            """),
        ("pending_authorizations", """
            INSERT INTO pending_authorizations (secret_hash, form_token_hash, client_id, redirect_uri, scope, state, code_challenge,
                                                created_at, expires_at, dpop_jkt)
            VALUES (x'0202', x'0303', 'app', 'myapp:/cb', 'openid', 'st', 'challenge', 21, 9000000000, 'jkt')
            """),
        ("authorization_codes", """
            INSERT INTO authorization_codes (code_hash, client_id, redirect_uri, code_challenge, scope, sid, user_id, auth_time,
                                             created_at, expires_at, used_at, issued_family_id)
            VALUES (x'0404', 'app', 'myapp:/cb', 'challenge', 'openid', 'sid-1', 5, 20, 22, 9000000000, 23, 'family-1')
            """),
        ("refresh_tokens", """
            INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, sid, scope, auth_time, created_at, expires_at,
                                        used_at, successor_hash, successor_sealed)
            VALUES (x'0505', 'family-1', 'app', 5, 'sid-1', 'openid', 20, 23, 9000000000, 24, x'0606', x'5EA1ED'),
                   (x'0606', 'family-1', 'app', 5, 'sid-1', 'openid', 20, 24, 9000000000, NULL, NULL, NULL)
            """),
        ("revoked_access_tokens", "INSERT INTO revoked_access_tokens (jti, expires_at) VALUES ('jti-1', 9000000000)"),
        ("totp_credentials", "INSERT INTO totp_credentials (user_id, sealed_secret, last_used_step, created_at) VALUES (5, x'70707070', 17, 25)"),
        ("totp_recovery_codes", "INSERT INTO totp_recovery_codes (user_id, code_hash, created_at) VALUES (5, x'7100FF', 25), (5, x'72', 25)"),
        ("login_throttle", "INSERT INTO login_throttle (key_hash, failures, window_started_at, locked_until) VALUES (x'0707', 3, 26, 0)"),
        ("device_secrets", """
            INSERT INTO device_secrets (secret_hash, sid, user_id, client_id, device_id, scope, code_hash, created_at, expires_at)
            VALUES (x'0808', 'sid-1', 5, 'app', 'device', 'openid device_sso', x'0404', 27, 9000000000),
                   (x'0909', 'sid-1', 5, 'app', NULL, NULL, NULL, 28, 9000000000)
            """),
        ("pushed_authorizations", """
            INSERT INTO pushed_authorizations (request_uri_hash, client_id, parameters, created_at, expires_at)
            VALUES (x'0A0A', 'app', 'scope=openid', 29, 9000000000)
            """),
        ("dpop_proofs", "INSERT INTO dpop_proofs (jti_hash, expires_at) VALUES (x'0B0B', 9000000000)"),
        ("initial_access_tokens", "INSERT INTO initial_access_tokens (token_hash, created_at, expires_at, uses_left) VALUES (x'0B0C', 29, 9000000000, 2)"),
        ("readiness_probes", "INSERT INTO readiness_probes (node, written_at) VALUES ('node-1', 30)"),
        ("passkeys", """
            INSERT INTO passkeys (credential_id, user_id, public_key_cose, algorithm, sign_count, name, aaguid, backup_eligible,
                                  backup_state, transports, created_at)
            VALUES (x'0C0C', 5, x'A501', -7, 4, 'Laptop', x'00000000000000000000000000000000', 1, 0, 'internal', 31)
            """),
        ("webauthn_challenges", """
            INSERT INTO webauthn_challenges (challenge_hash, purpose, user_id, binding, expires_at)
            VALUES (x'0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D0D', 'register', 5, x'0E', 9000000000)
            """),
        ("mail_outbox", """
            INSERT INTO mail_outbox (id, kind, recipient, recipient_key, message, created_at, next_attempt_at, attempts, claimed_until,
                                     claimed_by, sent_at, failed_at, last_error)
            VALUES (3, 'verification', 'Alice@Example.com', 'alice@example.com', x'00FF0D0A5375626A6563740080', 32, 40, 2, 100, 'node-1',
                    NULL, NULL, '421 4.3.2 busy'),
                   (7, 'notice', 'bob@example.com', 'bob@example.com', x'42', 33, 33, 1, NULL, 'node-1', 34, NULL, NULL)
            """),
        ("account_links", """
            INSERT INTO account_links (token_hash, purpose, user_id, created_at, expires_at, used_at, pending_request, target_email)
            VALUES (x'00A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A1', 'verification', 9, 30, 9000000000, NULL, 'req-1', NULL),
                   (x'B2', 'password_reset', 5, 31, 9000000000, 32, NULL, NULL),
                   (x'C3', 'email_change', 5, 33, 9000000000, NULL, NULL, 'Nëw@example.com')
            """),
        ("identity_providers", """
            INSERT INTO identity_providers (name, issuer, client_id, secret_sealed, scopes, label, preset, authorization_endpoint,
                                            token_endpoint, jwks_uri, apple_team_id, apple_key_id, apple_key_sealed, hosted_domain, created_at)
            VALUES ('corp', 'https://id.corp.example', 'gatehouse', x'5EC0', 'openid email', 'Corp SSO', 'generic',
                    'https://id.corp.example/authorize', 'https://id.corp.example/token', 'https://id.corp.example/jwks', NULL, NULL, NULL,
                    NULL, 40),
                   ('apple', 'https://appleid.apple.com', 'com.example.web', NULL, 'openid email name', 'Apple', 'apple',
                    'https://appleid.apple.com/auth/authorize', 'https://appleid.apple.com/auth/token', 'https://appleid.apple.com/auth/keys',
                    'TEAM123456', 'KEY1234567', x'A1', NULL, 41)
            """),
        ("federated_identities", """
            INSERT INTO federated_identities (issuer, subject, user_id, provider, email, linked_at, last_used_at)
            VALUES ('https://id.corp.example', '248289761001', 5, 'corp', 'alice@corp.example', 42, 43)
            """),
        ("federation_requests", """
            INSERT INTO federation_requests (state_hash, binding_hash, provider, pending_hash, created_at, expires_at, used_at, link_user_id,
                                             link_issuer, link_subject, link_email)
            VALUES (x'51', x'B1', 'corp', x'9E', 44, 644, 45, 9, 'https://id.corp.example', 'bob-sub', 'bob@example.com')
            """),
    ]

    var directory = ""
    var serverURL: String?
    var admin: PostgreSQLConnection?
    var databases: [String] = []

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-transfer-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        serverURL = ConformanceTestCase.postgresURL
        admin = try serverURL.map { try PostgreSQLConnection(url: $0) }
    }

    override func tearDown() {
        for database in databases { try? admin?.executeScript("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
        try? FileManager.default.removeItem(atPath: directory)
    }

    var databasePath: String { directory + "/gatehouse.sqlite" }
    var keysDirectory: String { directory + "/keys" }

    /// A SQLite issuer database holding the fixture and two signing keys:
    /// one with its private key file, one retired (its file deleted).
    func makeSource() throws -> SQLiteIssuerExport {
        let storage = try SQLiteIssuerStorage(databasePath: databasePath, keysDirectory: keysDirectory)
        for row in Self.fixture { try storage.database.executeScript(row.sql) }
        try storage.write { tx in
            try tx.signingKeys.insert(StoredSigningKey(kid: "kid-old", publicPEM: "public old", createdAt: 1, activatesAt: 1),
                                      privateKeyPEM: Array("private old".utf8))
            try tx.signingKeys.insert(StoredSigningKey(kid: "kid-new", publicPEM: "public new", createdAt: 2, activatesAt: 2),
                                      privateKeyPEM: Array("private new".utf8))
            try tx.signingKeys.retire(kid: "kid-old", at: 3)
        }
        return try SQLiteIssuerExport(databasePath: databasePath, keysDirectory: keysDirectory)
    }

    /// A new, empty database on the test cluster (no schema).
    func emptyDatabase() throws -> (url: String, connection: PostgreSQLConnection) {
        guard let serverURL, let admin else { throw XCTSkip("GATEHOUSE_TEST_POSTGRES_URL is not set (Scripts/test sets it)") }
        let name = "transfer_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "_"))"
        try admin.executeScript("CREATE DATABASE \(name)")
        databases.append(name)
        let url = PostgreSQLTestBackend.url(serverURL, database: name)
        return (url, try PostgreSQLConnection(url: url))
    }

    func tableNames(_ connection: PostgreSQLConnection) throws -> [String] {
        try connection.query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1").map { $0.string(0) }
    }

    static let masterKey = [UInt8](repeating: 9, count: 32)

    func copy(_ source: SQLiteIssuerExport, into connection: PostgreSQLConnection, resealing: MarkingResealer = MarkingResealer()) throws
        -> [TableCopyCount] {
        try source.withSnapshot {
            try PostgreSQLIssuerImport(connection: connection, masterKey: Self.masterKey).copy(from: source, resealing: resealing)
        }
    }

    func testEveryTableOfTheSchemaIsCoveredByTheFixture() throws {
        let source = try makeSource()
        let fixtureTables = Set(Self.fixture.map(\.table)).union(["signing_keys"])
        XCTAssertEqual(Set(try source.tables().map(\.name)), fixtureTables,
                       "a table of the SQLite schema without a fixture row (or a fixture for a table that is gone)")
        for table in try source.tables() {
            XCTAssertGreaterThan(try source.rowCount(of: table.name), 0, table.name)
        }
        XCTAssertFalse(try source.tables().contains { IssuerStateTables.bookkeeping.contains($0.name) }, "bookkeeping is never copied")
    }

    func testEveryTableIsCopiedRowForRowAndTheCountsAgree() throws {
        let source = try makeSource()
        let (url, connection) = try emptyDatabase()
        let resealer = MarkingResealer()
        let counts = try copy(source, into: connection, resealing: resealer)

        XCTAssertEqual(Set(counts.map(\.table)), Set(try source.tables().map(\.name)), "every table, no other")
        for count in counts {
            XCTAssertEqual(count.source, count.target, count.table)
            XCTAssertGreaterThan(count.target, 0, count.table)
            XCTAssertEqual(count.target, Int(try connection.queryOne("SELECT count(*) FROM \(count.table)")?.int(0) ?? -1), count.table)
        }
        // Read back through the PostgreSQL stores, as the responders will.
        let storage = try PostgreSQLIssuerStorage(url: url, masterKey: Self.masterKey)
        let alice = try XCTUnwrap(storage.read.users.find(email: "alice@example.com"), "email_key made from the email")
        XCTAssertEqual(alice.id, 5, "ids are kept: every other table refers to them")
        XCTAssertEqual(alice.roles, ["user", "admin"])
        XCTAssertEqual(try storage.read.users.find(id: 9)?.disabled, true)
        XCTAssertEqual(try storage.read.users.find(id: 9)?.emailVerified, false, "an unverified sign-up stays unverified")
        XCTAssertEqual(alice.emailVerified, true)
        // The mailed links: the hash's bytes exact, a used one still used.
        let linkHash: [UInt8] = [0x00] + [UInt8](repeating: 0xA1, count: 31)
        XCTAssertEqual(try storage.read.accountLinks.live(tokenHash: linkHash, purpose: .verification, now: 40),
                       AccountLink(purpose: .verification, userID: 9, expiresAt: 9_000_000_000, pendingRequest: "req-1"))
        XCTAssertNil(try storage.read.accountLinks.live(tokenHash: [0xB2], purpose: .passwordReset, now: 40), "used stays used")
        XCTAssertEqual(try storage.read.signingKeys.all().map(\.kid), ["kid-new", "kid-old"], "order kept")
        XCTAssertEqual(try storage.read.signingKeys.privateKeyPEM(kid: "kid-new"), Array("private new".utf8),
                       "the key file, sealed under the master key")
        XCTAssertNil(try storage.read.signingKeys.privateKeyPEM(kid: "kid-old"), "a retired key has no private half")
        XCTAssertEqual(try storage.read.totp.credential(userID: 5), StoredTOTP(sealedSecret: [0xEE, 0x70, 0x70, 0x70, 0x70], lastUsedStep: 17),
                       "resealed")
        XCTAssertEqual(try storage.read.totp.recoveryCodesLeft(userID: 5), 2, "recovery code hashes carried as they are")
        XCTAssertTrue(try storage.write { try $0.totp.useRecoveryCode(userID: 5, hash: [0x71, 0x00, 0xFF]) })
        XCTAssertEqual(try connection.queryOne("SELECT successor_sealed FROM refresh_tokens WHERE token_hash = '\\x0505'::bytea")?.bytes(0),
                       [0xEE, 0x5E, 0xA1, 0xED], "resealed")
        XCTAssertEqual(try storage.read.identityProviders.find(name: "corp")?.sealedSecret, [0xEE, 0x5E, 0xC0], "resealed")
        XCTAssertEqual(try storage.read.identityProviders.find(name: "apple")?.appleKey?.sealedPrivateKey, [0xEE, 0xA1], "resealed")
        XCTAssertEqual(resealer.seen.count, 4, "each sealed value once, with its own authenticated data")
        XCTAssertTrue(resealer.seen.contains(.identityProviderSecret(name: "corp", column: "secret_sealed")))
        XCTAssertTrue(resealer.seen.contains(.identityProviderSecret(name: "apple", column: "apple_key_sealed")))
        XCTAssertTrue(resealer.seen.contains(.totpSeed(userID: 5)))
        XCTAssertTrue(resealer.seen.contains(.refreshSuccessor(spentTokenHash: [5, 5])))
        XCTAssertEqual(try connection.queryOne("SELECT count(*) FROM client_redirect_uris WHERE client_id = 'app'")?.int(0), 2)
        // The identity sequences start past the copied ids.
        let carol = try storage.write { try $0.users.insert(NewUser(subject: "sub-carol", email: "carol@example.com", name: "Carol",
                                                                  passwordHash: "h", roles: ["user"], createdAt: 40)) }
        XCTAssertEqual(carol.id, 10)
        // The outbox: the message's bytes exact, its state kept, the id sequence past the copied ids.
        let claimed = try storage.write { try $0.mailOutbox.claimDue(limit: 5, now: 100, lease: 60, claimer: "node-2") }
        XCTAssertEqual(claimed, [OutboxMessage(id: 3, kind: .verification, recipient: "Alice@Example.com",
                                               message: [0x00, 0xFF, 0x0D, 0x0A, 0x53, 0x75, 0x62, 0x6A, 0x65, 0x63, 0x74, 0x00, 0x80],
                                               createdAt: 32, nextAttemptAt: 40, attempts: 2, claimedUntil: 160, claimedBy: "node-2")],
                       "the sent message is not claimed; the open one is, as it was")
        XCTAssertEqual(try storage.read.mailOutbox.recentCount(recipient: "ALICE@example.com", since: 0), 1, "the recipient key copied")
        XCTAssertEqual(try storage.write { try $0.mailOutbox.enqueue(kind: .test, recipient: "c@example.com", message: [1], now: 50) }, 8)
        XCTAssertTrue(try PostgreSQLIssuerState.holdsState(connection))
    }

    func testANonEmptyTargetIsRefusedAndLeftAsItWas() throws {
        let source = try makeSource()
        let (url, connection) = try emptyDatabase()
        let storage = try PostgreSQLIssuerStorage(url: url, masterKey: Self.masterKey)
        _ = try storage.write { try $0.users.insert(NewUser(subject: "s", email: "someone@example.com", name: "S", passwordHash: "h",
                                                            roles: ["user"], createdAt: 1)) }
        XCTAssertThrowsError(try PostgreSQLIssuerImport.requireEmptyTarget(connection))
        XCTAssertThrowsError(try copy(source, into: connection)) { error in
            XCTAssertEqual((error as? StateTransferError)?.code, .targetNotEmpty, "\(error)")
            XCTAssertTrue("\(error)".contains("users"), "names what is there: \(error)")
        }
        XCTAssertEqual(try connection.queryOne("SELECT count(*) FROM users")?.int(0), 1)
        XCTAssertEqual(try connection.queryOne("SELECT count(*) FROM clients")?.int(0), 0)
    }

    func testADatabaseWithOnlyTheSchemaCountsAsEmpty() throws {
        let source = try makeSource()
        let (url, connection) = try emptyDatabase()
        XCTAssertFalse(try PostgreSQLIssuerState.holdsState(connection), "no schema")
        _ = try PostgreSQLIssuerStorage(url: url, masterKey: Self.masterKey)
        XCTAssertFalse(try PostgreSQLIssuerState.holdsState(connection), "the schema alone")
        XCTAssertEqual(try copy(source, into: connection).first { $0.table == "users" }?.target, 2)
    }

    /// A migration that adds a column (`clients.nickname`, say) to one
    /// backend only: the copy names it and copies nothing.
    func testSchemasThatDifferAreRefusedBeforeAnyRowAndLeaveNoTrace() throws {
        let source = try makeSource()
        let database = try SQLiteDatabase(path: databasePath)
        try database.executeScript("ALTER TABLE clients ADD COLUMN nickname TEXT; CREATE TABLE extras (x INTEGER)")
        let (_, connection) = try emptyDatabase()
        XCTAssertThrowsError(try copy(source, into: connection)) { error in
            XCTAssertEqual((error as? StateTransferError)?.code, .schemaMismatch, "\(error)")
            XCTAssertTrue("\(error)".contains("clients.nickname only in the source"), "\(error)")
            XCTAssertTrue("\(error)".contains("table extras only in the source"), "\(error)")
        }
        XCTAssertEqual(try tableNames(connection), [], "the schema's creation is rolled back with the rest")
    }

    func testAnUnretiredKeyWithoutItsFileIsRefused() throws {
        let source = try makeSource()
        try FileManager.default.removeItem(atPath: keysDirectory + "/kid-new.pem")
        let (_, connection) = try emptyDatabase()
        XCTAssertThrowsError(try copy(source, into: connection)) { error in
            XCTAssertEqual((error as? StateTransferError)?.code, .unmovableRow, "\(error)")
            XCTAssertTrue("\(error)".contains("kid-new"), "\(error)")
        }
        XCTAssertEqual(try tableNames(connection), [])
    }

    func testAValueThatDoesNotOpenFailsTheCopy() throws {
        let source = try makeSource()
        let (_, connection) = try emptyDatabase()
        XCTAssertThrowsError(try copy(source, into: connection, resealing: MarkingResealer(failing: true))) { error in
            XCTAssertEqual((error as? StateTransferError)?.code, .unmovableRow, "\(error)")
        }
        XCTAssertEqual(try tableNames(connection), [])
    }

    func testTheSQLiteFileIsReadOnlyAndItsStateIsSeen() throws {
        _ = try SQLiteIssuerStorage(databasePath: databasePath, keysDirectory: keysDirectory)
        XCTAssertFalse(try SQLiteIssuerExport(databasePath: databasePath, keysDirectory: keysDirectory).holdsState(),
                       "only the schema: nothing to lose")
        let source = try makeSource()
        XCTAssertTrue(try source.holdsState())
        func bytes() -> [Data?] { [databasePath, databasePath + "-wal"].map { FileManager.default.contents(atPath: $0) } }
        let before = bytes()
        try source.withSnapshot {
            for table in try source.tables() { try source.forEachRow(of: table) { _ in } }
        }
        XCTAssertEqual(bytes(), before, "read-only: the file and its log as they were")
        XCTAssertThrowsError(try SQLiteIssuerExport(databasePath: directory + "/missing.sqlite", keysDirectory: keysDirectory))
    }

    func testASourceAtAnotherSchemaVersionIsRefused() throws {
        let source = try makeSource()
        XCTAssertNoThrow(try source.requireCurrentSchema())
        try SQLiteDatabase(path: databasePath).execute("UPDATE schema_migrations SET version = version - 1 WHERE component = 'issuer'")
        XCTAssertThrowsError(try source.requireCurrentSchema()) { error in
            XCTAssertEqual((error as? StateTransferError)?.code, .sourceOutOfDate, "\(error)")
        }
    }
}

/// Stands in for the resealing: marks what it was given, or fails.
final class MarkingResealer: SealedValueResealing {
    var seen: [SealedValue] = []
    let failing: Bool
    init(failing: Bool = false) { self.failing = failing }

    func reseal(_ sealed: [UInt8], as value: SealedValue) throws -> [UInt8] {
        if failing { throw StateTransferError(.unmovableRow, "does not open") }
        seen.append(value)
        return [0xEE] + sealed
    }
}
