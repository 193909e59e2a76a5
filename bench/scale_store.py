"""A big store for the scale bench, filled fast with direct SQL, and the report commands timed on it.

The store is created by offpeak itself (`offpeak status` in a fresh workspace runs its migrator),
then filled in a few transactions through Python's sqlite3: runs, requests (each holding the
~5.7 KB payload a W-inbox request holds), results, ledger rows over 90 days, cache entries of ~2 KB
answers, day counters and a few open deferrals. The workspace also holds 50 job specs that a tick
finds nothing to do for (no open run, no schedule due, empty spool folders), so `tick` is idle. One
more tick is timed with the big run's job given a spec (a queue job that needs external power) and the
machine read as on battery (`Tests/Fixtures/sysfs/battery-wifi`): it defers that job, whose backlog is
the store's requests, and must not cost in proportion to them.
"""

import datetime
import hashlib
import json
import os
import random
import sqlite3
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from spawner import Spawner

DAY = 86_400
SPAN_DAYS = 90
IDLE_SPECS = 50
MODELS = ["claude-haiku-4-5", "claude-sonnet-4-5", "gpt-4o-mini"]
BIG_JOB = "inbox"  # the run holding the requests; no spec file, so a tick leaves it alone


@dataclass
class Scale:
    entries: int
    requests: int
    ledger: int


def stamp(seconds: float) -> str:
    """A date as GRDB stores it: UTC, `YYYY-MM-DD HH:MM:SS.SSS`."""
    whole = int(seconds)
    millis = int((seconds - whole) * 1000)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(whole)) + f".{millis:03d}"


def write_specs(workspace: Path, sim_url: str) -> None:
    """offpeak.yaml and 50 idle job specs: half scheduled yearly, a few queue jobs with empty spools."""
    (workspace / "jobs").mkdir(parents=True)
    (workspace / "offpeak.yaml").write_text(f"provider: sim\nbase_url: {sim_url}\n")
    for n in range(IDLE_SPECS):
        lines = [
            f"name: j{n:02d}", "kind: prompt", "tier: fast", "template: 'Classify: {{item}}'",
            "max_tokens: 40",
        ]
        if n % 10 == 9:
            lines.append("queue: true")
            (workspace / "spool" / f"j{n:02d}").mkdir(parents=True)
        else:
            lines += ["items:"] + [f"  - {{id: i{k}, item: 'ticket {n}-{k}'}}" for k in range(3)]
        if n % 2 == 0:
            lines.append("schedule: '0 3 1 1 *'")  # once a year: never due during a bench
        (workspace / "jobs" / f"j{n:02d}.yaml").write_text("\n".join(lines) + "\n")


def fill(database: Path, scale: Scale, system_prompt: str, seed: int = 11) -> None:
    """Fills a store made by offpeak's migrator (schema v5 or later) straight through SQL."""
    rng = random.Random(seed)
    now = time.time()
    db = sqlite3.connect(database)
    db.execute("PRAGMA synchronous = OFF")
    blob = os.urandom(64 * 1024)
    with db:
        runs = _fill_runs(db, rng, now)
        _fill_requests(db, rng, now, scale.requests, system_prompt)
        _fill_ledger(db, rng, now, scale.ledger, runs)
        _fill_cache(db, rng, now, scale.entries, blob)
        _fill_queue(db, now)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _fill_runs(db, rng, now) -> dict[str, list[tuple[float, str]]]:
    """1,000 finished runs of the 50 jobs over 90 days, and the big open run, newest."""
    rows, by_job = [], {}
    for n in range(1000):
        job = f"j{n % IDLE_SPECS:02d}"
        created = now - SPAN_DAYS * DAY + n * (SPAN_DAYS * DAY / 1000)
        run_id = f"{job}-{n:05d}"
        by_job.setdefault(job, []).append((created, run_id))
        rows.append((run_id, job, "completed", 3, 3, 0, 1, created, created + 60, None))
    rows.append((f"{BIG_JOB}-big", BIG_JOB, "interrupted", 0, 0, 0, 0, now - 3600, now - 60,
                 "items retrying; next HTTP 529"))
    db.executemany(
        """INSERT INTO runs (id, job, kind, spec_hash, state, reason, provider, model, tier, items_total,
           items_done, items_failed, items_cached, created_at, started_at, updated_at, finished_at)
           VALUES (?1, ?2, 'prompt', 'h', ?3, ?10, 'sim', 'claude-haiku-4-5', 'fast', ?4, ?5, ?6, ?7, ?8, ?8,
           ?9, ?9)""",
        [(r[0], r[1], r[2], r[3], r[4], r[5], r[6], stamp(r[7]), stamp(r[8]), r[9]) for r in rows])
    db.execute("UPDATE runs SET finished_at = NULL WHERE id = ?", (f"{BIG_JOB}-big",))
    return by_job


def _fill_requests(db, rng, now, count, system_prompt) -> None:
    """The big run's requests: half answered (10 % of those from the cache), 0.5 % retrying, the
    rest pending; each payload is the whole request, shared system prompt included."""
    run_id = f"{BIG_JOB}-big"
    requests, results = [], []
    done_items = cached_items = 0
    for n in range(count):
        roll = rng.random()
        state = "done" if roll < 0.5 else "retrying" if roll < 0.505 else "pending"
        text = f"Case {n}: the parcel arrived late and the box was damaged; please advise."
        payload = json.dumps({"max_tokens": 60, "messages": [{"content": text, "role": "user"}],
                              "model": "claude-haiku-4-5", "system": system_prompt}, separators=(",", ":"))
        request_id = f"r{n:016x}"
        created = now - 3600 + n * 0.01
        nxt = stamp(now + rng.uniform(60, 3600)) if state == "retrying" else None
        error = "HTTP 529: overloaded" if state == "retrying" else None
        requests.append((request_id, run_id, BIG_JOB, f"c-{n:06d}", n, "submit", f"c-{n:06d}", "fast", payload,
                         hashlib.sha256(payload.encode()).hexdigest(), state, 1 if nxt else 0, nxt, error,
                         stamp(created), stamp(created)))
        if state == "done":
            from_cache = rng.random() < 0.1
            done_items += 1
            cached_items += from_cache
            results.append((request_id, run_id, f"Answer to case {n}: we will send a replacement.", "stop",
                            "claude-haiku-4-5", from_cache, 1400, 20, 0.0015, stamp(created + 30)))
    db.executemany(
        """INSERT INTO requests (id, run_id, job, item_id, position, source, client_id, tier, payload, cache_key,
           state, attempts, next_attempt_at, error, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", requests)
    db.executemany(
        """INSERT INTO results (request_id, run_id, text, finish_reason, model, from_cache, input_tokens,
           output_tokens, dollars, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", results)
    db.execute(
        "UPDATE runs SET items_total = ?, items_done = ?, items_cached = ? WHERE id = ?",
        (count, done_items, cached_items, run_id))


def _fill_ledger(db, rng, now, count, runs) -> None:
    """Calls over 90 days, oldest first: 20 % cache hits, 1 % failed, 0.5 % unpriced; the last
    eighth belong to the big run."""
    rows = []
    big = count // 8
    for n in range(count):
        at = now - SPAN_DAYS * DAY + (n + 0.5) * (SPAN_DAYS * DAY / count)
        if n >= count - big:
            job, run_id = BIG_JOB, f"{BIG_JOB}-big"
        else:
            job = f"j{rng.randrange(IDLE_SPECS):02d}"
            candidates = runs[job]  # oldest first, evenly spread: the one running at `at`
            share = (at - (now - SPAN_DAYS * DAY)) / (SPAN_DAYS * DAY)
            run_id = candidates[min(len(candidates) - 1, int(share * len(candidates)))][1]
        hit = rng.random() < 0.2
        failed = not hit and rng.random() < 0.01
        unpriced = not hit and not failed and rng.random() < 0.005
        model = "local-model" if unpriced else rng.choice(MODELS)
        items = rng.randint(1, 8)
        inp, out = (0, 0) if failed else (rng.randint(200, 4000), rng.randint(20, 400))
        dollars = 0.0 if hit or failed or unpriced else (inp * 1.0 + out * 5.0) / 1e6
        naive = (inp * 1.0 + out * 5.0) / 1e6 * (1.6 if not hit else 1.0)
        rows.append((stamp(at), job, run_id, "sim", model, "fast", items, 0 if hit else inp, 0 if hit else out,
                     rng.randint(0, 3000), 0, dollars, naive, hit, failed, unpriced, rng.randint(50, 4000)))
    insert(db, "ledger", ["at", "job", "run_id", "provider", "model", "tier", "items", "input_tokens",
                          "output_tokens", "cache_read_tokens", "cache_write_tokens", "dollars", "naive_dollars",
                          "cache_hit", "failed", "unpriced", "latency_ms"], rows)


def insert(db, table: str, columns: list[str], rows) -> None:
    """INSERT of `rows` into the columns of `table` that its schema has: an older build's store
    (`--before-bin`) lacks the columns later migrations added (the ledger's `failed`, `unpriced`)."""
    present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    keep = [i for i, column in enumerate(columns) if column in present]
    names = ", ".join(columns[i] for i in keep)
    marks = ", ".join("?" for _ in keep)
    db.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", ([row[i] for i in keep] for row in rows))


def cache_row_id(key: str) -> int:
    """The SQLite cache table's row id for `key`, as offpeak makes it (`CacheRowID`): FNV-1a over
    the key's UTF-8, 64 bits, as a signed integer. An older build's table has no `id` column."""
    value = 0xCBF29CE484222325
    for byte in key.encode():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


def _fill_cache(db, rng, now, count, blob) -> None:
    """~2 KB answers (about 1.1 KB stored), none expired; a few sources; 90 days of day counters."""
    chunk = 50_000
    for start in range(0, count, chunk):
        rows = []
        for n in range(start, min(count, start + chunk)):
            created = now - SPAN_DAYS * DAY + n * (SPAN_DAYS * DAY / count)
            stored = rng.randint(900, 1300)
            offset = rng.randrange(len(blob) - stored)
            source = n % 100 == 0
            key = hashlib.sha256(b"k%d" % n).hexdigest() if not source else f"source:{n:064x}"
            rows.append((cache_row_id(key), key,
                         "source" if source else "answer", f"j{n % IDLE_SPECS:02d}", None if source else "sim",
                         None if source else rng.choice(MODELS), f"https://example.com/{n}" if source else None,
                         stamp(created), stamp(now + 365 * DAY), stamp(created + rng.uniform(0, 3600)),
                         rng.randint(0, 5), stored * 2, stored, blob[offset:offset + stored]))
        insert(db, "cache_entries", ["id", "key", "kind", "job", "provider", "model", "url", "created_at",
                                     "expires_at", "last_access_at", "hits", "raw_bytes", "stored_bytes",
                                     "payload"], rows)
    days = [datetime.date.fromtimestamp(now - d * DAY).isoformat() for d in range(SPAN_DAYS)]
    db.executemany(
        "INSERT INTO cache_counters (day, kind, hits, misses) VALUES (?, ?, ?, ?)",
        [(day, kind, rng.randint(0, 9000), rng.randint(0, 3000)) for day in days for kind in ["answer", "source"]])


def _fill_queue(db, now) -> None:
    """Five jobs held back by their conditions (no spec files: a tick leaves their runs alone)."""
    for n in range(5):
        run_id = f"held-{n}-run"
        db.execute(
            """INSERT INTO runs (id, job, kind, spec_hash, state, reason, provider, model, tier, items_total,
               created_at, updated_at) VALUES (?, ?, 'prompt', 'h', 'waiting', 'on battery', 'sim',
               'claude-haiku-4-5', 'fast', 10, ?, ?)""",
            (run_id, f"held-{n}", stamp(now - 7200), stamp(now - 7200)))
        db.execute(
            """INSERT INTO deferred (job, run_id, reasons, deferred_at, checked_at)
               VALUES (?, ?, 'on battery', ?, ?)""",
            (f"held-{n}", run_id, stamp(now - 7200), stamp(now - 600)))


# --- timing ------------------------------------------------------------------------------------

BATTERY = Path(__file__).resolve().parent.parent / "Tests" / "Fixtures" / "sysfs" / "battery-wifi"
# The big run's job as a queue job that needs external power: on `BATTERY`, a tick defers it (exit 75).
DEFERRED_SPEC = ("kind: prompt\ntier: fast\nqueue: true\nmax_tokens: 60\ntemplate: '{{item}}'\n"
                 "constraints: {power: ac}\nbatching: {max_items: 8}\n")

COMMANDS = [
    ("status", ["status"]),
    ("queue", ["queue"]),
    ("cache stats", ["cache", "stats"]),
    ("costs", ["costs"]),
    ("costs --by model", ["costs", "--by", "model"]),
    ("costs --by day", ["costs", "--by", "day"]),
    ("tick (idle, 50 specs)", ["tick"]),
    # Issue 45, item 6: a tick with nothing to do but find the big queue job's conditions still do not
    # hold; its check must not cost in proportion to the job's backlog.
    ("tick (the backlog's queue job deferred: on battery)", ["tick", "--sysfs-root", str(BATTERY)]),
]
DEFERRED_TICK = COMMANDS[-1][0]


@dataclass
class Timing:
    seconds: list[float] = field(default_factory=list)
    rss_mb: float = 0.0
    status: int = 0

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")


def time_commands(spawner: Spawner, binary: Path, workspace: Path, runs: int,
                  budget: float = 40.0) -> dict[str, Timing]:
    """Each command once to warm up, then up to `runs` times (at least 3, fewer past `budget` s)."""
    timings = {}
    spec = workspace / "jobs" / f"{BIG_JOB}.yaml"
    for name, args in COMMANDS:
        deferred = name == DEFERRED_TICK
        if deferred:
            spec.write_text(DEFERRED_SPEC)
        # A deferred tick exits 75 (temporary failure): what it should do here, not a failure.
        expected = 75 if deferred else 0
        timing = Timing()
        first = spawner.run([binary, *args, "--workspace", workspace]).status
        timing.status = 0 if first == expected else first or -1
        spent = 0.0
        while len(timing.seconds) < runs and (len(timing.seconds) < 3 or spent < budget):
            outcome = spawner.run([binary, *args, "--workspace", workspace])
            timing.seconds.append(outcome.wall)
            timing.rss_mb = max(timing.rss_mb, outcome.rss_mb)
            if outcome.status != expected:
                timing.status = timing.status or outcome.status or -1
            spent += outcome.wall
        if deferred:
            spec.unlink()
        timings[name] = timing
    return timings
