import ArgumentParser
import AuthServer
import IssuerStorage
import SSOCore

/// `ssoctl user passkeys EMAIL`: lists a user's passkeys (WebAuthn
/// credentials); `--remove CREDENTIAL_ID` deletes one (a lost or stolen
/// authenticator).
struct PasskeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passkeys",
        abstract: "List a user's passkeys; --remove CREDENTIAL_ID deletes one.",
        discussion: """
            Lists the passkeys the user registered on /account, oldest first: the credential id (base64url), the name \
            the user gave it, the signature algorithm (ES256, EdDSA, RS256), when it was registered and last used, and \
            its backup flags (eligible: a synced passkey, whose private key may leave the device; state: backed up now). \
            No key material is shown. --json: an array of {credential_id, name, algorithm, created_at, last_used_at, \
            backup_eligible, backup_state} (seconds since the epoch; last_used_at null when never used).

            --remove CREDENTIAL_ID (as listed) deletes that passkey of this user: it signs no one in from then on. \
            The user's sessions stay; if the authenticator may be in other hands, end them too (ssoctl sessions list \
            EMAIL, ssoctl sessions revoke SID). A credential id that is unknown, or another user's, is refused and \
            nothing changes.
            """)
    @Argument(help: "The user's email address.") var email: String
    @Flag(help: "Print a JSON array of objects.") var json = false
    // A base64url credential id may begin with "-": taken as the value, not
    // as an unknown option.
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Delete this passkey of the user instead (its credential id, base64url, as listed).", valueName: "credential-id"))
    var remove: String?

    func validate() throws {
        if json && remove != nil { throw ArgumentParser.ValidationError("--json lists; it cannot be given with --remove") }
    }

    func run() throws {
        let context = try Context.open()
        let user = attempt { try context.users.existing(email: email) }
        if let remove { return self.remove(remove, of: user, context) }
        let passkeys = attempt { try context.services.storage.read.passkeys.list(userID: user.id) }
        if json { return printJSON(passkeys.map(PasskeyJSON.init)) }
        printTable(["CREDENTIAL_ID", "NAME", "ALGORITHM", "CREATED", "LAST_USED", "BACKUP_ELIGIBLE", "BACKUP_STATE"], passkeys.map {
            [Base64URL.encode($0.credentialID), Self.printable($0.name), PasskeyAlgorithm.name($0.algorithm), formatTime($0.createdAt),
             formatTime($0.lastUsedAt), $0.backupEligible ? "yes" : "no", $0.backupState ? "yes" : "no"]
        })
    }

    enum Removal {
        case removed(PasskeyRecord)
        case notTheUsers
        case userGone
    }

    /// Finds and deletes the passkey in one write unit, only if it is this
    /// user's (found again by email there: the account is the one named).
    func remove(_ text: String, of user: User, _ context: Context) {
        guard let credentialID = Base64URL.decode(text), !credentialID.isEmpty else {
            fail("the credential id \(text.debugDescription) is not base64url")
        }
        let outcome = attempt {
            try context.services.storage.write { tx -> Removal in
                guard let current = try tx.users.find(email: user.email), current.id == user.id else { return .userGone }
                guard let passkey = try tx.passkeys.find(credentialID: credentialID), passkey.userID == user.id,
                      try tx.passkeys.remove(credentialID: credentialID, userID: user.id) else { return .notTheUsers }
                return .removed(passkey)
            }
        }
        switch outcome {
        case .userGone: fail("no user with email \(email)")
        case .notTheUsers: fail("\(user.email) has no passkey \(text)")
        case .removed(let passkey):
            AdminAudit.changed("user passkeys remove", target: user.email, user: user.email)
            print("removed passkey \(text) (\(passkey.name.debugDescription)) of \(user.email)")
        }
    }

    /// A name as the table shows it: control characters and bidirectional
    /// overrides escaped, so a name can never move the operator's terminal
    /// cursor, change its colours or reorder the line.
    static func printable(_ name: String) -> String {
        name.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
                ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined()
    }
}

/// COSE algorithm identifiers (RFC 9053 §2, RFC 8812 §2) by their JOSE names.
enum PasskeyAlgorithm {
    static func name(_ algorithm: Int) -> String {
        switch algorithm {
        case -7: "ES256"
        case -8: "EdDSA"
        case -257: "RS256"
        default: "COSE \(algorithm)"
        }
    }
}

/// `ssoctl user passkeys EMAIL --json`: never the public key, the AAGUID
/// or the counter; every key always present.
struct PasskeyJSON: Encodable {
    let passkey: PasskeyRecord

    init(_ passkey: PasskeyRecord) { self.passkey = passkey }

    enum CodingKeys: String, CodingKey {
        case credentialID = "credential_id", name, algorithm, createdAt = "created_at", lastUsedAt = "last_used_at"
        case backupEligible = "backup_eligible", backupState = "backup_state"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Base64URL.encode(passkey.credentialID), forKey: .credentialID)
        try container.encode(passkey.name, forKey: .name)
        try container.encode(PasskeyAlgorithm.name(passkey.algorithm), forKey: .algorithm)
        try container.encode(passkey.createdAt, forKey: .createdAt)
        try container.encode(passkey.lastUsedAt, forKey: .lastUsedAt)   // null while never used
        try container.encode(passkey.backupEligible, forKey: .backupEligible)
        try container.encode(passkey.backupState, forKey: .backupState)
    }
}
