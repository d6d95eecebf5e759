import Foundation
import IssuerStorage
import XCTest

/// The mail outbox: queued in the caller's write unit, claimed for a lease
/// by one sender at a time (on any connection or node), outcomes taken
/// only from the sender holding the claim, delivered rows swept.
final class MailOutboxConformanceTests: ConformanceTestCase {
    /// Every byte value, NUL and CR LF included: the message is stored and
    /// handed back exactly as it was built.
    static let message: [UInt8] = Array("Subject: Verify\r\n\r\nhttps://issuer.example/verify?t=x\r\n".utf8) + (0...255).map(UInt8.init)

    func enqueue(_ storage: any IssuerStorage, _ recipient: String = "alice@example.com", kind: OutboxMessageKind = .verification,
                 message: [UInt8] = message, at now: Int64) throws -> Int64 {
        try storage.write { try $0.mailOutbox.enqueue(kind: kind, recipient: recipient, message: message, now: now) }
    }

    func claim(_ storage: any IssuerStorage, limit: Int = 10, now: Int64, lease: Int64 = 60, by claimer: String = "node-a")
        throws -> [OutboxMessage] {
        try storage.write { try $0.mailOutbox.claimDue(limit: limit, now: now, lease: lease, claimer: claimer) }
    }

    struct Refused: Error {}

    func testAMessageQueuedInAUnitThatRollsBackIsNeverThere() throws {
        try eachBackend { backend in
            XCTAssertThrowsError(try backend.storage.write { tx in
                _ = try tx.mailOutbox.enqueue(kind: .verification, recipient: "alice@example.com", message: Self.message, now: 100)
                throw Refused()
            })
            XCTAssertEqual(try backend.storage.read.mailOutbox.recentCount(recipient: "alice@example.com", since: 0), 0, backend.name)
            XCTAssertEqual(try backend.storage.read.mailOutbox.backlog(now: 200), OutboxBacklog(due: 0, oldestDueAge: nil), backend.name)
            XCTAssertEqual(try claim(backend.storage, now: 200), [], backend.name)
        }
    }

    func testAClaimTakesDueMessagesMostOverdueFirstUpToTheLimit() throws {
        try eachBackend { backend in
            let a = try enqueue(backend.storage, "a@example.com", at: 100)
            let b = try enqueue(backend.storage, "B@Example.com", kind: .passwordReset, message: [1, 0, 2], at: 90)
            _ = try enqueue(backend.storage, "c@example.com", at: 110)
            let d = try enqueue(backend.storage, "d@example.com", kind: .invitation, at: 90)
            let first = try claim(backend.storage, limit: 2, now: 105, lease: 60, by: "node-a/42")
            XCTAssertEqual(first.map(\.id), [b, d], "\(backend.name): by next attempt, then id")
            XCTAssertEqual(first.first, OutboxMessage(id: b, kind: .passwordReset, recipient: "B@Example.com", message: [1, 0, 2], createdAt: 90,
                                                      nextAttemptAt: 90, attempts: 0, claimedUntil: 165, claimedBy: "node-a/42"),
                           "\(backend.name): the address as given, the bytes exact, the lease")
            XCTAssertEqual(first.last?.message, Self.message, "\(backend.name): every byte value kept")
            XCTAssertEqual(first.last?.kind, .invitation, backend.name)
            XCTAssertEqual(try claim(backend.storage, now: 105, by: "node-b").map(\.id), [a], "\(backend.name): the next one not due yet")
            XCTAssertEqual(try claim(backend.storage, limit: 0, now: 500), [], "\(backend.name): a limit of 0 claims nothing")
        }
    }

    func testALeasedMessageIsClaimedAgainOnlyOnceTheLeasePasses() throws {
        try eachBackend { backend in
            let id = try enqueue(backend.storage, at: 100)
            XCTAssertEqual(try claim(backend.storage, now: 100, lease: 60, by: "node-a").map(\.id), [id], backend.name)
            XCTAssertEqual(try claim(backend.storage, now: 159, by: "node-b"), [], "\(backend.name): under a live lease")
            // node-a died holding it: at least once, the message is claimed again.
            let again = try claim(backend.storage, now: 160, lease: 30, by: "node-b")
            XCTAssertEqual(again.map(\.id), [id], backend.name)
            XCTAssertEqual(again.first?.claimedBy, "node-b", backend.name)
            XCTAssertEqual(again.first?.claimedUntil, 190, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.mailOutbox.markSent(id: id, claimer: "node-a", now: 170) },
                           "\(backend.name): the sender whose claim was taken over is refused")
            XCTAssertTrue(try backend.storage.write { try $0.mailOutbox.markSent(id: id, claimer: "node-b", now: 170) }, backend.name)
        }
    }

    func testASenderWhoseLeasePassedUntakenMayStillReportTheSend() throws {
        try eachBackend { backend in
            let id = try enqueue(backend.storage, at: 100)
            _ = try claim(backend.storage, now: 100, lease: 60, by: "node-a")
            XCTAssertTrue(try backend.storage.write { try $0.mailOutbox.markSent(id: id, claimer: "node-a", now: 200) },
                          "\(backend.name): the message went out; nobody else took it")
            XCTAssertEqual(try claim(backend.storage, now: 300, by: "node-b"), [], "\(backend.name): so it is not sent again")
        }
    }

    func testOutcomesFromAnyoneButTheClaimerAreRefused() throws {
        try eachBackend { backend in
            let unclaimed = try enqueue(backend.storage, at: 200)
            let id = try enqueue(backend.storage, at: 100)
            _ = try claim(backend.storage, limit: 1, now: 100, by: "node-a")
            try backend.storage.write { tx in
                XCTAssertFalse(try tx.mailOutbox.markSent(id: id, claimer: "node-b", now: 101), backend.name)
                XCTAssertFalse(try tx.mailOutbox.reschedule(id: id, claimer: "node-b", nextAttemptAt: 130, error: "421", now: 101), backend.name)
                XCTAssertFalse(try tx.mailOutbox.markFailed(id: id, claimer: "node-b", error: "550", now: 101), backend.name)
                XCTAssertFalse(try tx.mailOutbox.markSent(id: unclaimed, claimer: "node-a", now: 201), "\(backend.name): never claimed")
                XCTAssertFalse(try tx.mailOutbox.markSent(id: 987_654, claimer: "node-a", now: 101), "\(backend.name): no such message")
                XCTAssertFalse(try tx.mailOutbox.markSent(id: id, claimer: "node-a\u{0}", now: 101), "\(backend.name): a NUL names no claimer")
            }
            XCTAssertTrue(try backend.storage.write {
                try $0.mailOutbox.reschedule(id: id, claimer: "node-a", nextAttemptAt: 130, error: "421 busy", now: 101)
            }, backend.name)
            XCTAssertFalse(try backend.storage.write { try $0.mailOutbox.markSent(id: id, claimer: "node-a", now: 102) },
                           "\(backend.name): a rescheduled message's lease is released: a late report is refused")
            XCTAssertEqual(try claim(backend.storage, now: 130, by: "node-b").map(\.id), [id], backend.name)
        }
    }

    func testARescheduleCountsTheAttemptAndMovesTheNextOne() throws {
        try eachBackend { backend in
            let id = try enqueue(backend.storage, at: 100)
            _ = try claim(backend.storage, now: 100, by: "node-a")
            XCTAssertTrue(try backend.storage.write {
                try $0.mailOutbox.reschedule(id: id, claimer: "node-a", nextAttemptAt: 130, error: "421 4.3.2 try later\u{0}" + String(repeating: "x", count: 2000),
                                             now: 101)
            }, backend.name)
            XCTAssertEqual(try backend.storage.read.mailOutbox.backlog(now: 129), OutboxBacklog(due: 0, oldestDueAge: nil),
                           "\(backend.name): waiting out its backoff, not due")
            XCTAssertEqual(try claim(backend.storage, now: 129, by: "node-b"), [], backend.name)
            var again = try XCTUnwrap(try claim(backend.storage, now: 135, by: "node-b").first, backend.name)
            XCTAssertEqual(again.attempts, 1, backend.name)
            XCTAssertEqual(again.nextAttemptAt, 130, backend.name)
            XCTAssertEqual(again.createdAt, 100, backend.name)
            XCTAssertTrue(try backend.storage.write {
                try $0.mailOutbox.reschedule(id: id, claimer: "node-b", nextAttemptAt: 50, error: "connection refused", now: 140)
            }, backend.name)
            again = try XCTUnwrap(try claim(backend.storage, now: 140, by: "node-c").first, "\(backend.name): never due before the report")
            XCTAssertEqual(again.attempts, 2, backend.name)
            XCTAssertEqual(again.nextAttemptAt, 140, backend.name)
        }
    }

    func testSentAndFailedMessagesAreNeverClaimedAgain() throws {
        try eachBackend { backend in
            let sent = try enqueue(backend.storage, at: 100)
            let failed = try enqueue(backend.storage, at: 100)
            _ = try claim(backend.storage, now: 100, by: "node-a")
            XCTAssertTrue(try backend.storage.write { try $0.mailOutbox.markSent(id: sent, claimer: "node-a", now: 101) }, backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.mailOutbox.markFailed(id: failed, claimer: "node-a", error: "550 no such user", now: 101) },
                          backend.name)
            XCTAssertEqual(try claim(backend.storage, now: 1_000_000, by: "node-b"), [], backend.name)
            XCTAssertEqual(try backend.storage.read.mailOutbox.backlog(now: 1_000_000), OutboxBacklog(due: 0, oldestDueAge: nil), backend.name)
            try backend.storage.write { tx in
                XCTAssertFalse(try tx.mailOutbox.markSent(id: sent, claimer: "node-a", now: 102), "\(backend.name): reported once")
                XCTAssertFalse(try tx.mailOutbox.markSent(id: failed, claimer: "node-a", now: 102), "\(backend.name): failed for good")
                XCTAssertFalse(try tx.mailOutbox.reschedule(id: failed, claimer: "node-a", nextAttemptAt: 200, error: "x", now: 102), backend.name)
            }
        }
    }

    func testRecentCountIsPerAddressWhateverItsCaseAndState() throws {
        try eachBackend { backend in
            let first = try enqueue(backend.storage, "Alice@Example.com", at: 100)
            _ = try enqueue(backend.storage, "alice@example.com", kind: .notice, at: 200)
            _ = try enqueue(backend.storage, "bob@example.com", at: 200)
            _ = try claim(backend.storage, limit: 1, now: 100, by: "node-a")
            XCTAssertTrue(try backend.storage.write { try $0.mailOutbox.markSent(id: first, claimer: "node-a", now: 101) }, backend.name)
            let reads = backend.storage.read.mailOutbox
            XCTAssertEqual(try reads.recentCount(recipient: "ALICE@example.COM", since: 100), 2, "\(backend.name): sent ones count too")
            XCTAssertEqual(try reads.recentCount(recipient: "alice@example.com", since: 101), 1, backend.name)
            XCTAssertEqual(try reads.recentCount(recipient: "bob@example.com", since: 0), 1, backend.name)
            XCTAssertEqual(try reads.recentCount(recipient: "carol@example.com", since: 0), 0, backend.name)
            XCTAssertEqual(try reads.recentCount(recipient: "alice@example.com\u{0}", since: 0), 0, backend.name)
            XCTAssertEqual(try backend.storage.write { try $0.mailOutbox.recentCount(recipient: "alice@EXAMPLE.com", since: 0) }, 2,
                           "\(backend.name): inside a write unit, before queueing another")
        }
    }

    /// A withheld message (a reset for an address with no account) is never
    /// claimed nor due, counts toward its address's limit, and is swept
    /// with failed mail.
    func testAWithheldMessageIsNeverSentButCountsTowardTheLimit() throws {
        try eachBackend { backend in
            try backend.storage.write { try $0.mailOutbox.withhold(kind: .passwordReset, recipient: "Nobody@Example.com", reason: "no account", now: 100) }
            XCTAssertEqual(try claim(backend.storage, now: 200), [], "\(backend.name): never claimed")
            XCTAssertEqual(try backend.storage.read.mailOutbox.backlog(now: 200), OutboxBacklog(due: 0, oldestDueAge: nil), backend.name)
            XCTAssertEqual(try backend.storage.read.mailOutbox.recentCount(recipient: "nobody@example.com", since: 100), 1, backend.name)
            let swept = try backend.storage.maintenance.sweep(SweepPolicy(now: 100 + 30 * 86_400, refreshTokenLifetime: 86_400,
                                                                          refreshGracePeriod: 10), batch: 10)["mail_outbox"]
            XCTAssertEqual(swept, 1, backend.name)
        }
    }

    func testTheBacklogCountsDueMessagesAndTheLongestWait() throws {
        try eachBackend { backend in
            let reads = backend.storage.read.mailOutbox
            XCTAssertEqual(try reads.backlog(now: 200), OutboxBacklog(due: 0, oldestDueAge: nil), backend.name)
            let oldest = try enqueue(backend.storage, at: 100)
            _ = try enqueue(backend.storage, at: 150)
            _ = try enqueue(backend.storage, at: 300)
            XCTAssertEqual(try reads.backlog(now: 200), OutboxBacklog(due: 2, oldestDueAge: 100), backend.name)
            _ = try claim(backend.storage, limit: 1, now: 200, by: "node-a")
            XCTAssertEqual(try reads.backlog(now: 200), OutboxBacklog(due: 2, oldestDueAge: 100), "\(backend.name): claimed is not delivered")
            XCTAssertTrue(try backend.storage.write { try $0.mailOutbox.markSent(id: oldest, claimer: "node-a", now: 201) }, backend.name)
            XCTAssertEqual(try reads.backlog(now: 201), OutboxBacklog(due: 1, oldestDueAge: 51), backend.name)
        }
    }

    func testTheSweeperRemovesSentMailAfterAWeekAndFailedMailAfterAMonth() throws {
        try eachBackend { backend in
            let t: Int64 = 1_000_000
            let sent = try enqueue(backend.storage, at: t)
            let failed = try enqueue(backend.storage, at: t)
            _ = try enqueue(backend.storage, "pending@example.com", at: t)
            _ = try claim(backend.storage, limit: 2, now: t, by: "node-a")
            XCTAssertTrue(try backend.storage.write { try $0.mailOutbox.markSent(id: sent, claimer: "node-a", now: t) }, backend.name)
            XCTAssertTrue(try backend.storage.write { try $0.mailOutbox.markFailed(id: failed, claimer: "node-a", error: "550", now: t) }, backend.name)
            func sweep(at now: Int64) throws -> Int? {
                try backend.storage.maintenance.sweep(SweepPolicy(now: now, refreshTokenLifetime: 86_400, refreshGracePeriod: 10), batch: 1)["mail_outbox"]
            }
            let count = { try backend.storage.read.mailOutbox.recentCount(recipient: "alice@example.com", since: 0) }
            XCTAssertEqual(try sweep(at: t + 7 * 86_400 - 1), 0, backend.name)
            XCTAssertEqual(try sweep(at: t + 7 * 86_400), 1, "\(backend.name): sent a week ago")
            XCTAssertEqual(try count(), 1, backend.name)
            XCTAssertEqual(try sweep(at: t + 30 * 86_400 - 1), 0, backend.name)
            XCTAssertEqual(try sweep(at: t + 30 * 86_400), 1, "\(backend.name): failed a month ago")
            XCTAssertEqual(try count(), 0, backend.name)
            XCTAssertEqual(try sweep(at: t + 365 * 86_400), 0, backend.name)
            XCTAssertEqual(try backend.storage.read.mailOutbox.recentCount(recipient: "pending@example.com", since: 0), 1,
                           "\(backend.name): mail still on its way is never swept")
        }
    }

    /// Claimers on connections of their own (senders on several nodes), all
    /// at once, each claiming small batches until nothing is left: every
    /// message goes to exactly one of them.
    func testOfConcurrentClaimersNoMessageGoesToTwo() throws {
        let messages = 60, claimers = 8
        try eachBackend { backend in
            let ids = try backend.storage.write { tx in
                try (0..<messages).map { index in
                    try tx.mailOutbox.enqueue(kind: .notice, recipient: "user\(index)@example.com", message: [UInt8(index)], now: 100)
                }
            }
            let connections = try (0..<claimers).map { _ in try backend.another() }
            let claimed = Locked<[Int64: [String]]>([:])
            let errors = Locked<[String]>([])
            DispatchQueue.concurrentPerform(iterations: claimers) { index in
                let claimer = "node-\(index)"
                do {
                    while true {
                        let batch = try connections[index].write { try $0.mailOutbox.claimDue(limit: 3, now: 200, lease: 600, claimer: claimer) }
                        if batch.isEmpty { break }
                        claimed.update { for message in batch { $0[message.id, default: []].append(claimer) } }
                    }
                } catch {
                    errors.update { $0.append("\(claimer): \(error)") }
                }
            }
            XCTAssertEqual(errors.value, [], backend.name)
            XCTAssertEqual(Set(claimed.value.keys), Set(ids), "\(backend.name): every message claimed")
            let twice = claimed.value.filter { $0.value.count != 1 }
            XCTAssertEqual(twice.count, 0, "\(backend.name): claimed more than once: \(twice)")
        }
    }

    /// A claim held open (its write unit not yet committed) while another
    /// sender claims: the other takes the next messages, never the held
    /// ones (PostgreSQL: SKIP LOCKED passes them over without waiting;
    /// SQLite: the second writer waits for the first, then sees its lease).
    func testAClaimInFlightIsPassedOverByAnotherClaimer() throws {
        try eachBackend { backend in
            let ids = try (0..<4).map { try enqueue(backend.storage, "user\($0)@example.com", at: 100 + Int64($0)) }
            let (first, second) = (try backend.another(), try backend.another())
            let claimedFirst = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
            let held = Locked<Result<[Int64], Error>?>(nil)
            Thread.detachNewThread {
                let result = Result { try first.write { tx -> [Int64] in
                    let batch = try tx.mailOutbox.claimDue(limit: 2, now: 200, lease: 60, claimer: "node-a").map(\.id)
                    claimedFirst.signal()
                    Thread.sleep(forTimeInterval: 0.4)  // the other claim starts meanwhile
                    return batch
                } }
                held.update { $0 = result }
                finished.signal()
            }
            claimedFirst.wait()
            let other = try second.write { try $0.mailOutbox.claimDue(limit: 4, now: 200, lease: 60, claimer: "node-b") }.map(\.id)
            finished.wait()
            XCTAssertEqual(try held.value?.get(), Array(ids[0..<2]), backend.name)
            XCTAssertEqual(other, Array(ids[2..<4]), "\(backend.name): the next ones, not the held ones")
        }
    }
}
