import IssuerStorage
/// `keys.active`: some key signs now. Without one, every token request fails.
struct ActiveSigningKeyCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard let keys = context.keys else { return [] }
        do {
            guard let active = try keys.all().first(where: { $0.state == .active }) else {
                return [DoctorFinding(.fail, "keys.active", "no active signing key: run ssoctl keys rotate --now")]
            }
            return [DoctorFinding(.ok, "keys.active", "\(active.kid), signing since \(DoctorTime.format(active.activatesAt))")]
        } catch {
            return [DoctorFinding(.fail, "keys.active", "\(error)")]
        }
    }
}
