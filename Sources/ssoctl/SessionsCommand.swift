import ArgumentParser
import AuthServer
import IssuerStorage

struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions", abstract: "List and revoke SSO sessions.", subcommands: [List.self, Revoke.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List SSO sessions, newest first: sid, user, sign-in time, creation, expiry, state, methods.",
            discussion: """
                STATE is active, ended (logout, revoke, password change, disabling), expired or user-disabled. --json: an \
                array of {sid, email, state, amr, auth_time, created_at, expires_at, ended_at} (seconds since the epoch).
                """)
        @Argument(help: "Only this user's sessions.") var email: String?
        @Flag(help: "Print a JSON array of objects.") var json = false

        func run() throws {
            let context = try Context.open()
            var userID: Int64?
            if let email { userID = attempt { try context.users.existing(email: email) }.id }
            let sessions = attempt { try context.services.sessions.list(userID: userID) }
            if json { return printJSON(sessions.map { SessionJSON($0) }) }
            printTable(["SID", "USER", "AUTH_TIME", "CREATED", "EXPIRES", "STATE", "AMR"], sessions.map {
                [$0.sid, $0.email, formatTime($0.authTime), formatTime($0.createdAt), formatTime($0.expiresAt), $0.state.rawValue,
                 $0.amr.joined(separator: ",")]
            })
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End an SSO session and revoke the refresh tokens and device secrets bound to it.",
            discussion: "The browser's sso_session cookie stops skipping the login page; the apps' refresh tokens stop working.")
        // A sid is base64url, so it may begin with "-": taken as the value,
        // not as an unknown option.
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The session's sid (from `ssoctl sessions list`).", valueName: "sid")) var sids: [String]
        var sid: String { (try? IdentifierOperand.single(sids, naming: "sid")) ?? "" }

        func validate() throws {
            _ = try IdentifierOperand.single(sids, naming: "sid")
        }

        func run() throws {
            let context = try Context.open()
            let session = attempt { try context.services.accountChanges.endSession(sid: sid) }
            // Audited even when already ended: its credentials are revoked again.
            AdminAudit.changed("sessions revoke", target: sid, user: session.email)
            print(session.state == .ended ? "session \(sid) was already ended; its refresh tokens are revoked"
                                          : "ended session \(sid) of \(session.email) and revoked its refresh tokens")
        }
    }
}
