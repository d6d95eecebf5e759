import IssuerStorage
/// `keys.age`: the active key is rotated regularly, so a key that leaked
/// unnoticed stops being useful. The thresholds are DoctorSettings'.
struct SigningKeyAgeCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard let keys = context.keys, let active = try? keys.all().first(where: { $0.state == .active }) else { return [] }
        let settings = context.settings
        let age = context.clock() - active.createdAt
        let limits = "warn after \(settings.keyAgeWarning / 86_400), fail after \(settings.keyAgeFailure / 86_400) days"
        let detail = "\(active.kid) is \(age / 86_400) days old (\(limits))"
        if age > settings.keyAgeFailure { return [DoctorFinding(.fail, "keys.age", detail + ": run ssoctl keys rotate")] }
        if age > settings.keyAgeWarning { return [DoctorFinding(.warn, "keys.age", detail + ": run ssoctl keys rotate soon")] }
        return [DoctorFinding(.ok, "keys.age", detail)]
    }
}
