import IssuerStorage
import SSOCore

/// Logout's one write: the sessions end and what is bound to them is
/// revoked (SessionBoundCredentials), all or nothing.
public struct SignOut {
    let storage: any IssuerStorage
    let clock: Clock

    public func end(_ sids: Set<String>) throws {
        guard !sids.isEmpty else { return }
        let now = clock()
        try storage.write { tx in
            for sid in sids.sorted() { try SessionBoundCredentials.endSession(sid, tx, now: now) }
        }
    }
}
