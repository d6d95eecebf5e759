import ArgumentParser

struct RefreshCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Trade the stored refresh token for new tokens; the rotated refresh token replaces the old one.")

    @OptionGroup var options: StoreOptions

    func run() throws {
        let session = try SignedInSession(options: options)
        try session.refresh()
        Console.error("Refreshed. Access token expires \(Redaction.time(session.tokens.accessTokenExpiresAt)); "
                      + "new refresh token \(Redaction.preview(session.tokens.refreshToken)) stored in \(options.store).")
    }
}
