import FoundationEssentials
import Glibc
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

    /// The deployment's own app (configuration) first, then every client's
    /// (`ssoctl client add --ios-app-id`), each once.
    static func appleAppIDs(_ config: GatehouseConfig, _ clients: [Client]) -> [String] {
        var ids = [config.appleTeamID + "." + config.iosBundleID]
        for id in clients.compactMap(\.iosAppID) where !ids.containsBytes(id) { ids.append(id) }
        return ids
    }

    public static func appleAppSiteAssociation(_ config: GatehouseConfig, clients: [Client] = []) throws -> [UInt8] {
        let appIDs = appleAppIDs(config, clients)
        let detail = AppleAssociation.AppLinks.Detail(
            appIDs: appIDs, components: claimedPaths.map { .init(path: $0) }, appID: appIDs[0], paths: claimedPaths)
        return try JSON.encode(AppleAssociation(applinks: .init(apps: [], details: [detail]), webcredentials: .init(apps: appIDs)))
    }

    /// One statement per app: the deployment's own, then each client's
    /// Android app (`--android-package`, `--android-cert-fingerprint`).
    public static func assetLinks(_ config: GatehouseConfig, clients: [Client] = []) throws -> [UInt8] {
        var apps: [(package: String, fingerprints: [String])] = [(config.androidPackage, config.androidCertificateFingerprints)]
        for client in clients {
            guard let package = client.androidPackage else { continue }
            if let index = apps.firstIndex(where: { $0.package.bytesEqual(package) }) {
                for print in client.androidCertificateFingerprints where !apps[index].fingerprints.containsBytes(print) {
                    apps[index].fingerprints.append(print)
                }
            } else {
                apps.append((package, client.androidCertificateFingerprints))
            }
        }
        return try JSON.encode(apps.map { app in AndroidStatement(
            relation: ["delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds"],
            target: .init(namespace: "android_app", package_name: app.package, sha256_cert_fingerprints: app.fingerprints)) })
    }

    /// Writes both files under `<directory>/.well-known/`, each replaced
    /// whole (written aside, then renamed), so nginx never serves half a
    /// file; world-readable, since nginx's workers serve them.
    public static func write(_ config: GatehouseConfig, clients: [Client], to directory: String) throws {
        let wellKnown = directory + "/.well-known"
        try FileManager.default.createDirectory(atPath: wellKnown, withIntermediateDirectories: true)
        for (name, bytes) in [("apple-app-site-association", try appleAppSiteAssociation(config, clients: clients)),
                              ("assetlinks.json", try assetLinks(config, clients: clients))] {
            let path = wellKnown + "/" + name, aside = path + ".new"
            try Data(bytes).write(to: URL(fileURLWithPath: aside))
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: aside)
            guard rename(aside, path) == 0 else { throw ValidationError("cannot replace \(path)") }
        }
    }
}
