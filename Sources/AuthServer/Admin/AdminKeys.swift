import IssuerStorage
import SSOCore

/// `/admin/v1/keys…`: what `ssoctl keys` does, over SigningKeys.
struct AdminKeys {
    let services: IssuerServices
    let config: GatehouseConfig

    static let path = AdminAPIResponder.base + "/keys"

    /// Newest first, as `ssoctl keys list` prints them.
    func list(_ exchange: EndpointExchange) throws -> Response {
        let query = try AdminListQuery(exchange.parameters, filters: [])
        return try AdminPage(try services.signingKeys.all(), key: Self.key, query: query, map: SigningKeyJSON.init)
            .response(url: services.settings.issuer + Self.path, query: query)
    }

    static func key(_ record: SigningKeyRecord) -> String { AdminCursor.newestFirst(record.createdAt, record.kid) }

    func item(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        return try AdminETag.answer(SigningKeyJSON(try existing(try AdminRequest.id(exchange, "kid", naming: "key"))))
    }

    func existing(_ kid: String) throws -> SigningKeyRecord {
        guard let record = try services.signingKeys.all().first(where: { $0.kid.bytesEqual(kid) }) else {
            throw AdminProblem.noSuch("key", kid)
        }
        return record
    }

    /// `ssoctl keys rotate [--now] [--alg]`, without the wait: the answer
    /// says when the new key signs (`activates_at`).
    func rotate(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        let body = try AdminBody(exchange.request, allowEmpty: true)
        try body.allowOnly(["now", "alg"])
        let now = try body.bool("now") ?? false
        let name = try body.string("alg") ?? "RS256"
        guard let algorithm = JWSAlgorithm(rawValue: name), IssuerSigningKey.algorithms.contains(algorithm) else {
            throw AdminProblem(400, .invalidValue, "Invalid value", "alg is RS256, ES256 or EdDSA: \(name.debugDescription)", member: "alg")
        }
        let keys = services.signingKeys
        // An algorithm's first key signs as soon as the served JWKS lists
        // it: no token of that algorithm exists yet (KeysCommand.Rotate).
        let first = try keys.all().allSatisfy { $0.algorithm != algorithm || $0.state == .retired }
        let delay = now || first ? SigningKeys.minimumActivationDelay : config.keyActivationDelay
        let caller = try exchange.admin()
        let kid = try keys.rotate(activationDelay: delay, algorithm: algorithm)
        AdminAPIAudit.changed(now ? "keys rotate now" : "keys rotate", target: kid, caller)
        return try AdminETag.answer(SigningKeyJSON(try existing(kid)), status: 201,
                                    headers: [("Location", services.settings.issuer + Self.path + "/" + kid)])
            .logging("admin API: \(caller.clientID) published \(algorithm.rawValue) key \(kid)")
    }

    /// `ssoctl keys retire`.
    func retire(_ exchange: EndpointExchange) throws -> Response {
        try AdminRequest.noQuery(exchange)
        try AdminRequest.noBody(exchange)
        let kid = try AdminRequest.id(exchange, "kid", naming: "key")
        let caller = try exchange.admin()
        try services.signingKeys.retire(kid: kid)
        AdminAPIAudit.changed("keys retire", target: kid, caller)
        return try AdminETag.answer(SigningKeyJSON(try existing(kid))).logging("admin API: \(caller.clientID) retired key \(kid)")
    }
}
