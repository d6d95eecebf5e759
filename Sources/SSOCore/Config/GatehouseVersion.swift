/// The release these sources are: `ssoctl --version` prints it, and
/// `Scripts/run` prints it where `git describe` cannot say more (a tarball
/// without .git, a checkout without a release tag). A release is tagged
/// `v` + this number on the commit that sets it; Tests/e2e/test_version.py
/// keeps it equal to the newest such tag.
public enum GatehouseVersion {
    public static let release = "0.1.0"
}
