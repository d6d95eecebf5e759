import IssuerStorage
import SSOCore

/// One request on its way through an endpoint: the request, its parsed
/// input, and what each guard established. A handler reads the values its
/// endpoint's guards set; asking for one no guard of the row sets is a
/// mistake in the route table, answered 500 (RouteTableTests catches it
/// before that).
public struct EndpointExchange {
    public let request: Request
    /// The endpoint's input (EndpointInput); empty for `.none`.
    public internal(set) var parameters = FormParameters(pairs: [])
    var inputParsed = false
    /// True when `parameters` came from a POST's body (EndpointInput.formOrQuery).
    public internal(set) var parametersFromBody = false

    /// The named segments of a templated row's path (RouteTable).
    var pathParameters: [String: String] = [:]
    /// AdminAuthorization: the machine client calling the admin API.
    var adminCaller: AdminCaller?

    /// ClientAuthentication: the authenticated client.
    var authenticatedClient: Client?
    /// IssuerDPoPProof: the verified proof, when one was sent.
    public internal(set) var dpopProof: VerifiedDPoPProof?
    var dpopChecked = false
    /// SignedInAccount: the browser's live session and its user.
    var account: SignedInAccount.Value?
    var accountChecked = false
    /// PendingSignIn: the sign-in this form continues.
    var pendingSignIn: PendingSignIn.Value?

    init(request: Request) { self.request = request }

    public func client() throws -> Client { try required(authenticatedClient, "ClientAuthentication") }
    /// The key thumbprint of the verified DPoP proof, nil without one.
    public func dpopJKT() throws -> String? {
        guard dpopChecked else { throw RouteTableMistake(missing: "IssuerDPoPProof") }
        return dpopProof?.jkt
    }
    func signedIn() throws -> SignedInAccount.Value { try required(account, "SignedInAccount") }
    /// For an endpoint whose SignedInAccount is not required: nil when signed out.
    func signedInIfAny() throws -> SignedInAccount.Value? {
        guard accountChecked else { throw RouteTableMistake(missing: "SignedInAccount") }
        return account
    }
    func signIn() throws -> PendingSignIn.Value { try required(pendingSignIn, "PendingSignIn") }
    func admin() throws -> AdminCaller { try required(adminCaller, "AdminAuthorization") }
    /// The value of the row path's `{name}` segment.
    func pathParameter(_ name: String) throws -> String { try required(pathParameters[name], "a {\(name)} segment in the row's path") }

    func required<Value>(_ value: Value?, _ guardName: String) throws -> Value {
        guard let value else { throw RouteTableMistake(missing: guardName) }
        return value
    }
}

/// A handler asked for a value its row's guards do not set.
struct RouteTableMistake: Error, CustomStringConvertible {
    let missing: String
    var description: String { "route table: the handler needs the \(missing) guard" }
}
