import IssuerStorage

/// The database: reachable, and the backend's own checks (schema version,
/// integrity, journal or replication) from IssuerStorage.maintenance.
struct StorageCheck: DoctorCheck {
    func findings(_ context: DoctorContext) -> [DoctorFinding] {
        guard let storage = context.storage else {
            return [DoctorFinding(.fail, "database.open", context.storageError ?? "not opened")]
        }
        return storage.maintenance.diagnose(quick: context.settings.quickIntegrityCheck)
    }
}
