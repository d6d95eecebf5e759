/// When a `JWKSCache` goes back to the issuer. All values in seconds.
public struct JWKSCachePolicy: Sendable {
    /// A set older than this is refreshed on the next lookup.
    public var maximumAge: Int
    /// One unknown `kid` triggers at most one refetch per this interval, and
    /// any refetch happens at most once a second, so a stream of forged kids
    /// cannot hammer the issuer nor delay a freshly rotated key.
    public var unknownKeyRefetchInterval: Int
    /// After a failed fetch while holding a (stale) set: wait this long
    /// before trying again, serving from the stale set meanwhile.
    public var retryIntervalWhenStale: Int
    /// After a failed fetch while holding nothing: the next request may try
    /// again after this long (each request until then gets 503).
    public var retryIntervalWhenEmpty: Int

    public init(maximumAge: Int = 3600, unknownKeyRefetchInterval: Int = 30,
                retryIntervalWhenStale: Int = 30, retryIntervalWhenEmpty: Int = 5) {
        self.maximumAge = maximumAge
        self.unknownKeyRefetchInterval = unknownKeyRefetchInterval
        self.retryIntervalWhenStale = retryIntervalWhenStale
        self.retryIntervalWhenEmpty = retryIntervalWhenEmpty
    }
}
