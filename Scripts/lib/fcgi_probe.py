"""Start-up time of a responder: spawn it the way spawn-fcgi and systemd do
(a listening unix socket on fd 0), send one FastCGI request at once, and time
the moment its answer is complete. The kernel queues the connection, so the
figure is exec + runtime load + config, keys and statements + one request."""
import os
import socket
import struct
import subprocess
import tempfile
import time

BEGIN_REQUEST, END_REQUEST, PARAMS, STDIN, STDOUT = 1, 3, 4, 5, 6


def _record(kind, body, request_id=1):
    return struct.pack(">BBHHBB", 1, kind, request_id, len(body), 0, 0) + body


def _length(value):
    return bytes([len(value)]) if len(value) < 128 else struct.pack(">I", len(value) | 0x80000000)


def _params(values):
    return b"".join(_length(k.encode()) + _length(v.encode()) + k.encode() + v.encode() for k, v in values.items())


def request_bytes(method, path, host, headers=None):
    params = {"REQUEST_METHOD": method, "REQUEST_URI": path, "SCRIPT_NAME": path.split("?")[0],
              "QUERY_STRING": path.partition("?")[2], "SERVER_NAME": host, "HTTP_HOST": host, "HTTPS": "on",
              "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "CONTENT_LENGTH": "0"}
    for name, value in (headers or {}).items():
        params["HTTP_" + name.upper().replace("-", "_")] = value
    return (_record(BEGIN_REQUEST, struct.pack(">HB5x", 1, 0)) + _record(PARAMS, _params(params)) + _record(PARAMS, b"")
            + _record(STDIN, b""))


def read_answer(connection, timeout):
    """Reads records until END_REQUEST; returns the STDOUT bytes."""
    connection.settimeout(timeout)
    buffer, output = b"", b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before END_REQUEST")
        buffer += chunk
        while len(buffer) >= 8:
            _, kind, _, length, padding, _ = struct.unpack(">BBHHBB", buffer[:8])
            if len(buffer) < 8 + length + padding:
                break
            body, buffer = buffer[8:8 + length], buffer[8 + length + padding:]
            if kind == STDOUT:
                output += body
            elif kind == END_REQUEST:
                return output


def ask(path_to_socket, request, timeout):
    """One request on a new connection (libfcgi closes it after each answer)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(path_to_socket)
        client.sendall(request)
        answer = read_answer(client, timeout)
    status = next((line for line in answer.split(b"\r\n") if line.lower().startswith(b"status:")), b"Status: 200")
    return status.decode(errors="replace")


def spawned(command, env, run):
    """Runs `command` with a fresh listening unix socket on fd 0, calls
    run(socket path), and always kills the process afterwards."""
    folder = tempfile.mkdtemp(prefix="gatehouse-probe-")
    path_to_socket = os.path.join(folder, "probe.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path_to_socket)
    listener.listen(16)
    process = subprocess.Popen(command, stdin=listener.fileno(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        return run(path_to_socket, process)
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        listener.close()
        os.unlink(path_to_socket)
        os.rmdir(folder)


def startup_ms(binary, env, method="GET", path="/", host="localhost", timeout=20):
    """Milliseconds from spawn (just before fork) to the first complete answer, and its status line."""
    started = time.perf_counter()

    def first_answer(path_to_socket, _):
        status = ask(path_to_socket, request_bytes(method, path, host), timeout)
        return (time.perf_counter() - started) * 1000, status
    return spawned([binary], env, first_answer)
