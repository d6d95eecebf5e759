"""Private PostgreSQL clusters for the tests: Debian's own binaries
(/usr/lib/postgresql/<version>/bin, not on PATH), a directory and a
loopback port of their own, a socket directory inside that directory, never
the system service. initdb refuses to run as root, so the cluster belongs
to the `postgres` user the Debian package creates.

Also a command line for Scripts/test (the Swift tests get a database URL):
    python3 pg_cluster.py start DIR   prints the URL of a new cluster in DIR
    python3 pg_cluster.py stop DIR    stops it and removes DIR
"""
import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time

from listening_ports import free_port

DATABASE = "gatehouse"
ROLE = "gatehouse"


def bin_dir():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda path: int(path.split("/")[-2]))
    if not found:
        raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql (Debian package postgresql)")
    return found[-1]




def as_postgres(*command, check=True, timeout=60):
    """Runs a server binary as the postgres user (root drops to it)."""
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run(prefix + list(command), capture_output=True, text=True, check=check, timeout=timeout)


class Cluster:
    """One PostgreSQL server process over one data directory."""

    def __init__(self, directory=None, port=None):
        self.owns_directory = directory is None
        self.directory = directory or tempfile.mkdtemp(prefix="gatehouse-pg-")
        self.data = os.path.join(self.directory, "data")
        self.sockets = os.path.join(self.directory, "sockets")
        self.port = port or free_port()
        self.log = os.path.join(self.directory, "postgresql.log")

    @property
    def url(self):
        return f"postgresql://{ROLE}@127.0.0.1:{self.port}/{DATABASE}"

    def _own(self):
        if os.geteuid() == 0:
            postgres = pwd.getpwnam("postgres")
            os.chmod(self.directory, 0o755)
            for path in (self.directory, self.sockets):
                os.makedirs(path, exist_ok=True)
                os.chown(path, postgres.pw_uid, postgres.pw_gid)
        else:
            os.makedirs(self.sockets, exist_ok=True)

    def init(self, settings=()):
        """initdb with trust on loopback (a test cluster) and page checksums (as
        DEPLOY.md asks of a production one), then settings."""
        self._own()
        as_postgres(os.path.join(bin_dir(), "initdb"), "-D", self.data, "-U", "postgres", "--auth=trust",
                    "--encoding=UTF8", "--locale=C.UTF-8", "--data-checksums")
        self.configure(settings)
        return self

    def configure(self, settings):
        with open(os.path.join(self.data, "postgresql.auto.conf"), "a") as conf:
            for line in (f"port = {self.port}", "listen_addresses = '127.0.0.1'", f"unix_socket_directories = '{self.sockets}'",
                         "fsync = on", "max_connections = 200", *settings):
                conf.write(line + "\n")

    def start(self):
        as_postgres(os.path.join(bin_dir(), "pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-t", "60", "start")
        return self

    def create_database(self):
        self.psql("postgres", f"CREATE ROLE {ROLE} LOGIN REPLICATION CREATEDB")
        self.psql("postgres", f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
        return self

    def psql(self, database, sql, user="postgres"):
        result = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
                                 "-U", user, "-d", database, "-c", sql], capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"psql failed: {result.stderr}")
        return result.stdout.strip()

    def query(self, sql):
        """As the Gatehouse role, in the Gatehouse database."""
        return self.psql(DATABASE, sql, user=ROLE)

    def stop(self, mode="fast"):
        as_postgres(os.path.join(bin_dir(), "pg_ctl"), "-D", self.data, "-m", mode, "-w", "stop", check=False)

    def kill(self):
        """SIGKILL to the postmaster (its backends exit when they notice)."""
        with open(os.path.join(self.data, "postmaster.pid")) as pid_file:
            pid = int(pid_file.readline())
        os.kill(pid, 9)
        deadline = time.time() + 10
        while time.time() < deadline and os.path.exists(f"/proc/{pid}"):
            time.sleep(0.05)

    def remove(self):
        self.stop(mode="immediate")
        if self.owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)


    def standby(self):
        """A streaming standby of this cluster (pg_basebackup -R), started;
        then this primary waits for it on every commit (synchronous_commit
        on, synchronous_standby_names '*'), so nothing acknowledged is lost
        when the primary dies."""
        standby = Cluster()
        standby._own()
        as_postgres(os.path.join(bin_dir(), "pg_basebackup"), "-D", standby.data, "-h", "127.0.0.1", "-p", str(self.port),
                    "-U", "postgres", "-X", "stream", "-R", "--checkpoint=fast", timeout=120)
        standby.configure([])
        standby.start()
        self.psql("postgres", "ALTER SYSTEM SET synchronous_standby_names = '*'")
        self.psql("postgres", "SELECT pg_reload_conf()")
        return standby

    def promote(self):
        as_postgres(os.path.join(bin_dir(), "pg_ctl"), "-D", self.data, "-w", "-t", "60", "promote")


def new_cluster():
    return Cluster().init().start().create_database()


if __name__ == "__main__":
    action, directory = sys.argv[1], sys.argv[2]
    if action == "start":
        os.makedirs(directory, exist_ok=True)
        print(Cluster(directory).init().start().create_database().url)
    elif action == "stop":
        cluster = Cluster(directory, port=1)
        cluster.stop(mode="immediate")
        shutil.rmtree(directory, ignore_errors=True)
    else:
        sys.exit(f"usage: {sys.argv[0]} start|stop DIR")
