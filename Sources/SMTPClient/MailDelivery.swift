/// What became of one message handed to `SMTPTransport.deliver`.
/// The details are log-safe: the server as `smtp://host:port`, libcurl's
/// error text and the last SMTP reply code; never credentials.
public enum MailDelivery: Sendable, Equatable {
    /// The server answered 250 to the end of the data: it has the message.
    case delivered
    /// Try again later: no connection, a timeout, TLS that could not be
    /// set up, an SMTP 4xx reply, or a refused login (ours to fix, not the
    /// message's).
    case temporaryFailure(detail: String)
    /// Do not try again: the server refused this message with a 5xx reply.
    case permanentFailure(detail: String)
}
