import Foundation
import SSOCore

/// A JWT's header and claims decoded for display, without checking the
/// signature: the resource servers do that. Never used to decide trust.
struct UnverifiedJWT {
    let header: [String: Any]
    let claims: [String: Any]

    init(_ token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]),
              let headerObject = try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any],
              let claimsObject = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            throw ToolError("not a JWT")
        }
        self.header = headerObject
        self.claims = claimsObject
    }

    static func prettyJSON(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
