"""The first Scripts/run is clean: build_release drops the progress lines and
the one linker warning every executable repeats (the static
FoundationEssentials calls mktemp, and gold reports glibc's link-time
warning for it), and nothing else: other warnings and errors still show."""
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# As gold prints it for each of the 14 executables (from a real build).
FOUNDATION_MKTEMP = (
    "/opt/swift/usr/lib/swift_static/linux/libFoundationEssentials.a(Data+Writing.swift.o):_ThreadLocal.swift.o:"
    "function $s20FoundationEssentials19createTemporaryFile33_FC9EC52B075D2ACCFF86F1C9F84293BELL2at6inPath6prefix7"
    "options7variants5Int32V_SStSS_AA0Q5OrURLOSSAA4DataV14WritingOptionsVSSSgtKFAJ_SStSgSpys4Int8VGSgKXEfU_: "
    "warning: the use of `mktemp' is dangerous, better use `mkstemp' or `mkdtemp'")

KEPT = [
    "Building for production...",
    # The same warning for our own code, or another library: a real finding.
    "/work/gatehouse/.build/release/SSOCore.build/Files.swift.o:Files.swift:function $s7SSOCore4tempyyF: "
    "warning: the use of `mktemp' is dangerous, better use `mkstemp' or `mkdtemp'",
    "/usr/lib/x86_64-linux-gnu/libfoo.a(foo.o):foo.c:function foo: warning: the use of `mktemp' is dangerous, "
    "better use `mkstemp' or `mkdtemp'",
    # Another warning from FoundationEssentials itself.
    "/opt/swift/usr/lib/swift_static/linux/libFoundationEssentials.a(X.swift.o):X.swift.o:function f: "
    "warning: the use of `tempnam' is dangerous, better use `mkstemp'",
    "/work/gatehouse/Sources/ssoctl/SweepCommand.swift:12:13: warning: initialization of immutable value 'x' was never used",
    "/work/gatehouse/Sources/SSOCore/X.swift:1:1: error: cannot find 'y' in scope",
    "Build complete! (61.20s)",
]
DROPPED = ["[12/67] Compiling SSOCore Files.swift", FOUNDATION_MKTEMP, FOUNDATION_MKTEMP]


def filtered(lines):
    result = subprocess.run(["bash", "-c", f"source {ROOT}/Scripts/lib/common.sh; without_build_noise"],
                            input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_build_output_drops_exactly_the_foundation_mktemp_warning_and_the_progress_lines():
    mixed = [DROPPED[0], KEPT[0], DROPPED[1], *KEPT[1:4], DROPPED[2], *KEPT[4:]]
    assert filtered(mixed) == KEPT


def test_a_build_that_prints_only_noise_is_not_a_failure():
    assert filtered(DROPPED) == []
