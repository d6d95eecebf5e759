import AuthServer
import IssuerComposition
import SSOCore

// The discovery responder: /.well-known/openid-configuration, with the
// registered APIs' scopes and the languages of the pages.
ResponderProcess.run(endpoint: "discovery") { config in
    try DiscoveryResponder(document: DiscoveryDocument(config: config, uiLocales: MessageCatalogue.languages(directory: config.messagesDirectory)),
                           apis: try IssuerComposition.services(config).apis)
}
