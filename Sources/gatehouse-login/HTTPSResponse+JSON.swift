import Foundation
import OutboundHTTPS
import SSOCore

extension HTTPSResponse {
    /// The body as the JSON document `what` should be; the error names the
    /// step and the status, never the body (it may hold a token).
    func decode<T: Decodable>(_ type: T.Type, what: String) throws -> T {
        do { return try JSON.decoder.decode(type, from: Data(body)) } catch {
            throw ToolError("\(what): HTTP \(status) with a body that is not the expected JSON")
        }
    }
}
