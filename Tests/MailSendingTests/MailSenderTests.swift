import Foundation
import IssuerStorage
import IssuerStorageSQLite
import SMTPClient
import SSOCore
import XCTest
@testable import MailSending

/// The sender's decisions, on a real SQLite outbox and a transport that
/// answers what each test says (no network: the end-to-end tests speak
/// SMTP to a real server).
final class MailSenderTests: XCTestCase {
    /// Answers from a script, and keeps what it was handed.
    final class ScriptedTransport: MailTransport {
        var answers: [MailDelivery]
        var sent: [QueuedMail] = []
        init(_ answers: [MailDelivery]) { self.answers = answers }
        func send(_ mail: QueuedMail, queuedAt: Int64) -> MailDelivery {
            sent.append(mail)
            return answers.isEmpty ? .delivered : answers.removeFirst()
        }
        var destination: String { "scripted" }
    }

    final class TestClock: @unchecked Sendable {
        var now: Int64 = 1_800_000_000
    }

    var directory = ""
    var storage: SQLiteIssuerStorage!
    let clock = TestClock()

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "mail-sender-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        storage = try SQLiteIssuerStorage(databasePath: directory + "/gatehouse.sqlite", keysDirectory: directory + "/keys")
        AuditLog.recorded = []
    }

    override func tearDownWithError() throws {
        AuditLog.recorded = nil
        storage = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    func sender(_ transport: MailTransport, claimer: String = "node-a:1") -> MailSender {
        let clock = self.clock
        return MailSender(storage: storage, transport: transport, claimer: claimer, clock: { clock.now })
    }

    func message(to address: String = "alice@example.org", subject: String = "Hello") throws -> MailMessage {
        try MailMessage(from: MailAddress("no-reply@sso.example.com", displayName: "Example ID"), to: MailAddress(address),
                        subject: subject, text: "Your link: https://sso.example.com/x", html: "<p>link</p>", date: clock.now,
                        messageIDDomain: "sso.example.com")
    }

    @discardableResult
    func enqueue(_ mail: MailMessage, kind: OutboxMessageKind = .test) throws -> Int64 {
        try storage.write { try $0.mailOutbox.enqueue(kind: kind, recipient: mail.to.address, message: mail.serialized(), now: clock.now) }
    }

    func due() throws -> Int { try storage.read.mailOutbox.backlog(now: clock.now).due }

    // MARK: The schedule

    func testFirstRetriesComeWithin30SecondsThenBackOffToHourlyAndGiveUpAfterADay() {
        let schedule = RetrySchedule()
        let waits = (1...12).map { schedule.wait(afterFailure: $0) }
        XCTAssertEqual(waits, [5, 10, 30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600])
        XCTAssertLessThanOrEqual(waits[0] + waits[1], 30, "the contract: the first retries within 30 s")
        XCTAssertEqual(schedule.nextAttempt(afterFailure: 1, createdAt: 0, now: 0), 5)
        XCTAssertEqual(schedule.nextAttempt(afterFailure: 30, createdAt: 0, now: 86_399), 86_399 + 3600)
        XCTAssertNil(schedule.nextAttempt(afterFailure: 31, createdAt: 0, now: 86_400), "a day queued: given up")
        // Retries go on for at least an hour: the attempts in the first hour
        // are all retries, not a give-up.
        var now: Int64 = 0, failures = 0
        while now < 3600 {
            failures += 1
            guard let next = schedule.nextAttempt(afterFailure: failures, createdAt: 0, now: now) else { return XCTFail("gave up at \(now)") }
            now = next
        }
        XCTAssertGreaterThanOrEqual(failures, 9)
    }

    func testOutcomeMapping() {
        let row = OutboxMessage(id: 1, kind: .test, recipient: "a@b.example", message: [1], createdAt: 1000, nextAttemptAt: 1000,
                                attempts: 2, claimedUntil: nil, claimedBy: nil)
        let schedule = RetrySchedule()
        XCTAssertEqual(MailOutcome.of(.delivered, for: row, now: 1100, schedule: schedule), .sent)
        XCTAssertEqual(MailOutcome.of(.temporaryFailure(detail: "451"), for: row, now: 1100, schedule: schedule),
                       .retry(nextAttemptAt: 1130, error: "451"), "the third failure waits 30 s")
        XCTAssertEqual(MailOutcome.of(.permanentFailure(detail: "550 no such user"), for: row, now: 1100, schedule: schedule),
                       .failed(error: "550 no such user"))
        guard case .failed(let error) = MailOutcome.of(.temporaryFailure(detail: "451 later"), for: row, now: 1000 + 86_400,
                                                       schedule: schedule) else { return XCTFail("a day queued gives up") }
        XCTAssertTrue(error.hasPrefix("given up after 3 attempts in 24 h"), error)
        XCTAssertTrue(error.hasSuffix("451 later"), error)
        XCTAssertEqual([MailOutcome.sent, .retry(nextAttemptAt: 0, error: ""), .failed(error: "")].map(\.metricResult),
                       ["sent", "retry", "failed"])
    }

    /// SSOCore's metric labels cannot import IssuerStorage's kinds: a kind
    /// missing from the labels would be counted as "other".
    func testEveryOutboxKindIsAMetricLabel() {
        let kinds: [OutboxMessageKind] = [.verification, .passwordReset, .invitation, .emailChange, .notice, .test]
        XCTAssertEqual(kinds.map(\.rawValue) + ["other"], MailMetricLabels.kinds)
        XCTAssertEqual(MailMetricLabels.value(kind: "made_up", result: "sent"), "other,sent")
    }

    // MARK: The loop

    func testADeliveredMessageIsMarkedSentAndCounted() throws {
        let mail = try message()
        try enqueue(mail)
        let before = Metrics.value(.mailSent, "test,sent")
        let transport = ScriptedTransport([.delivered])
        XCTAssertEqual(try sender(transport).sendDueBatch(), 1)
        XCTAssertEqual(transport.sent.map(\.bytes), [mail.serialized()], "the stored bytes, unchanged")
        XCTAssertEqual(transport.sent.first?.to.address, "alice@example.org")
        XCTAssertEqual(transport.sent.first?.from.address, "no-reply@sso.example.com", "the From header, without its name")
        XCTAssertEqual(try due(), 0)
        XCTAssertEqual(try sender(transport).sendDueBatch(), 0, "a sent message is never sent again")
        XCTAssertEqual(Metrics.value(.mailSent, "test,sent"), before + 1)
        XCTAssertEqual(AuditLog.recorded, [])
    }

    func testTemporaryFailuresAreRetriedOnScheduleWithTheSameMessage() throws {
        let mail = try message()
        try enqueue(mail, kind: .verification)
        let retries = Metrics.value(.mailSent, "verification,retry")
        let transport = ScriptedTransport([.temporaryFailure(detail: "451 4.3.0 later"), .temporaryFailure(detail: "no connection"),
                                           .delivered])
        let sender = sender(transport)
        XCTAssertEqual(try sender.sendDueBatch(), 1)
        XCTAssertEqual(try due(), 0, "not due before its retry")
        clock.now += 4
        XCTAssertEqual(try sender.sendDueBatch(), 0)
        clock.now += 1
        XCTAssertEqual(try sender.sendDueBatch(), 1, "retried 5 s after the first failure")
        clock.now += 9
        XCTAssertEqual(try sender.sendDueBatch(), 0)
        clock.now += 1
        XCTAssertEqual(try sender.sendDueBatch(), 1, "and 10 s after the second")
        XCTAssertEqual(transport.sent.count, 3)
        XCTAssertEqual(Set(transport.sent.map(\.messageID)), [mail.messageID], "every attempt is the same message")
        XCTAssertEqual(Set(transport.sent.map(\.bytes)), [mail.serialized()])
        XCTAssertEqual(Metrics.value(.mailSent, "verification,retry"), retries + 2)
        clock.now += 86_400
        XCTAssertEqual(try sender.sendDueBatch(), 0, "delivered: never again")
    }

    func testAPermanentFailureIsRecordedAuditedAndNeverRetried() throws {
        let mail = try message(to: "nobody@example.org")
        try enqueue(mail)
        let failed = Metrics.value(.mailSent, "test,failed")
        let transport = ScriptedTransport([.permanentFailure(detail: "smtp://127.0.0.1:2525: RCPT failed (last SMTP reply 550)")])
        XCTAssertEqual(try sender(transport).sendDueBatch(), 1)
        clock.now += 86_400 * 2
        XCTAssertEqual(try sender(transport).sendDueBatch(), 0, "never retried")
        XCTAssertEqual(transport.sent.count, 1)
        XCTAssertEqual(Metrics.value(.mailSent, "test,failed"), failed + 1)
        let events = try XCTUnwrap(AuditLog.recorded)
        XCTAssertEqual(events.map(\.event), ["mail_failed"])
        XCTAssertEqual(events.first?.target, "nobody@example.org")
        XCTAssertNil(events.first?.user)
        XCTAssertTrue(events.first?.reason?.contains("550") == true, "\(String(describing: events.first?.reason))")
        XCTAssertFalse(events.first?.reason?.contains("sso.example.com/x") == true, "never the message's link")
    }

    func testRetriesAreGivenUpAfterADayAndAudited() throws {
        try enqueue(try message())
        let transport = ScriptedTransport(Array(repeating: .temporaryFailure(detail: "451 later"), count: 100))
        let sender = sender(transport)
        let start = clock.now
        while clock.now - start < 2 * 86_400 {
            try sender.sendDueBatch()
            clock.now += 60
        }
        XCTAssertEqual(AuditLog.recorded?.map(\.event), ["mail_failed"])
        XCTAssertTrue(AuditLog.recorded?.first?.reason?.contains("given up") == true)
        XCTAssertGreaterThan(transport.sent.count, 24, "hourly retries for a day")
        XCTAssertLessThan(transport.sent.count, 40)
    }

    func testBytesThatAreNoMessageFailAtOnce() throws {
        _ = try storage.write {
            try $0.mailOutbox.enqueue(kind: .notice, recipient: "alice@example.org", message: Array("Subject: x\r\n\r\nbody".utf8),
                                      now: clock.now)
        }
        _ = try storage.write {
            try $0.mailOutbox.enqueue(kind: .notice, recipient: "alice@example.org\r\nRCPT TO:<evil@example.net>",
                                      message: try message().serialized(), now: clock.now)
        }
        let transport = ScriptedTransport([])
        XCTAssertEqual(try sender(transport).sendDueBatch(), 2)
        XCTAssertEqual(transport.sent.count, 0, "nothing unchecked reaches a transport")
        XCTAssertEqual(AuditLog.recorded?.map(\.event), ["mail_failed", "mail_failed"])
    }

    func testAStopBetweenMessagesReleasesTheRestAtOnce() throws {
        for index in 0..<3 { try enqueue(try message(to: "user\(index)@example.org")) }
        let transport = ScriptedTransport([])
        var asked = 0
        XCTAssertEqual(try sender(transport).sendDueBatch(shouldStop: { asked += 1; return asked > 1 }), 3)
        XCTAssertEqual(transport.sent.count, 1, "the message in hand finishes; the others wait")
        XCTAssertEqual(try due(), 2, "released: due now, not after the lease")
        XCTAssertEqual(try sender(transport, claimer: "node-b:2").sendDueBatch(), 2, "another sender takes them at once")
    }

    func testAMessageHeldByAnotherSenderIsLeftAlone() throws {
        try enqueue(try message())
        let claimed = try storage.write { try $0.mailOutbox.claimDue(limit: 5, now: clock.now, lease: 300, claimer: "node-b:9") }
        XCTAssertEqual(claimed.count, 1)
        let transport = ScriptedTransport([])
        XCTAssertEqual(try sender(transport).sendDueBatch(), 0)
        clock.now += 300
        XCTAssertEqual(try sender(transport).sendDueBatch(), 1, "once the lease passes, at least once")
    }

    func testTheLoopStopsWhenAsked() throws {
        try enqueue(try message())
        let transport = ScriptedTransport([])
        var sleeps = 0
        sender(transport).run(shouldStop: { sleeps >= 2 }, sleep: { _ in sleeps += 1 })
        XCTAssertEqual(transport.sent.count, 1)
    }

    // MARK: The drop directory

    func testTheDropDirectoryGetsTheStoredBytesUnderTheMessageID() throws {
        let mail = try message()
        try enqueue(mail)
        let transport = DropDirectoryTransport(path: directory + "/mail")
        XCTAssertEqual(try sender(transport).sendDueBatch(), 1)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory + "/mail")
        XCTAssertEqual(files.count, 1)
        let file = try XCTUnwrap(files.first)
        XCTAssertTrue(file.hasSuffix(String(mail.messageID.dropFirst().dropLast()) + ".eml"), file)
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/mail/" + file))), mail.serialized())
        let unwritable = DropDirectoryTransport(path: "/proc/no-such-place/mail")
        guard case .temporaryFailure = unwritable.send(QueuedMail(mail), queuedAt: 0) else { return XCTFail("a write failure is temporary") }
    }

    // MARK: Settings

    func testMailSettingsDefaultsAndRefusals() throws {
        let config = try GatehouseConfig(home: directory, values: ["GATEHOUSE_ISSUER": "https://sso.example.com"])
        let defaults = try MailSettings(config, values: [:])
        XCTAssertEqual(defaults.from.address, "no-reply@sso.example.com")
        XCTAssertNil(defaults.smtpURL)
        XCTAssertEqual(defaults.dropDirectory, directory + "/mail")
        let named = try MailSettings(config, values: ["GATEHOUSE_MAIL_FROM": "\"Example ID\" <id@example.com>",
                                                      "GATEHOUSE_SMTP_URL": "smtp://relay:587"])
        XCTAssertEqual(named.from.address, "id@example.com")
        XCTAssertEqual(named.from.displayName, "Example ID")
        XCTAssertEqual(named.smtpURL, "smtp://relay:587")
        for bad in ["not an address", "a@b.example\r\nBcc: x@y.example", "Name\r\n <a@b.example>"] {
            XCTAssertThrowsError(try MailSettings(config, values: ["GATEHOUSE_MAIL_FROM": bad]), bad)
        }
    }

    func testTheTransportFollowsTheSettings() throws {
        let config = try GatehouseConfig(home: directory, values: [:])
        let drop = try MailerProcess.transport(try MailSettings(config, values: [:]), home: directory, environment: [:])
        XCTAssertTrue(drop is DropDirectoryTransport)
        let smtp = try MailerProcess.transport(try MailSettings(config, values: ["GATEHOUSE_SMTP_URL": "smtp://u:hunter2@mail.example.com:587"]),
                                               home: directory, environment: [:])
        XCTAssertEqual(smtp.destination, "smtp://mail.example.com:587 (STARTTLS required, with credentials)")
        XCTAssertThrowsError(try MailerProcess.transport(try MailSettings(config, values: ["GATEHOUSE_SMTP_URL": "http://x"]),
                                                         home: directory, environment: [:]))
    }
}
