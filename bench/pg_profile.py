#!/usr/bin/env python3
"""Where a call's time goes on the PostgreSQL store: one backlog run (as scale_bench.py's) against a
throwaway cluster with pg_stat_statements, then each statement's count, execution and planning time
per call, and the CPU per call of offpeak, offpeak-sim and the server process serving offpeak.

    python3 bench/pg_profile.py                          # 20,000 requests, the first 1,500 calls
    python3 bench/pg_profile.py --requests 100000 --calls 3000
    python3 bench/pg_profile.py --sqlite                 # the same run on SQLite: CPU and calls/s only

Needs a release build (`make release`, or --bin) and PostgreSQL's contrib (Debian's `postgresql`
has it). pg_stat_statements costs the server some time per statement: compare calls/s with
`--no-statements`, which leaves it out.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

import pgcluster  # noqa: E402
import scale_bench  # noqa: E402
from sim import Sim  # noqa: E402


class ProfiledCluster(pgcluster.Cluster):
    def __init__(self, statements: bool):
        self.statements = statements
        super().__init__()

    def start(self):
        extra = (" -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
                 " -c pg_stat_statements.track_planning=on") if self.statements else ""
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c max_connections=100"
                   + extra)
        self._run("pg_ctl", "start", "-D", self.data, "-w", "-t", "60", "-l",
                  os.path.join(self.folder, "log"), "-o", options)

    def backend_seconds(self) -> float:
        """CPU time of the server processes serving a client (not the background workers)."""
        master = open(os.path.join(self.data, "postmaster.pid")).readline().strip()
        children = subprocess.run(["pgrep", "-P", master], capture_output=True, text=True).stdout.split()
        total = 0.0
        for pid in children:
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].startswith(b"postgres: offpeak "):
                    total += scale_bench.cpu_seconds(int(pid))
            except (OSError, IndexError):
                pass  # ended meanwhile
        return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, default=scale_bench.ROOT / ".build" / "release")
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--calls", type=int, default=1_500)
    parser.add_argument("--sqlite", action="store_true", help="the run on SQLite instead")
    parser.add_argument("--no-statements", action="store_true", help="no pg_stat_statements")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    if args.calls * 8 >= args.requests:
        parser.error("--calls must stop the run before it ends: fewer than --requests / 8")
    cluster = None if args.sqlite else ProfiledCluster(not args.no_statements)
    scratch = Path(subprocess.run(["mktemp", "-d"], capture_output=True, text=True).stdout.strip())
    try:
        url = cluster.database("profile") if cluster else None
        psql = lambda sql: subprocess.run(  # noqa: E731
            ["psql", url.split("?")[0], "-X", "-A", "-F", " | ", "-c", sql], capture_output=True, text=True,
            check=True).stdout
        if cluster and cluster.statements:
            psql("CREATE EXTENSION pg_stat_statements")
        job, lines = scale_bench.submission_lines(args.requests, scratch / "lines.jsonl")
        workspace = scratch / "workspace"
        (workspace / "jobs").mkdir(parents=True)
        with Sim(args.bin / "offpeak-sim", [], scratch, "profile") as sim:
            (workspace / "offpeak.yaml").write_text(
                f"provider: sim\nbase_url: {sim.url}\n" + (f"store: {url}\n" if url else ""))
            (workspace / "jobs" / "inbox.yaml").write_text(json.dumps(job) + "\n")
            with open(lines) as stdin:
                subprocess.run([args.bin / "offpeak", "submit", "--job", "inbox", "--workspace", workspace],
                               stdin=stdin, stdout=subprocess.DEVNULL, check=True)
            if cluster and cluster.statements:
                psql("SELECT pg_stat_statements_reset()")
            run = subprocess.Popen([args.bin / "offpeak", "run", "inbox", "--workspace", workspace],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

            def sample():
                return (time.perf_counter(), int(sim.stats().get("calls", 0)), scale_bench.cpu_seconds(run.pid),
                        scale_bench.cpu_seconds(sim.process.pid), cluster.backend_seconds() if cluster else 0.0)
            first = None
            while True:
                time.sleep(0.2)
                now = sample()
                if first is None and now[1] > 0:
                    first = now
                if now[1] >= args.calls or run.poll() is not None:
                    break
            run.send_signal(signal.SIGTERM)
            run.wait()
        calls = now[1] - first[1]
        per_call = lambda i: (now[i] - first[i]) * 1000 / calls  # noqa: E731
        print(f"{'sqlite' if args.sqlite else 'postgresql'}: {calls / (now[0] - first[0]):.1f} calls/s over "
              f"{calls} calls; CPU ms/call: offpeak {per_call(2):.2f}, offpeak-sim {per_call(3):.2f}"
              + (f", server (offpeak's connection) {per_call(4):.2f}" if cluster else ""))
        if cluster and cluster.statements:
            print(psql(
                f"SELECT round(calls::numeric / {now[1]}, 2) AS per_call, "
                f"round((total_exec_time / {now[1]})::numeric, 3) AS exec_ms_per_call, "
                f"round((total_plan_time / {now[1]})::numeric, 3) AS plan_ms_per_call, "
                "left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS statement FROM pg_stat_statements "
                f"ORDER BY total_exec_time + total_plan_time DESC LIMIT {args.top}"))
    finally:
        if cluster:
            cluster.remove()
        subprocess.run(["rm", "-rf", str(scratch)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
