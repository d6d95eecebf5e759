"""Scripts/bench output: the table, the per-responder memory and start-up
figures, and the chart."""
import os
import statistics
import subprocess
import tempfile
import time

from fcgi_probe import startup_ms

# A request each responder really answers (any status counts as an answer).
PROBES = {"hello-fcgi": "/bench/hello", "jwks": "/.well-known/jwks.json", "discovery": "/.well-known/openid-configuration",
          "authorize": "/authorize", "login": "/login", "token": "/token", "userinfo": "/userinfo", "logout": "/logout",
          "revoke": "/revoke", "introspect": "/introspect", "par": "/par", "api-a": "/api/data", "api-b": "/api/records",
          "ops": "/metrics"}


def _memory(pid):
    """(RSS, PSS) in MB: resident, and resident with shared pages divided among their mappers."""
    with open(f"/proc/{pid}/status") as handle:
        rss = next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))
    with open(f"/proc/{pid}/smaps_rollup") as handle:
        pss = next(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
    return rss / 1024, pss / 1024


def resources_table(stack):
    """Per responder, after the run's traffic: largest RSS and PSS of its
    pool, and the median start-up time (spawn to first answer) of three."""
    # Requests still in flight when wrk stopped (a password hash holds an
    # 8 MiB buffer while it runs) must finish before memory is read.
    time.sleep(2)
    folder = os.path.join(stack.home, "run", "pids")
    memory = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".pid") or name.startswith("nginx"):
            continue
        responder = name[:-4].rsplit("-", 1)[0]
        try:
            rss, pss = _memory(int(open(os.path.join(folder, name)).read().strip()))
        except (OSError, ValueError, StopIteration):
            continue
        old = memory.get(responder, (0, 0))
        memory[responder] = (max(old[0], rss), max(old[1], pss))
    table = []
    for responder, (rss, pss) in sorted(memory.items()):
        binary = os.path.join(os.environ["BIN_DIR"], responder)
        # The mail sender (gatehouse-mailer) answers no FastCGI request:
        # its memory counts, a start-up to a first answer it has not.
        times = [startup_ms(binary, stack.env, path=PROBES[responder])[0] for _ in range(3)] if responder in PROBES else None
        table.append({"responder": responder, "rss_mb": rss, "pss_mb": pss, "startup_ms": statistics.median(times) if times else None})
    return table


def print_table(rows, resources, threads, connections, seconds):
    print(f"\nGatehouse benchmark: wrk -t{threads} -c{connections} -d{seconds}s on loopback, TLS through nginx\n")
    print(f"| {'endpoint':<58} | {'req/s':>9} | {'p50 ms':>7} | {'p99 ms':>7} | {'ratio':>6} | target |")
    print(f"|{'-' * 60}|{'-' * 11}|{'-' * 9}|{'-' * 9}|{'-' * 8}|--------|")
    for name, result, ratio, target in rows:
        p50 = f"{result['p50_ms']:.2f}" if result.get("p50_ms") is not None else "-"
        p99 = f"{result['p99_ms']:.2f}" if result.get("p99_ms") is not None else "-"
        shown = "-" if ratio is None else f"{ratio:.2f}"
        # Below 10 a second (hashes, sign-ins, sign-ups) whole numbers hide a tenth of the figure.
        value = (f"{result['rps']:.1f} {result['unit']}" if "unit" in result
                 else f"{result['rps']:.2f}" if result["rps"] < 10 else f"{result['rps']:.0f}")
        print(f"| {name:<58} | {value:>9} | {p50:>7} | {p99:>7} | {shown:>6} | {target or '-'} |")
    for name, result, _, _ in rows:
        if result.get("cpu"):
            print(f"\nCPU during {name}: {result['cpu']}")
    for name, result, _, _ in rows:
        if result.get("checks"):
            print(f"\nChecked after {name}: {result['checks']}")
    if not resources:
        return
    print(f"\n| {'responder':<12} | {'RSS MB':>7} | {'PSS MB':>7} | {'start-up ms':>11} |")
    print(f"|{'-' * 14}|{'-' * 9}|{'-' * 9}|{'-' * 13}|")
    for row in resources:
        startup = "-" if row["startup_ms"] is None else f"{row['startup_ms']:.1f}"
        print(f"| {row['responder']:<12} | {row['rss_mb']:>7.1f} | {row['pss_mb']:>7.1f} | {startup:>11} |")


def chart(rows, path):
    """A bar chart: each endpoint's requests/s beside its reference's (gnuplot)."""
    references = {"hello": None, "nginx": None, "signing": None, "scrypt": None, "refresh": None}
    for name, result, _, _ in rows:
        if name.startswith("C hello-world"):
            references["hello"] = result["rps"]
        elif name.startswith("nginx return 200"):
            references["nginx"] = result["rps"]
        elif name == "POST /token refresh_token (rotation)":
            references["refresh"] = result["rps"]
        elif name.startswith("openssl speed rsa2048, one process"):
            references["signing"] = result["rps"]
        elif name.startswith("bare scrypt"):
            references["scrypt"] = result["rps"]
    lines = []
    for name, result, ratio, target in rows:
        if ratio is None or not target or "empty database" in target:
            continue
        # The reset request is 150-200 times the scrypt rate: on the same
        # axis it would flatten every other bar (the table has it).
        if ratio > 10:
            continue
        kind = next((kind for kind in ("hello", "nginx", "signing", "scrypt", "refresh") if kind in target), None)
        reference = references.get(kind)
        if reference is None:  # a row read against another row of its own (metrics: counted vs uncounted)
            continue
        label = name.split(" (")[0].replace("POST /token ", "token: ").replace('"', "'")
        lines.append(f'"{label}" {ratio:.3f} {float(target.split()[1]):.2f} {result["rps"]:.0f} {reference:.0f}')
    with tempfile.TemporaryDirectory() as folder:
        data = os.path.join(folder, "bench.dat")
        with open(data, "w") as handle:
            handle.write("\n".join(lines) + "\n")
        script = f"""
set terminal pngcairo noenhanced size 1100,560 font "DejaVu Sans,10"
set output "{os.path.abspath(path)}"
set title "Gatehouse: each endpoint's throughput as a share of its physical reference (same run)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:{max([1.25] + [float(line.split()[-4]) * 1.1 for line in lines]):.2f}]
set ylabel "ratio to reference (1.0 = the reference's req/s)"
set xtics rotate by -30 left
set key top right
set grid ytics
set bmargin 9
plot "{data}" using 2:xtic(1) title "measured / reference", "" using 3 title "target"
"""
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
