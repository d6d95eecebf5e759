"""Where the test servers may listen: below the kernel's ephemeral range.

A port the tests pick for a server must not be one the kernel may hand to
an outgoing connection in the meantime (every responder's PostgreSQL
connection, every client request takes one): probed free, it could be a
client socket's local port a moment later, and nginx's or PostgreSQL's bind
would fail with EADDRINUSE. Ports from 20000 up to the start of
net.ipv4.ip_local_port_range (32768 by default) are never handed out so.
"""
import random
import socket

LOWEST = 20000


def highest():
    """The last port below the ephemeral range (32767 when it cannot be read)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as ranges:
            first = int(ranges.read().split()[0])
    except (OSError, ValueError, IndexError):
        first = 32768
    return max(LOWEST + 1000, first - 1)


def free_port():
    """A port free on 127.0.0.1 now, below the ephemeral range."""
    for _ in range(200):
        port = random.randint(LOWEST, highest())
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port below the ephemeral range")
