#!/usr/bin/env python3
"""Retention over a year (issue 46, item 1): how big the store grows with `retention:` on and off.

    python3 bench/retention_bench.py --bin "$(swift build --show-bin-path)" [--postgres] [--inbox 10000]

A year of two daily jobs is written into a fresh store, day by day, on a clock the bench moves: a
research job over 50 pages (3 of which changed and were asked again, the rest answered from the
cache) and a W-inbox run of `--inbox` submitted requests (10,000 in the issue; 1,000 by default, so
the bench takes a minute, not an hour) answered 8 to a batched call. The rows are written straight
through SQL in the shapes offpeak writes them (the runs, requests, results, ledger rows and run
counters a finished day leaves; `scale_store.py` does the same for the scale table), since making a
year of calls through the sim would take hours; what is measured is the store and the real
`offpeak store prune --now DAY`, run once a day as a daily tick would prune. Reports the store's
size after 30, 90, 180, 270 and 365 days with retention on (the defaults: a run's requests and
results kept 90 days, its calls' ledger rows 180 days before they are rolled up by day) and off, how
much it still grew a day over the last 95, and whether `offpeak costs` totals are the same to the
cent either way.
"""

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

from pgcluster import Cluster  # noqa: E402

DAY = 86_400
START = 1_767_225_600  # 2026-01-01T00:00:00Z
SAMPLES = [30, 90, 180, 270, 365]
PAGES, CHANGED = 50, 3
PAGE_TEXT = "The harbour log for the day: tides, ferries, weather and the market's prices. " * 40
INBOX_PROMPT = "Case {n}: the parcel arrived late and the box was damaged; please advise. " * 3


def stamp(seconds: float) -> str:
    """A date as both stores take it: UTC, `YYYY-MM-DD HH:MM:SS.SSS`."""
    whole = int(seconds)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(whole)) + f".{int((seconds - whole) * 1000):03d}"


def day_rows(day: int, inbox: int) -> dict[str, list[tuple]]:
    """The rows one finished day leaves: both runs, their requests and results, their ledger rows."""
    at = START + day * DAY + 7 * 3600
    rows: dict[str, list[tuple]] = {"runs": [], "requests": [], "results": [], "ledger": []}
    for job, count in (("daily", PAGES), ("inbox", inbox)):
        run = f"{job}-d{day:03d}"
        rows["runs"].append((run, job, "research" if job == "daily" else "prompt", "completed", count, count,
                             stamp(at), stamp(at + 600)))
        for n in range(count):
            request = f"r{day:03d}{job[0]}{n:06d}"
            if job == "daily":
                text = f"Page {n}: " + PAGE_TEXT + f" (day {day if n < CHANGED else 0})"
                item, source, client = f"page-{n:02d}", "spec", None
            else:
                text = INBOX_PROMPT.format(n=n)
                item, source, client = f"c-{day:03d}-{n:06d}", "submit", f"c-{day:03d}-{n:06d}"
            payload = json.dumps({"maxTokens": 200, "messages": [{"content": text, "role": "user"}],
                                  "model": "claude-haiku-4-5"}, separators=(",", ":"))
            rows["requests"].append((request, run, job, item, n, source, client, payload,
                                     hashlib.sha256(payload.encode()).hexdigest(), stamp(at), stamp(at + 300)))
            cached = job == "daily" and n >= CHANGED
            answer = f"Answer {n} of day {day}: " + "a short faithful summary of what the text says. " * 6
            rows["results"].append((request, run, answer, cached, 0 if cached else 900, 120,
                                    0.0 if cached else 0.0015, stamp(at + 300)))
        calls = CHANGED if job == "daily" else (count + 7) // 8
        for n in range(calls):
            rows["ledger"].append((stamp(at + n), job, run, 8 if job == "inbox" else 1, 2200, 900, 0.0021, 0.0042,
                                   False))
        if job == "daily":  # the cache's answers, each booked at $0 with what it saved
            for n in range(PAGES - CHANGED):
                rows["ledger"].append((stamp(at + 100 + n), job, run, 1, 0, 0, 0.0, 0.0015, True))
    return rows


class SQLiteStore:
    def __init__(self, folder: Path):
        self.file = folder / "cache" / "offpeak.sqlite"

    def write(self, rows: dict[str, list[tuple]]) -> None:
        db = sqlite3.connect(self.file, timeout=30)
        with db:
            db.executemany(
                """INSERT INTO runs (id, job, kind, spec_hash, state, provider, model, tier, items_total,
                   items_done, items_failed, items_cached, created_at, started_at, updated_at, finished_at)
                   VALUES (?1, ?2, ?3, 'h', ?4, 'sim', 'claude-haiku-4-5', 'fast', ?5, ?6, 0, 0, ?7, ?7, ?8, ?8)""",
                rows["runs"])
            db.executemany(
                """INSERT INTO requests (id, run_id, job, item_id, position, source, client_id, tier, payload,
                   cache_key, state, attempts, created_at, updated_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, 'fast', ?, ?, 'done', 0, ?, ?)""", rows["requests"])
            db.executemany(
                """INSERT INTO results (request_id, run_id, text, finish_reason, model, from_cache, input_tokens,
                   output_tokens, dollars, created_at) VALUES (?, ?, ?, 'stop', 'claude-haiku-4-5', ?, ?, ?, ?, ?)""",
                rows["results"])
            db.executemany(
                """INSERT INTO ledger (at, job, run_id, provider, model, tier, items, input_tokens, output_tokens,
                   cache_read_tokens, cache_write_tokens, dollars, naive_dollars, cache_hit, latency_ms)
                   VALUES (?, ?, ?, 'sim', 'claude-haiku-4-5', 'fast', ?, ?, ?, 0, 0, ?, ?, ?, 900)""", rows["ledger"])
        db.close()

    def size(self) -> int:
        db = sqlite3.connect(self.file, timeout=30)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        return self.file.stat().st_size


class PostgresStore:
    def __init__(self, cluster: Cluster, url: str):
        self.cluster, self.url = cluster, url
        self.database = url.split("/")[-1].split("?")[0]

    def psql(self, sql: str, stdin: str | None = None) -> str:
        result = subprocess.run(
            [os.path.join(self.cluster.bin, "psql"), "-h", "127.0.0.1", "-p", str(self.cluster.port), "-U",
             self.cluster.user, "-d", self.database, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql],
            input=stdin, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(result.stderr)
        return result.stdout.strip()

    def copy(self, table: str, columns: str, rows: list[tuple]) -> None:
        def cell(value):
            if value is None:
                return ""
            if isinstance(value, bool):
                return "t" if value else "f"
            text = str(value)
            return '"' + text.replace('"', '""') + '"'
        body = "\n".join(",".join(cell(v) for v in row) for row in rows) + "\n"
        self.psql(f"SET timezone = 'UTC'; COPY {table} ({columns}) FROM STDIN WITH (FORMAT csv)", stdin=body)

    def write(self, rows: dict[str, list[tuple]]) -> None:
        runs = [(r[0], r[1], r[2], "h", r[3], "sim", "claude-haiku-4-5", "fast", r[4], r[5], 0, 0, r[6], r[6], r[7],
                 r[7]) for r in rows["runs"]]
        self.copy("runs", "id, job, kind, spec_hash, state, provider, model, tier, items_total, items_done, "
                  "items_failed, items_cached, created_at, started_at, updated_at, finished_at", runs)
        requests = [(*r[:7], "fast", r[7], r[8], "done", 0, r[9], r[10]) for r in rows["requests"]]
        self.copy("requests", "id, run_id, job, item_id, position, source, client_id, tier, payload, cache_key, "
                  "state, attempts, created_at, updated_at", requests)
        results = [(r[0], r[1], r[2], "stop", "claude-haiku-4-5", *r[3:]) for r in rows["results"]]
        self.copy("results", "request_id, run_id, text, finish_reason, model, from_cache, input_tokens, "
                  "output_tokens, dollars, created_at", results)
        ledger = [(r[0], r[1], r[2], "sim", "claude-haiku-4-5", "fast", *r[3:6], 0, 0, *r[6:], 900)
                  for r in rows["ledger"]]
        self.copy("ledger", "at, job, run_id, provider, model, tier, items, input_tokens, output_tokens, "
                  "cache_read_tokens, cache_write_tokens, dollars, naive_dollars, cache_hit, latency_ms", ledger)

    def size(self) -> int:
        self.psql("VACUUM")  # as autovacuum would by then: the deleted rows' room made reusable
        return int(self.psql("SELECT pg_database_size(current_database())"))


def offpeak(binary: Path, workspace: Path, environment: dict, *arguments: str) -> subprocess.CompletedProcess:
    result = subprocess.run([str(binary), *arguments, "--workspace", str(workspace)], capture_output=True,
                            text=True, env={**os.environ, **environment})
    if result.returncode != 0:
        raise RuntimeError(f"offpeak {' '.join(arguments)}: {result.stderr}")
    return result


def year(binary: Path, engine: str, retention: bool, inbox: int, days: int, cluster: Cluster | None) -> dict:
    """One store through `days` days: its size at each sample day, the prunes' times, the costs."""
    folder = Path(tempfile.mkdtemp(prefix="offpeak-retention-"))
    (folder / "offpeak.yaml").write_text(
        "provider: sim\n" + ("" if retention else "retention: off\n"))
    environment: dict = {"OFFPEAK_STORE": "sqlite"}
    if engine == "postgresql":
        assert cluster is not None
        url = cluster.database(f"retention_{'on' if retention else 'off'}_{os.getpid()}")
        environment = {"OFFPEAK_STORE": url}
        store = PostgresStore(cluster, url)
    else:
        store = SQLiteStore(folder)
    offpeak(binary, folder, environment, "store", "info")  # made and migrated by offpeak itself
    sizes, prunes = {}, []
    for day in range(1, days + 1):
        store.write(day_rows(day, inbox))
        if retention:
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(START + day * DAY + 23 * 3600))
            started = time.monotonic()
            offpeak(binary, folder, environment, "store", "prune", "--now", now)
            prunes.append(time.monotonic() - started)
        if day in SAMPLES:
            sizes[day] = store.size()
    costs = json.loads(offpeak(binary, folder, environment, "costs", "--json").stdout)
    shutil.rmtree(folder, ignore_errors=True)  # a year of 10,000 requests a day is gigabytes
    return {"sizes": sizes, "prunes": prunes, "costs": costs}


def same(a, b) -> bool:
    """The same report, its dollars to a millionth of a cent: a rolled-up row's dollars are added in
    another order than its calls' were, which can move a sum's last binary digit."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) < 1e-8
    return a == b


def megabytes(count: int) -> str:
    return f"{count / 1e6:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the folder holding the built offpeak")
    parser.add_argument("--inbox", type=int, default=1000, help="W-inbox requests a day (the issue: 10000)")
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL too (a throwaway cluster)")
    arguments = parser.parse_args()
    binary = Path(arguments.bin) / "offpeak"
    engines = ["sqlite"] + (["postgresql"] if arguments.postgres else [])
    cluster = Cluster() if arguments.postgres else None
    try:
        print(f"### Retention over {arguments.days} days: a daily research job ({PAGES} pages, {CHANGED} "
              f"changing) and a daily W-inbox of {arguments.inbox:,} requests\n")
        samples = [d for d in SAMPLES if d <= arguments.days]
        last = f"day {samples[-2]}-{samples[-1]} KB/day" if len(samples) > 1 else "KB/day"
        print("| store | retention | " + " | ".join(f"day {d} MB" for d in samples)
              + f" | {last} | prune median s | costs equal |")
        print("| --- | --- | " + " | ".join("---:" for _ in samples) + " | ---: | ---: | --- |")
        for engine in engines:
            on = year(binary, engine, True, arguments.inbox, arguments.days, cluster)
            off = year(binary, engine, False, arguments.inbox, arguments.days, cluster)
            equal = same(on["costs"], off["costs"])
            for name, result in (("90d, ledger 180d", on), ("off", off)):
                prune = f"{statistics.median(result['prunes']):.2f}" if result["prunes"] else "-"
                sizes = result["sizes"]
                growth = ((sizes[samples[-1]] - sizes[samples[-2]]) / (samples[-1] - samples[-2]) / 1e3
                          if len(samples) > 1 else 0)
                print(f"| {engine} | {name} | "
                      + " | ".join(megabytes(sizes[d]) for d in samples)
                      + f" | {growth:.1f} | {prune} | {'yes' if equal else 'NO'} |")
        return 0
    finally:
        if cluster:
            cluster.remove()


if __name__ == "__main__":
    sys.exit(main())
