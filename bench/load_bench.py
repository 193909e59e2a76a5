"""The third table of `make bench`: offpeak against a naive client under a provider's latency and
rate limits, the way a real API answers.

Latency rows: W-classify and W-summarize against offpeak-sim with a realistic latency model (a
fixed 400 ms, 8 ms per output token, +/-20 % jitter, seeded), each run three ways: the naive
client one request at a time, the naive client made concurrent (the official SDK's AsyncAnthropic
with 8 requests in flight), and offpeak. Rate-limited row: W-classify against the same sim at
50 requests a minute, the concurrent naive client and offpeak, each with the number of its calls
the sim answered 429.

The workloads are scaled down so the section takes about four minutes: the latency rows run
W-classify with 50 tickets and W-summarize with 64 documents, the rate-limited row W-classify
with 80 tickets (the first 50 requests fit in the limiter's bucket, which holds a minute's
allowance; the other 30 come at 50 a minute, so the naive client needs at least 36 s). Most of
the time goes to the naive client one at a time, which waits out every call's latency.

W-summarize needs its 64 documents for a fair race: offpeak packs 8 documents into one call,
whose answer holds 8 summaries and so takes about 8 times as long to generate (5.5 s against the
naive client's 1 s). With 8 calls in flight each, offpeak's 8 calls take one round of 5.5 s
where the naive client's 64 take 8 rounds of 1 s; with 24 documents offpeak's 3 calls would
still take 5.5 s against the naive client's 3 rounds (3 s).

The verdict lines (see `verdicts`) are issue 11's must-shows: under the latency model offpeak takes no
longer than the naive client with 8 in flight, and at 50 rpm under 5 % of its calls are answered 429.
"""

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import report
import sides
import workloads
from sim import Sim, SimError, has_flags

LATENCY_SCALES = {"W-classify": 0.05, "W-summarize": 64 / 300}
RATE_LIMITED_SCALE = 0.08
IN_FLIGHT = 8
LATENCY_ARGS = ["--latency-ms", "400", "--ms-per-output-token", "8", "--jitter", "0.2", "--seed", "11"]
RATE_LIMIT_ARGS = ["--rpm", "50"]
# The SDK's default of 2 retries leaves items unanswered under the limit, and 30 still lost one of
# 100 in a trial (8 workers race for each freed request); 100, each waiting what retry-after says,
# lets every item through, so the 429 count is the whole cost of the run.
RATE_LIMITED_RETRIES = 100
MAX_429_SHARE = 0.05

SEQUENTIAL = "naive, 1 at a time"
CONCURRENT = f"naive, {IN_FLIGHT} in flight"
OFFPEAK = "offpeak"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class LoadRow(report.Row):
    """A bench row plus what the sim saw of the load: which sim, 429s of its limiter, most in flight."""

    sim: str = ""

    @property
    def rate_limited(self) -> int:
        return self.stats.get("rate_limited", 0)

    @property
    def max_in_flight(self) -> int:
        return self.stats.get("max_in_flight", 0)


def run_row(workload, sim_name: str, sim_args: list[str], side: str, bin_dir: Path, scratch: Path,
            retries: int = 2) -> LoadRow:
    row = LoadRow(workload=workload.name, side=side, total=len(workload.items))
    row.sim = sim_name
    label = f"load-{workload.name}-{sim_name}-{side}".replace(" ", "").replace(",", "-")
    log(f"{workload.name} / {sim_name} / {side}: {len(workload.items)} items ...")
    try:
        with Sim(bin_dir / "offpeak-sim", workload.sim_args + sim_args, scratch, label) as sim:
            if side == SEQUENTIAL:
                run = sides.run_naive(workload, sim.url)
            elif side == CONCURRENT:
                run = sides.run_naive_concurrent(workload, sim.url, IN_FLIGHT, retries)
            else:
                run = sides.run_offpeak(workload, sim.url, bin_dir, scratch / f"ws-{label}")
            row.take_stats(sim.stats())
            expected = sim.expected([item.message for item in workload.items])
    except (sides.SideCrashed, SimError, OSError, subprocess.SubprocessError, ValueError, KeyError) as error:
        row.error = f"{type(error).__name__}: {error}"
        log(f"  crashed: {row.error}")
        return row
    row.wall = run.wall_seconds
    row.notes = run.notes
    row.correct = sum(run.answers.get(item.id) == answer for item, answer in zip(workload.items, expected))
    if run.ledger is not None:
        row.dollars_ledger = run.ledger.get("dollars")
    log(f"  {row.calls} calls, {row.rate_limited} answered 429, most in flight {row.max_in_flight}, "
        f"{row.correct}/{row.total} correct, {row.wall:.1f} s")
    return row


HEADER = ["workload", "sim", "side", "calls", "429s", "most in flight", "$ sim", "naive/offpeak", "correct", "wall s"]


def table(rows: list[LoadRow]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * 7) + "|"]
    for r in rows:
        if r.error:
            cells = [r.workload, r.sim, r.side, "CRASHED: " + r.error.replace("|", "/").replace("\n", " ")[:160]]
            cells += [""] * (len(HEADER) - len(cells))
        else:
            cells = [
                r.workload, r.sim, r.side, f"{r.calls:,}", f"{r.rate_limited:,}", str(r.max_in_flight),
                report.money(r.dollars_sim), "—" if r.ratio is None else f"{r.ratio:.1f}x",
                f"{r.correct:,}/{r.total:,}", f"{r.wall:.1f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def find(rows: list[LoadRow], workload: str, sim: str, side: str) -> LoadRow | None:
    return next((r for r in rows if (r.workload, r.sim, r.side) == (workload, sim, side) and not r.error), None)


def verdicts(rows: list[LoadRow], names: list[str]) -> list[str]:
    """One line per must-show of issue 11 (like report.verdicts): a failed one says FAIL, it does not
    stop the benchmark."""
    out = []
    for name in names:
        offpeak = find(rows, name, "latency", OFFPEAK)
        concurrent = find(rows, name, "latency", CONCURRENT)
        if offpeak and concurrent:
            ok = offpeak.wall <= concurrent.wall
            ratio = f", {offpeak.ratio:.1f}x cheaper than naive" if offpeak.ratio else ""
            out.append(
                f"{name} with latency: offpeak {offpeak.wall:.1f} s, naive {IN_FLIGHT} in flight "
                f"{concurrent.wall:.1f} s (offpeak must take no longer){ratio}: {'PASS' if ok else 'FAIL'}")
        else:
            out.append(f"{name} with latency: FAIL (no result: a side crashed)")
    offpeak = find(rows, "W-classify", "50 rpm", OFFPEAK)
    concurrent = find(rows, "W-classify", "50 rpm", CONCURRENT)
    if offpeak:
        share = offpeak.rate_limited / offpeak.calls if offpeak.calls else 0.0
        naive = (f"; naive {IN_FLIGHT} in flight: {concurrent.rate_limited:,} of {concurrent.calls:,} calls"
                 if concurrent else "")
        out.append(
            f"W-classify at 50 requests a minute: offpeak {offpeak.rate_limited:,} of {offpeak.calls:,} "
            f"calls answered 429 ({share * 100:.1f} %, must be under {MAX_429_SHARE * 100:.0f} %){naive}: "
            f"{'PASS' if share < MAX_429_SHARE else 'FAIL'}")
    else:
        out.append("W-classify at 50 requests a minute: FAIL (no offpeak result)")
    return out


def caption(chosen: list[str]) -> str:
    return "\n".join([
        "## offpeak under latency and rate limits",
        "",
        "- Workloads scaled down to keep the section short: " + ", ".join(chosen) + ".",
        f"- sim `latency`: offpeak-sim `{' '.join(LATENCY_ARGS)}`: each answer takes 400 ms plus 8 ms per "
        "output token, +/-20 % (uniform), repeatable.",
        f"- sim `50 rpm`: the same latency and `{' '.join(RATE_LIMIT_ARGS)}`: a token bucket holding a "
        "minute's allowance (50 requests), refilled continuously; over it the sim answers 429 with "
        "retry-after and the anthropic-ratelimit-* headers.",
        f"- {SEQUENTIAL}: the main table's naive client (`anthropic.Anthropic`, one request after another). "
        f"{CONCURRENT}: `anthropic.AsyncAnthropic`, one request per item, at most {IN_FLIGHT} at once "
        f"(asyncio semaphore); at 50 rpm with `max_retries={RATE_LIMITED_RETRIES}` (the SDK waits what "
        "retry-after says) so every item is answered.",
        "- 429s: calls the sim's rate limiter answered 429 (`/sim/stats` rate_limited); most in flight: "
        "the most calls the sim was answering at once (max_in_flight). naive/offpeak: the naive client one "
        "at a time, $ sim over this row's $ sim.",
    ])


def section(bin_dir: Path, only: list[str] | None = None, keep: bool = False) -> tuple[str, bool]:
    """Runs every row and returns the section's Markdown and whether no side crashed."""
    chosen = [w for w in [workloads.classify(LATENCY_SCALES["W-classify"]),
                          workloads.summarize(LATENCY_SCALES["W-summarize"])]
              if not only or w.name in only]
    rate_limited = workloads.classify(RATE_LIMITED_SCALE) if not only or "W-classify" in only else None
    if not chosen:
        return "", True
    if not has_flags(bin_dir / "offpeak-sim", ["--jitter", "--rpm"]):
        return f"{caption([])}\n\nSKIPPED: {bin_dir / 'offpeak-sim'} has no --jitter/--rpm; rebuild it.\n", False
    scratch = Path(tempfile.mkdtemp(prefix="offpeak-load-bench-"))
    rows: list[LoadRow] = []
    try:
        for workload in chosen:
            group = [run_row(workload, "latency", LATENCY_ARGS, side, bin_dir, scratch)
                     for side in [SEQUENTIAL, CONCURRENT, OFFPEAK]]
            base = group[0]
            for row in group[1:]:
                if not base.error and not row.error and row.dollars_sim > 0:
                    row.ratio = base.dollars_sim / row.dollars_sim
            rows += group
        if rate_limited:
            limited_args = LATENCY_ARGS + RATE_LIMIT_ARGS
            rows.append(run_row(rate_limited, "50 rpm", limited_args, CONCURRENT, bin_dir, scratch,
                                retries=RATE_LIMITED_RETRIES))
            rows.append(run_row(rate_limited, "50 rpm", limited_args, OFFPEAK, bin_dir, scratch))
    finally:
        if keep:
            log(f"load bench scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    notes = [f"- {r.workload} {r.sim} {r.side}: {note}" for r in rows for note in r.notes]
    described = [f"{w.name} {len(w.items):,} items" for w in chosen]
    if rate_limited:
        described.append(f"at 50 rpm W-classify {len(rate_limited.items):,} items")
    text = "\n".join(
        [caption(described), "", table(rows), "",
         *verdicts(rows, [w.name for w in chosen])]
        + (["", "Notes:", *notes] if notes else [])
    ) + "\n"
    return text, not any(r.error for r in rows)
