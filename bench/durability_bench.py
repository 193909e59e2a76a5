#!/usr/bin/env python3
"""What durable commits cost: offpeak's wall time and syncs per call against an offpeak-sim that
answers at once, as one Markdown table.

    python3 bench/durability_bench.py                             # this tree's release build
    python3 bench/durability_bench.py --before-bin /tmp/base      # beside an older release build

Each build runs the same job (against this tree's offpeak-sim) (`--items` requests, batching off, so one call per item) on a fresh
workspace `--runs` times; the table shows the median wall time per call and, from one more run
under `strace -f -c`, the fsync and fdatasync calls per call. With zero provider latency the
store's commits are most of what a call costs, so this is the worst case for durability; under a
real provider's latency (seconds a call) the difference is noise.

Only the release build counts (a debug build is rebuilt as release, as bench/scale_bench.py does).
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_bench import release_folder  # noqa: E402
from sim import Sim  # noqa: E402


class BenchError(RuntimeError):
    pass


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def workspace(root: Path, url: str, items: int) -> Path:
    root.mkdir(parents=True)
    (root / "jobs").mkdir()
    (root / "offpeak.yaml").write_text(f"provider: sim\nbase_url: {url}\n")
    lines = [
        "kind: prompt",
        "system: Label the ticket.",
        'template: "{{item}}"',
        "max_tokens: 20",
        "batching: off",
        "cache_ttl: 0",
        "items:",
    ]
    lines += [f'  - {{id: t{n}, item: "Ticket {n} says problem {n * 7} began today."}}' for n in range(items)]
    (root / "jobs" / "durable.yaml").write_text("\n".join(lines) + "\n")
    return root


def one_run(offpeak: Path, sim_binary: Path, scratch: Path, label: str, items: int,
            strace: bool) -> tuple[float, int]:
    """Runs the job once on a fresh workspace and sim; returns (wall seconds, syncs or 0)."""
    with Sim(sim_binary, [], scratch, label) as sim:
        root = workspace(scratch / label, sim.url, items)
        command = [str(offpeak), "run", "durable", "--workspace", str(root)]
        trace = scratch / f"{label}.strace"
        if strace:
            command = ["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", str(trace)] + command
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise BenchError(f"offpeak run exited {done.returncode}: {done.stderr[-400:]}")
        calls = int(sim.stats().get("calls", 0))
        if calls != items:
            raise BenchError(f"{calls} calls for {items} items")
        return wall, syncs(trace) if strace else 0


def syncs(trace: Path) -> int:
    """fsync + fdatasync calls from `strace -c`'s summary."""
    total = 0
    for line in trace.read_text().splitlines():
        fields = line.split()
        if fields and fields[-1] in ("fsync", "fdatasync"):
            total += int(fields[3])  # % time, seconds, usecs/call, calls[, errors], syscall
    return total


def measure(bin_dir: Path, sim_binary: Path, label: str, items: int, runs: int, scratch: Path) -> dict:
    offpeak = bin_dir / "offpeak"
    walls = []
    for n in range(runs):
        log(f"durability {label}: run {n + 1} of {runs} ({items} calls) ...")
        walls.append(one_run(offpeak, sim_binary, scratch, f"{label}-{n}", items, strace=False)[0])
    count = 0
    if shutil.which("strace"):
        count = one_run(offpeak, sim_binary, scratch, f"{label}-strace", items, strace=True)[1]
    return {"label": label, "ms_per_call": statistics.median(walls) / items * 1000,
            "syncs_per_call": count / items if shutil.which("strace") else None}


def table(rows: list[dict], items: int, runs: int) -> str:
    lines = [
        f"### Durable commits: cost per call ({items} calls, zero-latency sim, release build, "
        f"median of {runs} runs)",
        "",
        "| build | ms per call | fsync + fdatasync per call |",
        "| --- | ---: | ---: |",
    ]
    for row in rows:
        syncs_text = "n/a (no strace)" if row["syncs_per_call"] is None else f"{row['syncs_per_call']:.2f}"
        lines.append(f"| {row['label']} | {row['ms_per_call']:.2f} | {syncs_text} |")
    if len(rows) == 2:
        lines += ["", f"after / before: {rows[1]['ms_per_call'] / rows[0]['ms_per_call']:.2f}x per call"]
    return "\n".join(lines) + "\n"


def section(bin_dir: Path | None, before_bin: Path | None, items: int = 400, runs: int = 5) -> tuple[str, bool]:
    with tempfile.TemporaryDirectory(prefix="offpeak-durability-") as folder:
        scratch = Path(folder)
        try:
            this_tree = release_folder(bin_dir)
            builds = ([(before_bin.resolve(), "before")] if before_bin else []) + [(this_tree, "this tree")]
            # One sim for both builds (this tree's), so only offpeak differs.
            sim_binary = this_tree / "offpeak-sim"
            rows = [measure(path, sim_binary, label, items, runs, scratch) for path, label in builds]
        except (BenchError, OSError, subprocess.SubprocessError, ValueError) as error:
            return f"### Durable commits\n\nFAILED: {type(error).__name__}: {error}\n", False
    return table(rows, items, runs), True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="release build folder with offpeak and offpeak-sim")
    parser.add_argument("--before-bin", type=Path, help="an older release build to measure beside it")
    parser.add_argument("--items", type=int, default=400, help="calls per run (default 400)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per build (median shown)")
    args = parser.parse_args()
    text, ok = section(args.bin, args.before_bin, args.items, args.runs)
    print(text, end="")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
