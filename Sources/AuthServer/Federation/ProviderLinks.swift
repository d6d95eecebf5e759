import IssuerStorage
import SSOCore

/// A user's links to upstream accounts, as `/account` and `ssoctl user
/// links` show them, and unlinking one while another way in remains.
public struct ProviderLinks {
    let storage: any IssuerStorage
    let clock: Clock

    public init(storage: any IssuerStorage, clock: @escaping Clock) {
        self.storage = storage
        self.clock = clock
    }

    public func list(userID: Int64) throws -> [FederatedIdentity] { try storage.read.federatedIdentities.list(userID: userID) }

    /// The account `email` names and its links.
    public func list(email: String) throws -> (User, [FederatedIdentity]) {
        let user = try UserAccounts.existing(email: email, in: storage.read.users)
        return (user, try list(userID: user.id))
    }

    public enum Unlinked: Equatable {
        case unlinked(FederatedIdentity)
        /// The link is the account's only way in: no password, no passkey,
        /// no other link. Nothing changed.
        case onlyWayIn
        /// The user has no such link. Nothing changed.
        case notLinked
    }

    /// Unlinks (issuer, subject) from `user`, in one write unit with the
    /// check that something else still signs the user in.
    public func unlink(user: User, issuer: String, subject: String) throws -> Unlinked {
        try storage.write { tx in
            let all = try tx.federatedIdentities.list(userID: user.id)
            guard let link = all.first(where: { $0.issuer.bytesEqual(issuer) && $0.subject.bytesEqual(subject) }) else { return .notLinked }
            let current = try tx.users.find(id: user.id)
            let hasPassword = !(current?.passwordHash.isEmpty ?? true)
            let hasPasskey = try !tx.passkeys.list(userID: user.id).isEmpty
            guard hasPassword || all.count > 1 || hasPasskey else { return .onlyWayIn }
            guard try tx.federatedIdentities.remove(userID: user.id, issuer: issuer, subject: subject) else { return .notLinked }
            return .unlinked(link)
        }
    }
}
