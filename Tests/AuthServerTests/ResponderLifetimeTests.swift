@testable import AuthServer
import XCTest

/// Every endpoint group is freed once nothing outside holds it: a row
/// whose handler captured its group (a method of the group's class, not
/// of a handler struct) would keep the group alive through the route
/// table the group itself holds.
final class ResponderLifetimeTests: XCTestCase {
    var issuer: TemporaryIssuer!

    override func setUpWithError() throws { issuer = try TemporaryIssuer() }
    override func tearDown() { issuer.cleanUp() }

    func testEveryGroupIsFreedWithItsRows() throws {
        for process in IssuerProcess.allCases {
            var groups: [AnyObject]? = try IssuerRouteTable.groups(process, services: issuer.services, config: issuer.config)
                .map { $0 as AnyObject }
            let watched = groups?.map(WeakReference.init) ?? []
            groups = nil
            for reference in watched {
                XCTAssertNil(reference.object, "\(process.rawValue): \(reference.name) outlives its last reference")
            }
        }
    }
}

private final class WeakReference {
    weak var object: AnyObject?
    let name: String

    init(_ object: AnyObject) {
        self.object = object
        name = String(describing: type(of: object))
    }
}
