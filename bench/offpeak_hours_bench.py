#!/usr/bin/env python3
"""W-deepseek (issue 48): waiting for the cheap hours, on a model whose prices change with the clock.

W-classify's tickets (few-shot prefix, short answers) on DeepSeek's shape of offpeak-sim, priced by
the bundled DeepSeek table (half price outside 01:00-04:00 and 06:00-10:00 UTC on weekdays). The
job starts in peak hours, on Monday 2026-11-30 at 06:05 UTC: the run's clock (`offpeak run --now`)
and the sim's (`--clock-offset`) are moved together, so the sim bills each answer in the window it
lands in. Four sides:

- naive: the naive way's dollars, as the ledger of the run-now side prices them (one request per
  item, no cache, no batching, at the prices in force);
- now: the job with a 24-hour deadline, run at once;
- waits: the same job with `wait_for_cheaper_prices: true`: its run at 06:05 waits in the deferred
  queue; a run at 10:00 (the first off-peak hour; a tick would start it) answers every item;
- 1-hour deadline: `wait_for_cheaper_prices: true` with `deadline: 1h` cannot wait for 10:00: it runs
  at once, and says so.

Prints a Markdown table on stdout: calls, items answered, the ledger's dollars, the sim's bill by
window at the bundled prices (so the ledger is checked against what the provider billed), the
ratio to running now, and when the work finished against its deadline. Exits 1 when the waiting
side misses its target (at most 0.55x of running now, every item answered, before the deadline) or
the 1-hour side waited. Python 3 standard library only. Not a test.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads  # noqa: E402
from sim import Sim  # noqa: E402

KEY = "sk-bench"
MODEL = "deepseek-v4-pro"  # the balanced tier
# DeepSeek's bundled prices per token (input, cache hit, output) at peak; off-peak is half.
PEAK = {"input_tokens": 1.32e-06, "cache_read_input_tokens": 4.4e-08, "output_tokens": 3.96e-06}
START = datetime.datetime(2026, 11, 30, 6, 5, tzinfo=datetime.timezone.utc)  # a Monday, peak hours
OFF_PEAK = datetime.datetime(2026, 11, 30, 10, 0, tzinfo=datetime.timezone.utc)


def workspace(root: Path, sim: Sim, workload: workloads.Workload, extra: str, in_flight: int) -> Path:
    job = workload.jobs[0]
    (root / "jobs").mkdir(parents=True, exist_ok=True)
    (root / "offpeak.yaml").write_text(
        f"provider: deepseek\nbase_url: {sim.url}/deepseek\nlimits: {{deepseek: {{in_flight: {in_flight}}}}}\n")
    items = "\n".join(f"  - {{id: {item.id}, item: {json.dumps(item.text)}}}" for item in workload.items)
    (root / "jobs" / "classify.yaml").write_text(
        f"kind: prompt\nsystem: {json.dumps(job.system)}\ninstructions: {json.dumps(job.instructions)}\n"
        f"template: \"{{{{item}}}}\"\nmax_tokens: {job.max_tokens}\n{extra}items:\n{items}\n")
    return root


def point_at(root: Path, sim: Sim, in_flight: int) -> None:
    (root / "offpeak.yaml").write_text(
        f"provider: deepseek\nbase_url: {sim.url}/deepseek\nlimits: {{deepseek: {{in_flight: {in_flight}}}}}\n")


def run(binary: Path, root: Path, at: datetime.datetime) -> tuple[dict, int, float]:
    started = time.monotonic()
    done = subprocess.run(
        [str(binary), "run", "classify", "--workspace", str(root), "--json", "--now", at.isoformat()],
        capture_output=True, text=True, timeout=1800, env={**os.environ, "DEEPSEEK_API_KEY": KEY})
    if done.returncode not in (0, 75):
        raise SystemExit(f"hours bench: offpeak run failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return json.loads(done.stdout), done.returncode, time.monotonic() - started


def waiting_saved(binary: Path, root: Path) -> float:
    """What `offpeak costs` says waiting saved, from its JSON."""
    done = subprocess.run(
        [str(binary), "costs", "--workspace", str(root), "--json"], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"hours bench: offpeak costs failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return (json.loads(done.stdout).get("waiting") or {}).get("dollars", 0.0)


def sim_at(binary: Path, at: datetime.datetime, args: list[str], scratch: Path, label: str) -> Sim:
    offset = at.timestamp() - time.time()
    return Sim(binary, [*args, "--clock-offset", f"{offset:.3f}"], scratch, label)


def billed(stats: dict) -> float:
    """The sim's bill: each window's tokens at DeepSeek's prices (off-peak at half)."""
    total = 0.0
    for window, tokens in stats.get("billed_by_window", {}).items():
        factor = 1.0 if window == "peak" else 0.5
        total += factor * sum(tokens.get(kind, 0) * price for kind, price in PEAK.items())
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="folder holding offpeak and offpeak-sim")
    parser.add_argument("--scale", type=float, default=0.2, help="share of W-classify's 1,000 tickets")
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--latency-ms", type=float, default=200)
    args = parser.parse_args()
    binaries = Path(args.bin)
    workload = workloads.classify(args.scale)
    sim_args = ["--require-key", KEY, "--seed", "7", "--latency-ms", str(args.latency_ms), *workload.sim_args]
    rows: dict[str, dict] = {}
    ok = True
    with tempfile.TemporaryDirectory(prefix="offpeak-hours-bench-") as scratch_text:
        scratch = Path(scratch_text)
        sides = [
            ("now", "deadline: 24h\n", 24),
            ("waits", "deadline: 24h\nwait_for_cheaper_prices: true\n", 24),
            ("1-hour deadline", "deadline: 1h\nwait_for_cheaper_prices: true\n", 1),
        ]
        for side, extra, hours in sides:
            root = scratch / side.replace(" ", "-")
            deadline = START + datetime.timedelta(hours=hours)
            with sim_at(binaries / "offpeak-sim", START, sim_args, scratch, f"{side}-start") as sim:
                workspace(root, sim, workload, extra, args.in_flight)
                outcome, status, wall = run(binaries / "offpeak", root, START)
                bill = billed(sim.stats())
                finished = START + datetime.timedelta(seconds=wall)
            said = outcome["message"].split(";")[0]
            if status == 75 and side == "waits":
                with sim_at(binaries / "offpeak-sim", OFF_PEAK, sim_args, scratch, f"{side}-later") as sim:
                    point_at(root, sim, args.in_flight)
                    outcome, status, wall = run(binaries / "offpeak", root, OFF_PEAK)
                    bill += billed(sim.stats())
                    finished = OFF_PEAK + datetime.timedelta(seconds=wall)
            spend = outcome["spend"]
            rows[side] = {
                "calls": spend["calls"], "done": outcome["items_done"], "total": outcome["items_total"],
                "dollars": spend["dollars"], "naive": spend["naive_dollars"], "billed": bill,
                "finished": finished, "deadline": deadline, "status": status, "said": said,
                "saved": waiting_saved(binaries / "offpeak", root),
            }
            print(f"{side}: {spend['calls']} calls, ${spend['dollars']:.6f}, status {status}", file=sys.stderr)
    now = rows["now"]
    table = [
        f"W-deepseek: {len(workload.items)} of W-classify's tickets on {MODEL} (DeepSeek's shape of offpeak-sim), "
        f"{args.in_flight} calls in flight, {args.latency_ms:g} ms a call; started {START:%a %Y-%m-%d %H:%M} UTC, in "
        "peak hours. The run's and the sim's clocks are moved together; the sim bills each answer in its window.\n",
        "| side | calls | items | $ ledger | $ billed by the sim | vs now | finished (UTC) | deadline (UTC) |",
        "|---|---:|---:|---:|---:|---:|---|---|",
        f"| naive | {now['total']} | {now['total']} | {now['naive']:.6f} | - | {now['naive'] / now['dollars']:.2f}x | - | - |",
    ]
    for side, row in rows.items():
        table.append(
            f"| {side} | {row['calls']} | {row['done']}/{row['total']} | {row['dollars']:.6f} | {row['billed']:.6f} "
            f"| {row['dollars'] / now['dollars']:.2f}x | {row['finished']:%a %H:%M:%S} | {row['deadline']:%a %H:%M} |")
    waits, hour = rows["waits"], rows["1-hour deadline"]
    target = waits["dollars"] <= 0.55 * now["dollars"] and waits["done"] == waits["total"] \
        and waits["finished"] <= waits["deadline"]
    ran_now = hour["status"] == 0 and hour["done"] == hour["total"]
    ledger_is_bill = all(abs(row["dollars"] - row["billed"]) < 1e-9 for row in rows.values())
    # What costs says waiting saved: the waiting side's calls at the peak prices it waited through.
    saved_is_difference = abs(waits["saved"] - (now["dollars"] - waits["dollars"])) < 1e-9
    ok = target and ran_now and ledger_is_bill and saved_is_difference
    table += [
        "",
        f"- waits: {waits['dollars'] / now['dollars']:.2f}x of running now (target <= 0.55x), "
        f"{waits['done']}/{waits['total']} answered, finished before its deadline: "
        f"{'yes' if waits['finished'] <= waits['deadline'] else 'NO'}; {'met' if target else 'MISSED'}.",
        f"- 1-hour deadline: {'ran at once' if ran_now else 'DID NOT RUN AT ONCE'}; it said: \"{hour['said']}\".",
        f"- the ledger equals the sim's bill on every side: {'yes' if ledger_is_bill else 'NO'}.",
        f"- costs' 'saved by waiting': ${waits['saved']:.6f}, the run-now side's dollars less the waiting "
        f"side's: ${now['dollars'] - waits['dollars']:.6f}; {'equal' if saved_is_difference else 'NOT EQUAL'}.",
    ]
    print("\n".join(table))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
