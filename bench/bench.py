#!/usr/bin/env python3
"""offpeak's benchmark: each workload run naively (one SDK request per item) and through offpeak,
against the same offpeak-sim, compared in one Markdown table.

    python3 bench/bench.py --bin "$(swift build --show-bin-path)"

Prints the table and one verdict line per must-show on stdout and writes them to
bench/last-run.md. Exits non-zero only when a side crashes (or the tools are missing); a
failed must-show is reported in the verdicts, not as an exit status. See bench/README.md.
"""

import argparse
import datetime
import glob
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True  # keep bench/ free of __pycache__
sys.path.insert(0, str(HERE))

import cache_bench  # noqa: E402
import load_bench  # noqa: E402
import report  # noqa: E402
import scale_bench  # noqa: E402
import durability_bench  # noqa: E402
import sides  # noqa: E402
import workloads  # noqa: E402
from binpath import default_bin  # noqa: E402
from sim import Sim, SimError, has_batch_mode, has_flags  # noqa: E402

DAMAGE_ARGS = ["--damage-rate", "0.2", "--seed", "7"]
DAMAGE_SIDE = "offpeak, 20 % damaged"
# The same, with `structured_output: off`: auto turns the forced tool on after the first damaged
# answer (the sim keeps a forced tool's answers whole), so this row is the one where the splitter
# and adaptive batching do the work.
DAMAGE_PLAIN_SIDE = "offpeak, 20 % damaged, plain"
BATCH_SIDE = report.BATCH_SIDE
# The sim ends a provider batch this many seconds after it is created (its default is 2).
BATCH_ARGS = ["--batch-delay", "1"]
BATCH_WORKLOADS = {"W-classify", "W-summarize"}
# W-classify against a model whose batched answers go wrong after the 4th item (issue 25): with the
# batch audit (the default) and without it.
DEGRADE_ARGS = ["--degrading-model", f"{sides.MODEL}:wrong-label:4", "--seed", "7"]
DEGRADE_SIDE = report.DEGRADE_SIDE
DEGRADE_OFF_SIDE = report.DEGRADE_OFF_SIDE
DEGRADE_BATCH_SIDE = report.DEGRADE_BATCH_SIDE
SPREAD_5M_SIDE = report.SPREAD_5M_SIDE
SPREAD_HOUR_SIDE = report.SPREAD_HOUR_SIDE
# The sim answers a batch's requests over six hours of its prompt cache's clock (a provider under load).
SPREAD_ARGS = BATCH_ARGS + ["--batch-spread", "21600"]


def ensure_sdk() -> None:
    """The naive side uses the official SDK; install it if this Python lacks it."""
    try:
        import anthropic  # noqa: F401
    except ImportError:
        print("installing the anthropic SDK (python3 -m pip install --quiet anthropic)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "anthropic"], check=True)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_side(workload, side: str, bin_dir: Path, scratch: Path, sim_extra: list[str] = ()) -> report.Row:
    """Runs one side of one workload against a fresh offpeak-sim and scores its answers."""
    row = report.Row(workload=workload.name, side=side, total=len(workload.items))
    label = f"{workload.name}-{side}".replace(" ", "").replace(",", "-").replace("%", "pc")
    log(f"{workload.name} / {side}: {len(workload.items)} items ...")
    try:
        with Sim(bin_dir / "offpeak-sim", workload.sim_args + list(sim_extra), scratch, label) as sim:
            if side == "naive":
                run = sides.run_naive(workload, sim.url)
            else:
                lane = "batch" if side in (BATCH_SIDE, DEGRADE_BATCH_SIDE, SPREAD_5M_SIDE, SPREAD_HOUR_SIDE) else None
                settings = "structured_output: off\n" if side == DAMAGE_PLAIN_SIDE else ""
                extra = {"audit": "off"} if side == DEGRADE_OFF_SIDE else None
                if side == SPREAD_5M_SIDE:
                    extra = {"prompt_cache_ttl": "5m"}
                run = sides.run_offpeak(
                    workload, sim.url, bin_dir, scratch / f"ws-{label}", lane, settings, extra)
                row.audits = run.audits
            row.take_stats(sim.stats())
            expected = sim.expected([item.message for item in workload.items])
    except (sides.SideCrashed, SimError, OSError, subprocess.SubprocessError, ValueError, KeyError) as error:
        row.error = f"{type(error).__name__}: {error}"
        log(f"  crashed: {row.error}")
        return row
    row.wall = run.wall_seconds
    row.notes = run.notes + (stats_notes(row.stats) if side != "naive" else [])
    row.correct = sum(run.answers.get(item.id) == answer for item, answer in zip(workload.items, expected))
    if run.ledger is not None:
        row.dollars_ledger = run.ledger.get("dollars")
    log(f"  {row.calls} calls, ${row.dollars_sim:.4f}, {row.correct}/{row.total} correct, {row.wall:.1f} s")
    return row


def stats_notes(stats: dict) -> list[str]:
    """What the sim saw of batching and damage, for the notes under the table."""
    notes = []
    if stats.get("calls"):  # live calls; a batch-lane row's calls went through provider batches
        notes.append(
            f"{stats['batched_calls']:,} of {stats.get('calls', 0):,} calls were batched prompts "
            f"({stats.get('batched_items', 0):,} items)")
    ended = stats.get("batches") or {}
    if ended.get("created"):
        outcomes = ", ".join(f"{k} {ended.get(k, 0):,}" for k in ["succeeded", "errored", "expired", "canceled"])
        notes.append(f"{ended['created']:,} provider batches created, {ended.get('ended', 0):,} ended; requests {outcomes}")
    damage = {kind: n for kind, n in (stats.get("damage") or {}).items() if n}
    if damage:
        notes.append("sim damaged batched answers: " + ", ".join(f"{k} {v:,}" for k, v in sorted(damage.items())))
    return notes


def caption(args, bin_dir: Path) -> str:
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    latency = (
        f"{args.latency_ms:g} ms latency per call" if args.latency_ms
        else "no added latency, so wall s is each client's own overhead"
    )
    lines = [
        f"## offpeak bench, {now}",
        "",
        f"- Machine: {platform.machine()}, {os.cpu_count()} CPUs; binaries from `{bin_dir}`.",
        "- One run per side: costs and answers are deterministic; wall times are single samples, not medians.",
        "- naive: one request per item through the official `anthropic` SDK, sequential, no prompt caching.",
        "- offpeak: `offpeak run` (W-inbox: `offpeak submit` per agent, then `offpeak run` per agent job).",
        f"- Each side talks to its own fresh offpeak-sim on loopback ({latency}).",
        "- Model: tier `fast` mapped to claude-sonnet-4-5 (it caches prefixes from 1,024 tokens; "
        "claude-haiku-4-5 only from 4,096, which W-classify's few-shot prefix does not reach).",
        "- Tokens and $ sim: the sim's billed counters at claude-sonnet-4-5 prices ($3/M input, $15/M output, "
        "$0.30/M cache read, $3.75/M cache write); $ ledger: `offpeak costs --json` total.dollars.",
        "- correct: answers equal to the sim's `/sim/expected` answer for the item sent alone.",
        "- offpeak, batch lane: the same job with `lane: batch`, run with `offpeak run --wait`: every call goes "
        "through the sim's Anthropic Message Batches (`--batch-delay 1`). Its tokens are the sim's `billed_batch` "
        "counters, priced at claude-sonnet-4-5's batch prices, half the live ones ($1.50/M input, $7.50/M output, "
        "$0.15/M cache read, $1.875/M cache write, $3/M for the 1-hour cache's writes); calls counts the batches' "
        "requests. offpeak asks for the 1-hour cache in a batch that sends its prefix more than once.",
        "- batch over 6 h: the batch lane against a sim that answers a batch's requests over six hours of its "
        "prompt cache's clock (`--batch-spread 21600`, 8 minutes apart), with `prompt_cache_ttl: 5m` (a 5-minute "
        "cache, gone before each next request) and with the default (the hour).",
    ]
    if args.scale != 1:
        lines.append(f"- Item counts scaled by {args.scale:g}.")
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, default=None,
                        help="folder with the built offpeak and offpeak-sim (default: this checkout's debug build)")
    parser.add_argument("--only", action="append", metavar="WORKLOAD",
                        help="run only this workload (W-classify, W-summarize, W-inbox); repeatable")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every workload's item count (e.g. 0.1 for a quick look)")
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="offpeak-sim --latency-ms for every sim (default: 0)")
    parser.add_argument("--no-damage", action="store_true", help="skip the damaged W-classify row")
    parser.add_argument("--no-audit", action="store_true",
                        help="skip the W-classify rows against a model that degrades after position 4")
    parser.add_argument("--no-batch-lane", action="store_true",
                        help="skip the batch-lane rows (W-classify and W-summarize through provider batches)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (workspaces, sim logs)")
    parser.add_argument("--no-load-bench", action="store_true",
                        help="skip the latency and rate-limit table (bench/load_bench.py)")
    parser.add_argument("--no-cache-bench", action="store_true",
                        help="skip the second table: offpeak's cache against diskcache, and LZ4 (bench/cache_bench.py)")
    parser.add_argument("--no-scale", action="store_true",
                        help="skip the scale table: a 100,000-request backlog and a store of 1,000,000 cache "
                             "entries (bench/scale_bench.py)")
    parser.add_argument("--no-durability", action="store_true",
                        help="skip the table of what durable commits cost per call (bench/durability_bench.py)")
    parser.add_argument("--scale-quick", action="store_true",
                        help="run the scale table at a tenth of that (10,000 requests, 100,000 entries)")
    parser.add_argument("--before-bin", type=Path, metavar="DIR",
                        help="an older release build (offpeak, offpeak-sim, offpeak-bench) to run the scale and cache "
                             "tables with too")
    parser.add_argument("--estimate", action="store_true",
                        help="only the table of `offpeak estimate` against what the run then costs "
                             "(bench/estimate_bench.py; honours --scale, --only, --no-batch-lane)")
    parser.add_argument("--out", type=Path, default=HERE / "last-run.md",
                        help="where to write the table too (default: bench/last-run.md)")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    bin_dir = (args.bin or default_bin()).resolve()
    for tool in ["offpeak", "offpeak-sim"]:
        if not (bin_dir / tool).exists():
            log(f"bench: {bin_dir / tool} is missing; build first (swift build)")
            return 2
    if not has_batch_mode(bin_dir / "offpeak-sim"):
        log(f"bench: {bin_dir / 'offpeak-sim'} has no --answer-tokens/--damage-rate; rebuild it")
        return 2
    if args.estimate:
        import estimate_bench
        text, ok = estimate_bench.section(bin_dir, args.scale, args.only, not args.no_batch_lane)
        print(text, end="")
        return 0 if ok else 1
    ensure_sdk()
    if not args.no_batch_lane and not has_flags(bin_dir / "offpeak-sim", ["--batch-delay"]):
        log(f"bench: {bin_dir / 'offpeak-sim'} has no provider batches (--batch-delay); batch-lane rows skipped")
        args.no_batch_lane = True

    chosen = [w for w in workloads.all_workloads(args.scale) if not args.only or w.name in args.only]
    if not chosen:
        log(f"bench: no workload matches {args.only}")
        return 64
    latency = ["--latency-ms", str(args.latency_ms)] if args.latency_ms else []
    for workload in chosen:
        workload.sim_args += latency

    scratch = Path(tempfile.mkdtemp(prefix="offpeak-bench-"))
    rows: list[report.Row] = []
    try:
        for workload in chosen:
            naive = run_side(workload, "naive", bin_dir, scratch)
            rows.append(naive)
            variants = [("offpeak", [])]
            if workload.name == "W-classify" and not args.no_damage:
                variants.append((DAMAGE_SIDE, DAMAGE_ARGS))
                variants.append((DAMAGE_PLAIN_SIDE, DAMAGE_ARGS))
            if workload.name == "W-classify" and not args.no_audit:
                variants.append((DEGRADE_OFF_SIDE, DEGRADE_ARGS))
                variants.append((DEGRADE_SIDE, DEGRADE_ARGS))
                if not args.no_batch_lane:
                    variants.append((DEGRADE_BATCH_SIDE, BATCH_ARGS + DEGRADE_ARGS))
            if workload.name in BATCH_WORKLOADS and not args.no_batch_lane:
                variants.append((BATCH_SIDE, BATCH_ARGS))
            if workload.name == "W-classify" and not args.no_batch_lane:
                variants.append((SPREAD_5M_SIDE, SPREAD_ARGS))
                variants.append((SPREAD_HOUR_SIDE, SPREAD_ARGS))
            for side, extra in variants:
                row = run_side(workload, side, bin_dir, scratch, extra)
                if not naive.error and not row.error and row.dollars_sim > 0:
                    row.ratio = naive.dollars_sim / row.dollars_sim
                rows.append(row)
    finally:
        if args.keep:
            log(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)

    damage_sides = [side for side in (DAMAGE_SIDE, DAMAGE_PLAIN_SIDE) if any(r.side == side for r in rows)]
    lines = report.verdicts(rows, damage_sides)
    notes = [f"- {r.workload} {r.side}: {note}" for r in rows for note in r.notes]
    text = "\n".join(
        [caption(args, bin_dir), "", report.table(rows), "", *lines]
        + (["", "Notes:", *notes] if notes else [])
    ) + "\n"
    print(text, end="")
    load_ok = True
    if not args.no_load_bench:
        load_text, load_ok = load_bench.section(bin_dir, args.only, args.keep)
        if load_text:
            print("\n" + load_text, end="")
            text += "\n" + load_text
    cache_ok = True
    if not args.no_cache_bench:
        cache_text, cache_ok = cache_bench.section(bin_dir, args.before_bin)
        print("\n" + cache_text, end="")
        text += "\n" + cache_text
    if not args.no_scale:
        scale_args = argparse.Namespace(
            before_bin=args.before_bin, full=not args.scale_quick, requests=None, entries=None,
            store_requests=None, ledger=None, calls=None, seconds=None, runs=5, no_backlog=False,
            no_store=False, keep=args.keep, repeat=3,
            # SQLite and PostgreSQL side by side where PostgreSQL is installed (`make test-deps`).
            postgres=bool(glob.glob("/usr/lib/postgresql/*/bin/initdb")))
        scale_text, scale_ok = scale_bench.section(bin_dir, scale_args)
        print("\n" + scale_text, end="")
        text, cache_ok = text + "\n" + scale_text, cache_ok and scale_ok
    if not args.no_durability:
        durability_text, durability_ok = durability_bench.section(bin_dir, args.before_bin)
        print("\n" + durability_text, end="")
        text, cache_ok = text + "\n" + durability_text, cache_ok and durability_ok
    args.out.write_text(text)
    return 1 if any(r.error for r in rows) or not cache_ok or not load_ok else 0


if __name__ == "__main__":
    sys.exit(main())
