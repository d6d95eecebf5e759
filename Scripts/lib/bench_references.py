"""The physical references of Scripts/bench, measured in the same run as the
endpoints: what the hardware does with the same primitive and no server."""
import hashlib
import multiprocessing
import re
import subprocess
import time


def openssl_sign_rate(seconds, processes, algorithm="rsa2048"):
    """Signatures per second in `processes` processes (openssl speed):
    RSA-2048 (RS256) by default, or `ecdsap256` (ES256)."""
    parallel = ["-multi", str(processes)] if processes > 1 else []
    output = subprocess.run(["openssl", "speed", "-seconds", str(seconds)] + parallel + [algorithm],
                            capture_output=True, text=True, timeout=seconds * 4 + 60).stdout
    pattern = {"rsa2048": r"rsa 2048 bits", "ecdsap256": r"256 bits ecdsa \(nistp256\)"}[algorithm]
    match = re.search(pattern + r"\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)\s+[\d.]+", output)
    if not match:
        raise RuntimeError("cannot parse openssl speed output:\n" + output)
    return float(match.group(1))


def _scrypt_loop(seconds, counts):
    # hashlib.scrypt is OpenSSL's EVP_PBE_scrypt, the function the login
    # responder calls, with the parameters PasswordHasher stores (ln=13, r=8, p=10).
    started, cpu = time.monotonic(), time.process_time()
    deadline, done = started + seconds, 0
    while time.monotonic() < deadline:
        hashlib.scrypt(b"bench-password", salt=b"0123456789abcdef", n=1 << 13, r=8, p=10, maxmem=64 << 20, dklen=32)
        done += 1
    # The last hash ends after the deadline: divide by the time really spent.
    counts.put((done / (time.monotonic() - started), done, time.process_time() - cpu))


def scrypt_cost(seconds, processes):
    """(hashes per second on all cores, one process per core; CPU seconds per hash)."""
    counts = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=_scrypt_loop, args=(seconds, counts)) for _ in range(processes)]
    for worker in workers:
        worker.start()
    results = [counts.get(timeout=seconds + 60) for _ in workers]
    for worker in workers:
        worker.join()
    return sum(rate for rate, _, _ in results), sum(cpu for _, _, cpu in results) / max(1, sum(done for _, done, _ in results))


def scrypt_rate(seconds, processes):
    """Password hashes per second on all cores, one process per core."""
    return scrypt_cost(seconds, processes)[0]
