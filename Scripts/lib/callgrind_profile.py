"""Scripts/bench --profile RESPONDER: where one responder's instructions go,
per request, under callgrind (instruction counts: repeatable on a noisy
machine, unlike seconds). Two runs under valgrind — 1 request, then 1 + N —
so start-up cancels out of the per-request figure."""
import os
import re
import subprocess
import tempfile

from fcgi_probe import ask, request_bytes, spawned

# What each responder is asked.
REQUESTS = {"hello-fcgi": "/bench/hello", "api-a": "/api/data", "api-b": "/api/records", "jwks": "/.well-known/jwks.json",
            "discovery": "/.well-known/openid-configuration", "userinfo": "/userinfo"}


def _callgrind(binary, env, request, count, out):
    def run(path_to_socket, process):
        statuses = [ask(path_to_socket, request, 600) for _ in range(count)]
        process.terminate()  # callgrind writes its file on exit
        process.wait(timeout=120)
        return statuses
    statuses = spawned(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, binary], env, run)
    totals = re.search(r"^summary:\s+(\d+)", open(out).read(), re.MULTILINE) or \
        re.search(r"^totals:\s+(\d+)", open(out).read(), re.MULTILINE)
    return int(totals.group(1)), statuses


def profile(stack, responder, bearer, requests=500):
    headers = {"Authorization": "Bearer " + bearer} if responder.startswith("api-") or responder == "userinfo" else {}
    request = request_bytes("GET", REQUESTS[responder], "localhost", headers)
    binary = os.path.join(os.environ["BIN_DIR"], responder)
    with tempfile.TemporaryDirectory() as folder:
        base, statuses = _callgrind(binary, stack.env, request, 1, os.path.join(folder, "one.out"))
        full_path = os.path.join(folder, "many.out")
        total, statuses = _callgrind(binary, stack.env, request, 1 + requests, full_path)
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=no", full_path], capture_output=True,
                                   text=True).stdout
    functions = []
    for line in annotated.splitlines():
        match = re.match(r"^\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(.*)$", line)
        if match and len(functions) < 15:
            functions.append((int(match.group(1).replace(",", "")), float(match.group(2)), match.group(3)[:110]))
    return {"responder": responder, "status": sorted(set(statuses)), "startup_instructions": base,
            "instructions_per_request": (total - base) / requests, "top_functions": functions}


def print_profile(result):
    print(f"\n{result['responder']}: {result['instructions_per_request']:,.0f} instructions per request "
          f"(start-up and one request: {result['startup_instructions']:,}), answers {result['status']}")
    print("  top functions by own instructions over the whole run:")
    for count, share, name in result["top_functions"]:
        print(f"  {share:5.1f}%  {name}")
