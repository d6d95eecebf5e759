import ArgumentParser
import Foundation
import OutboundHTTPS
import SSOCore

struct CallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "GET an API with the stored access token; refresh once and retry when it has expired.",
        discussion: """
            A DPoP-bound token (the default since login) is sent as Authorization: DPoP with a fresh proof \
            (RFC 9449 §7: htm, htu, iat, jti and ath, the token's hash), answering a use_dpop_nonce once; \
            a token from login --no-dpop as Authorization: Bearer. \
            Refreshes first when the stored access token has expired, or after the API answers 401 with \
            WWW-Authenticate error="invalid_token" (RFC 6750 §3.1), then retries once. Prints the body on \
            standard output; exits 1 unless the final status is 2xx.
            """)

    @Argument(help: ArgumentHelp("The API URL, e.g. https://localhost:8444/api/data.", valueName: "url")) var url: String
    @Flag(name: [.short, .long], help: "Print the status line and headers before the body.") var include = false
    @OptionGroup var options: StoreOptions

    func run() throws {
        let session = try SignedInSession(options: options)
        var refreshed = false
        if session.tokens.accessTokenExpired() {
            Console.error("The access token has expired; refreshing.")
            try session.refresh()
            refreshed = true
        }
        var reply = try send(session)
        if reply.status == 401, !refreshed, Self.isInvalidToken(reply) {
            Console.error("The API refused the access token (\(OAuthErrorBody.summary(of: reply))); refreshing and retrying once.")
            try session.refresh()
            reply = try send(session)
        }
        if include {
            Console.output("HTTP \(reply.status)")
            for (name, value) in reply.headers.sorted(by: { $0.key < $1.key }) { Console.output("\(name): \(value)") }
            Console.output("")
        }
        Console.outputBytes(Array(reply.body))
        if reply.body.last != 10, !reply.body.isEmpty { Console.output("") }
        guard reply.isSuccess else { throw ToolError("\(url): \(OAuthErrorBody.summary(of: reply))") }
    }

    private func send(_ session: SignedInSession) throws -> HTTPSResponse { try session.get(url) }

    /// RFC 6750 §3.1: `invalid_token` — "expired, revoked, malformed, or
    /// invalid for other reasons"; a fresh token may cure it. 403
    /// insufficient_scope would not be, so it is not retried. RFC 9449 §7.1:
    /// the same error under the DPoP scheme.
    static func isInvalidToken(_ reply: HTTPSResponse) -> Bool {
        guard let challenge = reply.headers["www-authenticate"]?.lowercased(),
              challenge.hasPrefix("bearer") || challenge.hasPrefix("dpop") else { return false }
        return challenge.contains("error=\"invalid_token\"")
    }
}
