"""Mail through the outbox and the supervised sender (gatehouse-mailer), to a
real SMTP server: aiosmtpd (PyPI), started here on loopback with a free port.

The module's stack submits to a server that requires STARTTLS and AUTH, with
the stack's own certificate (signed by its local CA, which the sender trusts
in the development layout), so every delivery here also proves TLS, the
trust rule and the login. The server answers each recipient as the test
says: 250, 451 for the first attempts (greylisting), or 550.

Also: the drop directory when GATEHOUSE_SMTP_URL is unset (the session's
shared stack), a stack restarted while its server is down, and two
PostgreSQL nodes whose senders race for the same 50 messages."""
import asyncio
import collections
import email
import email.policy
import email.utils
import json
import os
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

import pg_cluster
from listening_ports import free_port
from stack import Stack, wait_for

SMTP_USER, SMTP_PASSWORD = "gatehouse-mailer", "s3cret-smtp-pa55"


class Recorder:
    """aiosmtpd's handler: what each attempt brought, and scripted answers.

    `rcpt_replies[address]` and `data_replies[address]` are lists of replies
    used up one per attempt (then 250)."""

    def __init__(self, data_delay=0.0):
        self.lock = threading.Lock()
        self.rcpt_replies = {}
        self.data_replies = {}
        self.rcpt_attempts = collections.Counter()
        self.data_attempts = []  # (recipient, Message-ID, reply code)
        self.delivered = []  # (envelope from, [recipients], bytes, STARTTLS used, authenticated)
        self.data_delay = data_delay

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        with self.lock:
            self.rcpt_attempts[address] += 1
            scripted = self.rcpt_replies.get(address) or []
            reply = scripted.pop(0) if scripted else None
        if reply:
            return reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.data_delay:
            await asyncio.sleep(self.data_delay)
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        recipient = envelope.rcpt_tos[0]
        with self.lock:
            scripted = self.data_replies.get(recipient) or []
            reply = scripted.pop(0) if scripted else "250 Message accepted"
            self.data_attempts.append((recipient, message["Message-ID"], reply[:3]))
            if reply.startswith("250"):
                self.delivered.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content, session.ssl is not None,
                                       session.authenticated))
        return reply

    def delivered_to(self, address):
        with self.lock:
            return [entry for entry in self.delivered if entry[1] == [address]]


def authenticate(server, session, envelope, mechanism, auth_data):
    return AuthResult(success=auth_data.login == SMTP_USER.encode() and auth_data.password == SMTP_PASSWORD.encode())


def smtp_server(port, recorder, tls_home=None):
    """A real SMTP server on 127.0.0.1:port; with `tls_home`, STARTTLS (and
    AUTH after it) required, with that stack's certificate."""
    options = {}
    if tls_home:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(os.path.join(tls_home, "tls", "server.pem"), os.path.join(tls_home, "tls", "server.key"))
        options = dict(tls_context=context, require_starttls=True, authenticator=authenticate, auth_required=True,
                       auth_require_tls=True)
    controller = Controller(recorder, hostname="127.0.0.1", port=port, **options)
    controller.start()
    return controller


def queue_test_mail(stack, address):
    result = stack.ssoctl("mail", "test", address)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip())


def outbox_row(stack, message_id):
    rows = [row for row in stack.rows("mail_outbox") if row["id"] == message_id]
    assert len(rows) == 1, rows
    return rows[0]


def audit_events(stack, event):
    with open(os.path.join(stack.home, "log", "audit.log")) as handle:
        return [json.loads(line) for line in handle if f'"{event}"' in line]


def metric(stack, series):
    text = stack.session().get(stack.ops + "/metrics", timeout=10).text
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None


@pytest.fixture(scope="module")
def mail():
    """A stack whose sender submits to a STARTTLS + AUTH server, and that server."""
    port = free_port()
    stack = Stack(extra_env={"GATEHOUSE_SMTP_URL": f"smtp://{SMTP_USER}:{SMTP_PASSWORD}@127.0.0.1:{port}",
                             "GATEHOUSE_SWEEP_INTERVAL": "86400"}).start()
    recorder = Recorder()
    server = smtp_server(port, recorder, tls_home=stack.home)
    yield stack, recorder, port
    server.stop()
    stack.remove()


def test_ssoctl_mail_test_is_delivered_over_starttls_with_its_headers(mail):
    stack, recorder, port = mail
    assert f"mail            smtp://127.0.0.1:{port}" in stack.log(), "Scripts/run says where mail goes"
    started = time.time()
    message_id = queue_test_mail(stack, "alice@example.org")
    (mail_from, recipients, content, used_tls, authenticated), = wait_for(lambda: recorder.delivered_to("alice@example.org"),
                                                                          15, "the test message")
    assert time.time() - started < 10, "an idle sender looks every second"
    assert (mail_from, recipients) == ("no-reply@localhost", ["alice@example.org"])
    assert used_tls, "STARTTLS, verified against the stack's local CA"
    assert authenticated, "AUTH with GATEHOUSE_SMTP_URL's user and password"

    message = email.message_from_bytes(content, policy=email.policy.default)
    assert message["From"].addresses[0].addr_spec == "no-reply@localhost"
    assert message["To"].addresses[0].addr_spec == "alice@example.org"
    assert message["Subject"] == "Gatehouse test message"
    assert message["Message-ID"].endswith("@localhost>")
    assert abs(email.utils.parsedate_to_datetime(message["Date"]).timestamp() - started) < 60
    plain = message.get_body(preferencelist=("plain",))
    assert plain is not None and plain.get_content_type() == "text/plain"
    assert "test message from the Gatehouse issuer " + stack.issuer in plain.get_content()

    row = wait_for(lambda: (lambda r: r if r["sent_at"] else None)(outbox_row(stack, message_id)), 10, "the row marked sent")
    assert row["attempts"] == 1 and row["failed_at"] is None
    assert bytes(row["message"]).rstrip(b"\r\n") == content.rstrip(b"\r\n"), "the stored bytes are what went out"
    assert metric(stack, 'gatehouse_mail_sent_total{kind="test",result="sent"}') >= 1
    assert metric(stack, "gatehouse_mail_outbox_due") == 0

    # The password is in no log line, no audit line and no status output.
    status = stack.ssoctl("mail", "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["destination"] == f"smtp://127.0.0.1:{port}"
    logs = [stack.log(), status.stdout]
    for name in os.listdir(os.path.join(stack.home, "log")):
        with open(os.path.join(stack.home, "log", name), errors="replace") as handle:
            logs.append(handle.read())
    assert not any(SMTP_PASSWORD in text for text in logs)


def test_a_451_is_retried_within_30_seconds_and_delivered_once_as_the_same_message(mail):
    stack, recorder, _ = mail
    recorder.data_replies["greylisted@example.org"] = ["451 4.7.1 greylisted, try again later"] * 2
    started = time.time()
    message_id = queue_test_mail(stack, "greylisted@example.org")
    wait_for(lambda: recorder.delivered_to("greylisted@example.org"), 45, "delivery after two 451s")
    elapsed = time.time() - started
    attempts = [attempt for attempt in recorder.data_attempts if attempt[0] == "greylisted@example.org"]
    assert [code for _, _, code in attempts] == ["451", "451", "250"], attempts
    assert len({message_id for _, message_id, _ in attempts}) == 1, "every attempt is the same message (one Message-ID)"
    assert elapsed < 35, f"the first retries come within 30 s (took {elapsed:.1f} s)"
    time.sleep(3)
    assert len(recorder.delivered_to("greylisted@example.org")) == 1, "delivered once"
    row = outbox_row(stack, message_id)
    assert row["sent_at"] and row["attempts"] == 3
    assert metric(stack, 'gatehouse_mail_sent_total{kind="test",result="retry"}') >= 2


def test_a_550_fails_at_once_is_audited_counted_and_never_retried(mail):
    stack, recorder, _ = mail
    recorder.rcpt_replies["nobody@example.org"] = ["550 5.1.1 no such user"] * 10
    message_id = queue_test_mail(stack, "nobody@example.org")
    row = wait_for(lambda: (lambda r: r if r["failed_at"] else None)(outbox_row(stack, message_id)), 15, "the row marked failed")
    assert row["attempts"] == 1 and row["sent_at"] is None
    assert "550" in row["last_error"] and SMTP_PASSWORD not in row["last_error"]
    events = wait_for(lambda: [event for event in audit_events(stack, "mail_failed") if event["target"] == "nobody@example.org"],
                      5, "the mail_failed audit line")
    assert len(events) == 1, events
    event = events[0]
    assert event["ip"] is None and event["user"] is None and event["time"]
    assert "550" in event["reason"] and event["reason"].startswith("test: ")
    assert SMTP_PASSWORD not in json.dumps(event) and "test message from" not in json.dumps(event), "never credentials or the body"
    assert metric(stack, 'gatehouse_mail_sent_total{kind="test",result="failed"}') == 1
    time.sleep(8)
    assert recorder.rcpt_attempts["nobody@example.org"] == 1, "a 5xx is never retried"


def test_bad_addresses_and_header_injection_are_refused_by_ssoctl(mail):
    stack, recorder, _ = mail
    before = len(stack.rows("mail_outbox"))
    for address in ("not-an-address", "alice@example.org\r\nBcc: evil@example.net", "alice@example.org\nBcc: evil@example.net",
                    "<alice@example.org>", "alice@exa mple.org", "alice@example.org>", ""):
        result = stack.ssoctl("mail", "test", address)
        assert result.returncode == 1, (address, result.stdout, result.stderr)
        assert "not a mail address" in result.stderr, result.stderr
        assert result.stdout == ""
    assert len(stack.rows("mail_outbox")) == before, "nothing queued"
    time.sleep(2)
    assert not any("evil@example.net" in (entry[2] or b"").decode(errors="replace") for entry in recorder.delivered)
    assert not any("evil" in address for address in recorder.rcpt_attempts)


def test_the_drop_directory_is_used_without_an_smtp_url(stack):
    assert f"mail            written to {stack.home}/mail/   (GATEHOUSE_SMTP_URL unset)" in stack.log()
    message_id = queue_test_mail(stack, "dropped@example.org")
    directory = os.path.join(stack.home, "mail")
    files = wait_for(lambda: [name for name in (os.listdir(directory) if os.path.isdir(directory) else []) if name.endswith(".eml")
                              and b"dropped@example.org" in open(os.path.join(directory, name), "rb").read()], 15, "the .eml file")
    assert len(files) == 1, files
    path = os.path.join(directory, files[0])
    assert os.stat(path).st_mode & 0o777 == 0o600
    with open(path, "rb") as handle:
        content = handle.read()
    message = email.message_from_bytes(content, policy=email.policy.default)
    assert message["To"].addresses[0].addr_spec == "dropped@example.org"
    assert files[0].endswith(message["Message-ID"].strip("<>") + ".eml")
    assert message.get_body(preferencelist=("plain",)) is not None
    row = wait_for(lambda: (lambda r: r if r["sent_at"] else None)(outbox_row(stack, message_id)), 10, "the row marked sent")
    assert bytes(row["message"]) == content, "the file holds the stored bytes"
    status = json.loads(stack.ssoctl("mail", "status", "--json").stdout)
    assert status["destination"] == f"written to {stack.home}/mail/ (GATEHOUSE_SMTP_URL unset)"


def test_mail_queued_while_the_server_is_down_is_delivered_after_a_restart_of_the_stack():
    port = free_port()
    stack = Stack(extra_env={"GATEHOUSE_SMTP_URL": f"smtp://127.0.0.1:{port}"}).start()
    recorder, server = Recorder(), None
    try:
        message_id = queue_test_mail(stack, "patient@example.org")
        row = wait_for(lambda: (lambda r: r if r["attempts"] >= 1 else None)(outbox_row(stack, message_id)), 15, "a failed attempt")
        assert row["sent_at"] is None and row["failed_at"] is None and row["last_error"], row
        assert stack.stop() == 0
        assert not [command for _, command in stack.processes() if "gatehouse-mailer" in command], "the sender stopped with the stack"
        stack.start()
        server = smtp_server(port, recorder)
        (mail_from, recipients, content, _, _), = wait_for(lambda: recorder.delivered_to("patient@example.org"), 60,
                                                           "delivery after the restart")
        message = email.message_from_bytes(content, policy=email.policy.default)
        stored = email.message_from_bytes(bytes(row["message"]), policy=email.policy.default)
        assert message["Message-ID"] == stored["Message-ID"], "the message queued before the restart"
        time.sleep(3)
        assert len(recorder.delivered_to("patient@example.org")) == 1
        assert outbox_row(stack, message_id)["sent_at"]
    finally:
        if server:
            server.stop()
        stack.remove()


@pytest.mark.skipif(bool(os.environ.get("GATEHOUSE_E2E_POSTGRES_SERVER")),
                    reason="PostgreSQL by construction: the SQLite pass already runs it on a cluster of its own")
def test_two_postgresql_nodes_send_each_of_fifty_messages_exactly_once():
    cluster = pg_cluster.new_cluster()
    port = free_port()
    recorder = Recorder(data_delay=0.1)  # slow enough that the two senders' batches overlap
    server = smtp_server(port, recorder)
    env = {"GATEHOUSE_DATABASE_URL": cluster.url, "GATEHOUSE_SMTP_URL": f"smtp://127.0.0.1:{port}"}
    first = second = None
    try:
        first = Stack(extra_env=env).start()
        second = first.another_node(env)

        addresses = [f"user{index}@example.org" for index in range(50)]
        with ThreadPoolExecutor(8) as pool:
            ids = list(pool.map(lambda pair: queue_test_mail(pair[1], pair[0]),
                                [(address, first if index % 2 else second) for index, address in enumerate(addresses)]))
        assert len(set(ids)) == 50
        wait_for(lambda: len(recorder.delivered) >= 50, 90, "fifty deliveries")
        time.sleep(5)  # a duplicate would arrive now
        message_ids = collections.Counter(email.message_from_bytes(content)["Message-ID"]
                                          for _, _, content, _, _ in recorder.delivered)
        assert len(message_ids) == 50 and set(message_ids.values()) == {1}, message_ids.most_common(3)
        assert sorted(recipients[0] for _, recipients, _, _, _ in recorder.delivered) == sorted(addresses)
        rows = [row for row in first.rows("mail_outbox") if row["id"] in ids]
        assert all(row["sent_at"] and row["attempts"] == 1 for row in rows), rows[:3]
        claimers = {row["claimed_by"] for row in rows}
        assert len(claimers) == 2, f"both nodes' senders took part: {collections.Counter(row['claimed_by'] for row in rows)}"
    finally:
        server.stop()
        for node in (second, first):
            if node:
                node.remove()
        cluster.remove()
