#!/usr/bin/env python3
"""Many hosts, one run (issue 23): how much sooner N hosts finish one backlog than one host does.

Each host is its own `offpeak run` process with its own workspace folder and OFFPEAK_HOST, all on
one throwaway PostgreSQL cluster and one offpeak-sim that answers every call after a fixed latency
and has no rate limit. The backlog is submitted once; then every host runs the job at the same
moment: the first to open the run holds its lease, the others help it (they claim rounds of its
requests), and each exits when nothing is left to it. Wall time is from the start until the last
host exits. Every trial checks that the run completed, that every item was asked once (the sim's
calls equal the ledger's) and how the calls split between hosts.

Prints a Markdown table on stdout (medians over --repeat trials); progress goes to stderr.
Python 3 standard library only. Not a test.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pgcluster  # noqa: E402
import release  # noqa: E402
import textgen  # noqa: E402
from scale_bench import JOB, submission_lines  # noqa: E402
from sim import Sim  # noqa: E402


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


def psql(cluster: pgcluster.Cluster, database: str, sql: str) -> str:
    result = subprocess.run(
        [os.path.join(cluster.bin, "psql"), "-h", "127.0.0.1", "-p", str(cluster.port), "-U", cluster.user,
         "-d", database, "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql],
        capture_output=True, text=True)
    if result.returncode != 0:
        raise BenchError(f"psql failed: {result.stderr}")
    return result.stdout.strip()


def trial(binaries: Path, cluster: pgcluster.Cluster, sim: Sim, hosts: int, number: int, lines: Path,
          job: dict, scratch: Path) -> dict:
    """One backlog run by `hosts` hosts at once; its wall time, calls and calls per host."""
    name = f"hosts_{hosts}_{number}"
    url = cluster.database(name)
    workspaces = []
    for host in range(hosts):
        workspace = scratch / f"{name}-host-{host}"
        (workspace / "jobs").mkdir(parents=True)
        # No `limits:` key: limits set in offpeak.yaml are the whole fleet's (shared through the store);
        # the default in_flight is each process's own.
        (workspace / "offpeak.yaml").write_text(f"provider: sim\nbase_url: {sim.url}\nstore: {url}\n")
        (workspace / "jobs" / f"{JOB}.yaml").write_text(json.dumps(job, indent=1) + "\n")
        workspaces.append(workspace)
    environment = lambda host: {**os.environ, "OFFPEAK_HOST": f"host-{host}"}  # noqa: E731
    with open(lines) as submitted:
        result = subprocess.run(
            [binaries / "offpeak", "submit", "--job", JOB, "--workspace", workspaces[0]], stdin=submitted,
            capture_output=True, text=True, env=environment(0))
    if result.returncode != 0:
        raise BenchError(f"offpeak submit exited {result.returncode}: {result.stderr[-500:]}")
    calls_before = sim.stats()["calls"]
    started = time.monotonic()
    processes = [
        subprocess.Popen(
            [binaries / "offpeak", "run", JOB, "--workspace", workspaces[host]], env=environment(host),
            stdout=open(scratch / f"{name}-{host}.out", "w"), stderr=open(scratch / f"{name}-{host}.err", "w"),
            stdin=subprocess.DEVNULL)
        for host in range(hosts)
    ]
    for host, process in enumerate(processes):
        if process.wait(timeout=3600) != 0:
            raise BenchError(
                f"host-{host} exited {process.returncode}: {(scratch / f'{name}-{host}.err').read_text()[-800:]}")
    wall = time.monotonic() - started
    state = psql(cluster, name, "SELECT state, items_done, items_total FROM runs")
    if not state.startswith("completed\t"):
        raise BenchError(f"the run did not complete: {state}")
    by_host = dict(
        (row.split("\t")[0], int(row.split("\t")[1]))
        for row in psql(cluster, name, "SELECT host, count(*) FROM ledger WHERE NOT cache_hit GROUP BY host "
                                       "ORDER BY host").splitlines())
    calls = sum(by_host.values())
    sim_calls = sim.stats()["calls"] - calls_before
    if sim_calls != calls:
        raise BenchError(f"the sim answered {sim_calls} calls and the ledger holds {calls}: an item asked twice?")
    return {"wall": wall, "calls": calls, "by_host": by_host, "run": state}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="a release build folder with offpeak and offpeak-sim")
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--hosts", type=int, default=3)
    parser.add_argument("--latency-ms", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    binaries = args.bin.resolve() if args.bin else release.build(["offpeak", "offpeak-sim"], log)
    scratch = Path(tempfile.mkdtemp(prefix="offpeak-hosts-bench-"))
    job, lines = submission_lines(args.items, scratch / "lines.jsonl")
    cluster = pgcluster.Cluster()
    rows = {}
    try:
        with Sim(binaries / "offpeak-sim", ["--latency-ms", str(args.latency_ms)], scratch, "hosts") as sim:
            for number in range(1, args.repeat + 1):
                # One host and N hosts take turns, so a slow spell of the machine falls on both.
                for hosts in (1, args.hosts):
                    log(f"trial {number}: {hosts} host(s), {args.items:,} items ...")
                    outcome = trial(binaries, cluster, sim, hosts, number, lines, job, scratch)
                    log(f"  {outcome['wall']:.1f} s, {outcome['calls']} calls: {outcome['by_host']}")
                    rows.setdefault(hosts, []).append(outcome)
    finally:
        cluster.remove()
    one = statistics.median(o["wall"] for o in rows[1])
    print(f"Backlog of {args.items:,} items (inbox job, batches of up to {job['batching']['max_items']}), "
          f"offpeak-sim answering after {args.latency_ms} ms with no rate limit, the sim's default in_flight "
          f"(8) on each host, one PostgreSQL store; median of {args.repeat} trials, the sides taking turns.\n")
    print("| hosts | wall s, median (min-max) | calls | calls by host (last trial) | speed-up |")
    print("| ---: | ---: | ---: | --- | ---: |")
    for hosts, outcomes in sorted(rows.items()):
        walls = [o["wall"] for o in outcomes]
        median = statistics.median(walls)
        split = ", ".join(f"{h} {c}" for h, c in outcomes[-1]["by_host"].items())
        print(f"| {hosts} | {median:.1f} ({min(walls):.1f}-{max(walls):.1f}) | {outcomes[-1]['calls']} | {split} "
              f"| {one / median:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
