#!/usr/bin/env python3
"""Kill offpeak's batch lane with SIGKILL at random moments, then check nothing was lost or paid twice.

The batch-lane twin of scripts/chaos.py (whose sim, workspace and output helpers it uses). A
summarize job of N generated documents, `lane: batch` and batching off (one item, one provider
request), runs uninterrupted in a reference workspace (`offpeak run --wait`); then, in a chaos
workspace, `offpeak run` and the `offpeak tick`s that follow are each killed with SIGKILL, K times,
at random (seeded) moments aimed at every phase of the lane: while the run starts and plans, while
a batch is prepared and created and its provider id recorded, while batches are polled, while an
ended batch's results are downloaded and booked. Then `offpeak tick` runs until it exits 0.
Each workspace has its own offpeak-sim (`--batch-delay`), so each sim's counters are its own.

Where each kill landed is read from the store (cache/offpeak.sqlite, with sqlite3) right after it.

Checks (any failure exits 1):
  - every output file is byte-identical to the reference run's, no file missing or extra;
  - out/<job>/index.json lists every item, each done; one run did all the work;
  - the sim answered each item once: batches.succeeded == items (an item answered in two batches
    would be billed twice), and billed_batch tokens equal the reference sim's;
  - every item has exactly one batch_items row booked `succeeded`, every batch the sim created was
    booked to the end, none is left open;
  - the ledger holds one batch row per answered request, its tokens are the sim's billed_batch
    tokens and its dollars the sim's billed dollars at batch prices (a price file in the workspace
    fixes the prices, so the script can price what the sim billed).

Usage: scripts/chaos_batch.py --bin DIR [--kills 5] [--items 300] [--seed S] [--batch-delay 4]
Python 3 standard library only.
"""

import argparse
import collections
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import chaos
from chaos import JOB, Sim

# Prices for the sim's models (written to the workspace's price file): batch prices are half.
PRICE = {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
         "cache_read_input_token_cost": 3e-07, "cache_creation_input_token_cost": 3.75e-06,
         "input_cost_per_token_batches": 1.5e-06, "output_cost_per_token_batches": 7.5e-06,
         "litellm_provider": "anthropic", "mode": "chat"}
MODELS = ("claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1")
TOKEN_KINDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def batch_dollars(billed):
    """What `billed` tokens cost at PRICE's batch prices, as offpeak prices a batch answer."""
    factor = PRICE["input_cost_per_token_batches"] / PRICE["input_cost_per_token"]
    inputs = (billed.get("input_tokens", 0) * PRICE["input_cost_per_token"]
              + billed.get("cache_creation_input_tokens", 0) * PRICE["cache_creation_input_token_cost"]
              + billed.get("cache_read_input_tokens", 0) * PRICE["cache_read_input_token_cost"])
    return inputs * factor + billed.get("output_tokens", 0) * PRICE["output_cost_per_token_batches"]


def make_workspace(sim, items):
    root = chaos.make_workspace(sim, items, in_flight=8, config="prices: prices.json\n", job="lane: batch\n")
    with open(os.path.join(root, "prices.json"), "w") as file:
        json.dump({model: PRICE for model in MODELS}, file)
    return root


class StoreView:
    """Reads a workspace's store with sqlite3 (never writes): where the lane stands."""

    def __init__(self, workspace):
        self.path = os.path.join(workspace, "cache", "offpeak.sqlite")
        self.connection = None

    def rows(self, sql, arguments=()):
        if self.connection is None and not os.path.exists(self.path):
            return []
        connection = self.connection or sqlite3.connect(self.path, timeout=30)
        try:
            return connection.execute(sql, arguments).fetchall()
        except sqlite3.OperationalError:
            return []  # tables not made yet: a process killed while creating the store
        finally:
            if connection is not self.connection:
                connection.close()

    def value(self, sql, arguments=()):
        rows = self.rows(sql, arguments)
        return rows[0][0] if rows else 0

    def snapshot(self):
        """The lane's state, read in one transaction so its counts agree with each other."""
        if not os.path.exists(self.path):
            return self._snapshot()
        self.connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            self.connection.execute("BEGIN")
            return self._snapshot()
        finally:
            self.connection.close()
            self.connection = None

    def _snapshot(self):
        batches = collections.Counter(dict(self.rows("SELECT state, COUNT(*) FROM provider_batches GROUP BY state")))
        requests = collections.Counter(dict(self.rows("SELECT state, COUNT(*) FROM requests GROUP BY state")))
        return {
            "runs": self.value("SELECT COUNT(*) FROM runs"),
            "completed": self.value("SELECT COUNT(*) FROM runs WHERE state = 'completed'"),
            "batches": batches,
            "to_batch": requests["pending"] + requests["retrying"],
            "booked_in_ended": self.value(
                "SELECT COUNT(*) FROM batch_items JOIN provider_batches ON id = batch_id "
                "WHERE state = 'ended' AND outcome IS NOT NULL"),
            "booked": self.value("SELECT COUNT(*) FROM batch_items WHERE outcome IS NOT NULL"),
            "preparing_ids": {row[0] for row in self.rows(
                "SELECT id FROM provider_batches WHERE state = 'preparing'")},
        }


def phase(snapshot, before=None):
    """The lane's phase a store shows (a killed process left it exactly so); with `before`, what
    the store showed when the process started, a batch prepared by an earlier process is one this
    process was looking for at the provider (created or not), not one it was submitting."""
    batches = snapshot["batches"]
    if snapshot["runs"] == 0:
        return "start: no run committed yet"
    if before is not None and snapshot["preparing_ids"] and snapshot["preparing_ids"] <= before["preparing_ids"]:
        return "poll: looking for a batch prepared, not recorded"
    if batches["preparing"]:
        return "submit: batch prepared, created/recorded not yet"
    if batches["ended"]:
        if snapshot["booked_in_ended"]:
            return "collect: booking results"
        return "collect: ended, downloading results"
    if snapshot["to_batch"]:
        return "submit: planning, or between batches"
    if batches["submitted"]:
        return "poll: every item at the provider"
    return "finish: every item answered"


def wait_for_kill_point(process, view, kind, value):
    """Waits for the kill point (`seconds`; or a new batch `prepared`, a batch `recorded` or `ended`,
    `value` more results `booked`, then a few random milliseconds), at most a minute; True if the
    process ended on its own first."""
    if kind == "seconds":
        try:
            process.wait(timeout=value)
            return True
        except subprocess.TimeoutExpired:
            return False
    start = view.snapshot()

    def reached(now):
        if kind == "prepared":
            return bool(now["preparing_ids"] - start["preparing_ids"])
        if kind == "recorded":
            return now["batches"]["submitted"] > start["batches"]["submitted"]
        if kind == "ended":
            return now["batches"]["ended"] > start["batches"]["ended"]
        return now["booked"] - start["booked"] >= value

    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline and not reached(view.snapshot()):
        time.sleep(0.002)
    if kind in ("prepared", "recorded", "ended"):
        try:
            process.wait(timeout=value)
        except subprocess.TimeoutExpired:
            pass
    return process.poll() is not None


def reference_run(bin_dir, workspace):
    """`offpeak run --wait` in `workspace`, timing when the lane passes each phase."""
    view = StoreView(workspace)
    clock = time.monotonic()
    process = subprocess.Popen(
        [os.path.join(bin_dir, "offpeak"), "run", JOB, "--wait", "--workspace", workspace],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    marks = {}
    while process.poll() is None:
        now = phase(view.snapshot())
        marks.setdefault(now, time.monotonic() - clock)
        time.sleep(0.01)
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"chaos: the reference run failed ({process.returncode}): {err.strip()}")
    return time.monotonic() - clock, marks


def ledger_and_store_checks(view, items, billed):
    """What the chaos store must hold: each item booked once, ledger equal to what the sim billed."""
    violations = []
    succeeded = view.rows("SELECT request_id, COUNT(*) FROM batch_items WHERE outcome = 'succeeded' "
                          "GROUP BY request_id")
    twice = [request for request, count in succeeded if count != 1]
    if len(succeeded) != items or twice:
        violations.append(f"{len(succeeded)} of {items} items booked succeeded; booked more than once: {twice[:5]}")
    unbooked = view.value("SELECT COUNT(*) FROM batch_items JOIN provider_batches ON id = batch_id "
                          "WHERE remote_id IS NOT NULL AND outcome IS NULL")
    still_open = view.value("SELECT COUNT(*) FROM provider_batches WHERE state IN ('preparing', 'submitted', 'ended')")
    if unbooked or still_open:
        violations.append(f"{unbooked} items of created batches never booked; {still_open} batches still open")
    ledger = view.rows("SELECT COUNT(*), TOTAL(input_tokens), TOTAL(output_tokens), TOTAL(cache_read_tokens), "
                       "TOTAL(cache_write_tokens), TOTAL(dollars), TOTAL(batch_api = 0) FROM ledger")[0]
    rows, tokens, dollars, live = ledger[0], [int(value) for value in ledger[1:5]], ledger[5], ledger[6]
    if rows != len(succeeded) or live:
        violations.append(f"the ledger holds {rows} rows ({int(live)} live) for {len(succeeded)} answered requests")
    sim_tokens = [billed.get(kind, 0) for kind in TOKEN_KINDS]
    if tokens != sim_tokens:
        violations.append(f"ledger tokens {tokens} != the sim's billed_batch {sim_tokens}")
    sim_dollars = batch_dollars(billed)
    if abs(dollars - sim_dollars) > 1e-9 * max(1.0, sim_dollars):
        violations.append(f"ledger ${dollars:.9f} != the sim's billed ${sim_dollars:.9f} at batch prices")
    return violations, dollars, sim_dollars


def kill_point(rng, before, spans, share):
    """Where to kill a process started in phase `before`: a random moment of that phase, or just
    after an event of it (a batch prepared, recorded or ended; results booked). `spans["tick"]` is
    how long the last tick that ended on its own took; `share` about the items one kill of a
    collecting tick lets through, so the kills left when collecting starts spread over it."""
    if before.startswith("start"):
        return "seconds", rng.uniform(0.0, spans["prepare"])
    if before.startswith("submit"):
        kind = rng.choice(["seconds", "prepared", "recorded"])
        if kind == "seconds":
            return kind, rng.uniform(0.0, spans["submit"] / 2)
        return kind, rng.uniform(0.0, 0.05)
    if before.startswith("collect"):
        if rng.random() < 0.75:
            return "booked", rng.randint(1, 2 * share)
        return "seconds", rng.uniform(0.0, spans["tick"])
    if before.startswith("poll") and rng.random() < 0.5:
        return "ended", rng.uniform(0.0, 0.05)
    return "seconds", rng.uniform(0.0, 1.5 * spans["tick"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="folder holding offpeak and offpeak-sim")
    parser.add_argument("--kills", type=int, default=5, help="SIGKILLs to deliver (default 5)")
    parser.add_argument("--items", type=int, default=300, help="documents to summarize (default 300)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the kill points (default: random)")
    parser.add_argument("--batch-delay", type=float, default=4.0,
                        help="seconds from creating a provider batch until it ends (the sim's; default 4)")
    parser.add_argument("--latency-ms", type=int, default=5, help="the sim's latency per call (default 5)")
    parser.add_argument("--max-seconds", type=float, default=600, help="time allowed to finish after the kills")
    parser.add_argument("--keep", action="store_true", help="keep the workspaces, and print where")
    args = parser.parse_args()
    if args.kills < 1 or args.items < 1 or args.batch_delay < 0:
        parser.error("--kills and --items must be at least 1, --batch-delay not negative")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 1_000_000)
    rng = random.Random(seed)
    print(f"chaos-batch: {args.items} items, {args.kills} kills, seed {seed}, sim batch delay "
          f"{args.batch_delay:g} s; lane: batch, batching: off, so one item is one provider request")

    sims, workspaces = [], []
    started = time.monotonic()
    binaries = chaos.copy_binaries(args.bin)
    sim_options = ("--batch-delay", str(args.batch_delay))
    try:
        args.bin = binaries
        reference_sim = Sim(args.bin, args.latency_ms, 1, *sim_options)
        sims.append(reference_sim)
        reference = make_workspace(reference_sim, args.items)
        workspaces.append(reference)
        reference_seconds, marks = reference_run(args.bin, reference)
        expected = chaos.outputs(reference)
        reference_stats = reference_sim.stats()
        clock = time.monotonic()
        chaos.offpeak(args.bin, reference, "tick")  # nothing left to do: what a tick costs to start
        spans = {"tick": time.monotonic() - clock,
                 "submit": marks.get("poll: every item at the provider", reference_seconds),
                 "prepare": marks.get("submit: batch prepared, created/recorded not yet", reference_seconds)}
        share = max(1, args.items // args.kills)

        sim = Sim(args.bin, args.latency_ms, 1, *sim_options)
        sims.append(sim)
        workspace = make_workspace(sim, args.items)
        workspaces.append(workspace)
        view = StoreView(workspace)
        kills, ended_itself, landed = 0, 0, collections.Counter()
        chaos_started = time.monotonic()
        for _ in range(args.kills * 40):
            if kills >= args.kills:
                break
            before = view.snapshot()
            if before["completed"]:
                break  # finished between kills: nothing left to kill
            command = ["tick"] if before["runs"] else ["run", JOB]
            process = subprocess.Popen(
                [os.path.join(args.bin, "offpeak"), *command, "--workspace", workspace],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            clock = time.monotonic()
            point = kill_point(rng, phase(before), spans, share)
            if wait_for_kill_point(process, view, *point):
                ended_itself += 1
                if command == ["tick"]:
                    spans["tick"] = time.monotonic() - clock
                continue
            process.send_signal(signal.SIGKILL)
            process.wait()
            kills += 1
            landed[phase(view.snapshot(), before)] += 1
        chaos_seconds = time.monotonic() - chaos_started
        booked_by_kills = view.value("SELECT COUNT(*) FROM batch_items WHERE outcome = 'succeeded'")

        if not view.snapshot()["runs"]:
            chaos.offpeak(args.bin, workspace, "run", JOB)
        ticks, last = 0, None
        deadline = time.monotonic() + args.max_seconds
        while time.monotonic() < deadline:
            ticks += 1
            last = chaos.offpeak(args.bin, workspace, "tick")
            if last.returncode != 75:
                break
            time.sleep(0.2)
        stats = sim.stats()
        billed = stats.get("billed_batch", {})
        counts = stats.get("batches", {})
        reference_counts = reference_stats.get("batches", {})

        violations = []
        if last is None or last.returncode != 0:
            code = None if last is None else last.returncode
            said = "" if last is None else (last.stdout + last.stderr).strip()
            violations.append(f"offpeak tick did not finish after {ticks} ticks (last exit {code}): {said}")
        got = chaos.outputs(workspace)
        identical = got == expected and len(expected) == args.items
        if not identical:
            differing = sorted(name for name in set(got) | set(expected) if got.get(name) != expected.get(name))
            violations.append(f"outputs differ from the reference's ({len(expected)} files): {len(differing)} "
                              f"missing, extra or different {differing[:5]}")
        items = chaos.index_items(workspace)
        not_done = [item.get("id") for item in items if item.get("state") != "done"]
        ids = {item.get("id") for item in items}
        if len(items) != args.items or len(ids) != args.items or not_done:
            violations.append(f"index.json lists {len(items)} items ({len(ids)} distinct) of {args.items}; "
                              f"not done: {not_done[:5]}")
        all_runs = chaos.runs(args.bin, workspace)
        if len(all_runs) != 1 or all_runs[0].get("items_done") != args.items:
            summary = [(run.get("id"), run.get("state"), run.get("items_done")) for run in all_runs]
            violations.append(f"expected one run with every item done, found {summary}")
        for name, tally in (("reference", reference_counts), ("chaos", counts)):
            if tally.get("succeeded") != args.items:
                violations.append(f"the {name} sim answered {tally.get('succeeded')} batch requests for "
                                  f"{args.items} items (an item answered twice is billed twice)")
        if billed != reference_stats.get("billed_batch"):
            violations.append(f"the sim billed {billed}, the reference sim {reference_stats.get('billed_batch')}")
        store_violations, ledger_dollars, sim_dollars = ledger_and_store_checks(view, args.items, billed)
        violations += store_violations
        batch_states = dict(view.rows("SELECT state, COUNT(*) FROM provider_batches GROUP BY state"))

        rows = [("kills", f"{kills} of {args.kills} asked (+{ended_itself} processes ended before their kill)")]
        rows += [(f"  {name}", str(count)) for name, count in sorted(landed.items())]
        rows += [
            ("sim batches created", f"{counts.get('created')} (reference {reference_counts.get('created')}); "
                                    f"store: {batch_states}"),
            ("requests answered", f"{counts.get('succeeded')} by the sim for {args.items} items "
                                  f"(reference {reference_counts.get('succeeded')})"),
            ("billed_batch tokens", "equal to the reference's" if billed == reference_stats.get("billed_batch")
             else "DIFFERENT from the reference's"),
            ("ledger dollars", f"${ledger_dollars:.6f}; the sim billed ${sim_dollars:.6f} at batch prices"),
            ("outputs identical", "yes" if identical else "no"),
            ("booked when kills ended", f"{booked_by_kills} of {args.items} items"),
            ("ticks to finish", str(ticks)),
            ("reference run", f"{reference_seconds:.1f} s uninterrupted; its phases first seen at:"),
        ]
        rows += [(f"  {at:6.2f} s", name) for name, at in marks.items()]
        rows += [
            ("kill phase", f"{chaos_seconds:.1f} s"),
            ("wall time", f"{time.monotonic() - started:.1f} s"),
        ]
        chaos.print_rows(rows)
        if args.keep:
            print(f"  workspaces: reference {reference}, chaos {workspace}")
        if violations:
            for violation in violations:
                print(f"VIOLATION: {violation}", file=sys.stderr)
            print(f"chaos-batch: FAILED (seed {seed})")
            return 1
        print(f"chaos-batch: passed (seed {seed})")
        return 0
    finally:
        for sim in sims:
            sim.stop()
        shutil.rmtree(binaries, ignore_errors=True)
        if not args.keep:
            for workspace in workspaces:
                shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
