import FoundationEssentials
import IssuerStorage
import SSOCore

/// The association files the app-links host serves, generated from
/// configuration so the team id, bundle id, package name and certificate
/// fingerprints are written in one place.
public enum AppLinkFiles {
    /// The claimed HTTPS paths the apps open (the interstitial page sends the
    /// browser to `<app-links origin>/callback` and `/logout-callback`).
    static let claimedPaths = ["/callback", "/callback/*", "/logout-callback", "/logout-callback/*"]

    struct AppleAssociation: Encodable {
        struct AppLinks: Encodable {
            struct Detail: Encodable {
                struct Component: Encodable { let path: String; enum CodingKeys: String, CodingKey { case path = "/" } }
                let appIDs: [String]
                let components: [Component]
                // The pre-iOS 13 keys, for older devices.
                let appID: String
                let paths: [String]
            }
            let apps: [String]
            let details: [Detail]
        }
        struct WebCredentials: Encodable { let apps: [String] }
        let applinks: AppLinks
        let webcredentials: WebCredentials
    }

    struct AndroidStatement: Encodable {
        struct Target: Encodable {
            let namespace: String
            let package_name: String
            let sha256_cert_fingerprints: [String]
        }
        let relation: [String]
        let target: Target
    }

    public static func appleAppSiteAssociation(_ config: GatehouseConfig) throws -> [UInt8] {
        let appID = config.appleTeamID + "." + config.iosBundleID
        let detail = AppleAssociation.AppLinks.Detail(
            appIDs: [appID], components: claimedPaths.map { .init(path: $0) }, appID: appID, paths: claimedPaths)
        return try JSON.encode(AppleAssociation(applinks: .init(apps: [], details: [detail]), webcredentials: .init(apps: [appID])))
    }

    public static func assetLinks(_ config: GatehouseConfig) throws -> [UInt8] {
        try JSON.encode([AndroidStatement(
            relation: ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"],
            target: .init(namespace: "android_app", package_name: config.androidPackage,
                          sha256_cert_fingerprints: config.androidCertificateFingerprints))])
    }

    /// Writes both files under `<directory>/.well-known/`.
    public static func write(_ config: GatehouseConfig, to directory: String) throws {
        let wellKnown = directory + "/.well-known"
        try FileManager.default.createDirectory(atPath: wellKnown, withIntermediateDirectories: true)
        try Data(appleAppSiteAssociation(config)).write(to: URL(fileURLWithPath: wellKnown + "/apple-app-site-association"))
        try Data(assetLinks(config)).write(to: URL(fileURLWithPath: wellKnown + "/assetlinks.json"))
    }
}
