import IssuerStorage
/// `keys.next`: a pre-published key (state `next`: in the JWKS, signing
/// from its activation time) will be able to sign when its time comes.
/// None is normal between rotations; once the active key is due for
/// rotation (keys.age warns), a missing one is worth a warning too.
struct NextSigningKeyCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard let keys = context.keys, let all = try? keys.all() else { return [] }
        // Newest activation first: the last `next` one activates soonest.
        guard let next = all.last(where: { $0.state == .next }) else {
            let active = all.first { $0.state == .active }
            if let active, context.clock() - active.createdAt > context.settings.keyAgeWarning {
                return [DoctorFinding(.warn, "keys.next", "none pre-published while the active key is due for rotation: run ssoctl keys rotate")]
            }
            return [DoctorFinding(.ok, "keys.next", "none pre-published (ssoctl keys rotate publishes one ahead of its use)")]
        }
        let file = ActivePrivateKeyCheck.finding(kid: next.kid, keys: keys, config: context.config, check: "keys.next",
                                                 algorithm: next.algorithm)
        guard file.status == .ok else { return [file] }
        return [DoctorFinding(.ok, "keys.next", "\(next.kid) published, signs from \(DoctorTime.format(next.activatesAt))")]
    }
}
