import IssuerStorage
/// One of `ssoctl doctor`'s checks: looks, never changes anything, and
/// reports one finding (a few for checks that cover several files).
public protocol DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding]
}
