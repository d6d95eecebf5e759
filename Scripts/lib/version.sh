# The version Scripts/run prints. Sourced, not run; needs GATEHOUSE_ROOT and
# BIN_DIR (common.sh, build_release).
#
# In a git checkout with a release tag, `git describe`: v1.2.0 is "1.2.0",
# four commits later "1.2.0-4-gabcdef0", "-dirty" with uncommitted changes.
# Otherwise the release the binaries were built as (`ssoctl --version`,
# Sources/SSOCore/Config/GatehouseVersion.swift, which a test keeps equal to
# the newest tag), with the commit when there is one: a checkout before the
# first tag, or a tarball without .git.
gatehouse_version() {
    local release described
    release="$("$BIN_DIR/ssoctl" --version 2>/dev/null)" || release="unknown"
    if ! in_own_git_checkout; then
        printf '%s\n' "$release"
    elif described="$(git -C "$GATEHOUSE_ROOT" describe --tags --match 'v[0-9]*' --dirty 2>/dev/null)"; then
        printf '%s\n' "${described#v}"
    else
        printf '%s (untagged commit %s)\n' "$release" "$(git -C "$GATEHOUSE_ROOT" describe --always --dirty 2>/dev/null)"
    fi
}

# True when GATEHOUSE_ROOT is the top of a git work tree git may read (not a
# tarball unpacked inside some other repository, nor one owned by another user).
in_own_git_checkout() {
    local top
    top="$(git -C "$GATEHOUSE_ROOT" rev-parse --show-toplevel 2>/dev/null)" || return 1
    [ "$(cd "$top" && pwd -P)" = "$(cd "$GATEHOUSE_ROOT" && pwd -P)" ]
}
