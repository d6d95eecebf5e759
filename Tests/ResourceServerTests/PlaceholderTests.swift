import XCTest
@testable import ResourceServer

final class ResourceServerPlaceholderTests: XCTestCase {
    func testModuleLinks() { XCTAssertNotNil(ResourceServerModule.self) }
}
