#!/usr/bin/env python3
"""`offpeak dashboard` on the scale bench's big store: each page's time and the server's memory, on
SQLite and on PostgreSQL (issue 49: each page at most 200 ms of server time, the server at most
80 MB).

    python3 bench/dashboard_bench.py [--bin DIR] [--quick] [--runs N]

The store is the scale bench's (`scale_store.py`): 1,000,000 cache entries of ~2 KB answers,
100,000 requests in one open run, 250,000 ledger rows over 90 days, 1,000 runs and five deferred
jobs (`--quick`: a tenth). It is made once by offpeak's migrator and filled with direct SQL, then
moved to a database of a throwaway PostgreSQL cluster (`pgcluster.py`) with `offpeak store copy`
for the second engine. On each, a release build of `offpeak dashboard` serves the workspace; each
page is asked once to warm up, then `--runs` times. Server time is what the server says it spent
(`Server-Timing: app;dur=`, from the request's arrival at its handler to the answer), wall time
what the client waited on loopback; memory is the server's peak RSS (VmHWM) after every page was
asked. Progress goes to stderr; the table to stdout and `--out` (default bench/last-dashboard-run.md).
"""

import argparse
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

import pgcluster  # noqa: E402
import release  # noqa: E402
import scale_store  # noqa: E402
from spawner import Spawner  # noqa: E402

TARGET_MS = 200.0
TARGET_MB = 80.0
PAGES = [
    ("/", "the page: now, runs, waiting, money (30 days), cache, hosts"),
    ("/?days=90", "the page, 90 days of money"),
    (f"/runs/{scale_store.BIG_JOB}-big", "the open run of 100,000 requests"),
    ("/api/status.json", "status"),
    (f"/api/run.json?id={scale_store.BIG_JOB}-big", "the open run"),
    ("/api/queue.json", "queue"),
    ("/api/costs.json?by=day", "costs by day"),
    ("/api/costs.json?by=tag", "costs by tag"),
    ("/api/cache.json", "cache stats"),
    ("/api/hosts.json", "hosts"),
]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def serve(binary: Path, workspace: Path) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([str(binary), "dashboard", "--port", "0", "--refresh", "0", "--workspace",
                               str(workspace)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline() if server.stdout else ""
    match = re.search(r"(http://[0-9.:]+)/", line)
    if not match:
        server.kill()
        raise RuntimeError(f"offpeak dashboard did not start: {line!r}")
    return server, match.group(1)


def ask(url: str) -> tuple[float, float, int]:
    """Server milliseconds, wall milliseconds and the status of one GET."""
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=120) as answer:
            answer.read()
            status, timing = answer.status, answer.headers.get("Server-Timing", "")
    except urllib.error.HTTPError as error:
        status, timing = error.code, error.headers.get("Server-Timing", "")
    wall = (time.perf_counter() - started) * 1000
    found = re.search(r"dur=([0-9.]+)", timing)
    return (float(found.group(1)) if found else float("nan")), wall, status


def peak_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(binary: Path, workspace: Path, runs: int) -> tuple[dict, float]:
    server, base = serve(binary, workspace)
    try:
        results = {}
        for path, _ in PAGES:
            ask(base + path)
            samples = [ask(base + path) for _ in range(runs)]
            results[path] = {
                "server": statistics.median(s[0] for s in samples),
                "wall": statistics.median(s[1] for s in samples),
                "status": max(s[2] for s in samples),
            }
        return results, peak_mb(server.pid)
    finally:
        server.terminate()
        server.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="a release build folder (default: this tree's, built)")
    parser.add_argument("--quick", action="store_true", help="a tenth of the store")
    parser.add_argument("--runs", type=int, default=7, help="timed asks of each page (median shown)")
    parser.add_argument("--out", type=Path, default=HERE / "last-dashboard-run.md")
    args = parser.parse_args()
    started = time.perf_counter()
    folder = args.bin if args.bin and "release" in args.bin.resolve().parts else release.build(["offpeak"], log)
    binary = Path(folder) / "offpeak"
    scale = scale_store.Scale(entries=100_000, requests=10_000, ledger=25_000) if args.quick \
        else scale_store.Scale(entries=1_000_000, requests=100_000, ledger=250_000)
    scratch = Path(tempfile.mkdtemp(prefix="offpeak-dashboard-bench-"))
    spawner = Spawner()
    cluster = None
    try:
        workspace = scratch / "sqlite"
        scale_store.write_specs(workspace, "http://127.0.0.1:9")
        if spawner.run([binary, "status", "--workspace", workspace]).status != 0:
            raise RuntimeError("offpeak status (creating the store) failed")
        log(f"filling the store: {scale.entries:,} cache entries, {scale.requests:,} requests, "
            f"{scale.ledger:,} ledger rows ...")
        scale_store.fill(workspace / "cache" / "offpeak.sqlite", scale, "You sort support tickets. " * 200)
        results = {}
        log("sqlite: asking each page ...")
        results["sqlite"] = measure(binary, workspace, args.runs)
        cluster = pgcluster.Cluster()
        postgres = scratch / "postgresql"
        shutil.copytree(workspace, postgres)
        url = cluster.database("dashboard")
        log("postgresql: offpeak store copy ...")
        copied = spawner.run([binary, "store", "copy", "--to", url, "--workspace", postgres])
        if copied.status != 0:
            raise RuntimeError(f"offpeak store copy exited {copied.status}")
        with open(postgres / "offpeak.yaml", "a") as config:
            config.write(f"\nstore: {url}\n")
        log("postgresql: asking each page ...")
        results["postgresql"] = measure(binary, postgres, args.runs)
    finally:
        spawner.close()
        if cluster:
            cluster.remove()
        shutil.rmtree(scratch, ignore_errors=True)

    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    lines = [
        f"## offpeak dashboard bench, {now}", "",
        f"- Machine: {platform.machine()}, {os.cpu_count()} CPUs; store: {scale.entries:,} cache entries, "
        f"{scale.requests:,} requests, {scale.ledger:,} ledger rows; median of {args.runs} asks after one; "
        f"took {time.perf_counter() - started:.0f} s.",
        f"- Targets: each page at most {TARGET_MS:.0f} ms of server time; the server at most {TARGET_MB:.0f} MB.", "",
        "| page | what | SQLite server ms | SQLite wall ms | PostgreSQL server ms | PostgreSQL wall ms | PG/SQLite |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    worst = 0.0
    for path, what in PAGES:
        sqlite, pg = results["sqlite"][0][path], results["postgresql"][0][path]
        cells = []
        for side in (sqlite, pg):
            mark = "" if side["status"] == 200 else f" (HTTP {side['status']})"
            cells += [f"{side['server']:.1f}{mark}", f"{side['wall']:.1f}"]
            worst = max(worst, side["server"])
        lines.append(f"| `{path}` | {what} | " + " | ".join(cells) + f" | {pg['server'] / sqlite['server']:.1f}x |")
    memory = {engine: results[engine][1] for engine in results}
    lines += ["", "| engine | server peak RSS MB |", "| --- | ---: |"]
    lines += [f"| {engine} | {mb:.1f} |" for engine, mb in memory.items()]
    ok_time, ok_memory = worst <= TARGET_MS, max(memory.values()) <= TARGET_MB
    lines += ["",
              f"- verdict: slowest page {worst:.1f} ms of server time: "
              f"{'within' if ok_time else 'OVER'} {TARGET_MS:.0f} ms; largest server "
              f"{max(memory.values()):.1f} MB: {'within' if ok_memory else 'OVER'} {TARGET_MB:.0f} MB", ""]
    text = "\n".join(lines)
    print(text)
    args.out.write_text(text)
    return 0 if ok_time and ok_memory else 1


if __name__ == "__main__":
    sys.exit(main())
