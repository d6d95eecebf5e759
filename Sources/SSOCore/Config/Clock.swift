import FoundationEssentials

/// Seconds since the epoch; one clock for every part of a process,
/// injectable in tests.
public typealias Clock = @Sendable () -> Int64

public let systemClock: Clock = { Int64(Date().timeIntervalSince1970) }
