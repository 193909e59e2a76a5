"""A throwaway PostgreSQL cluster for the benches and the chaos script: `initdb` into a temporary
folder (as nobody when run as root, which PostgreSQL refuses to run as), trust authentication on
127.0.0.1 only, a free port, and the folder removed at the end. Python 3 standard library only.
"""

import glob
import os
import shutil
import socket
import subprocess
import tempfile


class Cluster:
    """A throwaway PostgreSQL cluster: initdb into a temporary folder (as nobody when root, which
    PostgreSQL refuses to run as), trust on 127.0.0.1, a free port; removed by `remove`."""

    def __init__(self):
        versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not versions:
            raise ClusterError("PostgreSQL's initdb is not installed (apt-get install -y postgresql)")
        self.bin = os.path.dirname(versions[-1])
        self.folder = tempfile.mkdtemp(prefix="offpeak-pg-")
        self.data = os.path.join(self.folder, "data")
        self.user = "offpeak"
        self.as_nobody = os.geteuid() == 0
        if self.as_nobody:
            os.chown(self.folder, 65534, 65534)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._run("initdb", "-D", self.data, "-U", self.user, "-A", "trust", "--no-sync")
        self.start()

    def _run(self, program, *arguments):
        user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if self.as_nobody else []
        result = subprocess.run(
            [*user, os.path.join(self.bin, program), *arguments], cwd=self.folder, capture_output=True,
            text=True, env={**os.environ, "LC_ALL": "C", "HOME": self.folder}, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise ClusterError(f"{program} failed: {result.stdout}{result.stderr}")

    def start(self):
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c max_connections=100"
        self._run("pg_ctl", "start", "-D", self.data, "-w", "-t", "60", "-l",
                  os.path.join(self.folder, "log"), "-o", options)

    def crash(self):
        """Stops the server as a crash does: every connection dropped, no checkpoint."""
        self._run("pg_ctl", "stop", "-D", self.data, "-m", "immediate", "-w")

    def database(self, name):
        self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, "-d", "postgres",
                  "-v", "ON_ERROR_STOP=1", "-c", f"CREATE DATABASE {name}")
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{name}?sslmode=disable"

    def remove(self):
        subprocess.run(
            [*(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if self.as_nobody else []),
             os.path.join(self.bin, "pg_ctl"), "stop", "-D", self.data, "-m", "immediate", "-w"],
            cwd=self.folder, capture_output=True, stdin=subprocess.DEVNULL)
        shutil.rmtree(self.folder, ignore_errors=True)


class ClusterError(Exception):
    pass
