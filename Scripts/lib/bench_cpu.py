"""Where the machine's CPU goes during one wrk run: `perf record -a`
(system-wide sampling) beside the run, then the samples by command. This is
what bounds the request-path figures: on a small machine wrk, nginx's TLS
and the responder share the same cores."""
import os
import shutil
import subprocess
import tempfile
import threading


def cpu_split(run_wrk, seconds):
    """Runs run_wrk() while perf samples every CPU; returns (wrk result,
    {command: share of all samples}) or (result, None) without perf."""
    if shutil.which("perf") is None:
        return run_wrk(), None
    with tempfile.TemporaryDirectory() as folder:
        data = os.path.join(folder, "perf.data")
        recorder = subprocess.Popen(["perf", "record", "-a", "-q", "-o", data, "--", "sleep", str(seconds)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        result = {}
        worker = threading.Thread(target=lambda: result.update(run_wrk()))
        worker.start()
        worker.join()
        recorder.wait(timeout=seconds + 60)
        report = subprocess.run(["perf", "report", "-i", data, "--sort", "comm", "--stdio"],
                                capture_output=True, text=True).stdout
    shares = {}
    for line in report.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith("%") and not line.startswith("#"):
            command = " ".join(parts[1:])
            group = "nginx" if command.startswith("nginx") else "wrk" if command.startswith("wrk") else command
            shares[group] = shares.get(group, 0.0) + float(parts[0].rstrip("%"))
    return result, shares


def summarize(shares, responder):
    """'wrk 31%, nginx 45%, api-a 19%, idle 2%, ...' (a process's kernel time counts as its own)."""
    if not shares:
        return "perf not available"
    named = {name: shares.get(name, 0.0) for name in ("wrk", "nginx", responder)}
    named["idle"] = shares.get("swapper", 0.0)
    named["kernel threads and other"] = max(0.0, 100.0 - sum(named.values()))
    return ", ".join(f"{name} {share:.0f}%" for name, share in named.items())
