import ArgumentParser

/// The options every command shares: where the tokens live and which CA to trust.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The token file (created with mode 0600).", valueName: "path"))
    var store: String = TokenFile.defaultPath

    @Option(help: ArgumentHelp("PEM file of the CA to trust for HTTPS instead of the system's (a dev stack: var/tls/ca.pem). "
                               + "login remembers it for the other commands.", valueName: "pem"))
    var caFile: String?

    var tokenFile: TokenFile { TokenFile(path: store) }
}
