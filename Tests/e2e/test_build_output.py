"""The first Scripts/run is clean: build_release drops the progress lines and
the one linker warning every executable repeats (the static
FoundationEssentials calls mktemp, and gold reports glibc's link-time
warning for it), and nothing else: other warnings and errors still show.
Yet it is not silent: into a pipe or a log, it shows the build's progress
at each tenth, as it happens."""
import os
import subprocess
import threading
import time
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


# A stand-in for `swift build` that stops half way until the test says go on,
# so the test sees whether progress reaches a pipe while the build still runs.
FAKE_SWIFT = """#!/bin/sh
case "$*" in *--show-bin-path*) echo "$FAKE_BIN"; exit 0 ;; esac
echo '[1/1] Planning build'
echo 'Building for production...'
for step in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do echo "[$step/40] Compiling SSOCore File$step.swift"; done
i=0; while [ ! -e "$FAKE_BIN/go-on" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
for step in 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40; do echo "[$step/40] Compiling SSOCore File$step.swift"; done
echo 'Build complete! (1.00s)'
"""


def test_build_release_shows_its_progress_in_a_pipe_while_it_builds(tmp_path):
    (tmp_path / "swift").write_text(FAKE_SWIFT)
    (tmp_path / "swift").chmod(0o755)
    build = subprocess.Popen(["bash", "-c", f"source {ROOT}/Scripts/lib/common.sh; PATH={tmp_path}:$PATH; build_release; "
                              "echo \"bin $BIN_DIR\" >&2"],
                             env=dict(os.environ, FAKE_BIN=str(tmp_path)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    seen = []

    def read_lines():
        for line in build.stderr:
            seen.append(line.rstrip("\n"))

    reader = threading.Thread(target=read_lines, daemon=True)
    reader.start()
    deadline = time.time() + 20
    while "gatehouse: building: 50% (step 20 of 40)" not in seen:
        assert time.time() < deadline and build.poll() is None, f"no progress while the build ran: {seen}"
        time.sleep(0.1)
    (tmp_path / "go-on").touch()
    assert build.wait(timeout=30) == 0, seen
    reader.join(timeout=10)
    assert seen == ["Building for production..."] + [f"gatehouse: building: {percent}% (step {percent * 40 // 100} of 40)"
                                                     for percent in range(10, 101, 10)] \
        + ["Build complete! (1.00s)", f"bin {tmp_path}"], seen
