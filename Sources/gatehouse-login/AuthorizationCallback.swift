import SSOCore

/// The checks on the browser's return to the redirect URI, before the code
/// is used for anything. Each is its own step, in this order.
enum AuthorizationCallback {
    /// The authorization code, once the response has been shown to belong to
    /// this attempt and this issuer.
    static func code(fromQuery query: String, attempt: AuthorizationAttempt, issuer: String, issRequired: Bool) throws -> String {
        let parameters: FormParameters
        do { parameters = try FormParser.parse(Array(query.utf8)) } catch {
            throw ToolError("the callback's query is malformed (\(error)); refused")
        }
        do {
            try checkState(parameters, expected: attempt.state)
            try checkIssuer(parameters, expected: issuer, required: issRequired)
            try checkError(parameters)
            guard let code = try parameters.single("code") else { throw ToolError("the callback carries no code; refused") }
            return code
        } catch let error as FormError {
            throw ToolError("the callback repeats a parameter (\(error.detail)); refused")
        }
    }

    /// RFC 6749 §10.12: the client "MUST implement CSRF protection for its
    /// redirection URI" — the state it sent must come back, unchanged.
    static func checkState(_ parameters: FormParameters, expected: String) throws {
        guard let state = try parameters.single("state") else {
            throw ToolError("the callback carries no state: it does not answer this sign-in; refused, nothing stored")
        }
        guard ConstantTime.equals(Array(state.utf8), Array(expected.utf8)) else {
            throw ToolError("the callback's state does not match this sign-in (a forged or stale response); refused, nothing stored")
        }
    }

    /// RFC 9207 §2.4: "Clients ... MUST compare the iss parameter value to
    /// the issuer ... If the value does not match the expected issuer
    /// identifier, clients MUST reject the authorization response"; and an
    /// issuer that advertises the parameter must send it.
    static func checkIssuer(_ parameters: FormParameters, expected: String, required: Bool) throws {
        guard let iss = try parameters.single("iss") else {
            if required { throw ToolError("the callback carries no iss although the issuer advertises it (RFC 9207); refused") }
            return
        }
        guard iss == expected else { throw ToolError("the callback comes from issuer \(iss), not \(expected) (RFC 9207); refused") }
    }

    /// RFC 6749 §4.1.2.1: an error response, reported as the issuer gave it.
    static func checkError(_ parameters: FormParameters) throws {
        guard let error = try parameters.single("error") else { return }
        let description = (try? parameters.single("error_description")).flatMap { $0 }.map { ": \($0)" } ?? ""
        throw ToolError("the issuer refused the sign-in: \(error)\(description)")
    }
}
