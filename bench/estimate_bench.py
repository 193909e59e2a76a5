#!/usr/bin/env python3
"""`offpeak estimate` against what the run then costs, on W-classify, W-summarize and W-inbox.

    python3 bench/estimate_bench.py --bin "$(swift build --show-bin-path)" [--scale 1]
    python3 bench/bench.py --estimate ...          # the same table, from the bench

For each workload, on a fresh workspace and its own fresh offpeak-sim: the requests are submitted
(W-inbox), `offpeak estimate JOB --json` is asked for every job (the sim must have seen no call),
every job is run (`run --wait` in the batch lane), and the estimate is set against the ledger
(`offpeak costs --json`) and the sim's call count. Then the same work is estimated again with
`--no-cache`: by now the ledger has measured the answers' length, which the first estimate could
only guess (half of max_tokens). Prints a Markdown table; exits 1 when an estimate misses by more
than 10 % (or a side fails).
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

import sides  # noqa: E402
import workloads  # noqa: E402
from binpath import default_bin  # noqa: E402
from sim import Sim  # noqa: E402

TOLERANCE = 0.10
BATCH_ARGS = ["--batch-delay", "1"]


def offpeak(binary: Path, workspace: Path, args: list[str], stdin: str | None = None) -> str:
    result = subprocess.run(
        [str(binary), *args, "--workspace", str(workspace)], input=stdin, capture_output=True, text=True,
        timeout=1800)
    if result.returncode != 0:
        raise RuntimeError(f"offpeak {' '.join(args)} exited {result.returncode}: {result.stderr.strip()[-800:]}")
    return result.stdout


def estimates(binary: Path, workspace: Path, jobs: list[str], extra: list[str] = ()) -> tuple[float, int]:
    dollars, calls = 0.0, 0
    for job in jobs:
        report = json.loads(offpeak(binary, workspace, ["estimate", job, "--json", *extra]))
        dollars += report["dollars"]
        calls += report[report["lane"]]["calls"]
    return dollars, calls


def measure(workload, lane: str | None, bin_dir: Path, scratch: Path) -> dict:
    """One workload through one lane: the estimates, and what the run cost."""
    binary = bin_dir / "offpeak"
    label = workload.name + ("-batch" if lane else "")
    sim_args = workload.sim_args + (BATCH_ARGS if lane else [])
    with Sim(bin_dir / "offpeak-sim", sim_args, scratch, label) as sim:
        workspace = scratch / f"ws-{label}"
        sides.make_workspace(workload, workspace, sim.url, lane)
        jobs = [job.name for job in workload.jobs]
        if workload.feed == "submit":
            for job in jobs:
                sides.submit(binary, workload, workspace, job)
        first, first_calls = estimates(binary, workspace, jobs)
        if sim.stats()["calls"] != 0:
            raise RuntimeError(f"{label}: the estimate called the sim")
        for job in jobs:
            offpeak(binary, workspace, ["run", job, *(["--wait"] if lane else [])])
        actual = json.loads(offpeak(binary, workspace, ["costs", "--json"]))["total"]["dollars"]
        stats = sim.stats()
        ended = stats.get("batches") or {}
        calls = sum(ended.get(k, 0) for k in ["succeeded", "errored", "expired", "canceled"]) if lane else stats["calls"]
        if workload.feed == "submit":  # the run answered every submission: the same requests again
            for job in jobs:
                sides.submit(binary, workload, workspace, job)
        measured, _ = estimates(binary, workspace, jobs, ["--no-cache"])
    return {"name": workload.name + (", batch lane" if lane else ""), "items": len(workload.items),
            "first": first, "first_calls": first_calls, "actual": actual, "calls": calls, "measured": measured}


def off(estimate: float, actual: float) -> float:
    return estimate / actual - 1 if actual else float("inf")


def table(rows: list[dict]) -> str:
    lines = [
        "| workload | items | estimate $ (answer length guessed) | off | estimate $ (answer length measured) | off "
        "| run $ (ledger) | calls estimated / made |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {r['items']:,} | {r['first']:.4f} | {off(r['first'], r['actual']):+.1%} "
            f"| {r['measured']:.4f} | {off(r['measured'], r['actual']):+.1%} | {r['actual']:.4f} "
            f"| {r['first_calls']:,} / {r['calls']:,} |")
    return "\n".join(lines)


def section(bin_dir: Path, scale: float = 1.0, only: list[str] | None = None, batch_lane: bool = True) -> tuple[str, bool]:
    """The table as Markdown, and whether every estimate is within `TOLERANCE`."""
    scratch = Path(tempfile.mkdtemp(prefix="offpeak-estimate-"))
    rows = []
    try:
        for workload in workloads.all_workloads(scale):
            if only and workload.name not in only:
                continue
            rows.append(measure(workload, None, bin_dir, scratch))
            if batch_lane and workload.name != "W-inbox":
                rows.append(measure(workload, "batch", bin_dir, scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    ok = all(abs(off(r[key], r["actual"])) <= TOLERANCE for r in rows for key in ["first", "measured"])
    text = "\n".join([
        "## offpeak estimate against the run",
        "",
        "- `offpeak estimate JOB --json` on a fresh workspace, before the run (the sim saw no call), then the "
        "run's ledger (`offpeak costs --json`). Tier `fast` = claude-sonnet-4-5, as in the bench.",
        "- answer length guessed: half of max_tokens (nothing measured yet); measured: the same work estimated "
        "again with `--no-cache` after the run, from the ledger's answer lengths.",
        f"- Item counts scaled by {scale:g}." if scale != 1 else "- Full-size workloads.",
        "",
        table(rows),
        "",
        f"every estimate within {TOLERANCE:.0%} of the run: {'yes' if ok else 'NO'}",
    ]) + "\n"
    return text, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, default=None)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only", action="append", metavar="WORKLOAD")
    parser.add_argument("--no-batch-lane", action="store_true")
    args = parser.parse_args()
    text, ok = section((args.bin or default_bin()).resolve(), args.scale, args.only, not args.no_batch_lane)
    print(text, end="")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
