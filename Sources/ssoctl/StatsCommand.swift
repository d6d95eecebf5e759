import ArgumentParser
import AuthServer
import IssuerStorage
import IssuerComposition
import Foundation
import SSOCore

/// `ssoctl stats`: what the issuer holds, read-only.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count users, clients, live sessions and tokens, signing keys, device secrets, recent failed sign-ins; database size.",
        discussion: """
            Read-only: the database is opened read-only and every count comes from one snapshot. Failed sign-ins are not \
            stored one by one: the line shows the login throttle's counters (per account and per client address) whose \
            window started within the last hour, so each failed sign-in counts twice there (account and address).
            """)

    @Flag(help: "Print the counts as one JSON object.") var json = false

    func run() throws {
        let config = attempt { try GatehouseConfig.load() }
        let storage = attempt { try IssuerComposition.openStorageForInspection(config) }
        var stats = attempt { try storage.maintenance.statistics(now: systemClock()) }
        stats.signingKeys = attempt {
            try SigningKeys(storage: storage, tokenLifetime: IssuerSettings(config: config).lifetimes.signingKeyRetention).countsByState()
        }
        if json {
            print(String(decoding: attempt { try JSON.encode(stats) }, as: UTF8.self))
            return
        }
        let keys = ["active", "next", "published", "expired", "retired"].map { "\($0) \(stats.signingKeys[$0] ?? 0)" }
        let throttle = stats.loginThrottle
        let rows: [(String, String)] = [
            ("users", "\(stats.users.total) (\(stats.users.disabled) disabled)"),
            ("clients", "\(stats.clients.total) (\(stats.clients.confidential) confidential)"),
            ("live SSO sessions", "\(stats.liveSSOSessions)"),
            ("live refresh tokens", "\(stats.refreshTokens.live) (\(stats.refreshTokens.stored) stored)"),
            ("outstanding authorization codes", "\(stats.outstandingAuthorizationCodes)"),
            ("revoked access tokens", "\(stats.revokedAccessTokens) (not yet expired)"),
            ("signing keys", keys.joined(separator: ", ")),
            ("live device secrets", "\(stats.liveDeviceSecrets)"),
            ("failed sign-ins, last hour", "\(throttle.failures) on \(throttle.counters) throttle counters "
                + "(each counts on its account and its address), \(throttle.locked) locked now"),
            ("database size", "\(stats.databaseBytes) bytes (+ \(stats.walBytes) bytes WAL)"),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        for (label, value) in rows { print(label.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }
    }
}
