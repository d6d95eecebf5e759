import ArgumentParser
import AuthServer
import IssuerStorage

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Add, change, disable and list users; enrol TOTP.",
        subcommands: [Add.self, Passwd.self, Disable.self, List.self, TOTPCommand.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user; the password is read from standard input.")
        @Argument(help: "The user's email address (their login name).") var email: String
        @Option(help: "The user's full name.") var name: String
        @Flag(help: "Read the password from standard input (required).") var passwordStdin = false
        @Option(help: "A role for the access token's roles claim (repeatable; default: user).") var role: [String] = []

        func run() throws {
            guard passwordStdin else { fail("pass --password-stdin and the password on standard input") }
            let password = readSecretLine("password")
            let context = try Context.open()
            let user = attempt { try context.users.add(email: email, name: name, password: password, roles: role.isEmpty ? ["user"] : role) }
            print("added user \(user.email) (sub \(user.subject))")
        }
    }

    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a user's password (read from standard input).",
            discussion: "Ends every SSO session of the user and revokes their refresh tokens, in one transaction with the change.")
        @Argument(help: "The user's email address.") var email: String
        @Flag(help: "Read the new password from standard input (required).") var passwordStdin = false

        func run() throws {
            guard passwordStdin else { fail("pass --password-stdin and the password on standard input") }
            let password = readSecretLine("password")
            let context = try Context.open()
            let result = attempt { try context.services.accountChanges.changePassword(email: email, password: password) }
            print("password changed for \(result.user.email); ended \(result.endedSessions.count) session(s)")
        }
    }

    struct Disable: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable a user: no further sign-in.",
            discussion: "Ends every SSO session of the user and revokes their refresh tokens, in one transaction with the change.")
        @Argument(help: "The user's email address.") var email: String

        func run() throws {
            let context = try Context.open()
            let result = attempt { try context.services.accountChanges.disable(email: email) }
            print("disabled \(result.user.email); ended \(result.endedSessions.count) session(s)")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users.")
        func run() throws {
            let context = try Context.open()
            let users = attempt { try context.users.list() }
            printTable(["EMAIL", "NAME", "ROLES", "STATE", "SUB"],
                       users.map { [$0.email, $0.name, $0.roles.joined(separator: ","), $0.disabled ? "disabled" : "active", $0.subject] })
        }
    }
}
