@testable import AuthServer
import SSOCore
import XCTest

/// EndpointResponder's one order, with small endpoints whose guards and
/// handlers record what ran.
final class EndpointPipelineTests: XCTestCase {
    final class Trace { var steps: [String] = [] }

    struct Step: EndpointGuard {
        let name: String
        let readsInput: Bool
        let trace: Trace
        var refuse: (any Error)? = nil

        func check(_ exchange: inout EndpointExchange) throws {
            trace.steps.append(name + (exchange.inputParsed ? " (input parsed)" : ""))
            if let refuse { throw refuse }
        }
    }

    struct Refused: Error {}

    /// Writes `Refused` as a 418 and nothing else.
    struct TeapotErrors: ErrorDialect {
        func response(for error: any Error, _ exchange: EndpointExchange) throws -> Response? {
            error is Refused ? Response(status: 418) : nil
        }
    }

    func form(_ body: String, method: String = "POST", path: String = "/x") -> Request {
        Request(method: method, path: path, headers: ["content-type": "application/x-www-form-urlencoded"], body: Array(body.utf8))
    }

    func endpoint(_ guards: [any EndpointGuard], cache: CachePolicy = .noStore, trace: Trace,
                  handler: ((EndpointExchange) throws -> Response)? = nil) -> Endpoint {
        Endpoint("/x", .post, input: .form, guards: guards, errors: TeapotErrors(), cache: cache, handler: handler ?? { exchange in
            trace.steps.append("handler a=\((try? exchange.parameters.single("a")) ?? "-")")
            return Response(status: 200)
        })
    }

    func testHeaderGuardsRunBeforeTheBodyIsParsedAndInputGuardsAfter() throws {
        let trace = Trace()
        let guards: [any EndpointGuard] = [Step(name: "origin", readsInput: false, trace: trace),
                                           Step(name: "token", readsInput: true, trace: trace)]
        let response = try EndpointResponder(endpoint(guards, trace: trace)).respond(to: form("a=1"))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(trace.steps, ["origin", "token (input parsed)", "handler a=1"])
    }

    /// RFC 7662 §2.1's reason: a request a header check refuses learns
    /// nothing about how its body parses.
    func testARefusalByAHeaderGuardComesBeforeAMalformedBody() throws {
        let trace = Trace()
        let guards: [any EndpointGuard] = [Step(name: "origin", readsInput: false, trace: trace, refuse: Refused()),
                                           Step(name: "token", readsInput: true, trace: trace)]
        let response = try EndpointResponder(endpoint(guards, trace: trace)).respond(to: form("a=%zz"))
        XCTAssertEqual(response.status, 418)
        XCTAssertEqual(trace.steps, ["origin"])
    }

    func testAMalformedBodyIsTheDialectsOrElseTheFormErrorsOwnAnswer() throws {
        let trace = Trace()
        let plain = try EndpointResponder(endpoint([Step(name: "token", readsInput: true, trace: trace)], trace: trace))
            .respond(to: form("a=%zz"))
        XCTAssertEqual(plain.status, 400, "FormError's own response")
        XCTAssertEqual(trace.steps, [], "neither the input guard nor the handler ran")
        let oauth = Endpoint("/x", .post, input: .form, errors: OAuthErrors(), cache: .credentials) { _ in Response(status: 200) }
        let answer = try EndpointResponder(oauth).respond(to: form("a=%zz"))
        XCTAssertEqual(answer.status, 400)
        XCTAssertTrue(String(decoding: answer.body, as: UTF8.self).contains("\"error\":\"invalid_request\""))
        XCTAssertEqual(try EndpointResponder(oauth).respond(to: form(String(repeating: "a", count: 70_000))).status, 413,
                       "a body over the limit stays 413")
    }

    func testAMethodOutsideTheRowIs405BeforeAnyGuard() throws {
        let trace = Trace()
        let response = try EndpointResponder(endpoint([Step(name: "origin", readsInput: false, trace: trace)], trace: trace))
            .respond(to: form("a=1", method: "GET"))
        XCTAssertEqual(response.status, 405)
        XCTAssertEqual(response.header("Allow"), "POST")
        XCTAssertEqual(trace.steps, [])
    }

    /// RFC 6749 §5.1: no-store and Pragma on every answer of a credentials
    /// endpoint, refusals included; a handler's own Cache-Control stays.
    func testTheCachePolicyCoversRefusalsAndKeepsAHandlersOwnHeader() throws {
        let trace = Trace()
        let refused = try EndpointResponder(endpoint([Step(name: "g", readsInput: false, trace: trace, refuse: Refused())],
                                                     cache: .credentials, trace: trace)).respond(to: form("a=1"))
        XCTAssertEqual(refused.status, 418)
        XCTAssertEqual(refused.header("Cache-Control"), "no-store")
        XCTAssertEqual(refused.header("Pragma"), "no-cache")
        let own = Endpoint("/x", .read, cache: .asAnswered) { _ in Response(status: 200, headers: [("Cache-Control", "public, max-age=60")]) }
        XCTAssertEqual(try EndpointResponder(own).respond(to: Request(method: "HEAD", path: "/x")).header("Cache-Control"),
                       "public, max-age=60")
        let noStore = Endpoint("/x", .read, cache: .noStore) { _ in try .json(["a": "b"]) }
        XCTAssertEqual(try EndpointResponder(noStore).respond(to: Request(method: "GET", path: "/x")).header("Cache-Control"), "no-store")
    }

    func testASelectorPicksItsRowAndTheRestGoToTheDefault() throws {
        let trace = Trace()
        let table = RouteTable([
            Endpoint("/x", .post, input: .form, cache: .noStore, when: "otp") { _ in Response(status: 201) },
            Endpoint("/x", .post, input: .form, cache: .noStore) { _ in Response(status: 200) },
        ])
        XCTAssertEqual(try table.respond(to: form("otp=1&a=2")).status, 201)
        XCTAssertEqual(try table.respond(to: form("a=2")).status, 200)
        XCTAssertEqual(table.inconsistencies, [])
        _ = trace
    }

    func testRowsOfOnePathMustAgreeOnTheirPrologue() {
        let trace = Trace()
        let table = RouteTable([
            Endpoint("/x", .post, input: .form, cache: .noStore, when: "otp") { _ in Response(status: 201) },
            Endpoint("/x", .post, input: .form, guards: [Step(name: "g", readsInput: false, trace: trace)], cache: .noStore) { _ in
                Response(status: 200)
            },
            Endpoint("/y", .post, cache: .noStore) { _ in Response(status: 200) },
            Endpoint("/y", .post, cache: .noStore) { _ in Response(status: 200) },
        ])
        XCTAssertEqual(table.inconsistencies.sorted(), ["/x: rows with different prologues", "/y: not exactly one row without a selector"])
    }

    /// A handler that reads a value its row's guards do not set is a
    /// mistake in the table: an error no dialect writes, so a logged 500.
    func testAHandlerAskingForAnUnsetGuardValueIsA500() {
        let missing = Endpoint("/x", .post, input: .form, errors: OAuthErrors(), cache: .credentials) { exchange in
            _ = try exchange.client()
            return Response(status: 200)
        }
        let (response, detail) = ResponderOutcome.run(EndpointResponder(missing), form("a=1"))
        XCTAssertEqual(response.status, 500)
        XCTAssertEqual(detail?.contains("ClientAuthentication"), true)
    }
}
