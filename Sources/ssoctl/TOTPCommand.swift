import ArgumentParser
import AuthServer
import IssuerStorage
import SSOCore

/// `ssoctl user totp EMAIL`: enrols (or re-enrols) TOTP for a user;
/// `--remove` deletes the enrolment (a lost phone).
struct TOTPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "totp",
        abstract: "Enrol a user in TOTP and print the otpauth:// URI for their authenticator app; --remove deletes the enrolment.",
        discussion: """
            Makes a new random 160-bit seed (RFC 6238: SHA-1, 6 digits, 30 s) and prints the otpauth:// URI once, on \
            standard output; show it to the user as a QR code (e.g. qrencode -t ansiutf8). Enrolling again replaces the \
            seed: codes from the old one stop working at once. From the next sign-in on, the user enters a code after \
            the password. The seed is stored sealed (AES-256-GCM) under $GATEHOUSE_HOME/keys/totp-seal.key.

            --recovery-codes also makes the user ten new recovery codes (each signs in once in place of a code; the \
            earlier set stops working) and prints them after the URI, one per line: hand them over with the URI. \
            Without it, the user's recovery codes stay as they were (none until they make some on /account).

            --remove (a lost phone) deletes the seed and the recovery codes: from the next sign-in on, the password alone signs the user in, \
            until they are enrolled again. Their sessions stay; if the phone may be in other hands, end them too \
            (ssoctl sessions list EMAIL, ssoctl sessions revoke SID, or a password change).
            """)
    @Argument(help: "The user's email address.") var email: String
    @Flag(help: "Delete the user's TOTP enrolment instead: the next sign-in asks for the password only.") var remove = false
    @Flag(help: "Also make ten new recovery codes and print them after the URI, one per line.") var recoveryCodes = false

    func run() throws {
        let context = try Context.open()
        if remove && recoveryCodes { fail("--remove and --recovery-codes exclude each other") }
        if remove {
            let result = attempt { try context.services.accountChanges.removeTOTP(email: email) }
            // A user with no enrolment is left as it was: nothing to audit.
            if result.removed { AdminAudit.changed("user totp remove", target: result.user.email, user: result.user.email) }
            print(result.removed ? "removed TOTP for \(result.user.email): the next sign-in asks for the password only"
                                 : "\(result.user.email) has no TOTP enrolment; nothing changed")
            return
        }
        let user = attempt { try context.users.existing(email: email) }
        let secret = SecureRandom.bytes(TOTP.secretByteCount)
        let codes = recoveryCodes ? RecoveryCodes.generate() : nil
        attempt { try context.services.totp.enrol(userID: user.id, secret: secret, recoveryCodes: codes) }
        // The event names the account only: the seed, its URI and the codes stay on standard output.
        AdminAudit.changed(codes == nil ? "user totp" : "user totp recovery-codes", target: user.email, user: user.email)
        print(OTPAuthURI.totp(email: user.email, secret: secret, issuer: context.services.settings.brandName))
        codes?.forEach { print($0) }
    }
}
