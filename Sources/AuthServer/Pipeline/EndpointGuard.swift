import SSOCore

/// A check a request passes before its endpoint's handler runs, named for
/// what it enforces (Sources/AuthServer/Guards, one a file, each headed by
/// the clause or reason for it). It refuses by throwing an error its
/// endpoint's dialect writes, or adds what it established to the exchange.
public protocol EndpointGuard {
    /// True when it reads the endpoint's input: the input is parsed just
    /// before the first such guard, so checks of the headers alone (the
    /// origin, the session cookie, Basic credentials) come first and a
    /// request they refuse learns nothing about how its body parses.
    var readsInput: Bool { get }
    func check(_ exchange: inout EndpointExchange) throws
}
