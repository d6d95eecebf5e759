import IssuerStorage

/// `ssoctl client list` without `--json`: one block per client, a field a
/// line, so it fits a 100-column terminal however many redirect URIs or
/// scopes a client has (a table with a column each was over 300 columns for
/// the demo clients):
///
///     mobile-app-001
///       name          Demo Mobile App 1
///       type          public
///       grants        authorization_code refresh_token
///       ...
///       redirect URI  myapp:auth/callback
///                     https://localhost:8443/mobile/postlogin.html
///
/// Words wrap at `width`; a single word longer than a line (a long URI) is
/// cut across lines, so no line is ever wider.
enum ClientListing {
    static let width = 100
    static let labelWidth = 16

    static func text(_ clients: [Client], width: Int = width) -> String {
        clients.map { block($0, width: width) }.joined(separator: "\n")
    }

    static func block(_ client: Client, width: Int) -> String {
        var fields: [(label: String, lines: [String])] = [
            ("name", [client.displayName ?? "- (pages show the id)"]),
            ("type", [client.isConfidential ? "confidential" : "public"]),
            ("grants", [client.grantTypes.joined(separator: " ")]),
            ("group", [client.nativeSSOGroup ?? "-"]),
            ("scopes", [client.scopes.isEmpty ? "-" : client.scopes.joined(separator: " ")]),
        ]
        if !client.redirectURIs.isEmpty { fields.append(("redirect URI", client.redirectURIs)) }
        if !client.postLogoutRedirectURIs.isEmpty { fields.append(("post-logout URI", client.postLogoutRedirectURIs)) }
        if client.authMethod != nil || client.jwksURI != nil || client.jwks != nil {
            let keys = client.jwksURI.map { "keys at \($0)" } ?? (client.jwks != nil ? "keys " + client.registeredKeyIDs.joined(separator: " ") : nil)
            fields.append(("authentication", [[client.authenticationMethod, keys].compactMap { $0 }.joined(separator: ", ")]))
        }
        if let algorithm = client.idTokenAlgorithm { fields.append(("token signing", [algorithm])) }
        if client.isFAPI2 { fields.append(("profile", ["FAPI 2.0 Security Profile"])) }
        let requirements = [client.requireDPoP ? "DPoP" : nil, client.requirePAR ? "PAR" : nil,
                            client.requireSignedRequestObject ? "signed-request-object" : nil].compactMap { $0 }
        if !requirements.isEmpty { fields.append(("requires", [requirements.joined(separator: " ")])) }
        var output = wrap(client.clientID, width: width).joined(separator: "\n") + "\n"
        let indent = String(repeating: " ", count: 2 + labelWidth)
        for field in fields {
            let label = "  " + field.label.padding(toLength: labelWidth, withPad: " ", startingAt: 0)
            let lines = field.lines.flatMap { wrap($0, width: width - indent.count) }
            for (index, line) in lines.enumerated() { output += (index == 0 ? label : indent) + line + "\n" }
        }
        return output
    }

    /// `text` in lines of at most `width` characters: at spaces where it
    /// can, through a word where it must.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ").map(String.init) {
            if !line.isEmpty && line.count + 1 + word.count <= width {
                line += " " + word
                continue
            }
            if !line.isEmpty { lines.append(line) }
            var rest = Substring(word)
            while rest.count > width {
                lines.append(String(rest.prefix(width)))
                rest = rest.dropFirst(width)
            }
            line = String(rest)
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }
}
