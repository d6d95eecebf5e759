"""Scripts/bench --database postgresql: the grants that write, measured on
SQLite and on a PostgreSQL cluster of the run's own (Debian's binaries,
loopback, fsync and synchronous_commit on, shared_buffers sized as a
production server's would be), so the ratio compares the two backends on
the same machine in the same run.

Both stacks run side by side (the idle one costs nothing) and are measured
in turn, ROUNDS times, each figure the best of its rounds: this machine's
throughput drifts by ±10% over minutes, and alternating keeps a slow
minute from landing on one backend only.

Both run WORKERS processes per responder (GATEHOUSE_WORKERS, default 4
here, 2 slots per core on the benchmark machine): on PostgreSQL every
request that writes waits for its commit's WAL flush on the server, and a
single-threaded responder does nothing else meanwhile, so two slots per
core keep the cores busy; SQLite loses nothing by the same count."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "e2e"))
import pg_cluster  # noqa: E402
from oidc_flow import App  # noqa: E402

WORKERS = os.environ.get("GATEHOUSE_WORKERS", "4")
ROUNDS = 2
CODE_EXCHANGE = "POST /token authorization_code"
REFRESH = "POST /token refresh_token (rotation)"


def signed_in(stack):
    """A cookie jar with an SSO session on `stack`, and its app."""
    http = stack.session()
    app = App(stack, http)
    app.exchange(app.sign_in())
    return http, app


def best(runs):
    """name → the result with the most requests/s among `runs` (lists of (name, result))."""
    chosen = {}
    for run in runs:
        for name, result in run:
            if name not in chosen or result["rps"] > chosen[name]["rps"]:
                chosen[name] = result
    return chosen


def compare(start_stack, measure, scale_rows, seconds, connections, threads, scale):
    """Rows: each path on SQLite, then on PostgreSQL with its ratio to
    SQLite; with `scale`, PostgreSQL's refresh again after a 1 M-token fill."""
    # A quarter of this machine's memory is more than any of it needs; 1 GB
    # holds the filled database's hot pages as a production server would.
    cluster = pg_cluster.Cluster().init(["shared_buffers = '1GB'"]).start().create_database()
    stacks = []
    try:
        stacks.append(start_stack({"GATEHOUSE_WORKERS": WORKERS}))
        stacks.append(start_stack({"GATEHOUSE_DATABASE_URL": cluster.url, "GATEHOUSE_WORKERS": WORKERS}))
        sessions = [signed_in(stack) for stack in stacks]
        runs = ([], [])
        for _ in range(ROUNDS):
            for index, stack in enumerate(stacks):
                http, app = sessions[index]
                runs[index].append(measure(stack, http, app, seconds, connections, threads))
        order = [name for name, _ in runs[0][0]]
        sqlite, postgresql = best(runs[0]), best(runs[1])
        rows = [(f"SQLite: {name}", sqlite[name], None, None) for name in order]
        for name in order:
            target = "≥ 0.70 of SQLite" if name in (CODE_EXCHANGE, REFRESH) else None
            rows.append((f"PostgreSQL: {name}", postgresql[name], postgresql[name]["rps"] / sqlite[name]["rps"], target))
        if scale:
            stacks[0].remove()
            rows += scale_rows(stacks[1], postgresql)
        return rows
    finally:
        for stack in stacks:
            stack.remove()
        cluster.remove()
