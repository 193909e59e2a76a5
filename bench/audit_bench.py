#!/usr/bin/env python3
"""The batch audit against answers that slide with position (issue 44): a table, not a test.

W-classify against offpeak-sim models of two kinds, each side on a fresh sim and workspace:
- position-graded (`--degrading-model claude-sonnet-4-5:wrong-label:slope=1.5% --seed 7`): in a
  batched prompt the item at position p is wrong with a chance of 1.5 % x p (16 items: ~13 %
  wrong), while every item asked alone is right. 300 and 3,000 tickets with
  `batching: {max_items: 16}`, each with the audit off and with the default audit;
- one that holds up: 1,000 tickets with `batching: {max_items: 8}` (the main table's row), and
  the same job run again on the same workspace, where the evidence carried from the first run.

The naive side (one SDK request per item, no prompt caching) is run once per size, for the
ratio. Per row: items right (against the sim's /sim/expected), the batch size the audit settled
on, calls, the sim's $, naive/offpeak, and the audit's share of the spend: over the run, while
proving (up to the decision that settled the final size) and once proven (after it). The split is
read from the workspace's SQLite store: ledger rows before and after that decision's time.

    python3 bench/audit_bench.py --bin "$(swift build --show-bin-path)"

Prints the table and the verdict lines on stdout. Needs the `anthropic` SDK (bench.py installs it).
"""

import argparse
import datetime
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

import report  # noqa: E402
import sides  # noqa: E402
import workloads  # noqa: E402
from binpath import default_bin  # noqa: E402
from sim import Sim  # noqa: E402

SLOPE = ["--degrading-model", f"{sides.MODEL}:wrong-label:slope=1.5%", "--seed", "7"]
# The main table's W-classify, a model that holds up, at 7.3x before the sequential audit.
BEFORE_RATIO = 7.3
# 2001-01-01, where a stored record's dates count from.
REFERENCE = datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def split(workspace: Path, runs: int = 1) -> dict:
    """The audit's share over the last `runs` runs' ledger rows, and split at the decision that
    settled the final size: before it (proving) and after it (proven)."""
    db = sqlite3.connect(workspace / "cache" / "offpeak.sqlite")
    try:
        record = json.loads(db.execute("SELECT record FROM audit_records").fetchone()[0])
        ids = [r[0] for r in db.execute("SELECT id FROM runs ORDER BY created_at")][-runs:]
        marks = ",".join("?" * len(ids))
        rows = db.execute(f"SELECT at, audit, dollars FROM ledger WHERE run_id IN ({marks})", ids).fetchall()
    finally:
        db.close()
    settled = None
    final = record.get("cap")
    for decision in record.get("decisions", []):
        if decision["kind"] == "proven" and (final is None or decision["size"] <= final):
            settled = decision["at"]
    cut = None if settled is None else (REFERENCE + datetime.timedelta(seconds=settled)).strftime(
        "%Y-%m-%d %H:%M:%S.%f")[:-3]

    def share(selected):
        total = sum(d for _, _, d in selected)
        return (sum(d for _, a, d in selected if a) / total) if total else None

    before = rows if cut is None else [r for r in rows if r[0] <= cut]
    after = [] if cut is None else [r for r in rows if r[0] > cut]
    return {"all": share(rows), "proving": share(before), "proven": share(after),
            "held": any(s.get("holds") for s in record.get("sizes", []))}


def side(workload, bin_dir: Path, scratch: Path, label: str, extra: dict, sim_args: list[str],
         again: bool = False) -> dict:
    """One offpeak run (and, with `again`, a second on the same workspace) on a fresh sim."""
    log(f"{label}: {len(workload.items)} items ...")
    ws = scratch / f"ws-{label}"
    with Sim(bin_dir / "offpeak-sim", workload.sim_args + sim_args, scratch, label) as sim:
        run = sides.run_offpeak(workload, sim.url, bin_dir, ws, None, "", extra)
        row = report.Row(workload=workload.name, side=label, total=len(workload.items))
        row.take_stats(sim.stats())
        expected = sim.expected([item.message for item in workload.items])
        result = {"row": row, "right": sum(run.answers.get(i.id) == a for i, a in zip(workload.items, expected))}
        audit = run.audits.get("classify", {})
        result["audit"] = audit
        if extra.get("audit") != "off":
            result["split"] = split(ws)
        if again:
            # The same items asked again (`--refresh`), the evidence of the first run in the store.
            sim.reset()
            subprocess.run(
                [str(bin_dir / "offpeak"), "run", "classify", "--refresh", "--workspace", str(ws)],
                check=True, capture_output=True, timeout=1800)
            second = report.Row(workload=workload.name, side=label + ", run again", total=len(workload.items))
            second.take_stats(sim.stats())
            result["again"] = {"row": second, "split": split(ws, runs=1)}
    return result


def size(audit: dict, maximum: int) -> str:
    caps = [m.get("cap") for m in audit.get("models", [])]
    cap = caps[0] if caps else None
    return str(min(cap, maximum)) if cap else f"{maximum} (unchanged)"


def percent(value) -> str:
    return "—" if value is None else f"{value:.1%}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    bin_dir = (args.bin or default_bin()).resolve()
    scratch = Path(tempfile.mkdtemp(prefix="offpeak-audit-bench-"))
    lines = [
        "## The batch audit against answers that slide with position (issue 44)",
        "",
        "| workload | model | audit | items | right | final size | calls | $ sim | naive/offpeak "
        "| audit share | while proving | once proven |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    verdicts = []
    try:
        for count in (300, 3000):
            work = workloads.classify(scale=count / 1000)
            with Sim(bin_dir / "offpeak-sim", work.sim_args, scratch, f"naive-{count}") as sim:
                sides.run_naive(work, sim.url)
                naive = report.Row(workload=work.name, side="naive", total=count)
                naive.take_stats(sim.stats())
            for audit in ("off", None):
                extra = {"batching": {"max_items": 16}}
                if audit:
                    extra["audit"] = audit
                label = f"slope-{count}-{'off' if audit else 'on'}"
                got = side(work, bin_dir, scratch, label, extra, SLOPE)
                row, shares = got["row"], got.get("split", {})
                lines.append(
                    f"| W-classify | 1.5 %/position | {'off' if audit else 'on'} | {count:,} | "
                    f"{got['right']:,}/{count:,} ({got['right'] / count:.1%}) | "
                    f"{'16' if audit else size(got['audit'], 16)} | {row.calls:,} | {row.dollars_sim:.4f} | "
                    f"{naive.dollars_sim / row.dollars_sim:.1f}x | {percent(shares.get('all'))} | "
                    f"{percent(shares.get('proving'))} | {percent(shares.get('proven'))} |")
                if not audit:
                    ok = got["right"] >= 0.95 * count
                    verdicts.append(
                        f"W-classify at {count:,}, a model wrong at 1.5 % x position: {got['right']:,}/{count:,} "
                        f"right at {size(got['audit'], 16)} items a prompt, {row.calls:,} calls, audit "
                        f"{percent(shares.get('all'))} of the spend ({percent(shares.get('proving'))} while proving, "
                        f"{percent(shares.get('proven'))} once proven) (must be at least 95 % right): "
                        f"{'PASS' if ok else 'FAIL'}")
        work = workloads.classify()
        with Sim(bin_dir / "offpeak-sim", work.sim_args, scratch, "naive-1000") as sim:
            sides.run_naive(work, sim.url)
            naive = report.Row(workload=work.name, side="naive", total=1000)
            naive.take_stats(sim.stats())
        got = side(work, bin_dir, scratch, "holds-1000", {}, [], again=True)
        for row, shares, right, note in (
            (got["row"], got["split"], got["right"], "first run"),
            (got["again"]["row"], got["again"]["split"], None, "run again"),
        ):
            lines.append(
                f"| W-classify | holds up ({note}) | on | 1,000 | "
                f"{'—' if right is None else f'{right:,}/1,000'} | {size(got['audit'], 8)} | {row.calls:,} | "
                f"{row.dollars_sim:.4f} | {naive.dollars_sim / row.dollars_sim:.2f}x | {percent(shares.get('all'))} | "
                f"{percent(shares.get('proving'))} | {percent(shares.get('proven'))} |")
        first = got["row"]
        ratio = naive.dollars_sim / first.dollars_sim
        share = got["split"]["all"] or 0
        ok = share <= 0.03 and ratio >= BEFORE_RATIO * 0.95 and got["right"] == 1000
        verdicts.append(
            f"W-classify, a model that holds up: audit {share:.1%} of the spend, {ratio:.2f}x cheaper than naive "
            f"(before the sequential audit {BEFORE_RATIO}x), batch size {size(got['audit'], 8)}; run again on the "
            f"same store: audit {percent(got['again']['split']['all'])} "
            f"(must be at most 3 % and within 5 % of {BEFORE_RATIO}x): {'PASS' if ok else 'FAIL'}")
    finally:
        if args.keep:
            log(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    print("\n".join(lines + [""] + verdicts) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
