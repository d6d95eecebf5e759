import FoundationEssentials
import IssuerStorage
import SSOCore

/// One delivery attempt of a queued back-channel notice (Back-Channel
/// Logout 1.0 §2.5): the client's URI read now (a client removed, or its
/// URI taken away, is told nothing), a logout token signed now, one POST
/// through the outbound client (https only, the trust store, no redirects,
/// 10 s). The mail sender calls it outside any transaction and records
/// what it answers.
public struct BackchannelLogoutDelivery {
    /// What came of one attempt.
    public enum Result: Equatable, Sendable {
        /// §2.8: "If the logout succeeded, the RP MUST respond with HTTP 200
        /// OK"; any 2xx is taken (204 is common).
        case delivered(status: Int)
        /// Down, slow, a 5xx, 408 or 429: tried again with backoff.
        case retry(String)
        /// §2.8: "If the logout request was invalid or the logout failed,
        /// the RP MUST respond with 400 Bad Request": trying the same token
        /// again cannot help. So for any other 4xx, a redirect (never
        /// followed), a client gone or a notice no build can read.
        case failed(String)
    }

    let storage: any IssuerStorage
    let tokenIssuer: TokenIssuer
    let http: any ProviderDocumentFetching

    public init(storage: any IssuerStorage, tokenIssuer: TokenIssuer, http: any ProviderDocumentFetching) {
        self.storage = storage
        self.tokenIssuer = tokenIssuer
        self.http = http
    }

    /// `clientID` and `notice`: the outbox row's recipient and message.
    /// Also returns the receiver's origin, for the log (never the path or
    /// query, which may carry the receiver's own secret).
    public func deliver(clientID: String, notice: [UInt8]) -> (result: Result, receiver: String?) {
        guard let notice = try? JSONDecoder().decode(BackchannelLogoutNotice.self, from: Data(notice)) else {
            return (.failed("the queued notice is unreadable"), nil)
        }
        let uri: String
        do {
            guard let registered = try storage.read.clients.find(clientID: clientID)?.backchannelLogoutURI else {
                return (.failed("the client no longer has a back-channel logout URI"), nil)
            }
            uri = registered
        } catch {
            return (.retry("cannot read the client: \(error)"), nil)
        }
        let receiver = Self.origin(of: uri)
        let token: String
        do {
            token = try tokenIssuer.signLogoutToken(clientID: clientID, subject: notice.sub, sid: notice.sid)
        } catch {
            return (.retry("cannot sign the logout token: \(error)"), receiver)
        }
        do {
            // §2.5: "The OP sends an HTTP POST request ... using the
            // application/x-www-form-urlencoded encoding ... logout_token".
            let (status, _) = try http.postForm(uri, [("logout_token", token)], headers: [])
            return (Self.result(status: status), receiver)
        } catch {
            return (.retry("\(error)"), receiver)
        }
    }

    static func result(status: Int) -> Result {
        switch status {
        case 200...299: .delivered(status: status)
        case 408, 429: .retry("the receiver answered \(status)")
        case 300...399: .failed("the receiver answered \(status), a redirect (never followed)")
        case 400...499: .failed("the receiver answered \(status)")
        default: .retry("the receiver answered \(status)")
        }
    }

    /// `https://host:port` of a URI ClientRules accepted.
    static func origin(of uri: String) -> String {
        let afterScheme = uri.hasPrefix("https://") ? uri.dropFirst("https://".count) : Substring(uri)
        return "https://" + afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }
}

/// The sender's events for back-channel notices: each attempt counted in
/// `gatehouse_backchannel_logout_total{result}`; a delivered one audited as
/// `backchannel_logout`, a given-up one as `backchannel_logout_failure`
/// (`client` the client id, `sid` the session, `target` the receiver's
/// origin, `reason` why; never the token).
public enum BackchannelLogoutEvents {
    public static func attempted(result: String) {
        Metrics.count(.backchannelLogouts, result)
    }

    public static func delivered(clientID: String, sid: String?, receiver: String?) {
        AuditLog.record(AuditEvent(event: "backchannel_logout", client: clientID, sid: sid, target: receiver))
    }

    public static func failed(clientID: String, sid: String?, receiver: String?, reason: String) {
        AuditLog.record(AuditEvent(event: "backchannel_logout_failure", client: clientID, reason: reason, sid: sid, target: receiver))
    }
}
