"""Scripts/bench's getting-in rows (issue 29): the sign-up and reset-request
posts against the bare scrypt rate, and the sign-up again on a second stack
whose mail sender cannot deliver, against the same with mail to the drop
folder ("sending never blocks a page").

Every sign-up is for an address of its own and every reset request for one
of many accounts, so the mail limit (AccountMailer: 5 mails per address an
hour) never spares a request its work. After each run the database is read
to show the work was done: accounts made, mails queued, mails sent."""
import os
import socket
import sqlite3
import sys
import time
import uuid

from bench_references import scrypt_cost

# Long enough and rare enough for PasswordPolicy.
PASSWORD = "bench-Signup-Password-7Kq2"
FORM = "&name=Bench+User&password=" + PASSWORD + "&lang=en"
# Reset requests go round these accounts in turn: at a few thousand
# requests a second for ten seconds, none gets a second mail in the run.
RESET_ACCOUNTS = 50_000
# Mails the stalled stack's outbox holds before its runs: the sender is
# stuck on the first of them, the pages queue behind thousands.
BACKLOG = 5_000
ROUNDS = 3


def _posts(stack, path, address, seconds, connections, threads, wrk, pool=0):
    result = wrk(stack.issuer + path, seconds, connections, threads, "journey-posts.lua",
                 env={"GATEHOUSE_BENCH_PATH": path, "GATEHOUSE_BENCH_ORIGIN": stack.issuer, "GATEHOUSE_BENCH_ADDRESS": address,
                      "GATEHOUSE_BENCH_POOL": str(pool), "GATEHOUSE_BENCH_THREADS": str(threads), "GATEHOUSE_BENCH_FORM": FORM})
    # Only the "Check your email" page counts: the figure is pages/s.
    result["rps"] = result["answered"] / result["seconds"]
    # Requests still in flight when wrk stopped finish before the database is read.
    time.sleep(2)
    return result


def _answers(result):
    refused = result["refused"]
    statuses = f" (statuses {result['refused_statuses'].strip()})" if refused else ""
    return f"{result['answered']} 'Check your email' pages (200), {refused} other answers{statuses}, {result['failed']} wrk errors"


def signup_run(stack, seconds, connections, wrk, tag):
    """POST /login/signup, every request a new address: one scrypt hash, an
    account, a link and its mail in one write unit. As the full login: two
    connections per core and three times the run length, because sign-ups
    still in flight when wrk stops are not counted."""
    connections, seconds = min(connections, 2 * (os.cpu_count() or 2)), 3 * seconds
    prefix = f"signup-{tag}-"
    cpu = login_cpu(stack)
    result = _posts(stack, "/login/signup", prefix + "%d-%d%%40bench.example", seconds, connections, 2, wrk)
    # Read after the requests in flight finished: every account made is in it.
    cpu = login_cpu(stack) - cpu
    pattern = prefix + "%@bench.example"
    made = stack.query("SELECT count(*) FROM users WHERE email LIKE ?", pattern)[0][0]
    queued, sent = stack.query("SELECT count(*), count(sent_at) FROM mail_outbox WHERE recipient LIKE ?", pattern)[0]
    return dict(result, made=made, queued=queued, sent=sent, login_cpu=cpu)


def login_cpu(stack):
    """CPU seconds the login processes (they answer the getting-in pages)
    have used so far, user and system, from /proc/PID/stat."""
    folder, total = os.path.join(stack.home, "run", "pids"), 0
    for name in os.listdir(folder):
        if name.startswith("login-") and name.endswith(".pid"):
            with open(f"/proc/{int(open(os.path.join(folder, name)).read())}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of the line)
    return total / os.sysconf("SC_CLK_TCK")


def pooled(runs):
    """The rounds' sign-ups as one figure: pages over the seconds of all
    rounds; the median round's latencies; everything counted, summed."""
    total = {key: sum(run[key] for run in runs)
             for key in ("answered", "refused", "failed", "made", "queued", "sent", "seconds", "login_cpu")}
    # What a sign-up costs whatever else the machine does: the login
    # processes' CPU over the accounts they made (scrypt, SQL, page, FastCGI).
    total["cpu_ms_per_signup"] = 1000 * total["login_cpu"] / max(1, total["made"])
    total["refused_statuses"] = " ".join(run["refused_statuses"].strip() for run in runs).strip()
    total["rps"] = total["answered"] / total["seconds"]
    for key in ("p50_ms", "p99_ms"):
        total[key] = sorted(run[key] for run in runs)[len(runs) // 2]
    total["rounds"] = [round(run["rps"], 2) for run in runs]
    total["checks"] = (f"{_answers(total)}; {total['made']} accounts made, {total['queued']} verification mails queued, "
                       f"{total['sent']} of them sent; the login processes' CPU per account made {total['cpu_ms_per_signup']:.0f} ms; "
                       f"sign-ups/s in each round {' / '.join(f'{r:.2f}' for r in total['rounds'])}")
    return total


def fill_accounts(stack, count, prefix="reset"):
    """`count` accounts PREFIX1@bench.example... with the demo user's password
    hash, in one SQL transaction (SQLite, the bench stack's database)."""
    database = sqlite3.connect(os.path.join(stack.home, "gatehouse.sqlite"), timeout=30, isolation_level=None)
    try:
        database.execute("BEGIN IMMEDIATE")
        password_hash = database.execute("SELECT password_hash FROM users LIMIT 1").fetchone()[0]
        database.execute("""WITH RECURSIVE series(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM series WHERE n < ?)
            INSERT INTO users (subject, email, name, password_hash, created_at)
            SELECT lower(hex(randomblob(16))), ? || n || '@bench.example', 'Bench ' || n, ?, ? FROM series""",
                         (count, prefix, password_hash, int(time.time())))
        database.execute("COMMIT")
    finally:
        database.close()


def reset_run(stack, seconds, connections, threads, wrk):
    """POST /login/forgot for existing accounts, each thread walking its own
    share of RESET_ACCOUNTS: a link and its mail in one write unit, no scrypt.
    At most ten connections: the reset zone's burst is 10 whatever its rate,
    and nginx reads the clock once per round of events, so the requests of
    one round count as arriving in the same millisecond; sixteen at once
    drew a few 429s even at 100000r/s. Ten keep both login processes busy."""
    if stack.database_url:
        raise RuntimeError("the reset row fills its accounts in SQLite")
    connections = min(connections, 10)
    fill_accounts(stack, RESET_ACCOUNTS)
    result = _posts(stack, "/login/forgot", "reset%d%%40bench.example", seconds, connections, threads, wrk, pool=RESET_ACCOUNTS)
    pattern = "reset%@bench.example"
    queued, addresses, most = stack.query("""SELECT coalesce(sum(c), 0), count(*), coalesce(max(c), 0) FROM
        (SELECT count(*) AS c FROM mail_outbox WHERE recipient LIKE ? GROUP BY recipient_key) AS per_address""", pattern)[0]
    result.update(queued=queued,
                  checks=f"{_answers(result)}; {queued} reset mails queued to {addresses} accounts, at most {most} to one")
    return result


def fill_backlog(stack, count):
    """`count` due messages in the outbox, copies of one real verification
    mail (one sign-up first), each to an address of its own."""
    response = stack.session().post(stack.issuer + "/login/signup", headers={"Origin": stack.issuer},
                                    data={"email": "backlog@bench.example", "name": "Backlog", "password": PASSWORD, "lang": "en"})
    if response.status_code != 200:
        raise RuntimeError(f"sign-up for the backlog answered {response.status_code}")
    database = sqlite3.connect(os.path.join(stack.home, "gatehouse.sqlite"), timeout=30, isolation_level=None)
    try:
        database.execute("BEGIN IMMEDIATE")
        kind, message, created = database.execute("SELECT kind, message, created_at FROM mail_outbox LIMIT 1").fetchone()
        database.execute("""WITH RECURSIVE series(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM series WHERE n < ?)
            INSERT INTO mail_outbox (kind, recipient, recipient_key, message, created_at, next_attempt_at)
            SELECT ?, 'backlog' || n || '@bench.example', 'backlog' || n || '@bench.example', ?, ?, ? FROM series""",
                         (count, kind, message, created, created))
        database.execute("COMMIT")
    finally:
        database.close()


def signup_rounds(drop, start_stack, seconds, connections, wrk):
    """Sign-ups on `drop` (mail to the drop folder, the sender working)
    against a second stack whose GATEHOUSE_SMTP_URL is a loopback listener
    that completes the TCP handshake and never says a word (the sender waits
    out SMTPTransport's connect timeout, 10 s, on every message: libcurl
    counts the greeting it never gets as connecting) and whose outbox holds
    BACKLOG undelivered messages. ROUNDS rounds, each the bare scrypt rate
    and then both stacks' sign-ups, which stack goes first alternating: the
    machine this runs on is shared, and its spare CPU can halve or double
    within minutes, so each figure is read against neighbours measured
    within the same minute or two, and the rounds are pooled.
    Returns (scrypt reference, drop-folder result, stalled result)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)  # never accepted: the kernel's handshake is all the sender gets
    stalled = start_stack({"GATEHOUSE_SMTP_URL": f"smtp://127.0.0.1:{listener.getsockname()[1]}"})
    try:
        if stalled.database_url:
            raise RuntimeError("the stalled stack's backlog is filled in SQLite")
        fill_backlog(stalled, BACKLOG)
        references, hash_cpu, runs = [], [], {"drop": [], "stalled": []}
        run = uuid.uuid4().hex[:6]
        for number in range(ROUNDS):
            rate, cpu = scrypt_cost(max(3, seconds // 2), 2)
            references.append(rate)
            hash_cpu.append(cpu)
            order = (("drop", drop), ("stalled", stalled))
            for name, stack in (order if number % 2 == 0 else order[::-1]):
                result = signup_run(stack, seconds, connections, wrk, f"{run}{name}{number}")
                runs[name].append(result)
                print(f"round {number + 1}: scrypt {references[-1]:.2f}/s, sign-up {name} {result['rps']:.2f}/s, "
                      f"p50 {result['p50_ms']:.0f} ms (load average {os.getloadavg()[0]:.2f})", file=sys.stderr)
        # The sender was stuck, not idle: it holds a claim on a batch and
        # has recorded a failed attempt every 10 s or so.
        unsent, sent, claimed, attempts = stalled.query("""SELECT count(*) - count(sent_at), count(sent_at),
            count(claimed_until), coalesce(sum(attempts), 0) FROM mail_outbox""")[0]
        delivered, blocked = pooled(runs["drop"]), pooled(runs["stalled"])
        blocked["checks"] += (f"; the stalled stack's outbox after the rounds: {unsent} unsent, {sent} sent, "
                              f"{claimed} claimed by the sender now, {attempts} failed attempts recorded")
        reference = {"rps": sum(references) / len(references), "rounds": [round(rate, 2) for rate in references]}
        reference["cpu_ms_per_hash"] = 1000 * sum(hash_cpu) / len(hash_cpu)
        reference["checks"] = (f"hashes/s in each round {' / '.join(f'{r:.2f}' for r in reference['rounds'])}, their mean shown; "
                               f"CPU per hash {reference['cpu_ms_per_hash']:.0f} ms")
        for result in (delivered, blocked):
            result["cpu_ratio"] = reference["cpu_ms_per_hash"] / result["cpu_ms_per_signup"]
            result["checks"] += f"; a hash's CPU over a sign-up's {result['cpu_ratio']:.2f}"
        return reference, delivered, blocked
    finally:
        stalled.remove()
        listener.close()


def journey_rows(stack, start_stack, seconds, connections, threads, wrk):
    """The rows: sign-ups/s and reset requests/s against the scrypt rate
    measured beside the sign-ups, and sign-ups/s with the sender stalled
    against the same with mail delivered."""
    scrypt, delivered, stalled = signup_rounds(stack, start_stack, seconds, connections, wrk)
    reset = reset_run(stack, seconds, connections, threads, wrk)
    return [("bare scrypt, both cores, beside the sign-ups (reference)", scrypt, None, None),
            ("POST /login/signup, mail to the drop folder (sign-ups/s)", delivered, delivered["rps"] / scrypt["rps"],
             "≥ 0.90 of scrypt rate"),
            ("POST /login/forgot, existing accounts (reset requests/s)", reset, reset["rps"] / scrypt["rps"],
             "≥ 0.90 of scrypt rate"),
            (f"POST /login/signup, SMTP stalled, {BACKLOG} mails waiting", stalled, stalled["rps"] / delivered["rps"],
             "≥ 0.90 of sign-up with mail delivered")]
