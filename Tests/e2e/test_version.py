"""The version Gatehouse reports: `ssoctl --version` prints the committed
release (Sources/SSOCore/Config/GatehouseVersion.swift), which is the
newest release tag; `Scripts/run` prints `git describe` of its checkout
when a tag is there, and the release, with the commit if there is one,
when none is (before the first tag, or a tarball without .git)."""
import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RELEASE_FILE = ROOT / "Sources" / "SSOCore" / "Config" / "GatehouseVersion.swift"


def committed_release():
    match = re.search(r'static let release = "([0-9]+\.[0-9]+\.[0-9]+)"', RELEASE_FILE.read_text())
    assert match, f"{RELEASE_FILE} holds no MAJOR.MINOR.PATCH release"
    return match.group(1)


def git(directory, *args):
    return subprocess.run(["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-C", str(directory), *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def scripts_run_version(root):
    """What Scripts/run prints as the version of the checkout (or tarball) at `root`."""
    result = subprocess.run(["bash", "-c", f"source {ROOT}/Scripts/lib/version.sh; gatehouse_version"],
                            env=dict(os.environ, GATEHOUSE_ROOT=str(root)), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_ssoctl_prints_the_committed_release():
    result = subprocess.run([os.path.join(os.environ["BIN_DIR"], "ssoctl"), "--version"], capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (0, committed_release() + "\n"), result.stderr


def test_the_committed_release_is_the_newest_release_tag():
    listed = subprocess.run(["git", "-C", str(ROOT), "tag", "--list", "v[0-9]*", "--sort=-version:refname"],
                            capture_output=True, text=True)
    tags = listed.stdout.split() if listed.returncode == 0 else []  # a tarball has none
    # No tag yet: the first one is to be v + the committed release, on the commit that sets it.
    if tags:
        assert tags[0] == "v" + committed_release(), \
            f"the newest tag is {tags[0]}: set GatehouseVersion.release to {tags[0][1:]} (or tag v{committed_release()})"


def test_scripts_run_describes_a_tagged_checkout_and_falls_back_to_the_release(tmp_path):
    release = committed_release()
    tarball = tmp_path / "tarball"
    tarball.mkdir()
    assert scripts_run_version(tarball) == release

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git(checkout, "init", "-q")
    (checkout / "file").write_text("one\n")
    git(checkout, "add", "file")
    git(checkout, "commit", "-q", "-m", "one")
    assert scripts_run_version(checkout) == f"{release} (untagged commit {git(checkout, 'rev-parse', '--short', 'HEAD')})"
    # A tarball unpacked inside some other repository is still a tarball.
    (checkout / "unpacked").mkdir()
    assert scripts_run_version(checkout / "unpacked") == release

    git(checkout, "tag", "-a", "v9.8.7", "-m", "release 9.8.7")
    assert scripts_run_version(checkout) == "9.8.7"
    (checkout / "file").write_text("two\n")
    assert scripts_run_version(checkout) == "9.8.7-dirty"
    git(checkout, "commit", "-q", "-am", "two")
    assert scripts_run_version(checkout) == f"9.8.7-1-g{git(checkout, 'rev-parse', '--short', 'HEAD')}"


def test_scripts_run_prints_the_version(stack):
    assert f"\n  version         {scripts_run_version(ROOT)}\n" in stack.log()
