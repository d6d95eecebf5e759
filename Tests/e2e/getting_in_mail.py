"""Shared by the getting-in e2e files: a real SMTP server (aiosmtpd, PyPI)
on loopback that keeps every message delivered to it, and a stack with
GATEHOUSE_SIGNUP=open whose mail sender (gatehouse-mailer) submits to it.

Loopback needs no STARTTLS (the contract's "Mail"), so the server is plain;
test_mail_delivery.py covers STARTTLS and AUTH."""
import email
import email.policy
import json
import os
import re
import secrets
import threading
import time

import pytest
from aiosmtpd.controller import Controller

from listening_ports import free_port
from stack import Stack


class Inbox:
    """aiosmtpd's handler: every message accepted, kept by recipient."""

    def __init__(self):
        self.lock = threading.Lock()
        self.messages = []  # (envelope from, [recipients], parsed message, raw bytes)

    async def handle_DATA(self, server, session, envelope):
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.lock:
            self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), parsed, envelope.content))
        return "250 Message accepted"

    def to(self, address):
        with self.lock:
            return [entry for entry in self.messages if address in entry[1]]

    def wait(self, address, count=1, timeout=30):
        """The messages delivered to `address` once there are `count` of them."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            delivered = self.to(address)
            if len(delivered) >= count:
                return delivered
            time.sleep(0.2)
        raise AssertionError(f"{count} message(s) to {address} expected within {timeout} s, got {len(self.to(address))}")


def start_journeys_stack(extra_env=None):
    """(stack, inbox, server): sign-up open, the sender on a local SMTP
    server, the form zones wide open (their defaults are checked apart)."""
    port = free_port()
    inbox = Inbox()
    server = Controller(inbox, hostname="127.0.0.1", port=port)
    server.start()
    env = {"GATEHOUSE_SIGNUP": "open", "GATEHOUSE_SMTP_URL": f"smtp://127.0.0.1:{port}", "GATEHOUSE_SWEEP_INTERVAL": "86400",
           "GATEHOUSE_LOGIN_RATE": "1000r/s", "GATEHOUSE_TOKEN_RATE": "1000r/s", "GATEHOUSE_AUTHORIZE_RATE": "1000r/s",
           "GATEHOUSE_SIGNUP_RATE": "1000r/s", "GATEHOUSE_RESET_RATE": "1000r/s", **(extra_env or {})}
    stack = Stack(extra_env=env).start()
    return stack, inbox, server


@pytest.fixture(scope="module")
def journeys():
    """The module's (stack, inbox)."""
    stack, inbox, server = start_journeys_stack()
    yield stack, inbox
    server.stop()
    stack.remove()


def text_part(message):
    return message.get_body(preferencelist=("plain",)).get_content()


def html_part(message):
    return message.get_body(preferencelist=("html",)).get_content()


def link(message, stack, path):
    """The one link to `path` in the mail's text part: a complete https URL on the issuer."""
    found = re.findall(re.escape(stack.issuer + path) + r"\?token=[A-Za-z0-9_-]+", text_part(message))
    assert len(found) == 1, text_part(message)
    assert found[0] in html_part(message), "the HTML part carries the same link"
    return found[0]


def token_of(url):
    return url.split("token=", 1)[1]


def fresh_address(prefix="gi"):
    return f"{prefix}-{secrets.token_hex(5)}@example.com"


def strong_password():
    return "pw-" + secrets.token_urlsafe(12)


def new_user(stack, email=None, prefix="reset"):
    """An account `ssoctl user add` makes (verified): (email, password)."""
    email, password = email or fresh_address(prefix), strong_password()
    added = stack.ssoctl("user", "add", email, "--name", "Journey Test", "--password-stdin", input=password + "\n")
    assert added.returncode == 0, added.stderr
    return email, password


def user_entry(stack, email):
    """`ssoctl user list --json`'s entry for `email` (ASCII case folded), or None."""
    users = json.loads(stack.ssoctl("user", "list", "--json").stdout)
    found = [user for user in users if user["email"].lower() == email.lower()]
    return found[0] if found else None


def audit(stack, event):
    """The audit log's `event` lines, parsed."""
    with open(os.path.join(stack.home, "log", "audit.log")) as handle:
        return [json.loads(line) for line in handle if f'"event":"{event}"' in line.replace(" ", "")]
