"""Scripts/bench --database postgresql: the grants that write, measured on
SQLite and then on a PostgreSQL cluster of the run's own (Debian's binaries,
loopback, fsync and synchronous_commit on, shared_buffers sized as a
production server's would be), so the ratio compares the two backends on
the same machine in the same run.

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
CODE_EXCHANGE = "POST /token authorization_code"
REFRESH = "POST /token refresh_token (rotation)"


def backend_rows(stack, seconds, connections, threads, measure):
    """(name, result) for the writing paths on `stack`: /authorize issuing a
    code, the code exchange, the refresh grant, Native SSO."""
    http = stack.session()
    app = App(stack, http)
    app.exchange(app.sign_in())
    return measure(stack, http, app, seconds, connections, threads)


def compare(start_stack, measure, scale_rows, seconds, connections, threads, scale):
    """Rows: each path on SQLite, then on PostgreSQL with its ratio to
    SQLite; with `scale`, PostgreSQL's refresh again after a 1 M-token fill."""
    rows = []
    sqlite_stack = start_stack({"GATEHOUSE_WORKERS": WORKERS})
    try:
        sqlite = backend_rows(sqlite_stack, seconds, connections, threads, measure)
    finally:
        sqlite_stack.remove()
    rows += [(f"SQLite: {name}", result, None, None) for name, result in sqlite]
    # A quarter of this machine's memory is more than any of it needs; 1 GB
    # holds the filled database's hot pages as a production server would.
    cluster = pg_cluster.Cluster().init(["shared_buffers = '1GB'"]).start().create_database()
    try:
        stack = start_stack({"GATEHOUSE_DATABASE_URL": cluster.url, "GATEHOUSE_WORKERS": WORKERS})
        try:
            on_sqlite = dict(sqlite)
            postgresql = backend_rows(stack, seconds, connections, threads, measure)
            for name, result in postgresql:
                target = "≥ 0.70 of SQLite" if name in (CODE_EXCHANGE, REFRESH) else None
                rows.append((f"PostgreSQL: {name}", result, result["rps"] / on_sqlite[name]["rps"], target))
            if scale:
                rows += scale_rows(stack, dict(postgresql))
        finally:
            stack.remove()
    finally:
        cluster.remove()
    return rows
