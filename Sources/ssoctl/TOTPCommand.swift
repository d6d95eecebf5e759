import ArgumentParser
import AuthServer
import IssuerStorage

/// `ssoctl user totp EMAIL`: enrols (or re-enrols) TOTP for a user.
struct TOTPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "totp",
        abstract: "Enrol a user in TOTP and print the otpauth:// URI for their authenticator app.",
        discussion: """
            Makes a new random 160-bit seed (RFC 6238: SHA-1, 6 digits, 30 s) and prints the otpauth:// URI once, on \
            standard output; show it to the user as a QR code (e.g. qrencode -t ansiutf8). Enrolling again replaces the \
            seed: codes from the old one stop working at once. From the next sign-in on, the user enters a code after \
            the password. The seed is stored sealed (AES-256-GCM) under $GATEHOUSE_HOME/keys/totp-seal.key.
            """)
    @Argument(help: "The user's email address.") var email: String

    func run() throws {
        let context = try Context.open()
        guard let user = attempt({ try context.users.find(email: email) }) else { fail("no user with email \(email)") }
        let secret = attempt { try context.services.totp.enrol(userID: user.id) }
        print(OTPAuthURI.totp(email: user.email, secret: secret))
    }
}
