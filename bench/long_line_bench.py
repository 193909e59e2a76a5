#!/usr/bin/env python3
"""`offpeak submit` with long lines (issue 21, item 3), as one Markdown table.

    python3 bench/long_line_bench.py                          # this tree's release build
    python3 bench/long_line_bench.py --bin .build-release/release --before-bin /tmp/base

Each case is one line (or a few) on stdin, read from a file as a producer's pipe would give it,
sent to `offpeak submit --job inbox` on a fresh workspace (`submit` only writes the store: no
provider is asked). A 10 MB line took minutes before: each 4 KiB read searched the line for its end
from its start again. The goal is a 10 MB valid line taken within 2 s in a release build; a line
over the limit (32 MiB) is refused at its number with exit 65, the lines around it taken.

A command still running after `--ceiling` seconds is killed and shown as `> N (killed)`. The
median of `--runs` runs is shown (`--before-runs`, default 1, for the before build, the slow side);
CPU is user+sys and RSS the peak, both from wait4 through `spawner.py`, so the bench's own size is
not counted.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

import release  # noqa: E402
from spawner import Outcome, Spawner  # noqa: E402

MB = 1_000_000
LIMIT = 32 << 20
JOB = "kind: prompt\nqueue: true\ntemplate: \"{{item}}\"\nmax_tokens: 60\n"
WORDS = ["tide", "moon", "shore", "water", "rises", "falls", "the", "a", "of", "and"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def prose(size: int) -> str:
    """`size` bytes of words, the same every run."""
    text = " ".join(WORDS[(i * 7 + i // 3) % len(WORDS)] for i in range(size // 4 + 1))
    return text[:size]


def cases(folder: Path) -> list[tuple[str, Path, int]]:
    """(what, stdin file, the exit status expected) for each case."""
    short = json.dumps({"prompt": "a short question"})
    written = []
    for name, lines, status in [
        ("10 MB prompt line", [json.dumps({"prompt": prose(10 * MB)})], 0),
        ("10 MB prompt line between 2 short ones", [short, json.dumps({"prompt": prose(10 * MB)}), short], 0),
        ("10 MB line of garbage (refused)", ["x" * (10 * MB)], 65),
        ("40 MB line, over the 32 MiB limit (refused), between 2 short ones", [short, "x" * (40 * MB), short],
         65),
    ]:
        path = folder / f"case-{len(written)}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        written.append((name, path, status))
    return written


def run(spawner: Spawner, offpeak: Path, stdin: Path, scratch: Path, ceiling: float) -> tuple[Outcome, bool]:
    workspace = Path(tempfile.mkdtemp(dir=scratch))
    (workspace / "jobs").mkdir()
    (workspace / "offpeak.yaml").write_text("provider: sim\nbase_url: http://127.0.0.1:9\n")
    (workspace / "jobs" / "inbox.yaml").write_text(JOB)
    pid = spawner.start([offpeak, "submit", "--job", "inbox", "--workspace", workspace], stdin=stdin,
                        stdout=scratch / "out.txt", stderr=scratch / "err.txt")
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(ceiling, kill)
    timer.start()
    outcome = spawner.wait()
    timer.cancel()
    shutil.rmtree(workspace, ignore_errors=True)
    return outcome, killed.is_set()


def build() -> Path:
    return release.build(["offpeak"], log)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", type=Path, help="a release build's folder (default: build this tree)")
    parser.add_argument("--before-bin", type=Path, help="an older release build's folder, for a before row")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before-runs", type=int, default=1, help="runs of the before build, the slow side")
    parser.add_argument("--ceiling", type=float, default=120, help="seconds before a command is killed")
    parser.add_argument("--out", type=Path, help="also write the table here")
    args = parser.parse_args()
    builds = ([("before", args.before_bin)] if args.before_bin else []) + [("after", args.bin or build())]
    rows = ["| case | build | exit | wall s | CPU s | peak RSS MB |", "| --- | --- | --- | ---: | ---: | ---: |"]
    failed = False
    with tempfile.TemporaryDirectory(prefix="offpeak-long-line-") as scratch_name:
        scratch = Path(scratch_name)
        spawner = Spawner()
        try:
            for name, stdin, expected in cases(scratch):
                for label, folder in builds:
                    outcomes = []
                    for attempt in range(args.before_runs if label == "before" else args.runs):
                        log(f"{name}, {label}, run {attempt + 1} ...")
                        outcome, killed = run(spawner, folder / "offpeak", stdin, scratch, args.ceiling)
                        if killed:
                            rows.append(f"| {name} | {label} | killed | > {args.ceiling:.0f} (killed) | "
                                        f"{outcome.cpu:.2f} | {outcome.rss_mb:.0f} |")
                            break
                        outcomes.append(outcome)
                    else:
                        status = outcomes[0].status
                        failed |= label == "after" and status != expected
                        rows.append(
                            f"| {name} | {label} | {status} | {statistics.median(o.wall for o in outcomes):.2f} | "
                            f"{statistics.median(o.cpu for o in outcomes):.2f} | "
                            f"{max(o.rss_mb for o in outcomes):.0f} |")
        finally:
            spawner.close()
    table = "\n".join(rows) + "\n"
    print(table, end="")
    if args.out:
        args.out.write_text(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
