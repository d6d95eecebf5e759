import IssuerStorage
import SSOCore

/// Deletes what can no longer be used, so the database does not grow
/// without bound (the backend's rules, IssuerStorage.maintenance), in
/// batches, each in its own short transaction: a sweep never holds a write
/// lock long enough to make a sign-in wait.
public final class Sweeper {
    let settings: IssuerSettings
    let storage: any IssuerStorage
    let clock: Clock

    public init(settings: IssuerSettings, storage: any IssuerStorage, clock: @escaping Clock = systemClock) {
        self.settings = settings
        self.storage = storage
        self.clock = clock
    }

    @discardableResult
    public func sweep(batch: Int = 500) throws -> [String: Int] {
        try storage.maintenance.sweep(SweepPolicy(now: clock(), refreshTokenLifetime: Int64(settings.lifetimes.refreshToken),
                                                  refreshGracePeriod: Int64(settings.lifetimes.refreshGracePeriod),
                                                  accessTokenLeeway: IssuerAccessTokenVerifier.leeway), batch: batch)
    }
}
