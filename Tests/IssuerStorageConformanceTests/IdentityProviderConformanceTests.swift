import IssuerStorage
import XCTest

/// The upstream providers' store (`ssoctl idp`): every field back as it was
/// stored, names as bytes, a duplicate refused, removal by name only.
final class IdentityProviderConformanceTests: ConformanceTestCase {
    static let endpoints = ProviderEndpoints(authorization: "https://id.example/authorize", token: "https://id.example/token",
                                             jwks: "https://id.example/jwks")

    static func provider(_ name: String, preset: IdentityProviderPreset = .generic, appleKey: AppleSigningKey? = nil,
                         hostedDomain: String? = nil) -> IdentityProvider {
        IdentityProvider(name: name, issuer: "https://id.example", clientID: "gatehouse-\(name)", sealedSecret: appleKey == nil ? [0, 1, 255] : nil,
                         scopes: ["openid", "email", "profile"], label: "Example \(name)", preset: preset, endpoints: endpoints,
                         appleKey: appleKey, hostedDomain: hostedDomain, createdAt: 1_800_000_000)
    }

    func testEveryFieldComesBackAsStoredInNameOrder() throws {
        try eachBackend { backend in
            let apple = Self.provider("apple", preset: .apple,
                                      appleKey: AppleSigningKey(teamID: "TEAM123456", keyID: "KEY1234567", sealedPrivateKey: [9, 0, 9]))
            let google = Self.provider("google", preset: .google, hostedDomain: "example.com")
            let corp = Self.provider("corp-sso")
            try backend.storage.write { tx in
                for provider in [google, corp, apple] { try tx.identityProviders.insert(provider) }
            }
            let read = backend.storage.read.identityProviders
            XCTAssertEqual(try read.list(), [apple, corp, google], backend.name)
            XCTAssertEqual(try read.find(name: "apple"), apple, backend.name)
            XCTAssertNil(try read.find(name: "Apple"), "\(backend.name): names are bytes")
            XCTAssertNil(try read.find(name: "apple\u{0}"), "\(backend.name): names are bytes")
        }
    }

    func testADuplicateNameIsRefusedAndRemovalTakesOnlyThatName() throws {
        try eachBackend { backend in
            try backend.storage.write { try $0.identityProviders.insert(Self.provider("corp")) }
            XCTAssertThrowsError(try backend.storage.write { try $0.identityProviders.insert(Self.provider("corp")) }, backend.name)
            try backend.storage.write { try $0.identityProviders.insert(Self.provider("corp2")) }
            XCTAssertFalse(try backend.storage.write { try $0.identityProviders.remove(name: "CORP") }, backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.identityProviders.remove(name: "corp") }, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.identityProviders.remove(name: "corp") }, "\(backend.name): once")
            XCTAssertEqual(try backend.storage.read.identityProviders.list().map(\.name), ["corp2"], backend.name)
        }
    }
}
