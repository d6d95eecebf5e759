import ArgumentParser
import AuthServer
import IssuerStorage
import SSOCore

struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Add, change, disable, unlock, delete and list users; enrol or remove TOTP.",
        discussion: "EMAIL finds the account whatever the case of its ASCII letters; one with a control character is refused.",
        subcommands: [Add.self, Invite.self, Passwd.self, Update.self, Disable.self, Enable.self, Unlock.self, Delete.self, List.self, Links.self,
                      TOTPCommand.self, PasskeysCommand.self])

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
            AdminAudit.changed("user add", target: user.email, user: user.email)
            print("added user \(user.email) (sub \(user.subject))")
        }
    }

    struct Invite: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Invite a user: an account without a password, and a mail with a link (7 days, once) to choose one.",
            discussion: """
                Works whatever GATEHOUSE_SIGNUP says. The mail is queued in the database and sent by the mail sender; its \
                texts are in --language (default: the pages' default language). Once the password is set, the address \
                counts as verified. Refused, with nothing written, for an address that has an account.
                """)
        @Argument(help: "The user's email address (their login name).") var email: String
        @Option(help: "The user's full name.") var name: String
        @Option(help: "The language of the mail (en, de, ...).") var language: String?

        func run() throws {
            let context = try Context.open()
            let catalogue = attempt {
                try MessageCatalogue.load(directory: context.config.messagesDirectory, defaultLanguage: context.config.brand.defaultLanguage)
            }
            let messages = catalogue.messages(language ?? catalogue.defaultLanguage)
            let user = attempt { try context.services.gettingIn.invite(email: email, name: name, messages: messages) }
            AdminAudit.changed("user invite", target: user.email, user: user.email)
            SecurityEvents.invitationSent(user: user.email, actor: AdminAudit.actor)
            print("invited \(user.email) (sub \(user.subject)); the mail is queued")
        }
    }

    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a user's password (read from standard input).",
            discussion: """
                Ends every SSO session of the user and revokes their refresh tokens, in one transaction with the change. \
                Passkeys and TOTP stay unless removed: for an account someone else held, add --remove-passkeys and \
                --remove-totp (whoever held it may have added a passkey or their own authenticator app).
                """)
        @Argument(help: "The user's email address.") var email: String
        @Flag(help: "Read the new password from standard input (required).") var passwordStdin = false
        @Flag(help: "Also delete every passkey of the user (a compromised account).") var removePasskeys = false
        @Flag(help: "Also remove the user's TOTP enrolment (a compromised account).") var removeTOTP = false

        func run() throws {
            guard passwordStdin else { fail("pass --password-stdin and the password on standard input") }
            let password = readSecretLine("password")
            let context = try Context.open()
            let cleanup = CompromisedAccountCleanup(removePasskeys: removePasskeys, removeTOTP: removeTOTP)
            let result = attempt { try context.services.accountChanges.changePassword(email: email, password: password, cleanup: cleanup) }
            let removed = (removePasskeys ? ["passkeys"] : []) + (removeTOTP ? ["totp"] : [])
            AdminAudit.changed(removed.isEmpty ? "user passwd" : "user passwd --remove " + removed.joined(separator: ","),
                               target: result.user.email, user: result.user.email)
            var said = "password changed for \(result.user.email); ended \(result.endedSessions.count) session(s)"
            if removePasskeys { said += "; removed \(result.removedPasskeys) passkey(s)" }
            if removeTOTP { said += result.removedTOTP ? "; removed TOTP" : "; had no TOTP" }
            print(said)
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
            AdminAudit.changed("user disable", target: result.user.email, user: result.user.email)
            print("disabled \(result.user.email); ended \(result.endedSessions.count) session(s)")
        }
    }

    struct Enable: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enable a disabled user: they may sign in again.",
            discussion: "The sessions and refresh tokens that disabling ended stay ended.")
        @Argument(help: "The user's email address.") var email: String

        func run() throws {
            let context = try Context.open()
            let result = attempt { try context.services.accountChanges.enable(email: email) }
            // An account that was not disabled is left as it was: nothing to audit.
            if result.wasDisabled { AdminAudit.changed("user enable", target: result.user.email, user: result.user.email) }
            print(result.wasDisabled ? "enabled \(result.user.email)" : "\(result.user.email) was not disabled; nothing changed")
        }
    }

    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear a user's failed sign-in lock: the right password signs in at once.",
            discussion: """
                Forgets the account's failure counter (5 failures in 15 minutes lock it). The counters of client \
                addresses stay: a locked address is not unlocked by this.
                """)
        @Argument(help: "The user's email address.") var email: String

        func run() throws {
            let context = try Context.open()
            let result = attempt { try context.services.accountChanges.unlock(email: email) }
            // Always a change (the failure count starts afresh); a lock cleared
            // is also an account_unlocked event.
            AdminAudit.changed("user unlock", target: result.user.email, user: result.user.email)
            if result.lockedUntil != nil { AdminAudit.unlocked(user: result.user.email) }
            if let lockedUntil = result.lockedUntil {
                print("unlocked \(result.user.email) (the lock would have ended at \(formatTime(lockedUntil)))")
            } else {
                print("\(result.user.email) was not locked; its failure count starts afresh")
            }
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a user's name or roles (at least one of --name, --role).",
            discussion: """
                The next tokens carry the change: the name in the ID token and at userinfo, the roles in the access \
                token. Sessions stay.
                """)
        @Argument(help: "The user's email address.") var email: String
        @Option(help: "The user's new full name.") var name: String?
        @Option(help: "A role (repeatable): the roles given replace the user's whole list.") var role: [String] = []

        func run() throws {
            guard name != nil || !role.isEmpty else { fail("nothing to change for \(email): give --name NAME or --role ROLE") }
            let context = try Context.open()
            let user = attempt { try context.services.accountChanges.update(email: email, name: name, roles: role.isEmpty ? nil : role) }
            AdminAudit.changed("user update", target: user.email, user: user.email)
            print("updated \(user.email): name \(user.name.debugDescription), roles \(user.roles.joined(separator: ","))")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Erase a user: the account, its sessions, tokens, device secrets, codes, TOTP seed and lock.",
            discussion: """
                All in one transaction. Running responders refuse the user's tokens at once (refresh: invalid_grant; \
                userinfo and introspection: the access token is no longer active); the resource servers, which \
                validate offline, honour an access token until it expires. Adding the address again later makes a new \
                account with a new sub.
                """)
        @Argument(help: "The user's email address.") var email: String

        func run() throws {
            let context = try Context.open()
            let erased = attempt { try context.services.accountChanges.delete(email: email) }
            AdminAudit.changed("user delete", target: erased.user.email, user: erased.user.email)
            print("deleted user \(erased.user.email) (sub \(erased.user.subject)); ended \(erased.endedSessions) live session(s); deleted "
                  + "\(erased.sessions) session(s), \(erased.refreshTokens) refresh token(s), \(erased.deviceSecrets) device secret(s), "
                  + "\(erased.authorizationCodes) authorization code(s), \(erased.pendingAuthorizations) pending sign-in(s), "
                  + "\(erased.passkeys) passkey(s)" + (erased.totp ? ", the TOTP seed" : ""))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List users.",
            discussion: "--json: an array of {email, name, roles, disabled, sub, email_verified, invitation_pending}, by email.")
        @Flag(help: "Print a JSON array of objects.") var json = false

        func run() throws {
            let context = try Context.open()
            let users = attempt { try context.users.list() }
            if json { return printJSON(users.map { UserJSON($0) }) }
            printTable(["EMAIL", "NAME", "ROLES", "STATE", "VERIFIED", "SUB"],
                       users.map { [$0.email, $0.name, $0.roles.joined(separator: ","), $0.disabled ? "disabled" : "active",
                                    $0.emailVerified ? "yes" : "no", $0.subject] })
        }
    }

    struct Links: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's links to upstream identity providers (ssoctl idp).",
            discussion: """
                A link names the account at the provider by its issuer and sub; sign-ins through the provider match                 on them, never on the address. --json: an array of {provider, issuer, subject, email, linked_at,                 last_used_at}, oldest first.
                """)
        @Argument(help: "The user's email address.") var email: String
        @Flag(help: "Print a JSON array of objects.") var json = false

        func run() throws {
            let context = try Context.open()
            let (_, links) = attempt { try context.services.providerLinks.list(email: email) }
            if json { return printJSON(links.map(ProviderLinkJSON.init)) }
            printTable(["PROVIDER", "EMAIL", "LINKED", "LAST USED", "ISSUER", "SUB"],
                       links.map { [$0.provider, $0.email, formatTime($0.linkedAt), formatTime($0.lastUsedAt), $0.issuer, $0.subject] })
        }
    }
}

/// `ssoctl user links --json`.
struct ProviderLinkJSON: Encodable {
    let provider: String
    let issuer: String
    let subject: String
    let email: String
    let linked_at: Int64
    let last_used_at: Int64?

    init(_ link: FederatedIdentity) {
        provider = link.provider
        issuer = link.issuer
        subject = link.subject
        email = link.email
        linked_at = link.linkedAt
        last_used_at = link.lastUsedAt
    }
}
