#!/usr/bin/env python3
"""The flex lane (issue 26): cost and wall time of one job live, with flex processing, and in a batch.

One job of short prompts on OpenAI's shape (gpt-5-mini, batched 8 to a prompt), run three times,
each against its own offpeak-sim on loopback: `lane: live`; `lane: flex`, under a sim that answers
flex calls `--flex-slowdown` times more slowly and refuses `--flex-refuse-rate` of them for
capacity (a 429 `resource_unavailable`, not billed); and `lane: batch` through the sim's OpenAI
Batch API, run with `offpeak run --wait`. Every call has the same latency model.

Prints a Markdown table on stdout: calls, refusals, dollars (the ledger's, at the bundled prices:
flex and batch both at gpt-5-mini's batch rates) and wall seconds, with each lane's ratio to live.
Python 3 standard library only. Not a test.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim import Sim  # noqa: E402

JOB = "enrich"
KEY = "sk-bench"


def workspace(root: Path, sim: Sim, items: int, lane: str, in_flight: int) -> Path:
    (root / "jobs").mkdir(parents=True)
    (root / "offpeak.yaml").write_text(
        f"provider: openai\nbase_url: {sim.url}/v1\nmodels: {{openai: {{balanced: gpt-5-mini}}}}\n"
        f"limits: {{openai: {{in_flight: {in_flight}}}}}\n")
    lines = "\n".join(
        f'  - {{id: r{n:04d}, item: "Record {n}: the shipment from depot {n % 17} arrived '
        f'{n % 5} days late with {n * 3 % 40} damaged crates."}}'
        for n in range(1, items + 1))
    (root / "jobs" / f"{JOB}.yaml").write_text(
        f"kind: prompt\ntemplate: \"Classify the delay in one line: {{{{item}}}}\"\nmax_tokens: 60\n"
        f"lane: {lane}\nitems:\n{lines}\n")
    return root


def run(binary: Path, root: Path, lane: str) -> tuple[dict, float]:
    command = [str(binary), "run", JOB, "--workspace", str(root), "--json"]
    if lane == "batch":
        command.append("--wait")
    started = time.monotonic()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=1800, env={**os.environ, "OPENAI_API_KEY": KEY})
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"flex bench: offpeak run ({lane}) failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return json.loads(done.stdout), wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="folder holding offpeak and offpeak-sim")
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=300)
    parser.add_argument("--ms-per-token", type=float, default=2)
    parser.add_argument("--flex-slowdown", type=float, default=3)
    parser.add_argument("--flex-refuse-rate", type=float, default=0.2)
    parser.add_argument("--batch-delay", type=float, default=5)
    args = parser.parse_args()
    binaries = Path(args.bin)
    sim_args = [
        "--require-key", KEY, "--seed", "11", "--latency-ms", str(args.latency_ms),
        "--ms-per-output-token", str(args.ms_per_token), "--flex-slowdown", str(args.flex_slowdown),
        "--flex-refuse-rate", str(args.flex_refuse_rate), "--batch-delay", str(args.batch_delay),
    ]
    rows = {}
    with tempfile.TemporaryDirectory(prefix="offpeak-flex-bench-") as scratch:
        for lane in ["live", "flex", "batch"]:
            with Sim(binaries / "offpeak-sim", sim_args, Path(scratch), lane) as sim:
                root = workspace(Path(scratch) / lane, sim, args.items, lane, args.in_flight)
                outcome, wall = run(binaries / "offpeak", root, lane)
                stats = sim.stats()
                spend = outcome["spend"]
                rows[lane] = {
                    "calls": spend["calls"], "dollars": spend["dollars"], "wall": wall,
                    "flex": stats.get("flex_calls", 0), "refused": stats.get("flex_refused", 0),
                }
                print(f"{lane}: {spend['calls']} calls, ${spend['dollars']:.6f}, {wall:.1f} s", file=sys.stderr)
    print(
        f"{args.items} short prompts on gpt-5-mini (OpenAI's shape), {args.in_flight} calls in flight; every call "
        f"{args.latency_ms:g} ms + {args.ms_per_token:g} ms per output token; flex calls {args.flex_slowdown:g}x slower "
        f"and {args.flex_refuse_rate:.0%} refused for capacity; a provider batch ends {args.batch_delay:g} s after "
        "it is created. One run per lane: wall times are single samples.\n")
    print("| lane | calls | flex calls (refused) | $ ledger | $ vs live | wall s | wall vs live |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    live = rows["live"]
    for lane, row in rows.items():
        flex = f"{row['flex']} ({row['refused']})" if row["flex"] else "-"
        print(
            f"| {lane} | {row['calls']} | {flex} | {row['dollars']:.6f} | {row['dollars'] / live['dollars']:.2f}x "
            f"| {row['wall']:.1f} | {row['wall'] / live['wall']:.2f}x |")
    print(
        "\ncalls: the ledger's (a call refused and retried is one call); flex calls: the HTTP requests the sim "
        "saw with service_tier flex. The sim ends a batch within seconds; a real provider takes minutes to "
        "hours (up to 24 h), which is what flex is for: the batch price, with the answer in the call.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
