#!/usr/bin/env python3
"""Kill offpeak with SIGKILL at random moments, then check that nothing was lost or asked twice.

A summarize job over N generated documents runs once, uninterrupted, in a reference workspace;
then, in a chaos workspace, `offpeak run` (to create the run) and the `offpeak tick`s that resume it
are each killed with SIGKILL after a random (seeded) delay, K times, and `offpeak tick` runs until it
exits 0. Each workspace has its own offpeak-sim, so each sim's call counter is that workspace's.

Checks (any failure exits 1):
  - every output file is byte-identical to the reference run's, and no file is missing or extra;
  - out/<job>/index.json lists every item, each done;
  - one run did all the work (a kill never starts the job over);
  - calls billed <= planned calls + kills x calls in flight (a kill loses at most the calls in
    flight: `--in-flight`, 8 by default, as offpeak sends to a remote API);
  - billed answers <= the ledger's paid calls <= billed answers + processes killed x calls in
    flight: the calls a killed process left in flight are booked as lost when its run is taken over,
    and a call written down but killed before its request left is booked though never billed (the
    ledger errs on the side of what may have been spent). With --restarts only the upper bound: a
    call written down just before the server crashed may be lost with the crash, as with a power cut.

With --fallback RATE, the chaos workspace's provider fails that share of its calls with a 529 that
asks to be left a second (`--overloaded-retry-after 1`), with no retries (`max_retries: 0`), and a
second sim stands behind it in `fallbacks:` (the same model at another base URL, so the answers
are the reference's): calls go back and forth between the two while the kills land. The checks
count what the two sims answered (`ok_calls`; a 529 is billed by no provider), and the ledger must
still hold each item answered once.

Batching is off, so one item is one call and the planned-call count is exact; with batching on, a
killed batched call would be retried in smaller batches and the bound would be looser.

With --postgres, the chaos workspace's store is a database on a throwaway PostgreSQL cluster
(initdb into a temporary folder, as nobody when run as root, on a free port), and --restarts R
times during the kill phase the server is stopped as a crash stops it (`pg_ctl stop -m immediate`)
while a process works, and started again a moment later: the process loses its connection with
calls in flight and exits 75, the next tick resumes. The reference stays on SQLite, so "identical"
also says both engines wrote the same answers. The bound on calls becomes planned + (kills +
restarts) x calls in flight.

With --hosts N (PostgreSQL only), the chaos workspace is N workspaces, one per host, each with the
same job and documents and its own `OFFPEAK_HOST`, all on the one store. Each round starts a
process on every host at once (`run` on one, `tick`s on the others, or ticks on all); the one that
holds the run's lease works, the others help it (each claims rounds of the run's requests) and exit
when nothing is left to them; at the kill point every process still alive is killed, and the kill
is counted against its host. The bound on calls counts processes killed: (processes killed +
restarts x hosts) x calls in flight. Ticks on the hosts in turn then finish
the run, `offpeak outputs` writes the job's folder again on every host, and each must be
byte-identical to the reference.

Usage: scripts/chaos.py --bin DIR [--kills 5] [--items 300] [--seed S] [--latency-ms 30] [--in-flight 8]
                        [--postgres [--restarts 3] [--hosts 3]] [--fallback 0.2]
Python 3 standard library only.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
sys.dont_write_bytecode = True
from pgcluster import Cluster, ClusterError  # noqa: E402

JOB = "chaos"


class Sim:
    """An offpeak-sim on a free loopback port, its output drained so it never blocks."""

    def __init__(self, bin_dir, latency_ms, seed, *options):
        self.process = subprocess.Popen(
            [os.path.join(bin_dir, "offpeak-sim"), "--port", "0", "--latency-ms", str(latency_ms),
             "--seed", str(seed), *options],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.url = None
        deadline = time.monotonic() + 30
        while self.url is None and time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            marker = "listening on "
            if marker in line:
                self.url = line.split(marker, 1)[1].strip()
        if self.url is None:
            self.stop()
            raise SystemExit("chaos: offpeak-sim did not say where it listens")
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for _ in self.process.stdout:
            pass

    def stats(self):
        with urllib.request.urlopen(self.url + "/sim/stats", timeout=10) as reply:
            return json.load(reply)

    def calls(self):
        return int(self.stats()["calls"])

    def ok_calls(self):
        return int(self.stats()["ok_calls"])

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def document(index):
    """Document `index`, the same every time: a few sentences whose words depend on the index."""
    words = ["tide", "orbit", "lattice", "harbor", "ember", "quartz", "meadow", "signal", "copper",
             "glacier", "pollen", "vector", "canyon", "ledger", "prism", "thistle"]
    picker = random.Random(index)
    sentences = []
    for sentence in range(3 + index % 3):
        chosen = " ".join(picker.choice(words) for _ in range(5 + sentence))
        sentences.append(f"Sentence {sentence + 1} of document {index} is about {chosen}.")
    return f"# Document {index}\n\n" + " ".join(sentences) + "\n"


def make_workspace(sim, items, in_flight, config="", job=""):
    """A workspace summarizing `items` documents through `sim`; `config` and `job` are more lines of
    offpeak.yaml and of the job's spec."""
    root = tempfile.mkdtemp(prefix="offpeak-chaos-")
    with open(os.path.join(root, "offpeak.yaml"), "w") as file:
        file.write(f"provider: sim\nbase_url: {sim.url}\nlimits: {{sim: {{in_flight: {in_flight}}}}}\n{config}")
    os.makedirs(os.path.join(root, "jobs"))
    os.makedirs(os.path.join(root, "docs"))
    with open(os.path.join(root, "jobs", JOB + ".yaml"), "w") as file:
        # batching: off, so one item is one call and the planned-call count is exact.
        file.write(f"kind: summarize\ninputs: [docs/*.md]\nmax_tokens: 200\nbatching: off\n{job}")
    for index in range(1, items + 1):
        with open(os.path.join(root, "docs", f"doc-{index:04d}.md"), "w") as file:
            file.write(document(index))
    return root


def host_environment(host):
    """The environment of a process of host number `host` (`OFFPEAK_HOST`)."""
    return {**os.environ, "OFFPEAK_HOST": f"host-{host}"}


def offpeak(bin_dir, workspace, *arguments, timeout=600, host=0):
    return subprocess.run(
        [os.path.join(bin_dir, "offpeak"), *arguments, "--workspace", workspace],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
        env=host_environment(host))


def runs(bin_dir, workspace):
    # A store that is temporarily away (a PostgreSQL server restarting) is asked again.
    deadline = time.monotonic() + 60
    status = offpeak(bin_dir, workspace, "status", "--json")
    while status.returncode == 75 and time.monotonic() < deadline:
        time.sleep(0.2)
        status = offpeak(bin_dir, workspace, "status", "--json")
    if status.returncode != 0:
        raise SystemExit(f"chaos: offpeak status failed: {status.stderr.strip()}")
    return json.loads(status.stdout).get("runs", [])


def answers_committed(workspace, cluster):
    """Items the ledger holds answered by a call (not from the cache, not failed, not lost in
    flight): each item once when no answer was ever committed twice (one kept beside another host's,
    or over it)."""
    return ledger_count(workspace, cluster, "coalesce(sum(items), 0)", "NOT failed AND NOT cache_hit AND NOT lost")


def ledger_calls(workspace, cluster):
    """Calls the ledger holds that brought an answer back or were lost in flight: what a provider bills."""
    return ledger_count(workspace, cluster, "count(*)", "NOT failed AND NOT cache_hit")


def ledger_count(workspace, cluster, what, where):
    """One number of the ledger's, from either store."""
    query = f"SELECT {what} FROM ledger WHERE {where}"
    if cluster is not None:
        result = subprocess.run(
            [os.path.join(cluster.bin, "psql"), "-h", "127.0.0.1", "-p", str(cluster.port), "-U", cluster.user,
             "-d", "chaos", "-At", "-v", "ON_ERROR_STOP=1", "-c", query], capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"chaos: psql failed: {result.stderr.strip()}")
        return int(result.stdout.strip())
    import sqlite3
    database = sqlite3.connect(f"file:{os.path.join(workspace, 'cache', 'offpeak.sqlite')}?mode=ro", uri=True)
    try:
        return int(database.execute(query.replace("NOT failed", "failed = 0").replace(
            "NOT cache_hit", "cache_hit = 0").replace("NOT lost", "lost = 0")).fetchone()[0])
    finally:
        database.close()


def outputs(workspace):
    """Every file of out/<job>/ but the index, by name, as bytes."""
    directory = os.path.join(workspace, "out", JOB)
    files = {}
    if os.path.isdir(directory):
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if name != "index.json" and os.path.isfile(path):
                with open(path, "rb") as file:
                    files[name] = file.read()
    return files


def index_items(workspace):
    try:
        with open(os.path.join(workspace, "out", JOB, "index.json")) as file:
            return json.load(file).get("items", [])
    except (OSError, ValueError):
        return []


def copy_binaries(bin_dir):
    """Copies of offpeak and offpeak-sim in a new temporary folder, so a rebuild while the script
    runs cannot swap them mid-way; the caller removes the folder."""
    binaries = tempfile.mkdtemp(prefix="offpeak-chaos-bin-")
    for name in ("offpeak", "offpeak-sim"):
        shutil.copy2(os.path.join(bin_dir, name), os.path.join(binaries, name))
    return binaries


def print_rows(rows):
    """(name, value) pairs as an aligned table."""
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"  {name.ljust(width)}  {value}")


def wait_for_kill_point(processes, calls, kind, value) -> bool:
    """Waits until `value` seconds have passed or the sims have taken `value` more calls (`calls()`
    counts them; at most a minute, for processes that send nothing); True if every process ended on
    its own first."""
    def alive():
        return any(process.poll() is None for process in processes)
    if kind == "seconds":
        deadline = time.monotonic() + value
        while alive() and time.monotonic() < deadline:
            time.sleep(0.003)
        return not alive()
    start, deadline = calls(), time.monotonic() + 60
    while alive() and calls() - start < value and time.monotonic() < deadline:
        time.sleep(0.003)
    return not alive()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="folder holding offpeak and offpeak-sim")
    parser.add_argument("--kills", type=int, default=5, help="SIGKILLs to deliver (default 5)")
    parser.add_argument("--items", type=int, default=300, help="documents to summarize (default 300)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the kill delays (default: random)")
    parser.add_argument("--latency-ms", type=int, default=30, help="the sim's latency per call (default 30)")
    parser.add_argument("--in-flight", type=int, default=8,
                        help="calls offpeak keeps in flight (limits: in offpeak.yaml; default 8)")
    parser.add_argument("--max-ticks", type=int, default=20, help="ticks allowed to finish after the kills")
    parser.add_argument("--keep", action="store_true", help="keep the workspaces, and print where")
    parser.add_argument("--postgres", action="store_true",
                        help="the chaos workspace's store on a throwaway PostgreSQL cluster")
    parser.add_argument("--hosts", type=int, default=1,
                        help="hosts (workspaces with their own OFFPEAK_HOST) on the one store; needs --postgres")
    parser.add_argument("--restarts", type=int, default=3,
                        help="with --postgres: server crashes and restarts during the kill phase (default 3)")
    parser.add_argument("--fallback", type=float, default=None, metavar="RATE",
                        help="the provider fails this share of calls with a 529, and a fallback answers them")
    args = parser.parse_args()
    if args.kills < 1 or args.items < 1 or args.in_flight < 1 or args.hosts < 1:
        parser.error("--kills, --items, --in-flight and --hosts must be at least 1")
    if args.hosts > 1 and not args.postgres:
        parser.error("--hosts above 1 needs --postgres: hosts share only a PostgreSQL store")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 1_000_000)
    rng = random.Random(seed)
    restarts_asked = args.restarts if args.postgres else 0
    print(f"chaos: {args.items} items, {args.kills} kills, seed {seed}, sim latency {args.latency_ms} ms; "
          "batching: off, so one item is one call and the planned-call count is exact"
          + (f"; store on PostgreSQL, {restarts_asked} server restarts" if args.postgres else "")
          + (f"; {args.hosts} hosts" if args.hosts > 1 else "")
          + (f"; {args.fallback:.0%} of the provider's calls 529, a fallback behind it" if args.fallback else ""))

    sims = []
    workspaces = []
    cluster = None
    started = time.monotonic()
    binaries = copy_binaries(args.bin)
    try:
        args.bin = binaries
        # The reference: one uninterrupted run.
        reference_sim = Sim(args.bin, args.latency_ms, seed=1)
        sims.append(reference_sim)
        reference = make_workspace(reference_sim, args.items, args.in_flight)
        workspaces.append(reference)
        before = reference_sim.calls()
        clock = time.monotonic()
        process = subprocess.Popen(
            [os.path.join(args.bin, "offpeak"), "run", JOB, "--workspace", reference],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # How long a started process takes to send its first call (start-up, planning), to aim the
        # kills at both moments: while it starts and while it works.
        first_call = None
        while first_call is None and process.poll() is None:
            if reference_sim.calls() > before:
                first_call = time.monotonic() - clock
            else:
                time.sleep(0.005)
        out, err = process.communicate(timeout=3600)
        reference_seconds = time.monotonic() - clock
        if process.returncode != 0:
            raise SystemExit(f"chaos: the reference run failed ({process.returncode}): {err.strip()}")
        planned = reference_sim.calls() - before
        expected = outputs(reference)
        first_call = first_call if first_call is not None else reference_seconds
        # A quarter of the kills land during start-up (a random moment before the reference run's
        # first call); the rest once the process has sent a random number of calls, up to twice a
        # fair share of the work, so the kills let about half the work through (every kill asked for
        # lands) and the final ticks do the rest. Counting calls, not seconds, keeps that true
        # whatever a process's start-up costs (a fresh run plans every item; a resuming tick does not).
        share_calls = max(1, int(0.5 * planned / args.kills))

        def kill_point():
            if rng.random() < 0.25:
                return "seconds", rng.uniform(0.0, first_call)
            return "calls", rng.randint(1, 2 * share_calls)

        faults = ["--fault-rate", f"529={args.fallback}", "--overloaded-retry-after", "1"] if args.fallback else []
        sim = Sim(args.bin, args.latency_ms, 1, *faults)
        sims.append(sim)
        store = ""
        fallback = None
        if args.fallback:
            fallback = Sim(args.bin, args.latency_ms, seed=2)
            sims.append(fallback)
            store = f"http: {{max_retries: 0}}\nfallbacks: [{{base_url: \"{fallback.url}\"}}]\n"
        if args.postgres:
            try:
                cluster = Cluster()
            except ClusterError as error:
                raise SystemExit(f"chaos: {error}") from error
            store += f"store: {cluster.database('chaos')}\n"
        if args.hosts > 1:
            # A process killed on another host is only known dead once its lease and claims expire
            # (300 s by default): the final ticks wait that out, which is what is tested, not how
            # long it takes. A minute keeps a run of 100 kills inside the ticks' timeout.
            store += "lease: 60s\n"
        workspace = make_workspace(sim, args.items, args.in_flight, config=store)
        workspaces.append(workspace)
        # The other hosts: the same job, documents and store, each in its own folder.
        hosts = [workspace]
        for _ in range(1, args.hosts):
            other = tempfile.mkdtemp(prefix="offpeak-chaos-host-")
            shutil.rmtree(other)
            shutil.copytree(workspace, other)
            hosts.append(other)
            workspaces.append(other)
        kills_by_host = [0] * args.hosts
        def sim_calls():
            # With a fallback, what the two answered: a 529 is billed by no provider.
            return sim.ok_calls() + fallback.ok_calls() if fallback else sim.calls()

        def sim_paid():
            return sim.ok_calls() + (fallback.ok_calls() if fallback else 0)

        def every_call():
            # Calls of either sim, failed or not: how far a process has gone.
            return sim.calls() + (fallback.calls() if fallback else 0)

        before = sim_calls()
        paid_before = sim_paid()
        # The processes the server's crashes land on: that many of the first kill-phase processes,
        # each while it works (after a random moment up to its start-up time plus half a second).
        restart_at = set(rng.sample(range(args.kills), min(restarts_asked, args.kills)))
        restarts = 0
        restarters = []

        def crash_and_restart(delay, downtime):
            time.sleep(delay)
            cluster.crash()
            time.sleep(downtime)
            cluster.start()

        kills = 0
        finished_before_kill = 0
        chaos_started = time.monotonic()
        attempts = 0
        while kills < args.kills:
            attempts += 1
            if attempts > args.kills * 3:
                break
            # `run` creates the run; once one exists, ticks resume it.
            existing = runs(args.bin, workspace)
            if existing and all(run.get("state") == "completed" for run in existing):
                break  # finished between kills: nothing left to kill
            # One process per host, at once: `run` on one host while there is no run yet.
            runner = rng.randrange(args.hosts)
            processes = []
            for host, folder in enumerate(hosts):
                command = ["run", JOB] if not existing and host == runner else ["tick"]
                processes.append(subprocess.Popen(
                    [os.path.join(args.bin, "offpeak"), *command, "--workspace", folder],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    env=host_environment(host)))
            process = processes[runner]
            if attempts - 1 in restart_at:
                # Both drawn here, not in the thread, so a seed gives the same run again.
                restarter = threading.Thread(
                    target=crash_and_restart,
                    args=(rng.uniform(0.05, first_call + 0.5), rng.uniform(0.2, 1.0)))
                restarter.start()
                restarters.append(restarter)
                restarts += 1
            if wait_for_kill_point(processes, every_call, *kill_point()):
                finished_before_kill += 1  # they all ended on their own: not a kill
            else:
                # Those still alive are killed: the one working on the run, and any host's that had
                # not yet found it held. The kill is counted against the hosts it hit.
                hit = [host for host, each in enumerate(processes) if each.poll() is None]
                for host in hit:
                    processes[host].send_signal(signal.SIGKILL)
                kills += 1
                for host in hit:
                    kills_by_host[host] += 1
            for each in processes:
                each.wait()
        for restarter in restarters:
            restarter.join()
        chaos_seconds = time.monotonic() - chaos_started
        done_by_kills = sum(run.get("items_done", 0) for run in runs(args.bin, workspace))

        if not runs(args.bin, workspace):
            offpeak(args.bin, workspace, "run", JOB)
        ticks = 0
        last = None
        while ticks < args.max_ticks:
            host = ticks % args.hosts  # the hosts in turn
            ticks += 1
            last = offpeak(args.bin, hosts[host], "tick", host=host)
            if last.returncode != 75:
                break
        # Every host writes the job's folder again from the store (`offpeak outputs`).
        rewritten = []
        finishers = []  # the hosts whose processes wrote the folder as they finished the run
        if args.hosts > 1:
            for host, folder in enumerate(hosts):
                if os.path.isdir(os.path.join(folder, "out", JOB)):
                    finishers.append((host, outputs(folder) == expected))
            for host, folder in enumerate(hosts):
                shutil.rmtree(os.path.join(folder, "out"), ignore_errors=True)
                written = offpeak(args.bin, folder, "outputs", JOB, host=host)
                rewritten.append((host, written))
        billed = sim_calls() - before
        paid = sim_paid() - paid_before
        wall = time.monotonic() - started

        violations = []
        if last is None or last.returncode != 0:
            code = None if last is None else last.returncode
            said = "" if last is None else (last.stdout + last.stderr).strip()
            violations.append(f"offpeak tick did not finish after {ticks} ticks (last exit {code}): {said}")
        got = outputs(workspace)
        identical = got == expected
        if not identical:
            missing = sorted(set(expected) - set(got))
            extra = sorted(set(got) - set(expected))
            differing = sorted(name for name in set(got) & set(expected) if got[name] != expected[name])
            violations.append(f"outputs differ: {len(missing)} missing {missing[:5]}, {len(extra)} extra "
                              f"{extra[:5]}, {len(differing)} different {differing[:5]}")
        for host, same in finishers:
            if not same:
                violations.append(f"the folder host-{host} wrote as it finished is unlike the reference's")
        for host, written in rewritten:
            if written.returncode != 0:
                violations.append(f"offpeak outputs on host-{host} exited {written.returncode}: "
                                  f"{written.stderr.strip()}")
            elif outputs(hosts[host]) != expected:
                violations.append(f"offpeak outputs on host-{host} wrote a folder unlike the reference's")
        items = index_items(workspace)
        not_done = [item.get("id") for item in items if item.get("state") != "done"]
        ids = [item.get("id") for item in items]
        if len(items) != args.items or not_done or len(set(ids)) != len(ids):
            violations.append(f"index.json lists {len(items)} items ({len(set(ids))} distinct) of "
                              f"{args.items}; not done: {not_done[:5]}")
        all_runs = runs(args.bin, workspace)
        if len(all_runs) != 1 or all_runs[0].get("items_done") != args.items:
            summary = [(run.get("id"), run.get("state"), run.get("items_done")) for run in all_runs]
            violations.append(f"expected one run with every item done, found {summary}")
        if planned != args.items:
            violations.append(f"the reference run made {planned} calls for {args.items} items")
        committed = answers_committed(workspace, cluster)
        if committed != args.items:
            violations.append(f"the ledger holds {committed} items answered for {args.items} items: "
                              f"{committed - args.items} answered twice")
        # Every process working the run has calls in flight: hosts help one run at once (each claims
        # rounds of its requests), so a kill may cut off a call of each process it hit, and a
        # server crash one of each host's.
        killed = sum(kills_by_host)
        cut = restarts * args.hosts
        if billed > planned + (killed + cut) * args.in_flight:
            violations.append(f"billed {billed} calls > {planned} planned + ({killed} processes killed + "
                              f"{cut} cut off by restarts) x {args.in_flight} in flight")
        if billed < planned:
            violations.append(f"billed {billed} calls < {planned} planned: some item was never asked")
        booked = ledger_calls(workspace, cluster)
        if booked < paid and restarts == 0:
            violations.append(f"the ledger holds {booked} paid calls, fewer than the {paid} the sim billed")
        if booked > paid + killed * args.in_flight:
            violations.append(f"the ledger holds {booked} paid calls > {paid} billed + {killed} processes "
                              f"killed x {args.in_flight} in flight")

        rows = [
            ("kills", f"{kills} of {args.kills} asked "
                      f"(+{finished_before_kill} rounds ended before their kill)"
                      + (" by host: " + ", ".join(f"host-{h} {n}" for h, n in enumerate(kills_by_host))
                         if args.hosts > 1 else "")),
            ("planned calls", str(planned)),
            ("billed calls", str(billed)),
            ("ledger calls", f"{booked} (the sim billed {paid} answers)"),
            ("answered twice", f"{committed - args.items} (the ledger holds {committed} answered items)"),
            *([("fallback", f"the provider answered {sim.ok_calls()} calls and failed {sim.calls() - sim.ok_calls()} "
                            f"with a 529; the fallback answered {fallback.ok_calls()}")] if fallback else []),
            ("server restarts", f"{restarts} (store on PostgreSQL)" if args.postgres else "none (store on SQLite)"),
            ("extra calls", f"{billed - planned} (allowed: at most ({killed} processes killed + {cut} cut off "
                            f"by restarts) x {args.in_flight} in flight)"),
            ("outputs identical", ("yes" if identical else "no")
                + (f" (and `offpeak outputs` on each of the {args.hosts} hosts)" if args.hosts > 1 else "")),
            ("done when kills ended", f"{done_by_kills} of {args.items} items"),
            ("ticks to finish", str(ticks)),
            ("reference run", f"{reference_seconds:.1f} s"),
            ("kill phase", f"{chaos_seconds:.1f} s (kills before the first call, or after 1 to "
                           f"{2 * share_calls} calls of a process)"),
            ("wall time", f"{wall:.1f} s"),
        ]
        print_rows(rows)
        if args.keep:
            print(f"  workspaces: reference {reference}, chaos {workspace}")
        if violations:
            for violation in violations:
                print(f"VIOLATION: {violation}", file=sys.stderr)
            print(f"chaos: FAILED (seed {seed})")
            return 1
        print(f"chaos: passed (seed {seed})")
        return 0
    finally:
        for sim in sims:
            sim.stop()
        if cluster is not None:
            cluster.remove()
        shutil.rmtree(binaries, ignore_errors=True)
        if not args.keep:
            for workspace in workspaces:
                shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
