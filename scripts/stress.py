#!/usr/bin/env python3
"""Signal hundreds of offpeak processes at random moments; fail on any crash, hang or lost answer.

Past kernel logs held an invalid-opcode trap in libswiftCore and a segfault in libc from offpeak
processes that no test explained. This starts N (default 500) `offpeak run` and `offpeak tick`
processes against offpeak-sim, with calls in flight (the sim answers after --latency-ms) and the
other core kept busy by a busy-loop process, and sends each one SIGTERM, SIGINT, SIGHUP or SIGKILL
(seeded, uniform) at a random moment: during start-up, after a random number of the sim's calls,
after a random time, or while it exits (just after it writes its result). Some get a second
TERM/INT/HUP within the grace period (a second signal aborts at once).

Three scenarios run side by side, each with its own sim (so each sim's counters are its own) and
a new workspace every --generation processes:
  live        two `kind: prompt` jobs over --items items (1,100 by default: over 1,024, as issue 21
              item 0 needs), batching off, the second sharing all but 100 of the first's items (a
              run partly answered from the cache);
  batched     one such job with batching on (items packed 8 to a call);
  batch-lane  one such job with `lane: batch` (the sim's provider batches end after 1 s).
Once a job's run is completed, the next `offpeak run` of it starts a new run, answered wholly from
the cache. Each scenario first runs its jobs uninterrupted in a reference workspace.

Fails (exit 1) on:
  - a death by a signal nobody sent (SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGABRT, ...: the return
    code), a new kernel log line (`dmesg`) about one of our processes, a core file (RLIMIT_CORE is
    raised for every process and each runs in a folder of its own, where core_pattern `core` puts it);
  - a hang: a process not gone --hang-seconds after TERM/INT/HUP (its threads' stacks are saved
    with gdb, then it gets SIGKILL), or alive --max-seconds after it started;
  - an exit status other than 0 or 75;
  - a sanitizer report (TSAN_OPTIONS/ASAN_OPTIONS send them to files in the log folder: pass
    binaries built with `swift build --sanitize=thread` or `--sanitize=address` as --bin);
  - lost or doubled answers: after each generation, undisturbed ticks finish the work; every output
    file must equal the reference's and index.json must list every item done; the sim must have
    answered no more items than the reference's plus, for each process that got SIGKILL or was
    still calling past the grace period, the calls in flight (x 8 items when batching); the batch
    lane's provider batches must have answered each item exactly once;
  - a run `completed` while any of its requests is pending (issue 21 item 0): the store is read
    after every process, and `run --json`'s report is checked.

Usage: scripts/stress.py --bin DIR [--sim-bin DIR] [--processes 500] [--seed S] [--items 1100]
Python 3 standard library only.
"""

import argparse
import collections
import glob
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

import chaos
from chaos import Sim

SIGNALS = {"TERM": signal.SIGTERM, "INT": signal.SIGINT, "HUP": signal.SIGHUP, "KILL": signal.SIGKILL}
GENTLE = ("TERM", "INT", "HUP")
MOMENTS = (("start-up", 0.2), ("calls", 0.35), ("seconds", 0.25), ("exit", 0.2))
# Request states that are work still to do: a completed run must hold none.
UNFINISHED = ("pending", "retrying", "waiting", "in_batch")
BATCH_ITEMS = 8
TAIL = 1500  # characters of stderr kept for a failure's report


class Scenario:
    """Jobs of one workspace, the sim options they need, and how the sim's counters are read."""

    def __init__(self, name, jobs, sim_options=(), batch_lane=False, batched=False):
        self.name, self.jobs, self.sim_options = name, jobs, sim_options
        self.batch_lane, self.batched = batch_lane, batched


def job_spec(first, last, extra):
    """A `kind: prompt` spec over items first..last (ids q0001...), each its own question."""
    lines = ["kind: prompt", "system: Answer in one sentence.", "template: 'Question {{id}}: {{item}}'",
             "max_tokens: 60", extra, "items:"]
    lines += [f'  - {{id: q{index:04d}, item: "What is fact number {index} about tides? It matters."}}'
              for index in range(first, last + 1)]
    return "\n".join(lines) + "\n"


def scenarios(items):
    return [
        Scenario("live", {"pa": job_spec(1, items, "batching: off\nlane: live"),
                          "pb": job_spec(101, items + 100, "batching: off\nlane: live")}),
        Scenario("batched", {"pc": job_spec(1, items, "batching: {max_items: 8}\nlane: live")}, batched=True),
        Scenario("batch-lane", {"pd": job_spec(1, items, "batching: off\nlane: batch")},
                 sim_options=("--batch-delay", "1"), batch_lane=True),
    ]


def make_workspace(sim, scenario, in_flight):
    root = tempfile.mkdtemp(prefix=f"offpeak-stress-{scenario.name}-")
    with open(os.path.join(root, "offpeak.yaml"), "w") as file:
        file.write(f"provider: sim\nbase_url: {sim.url}\nlimits: {{sim: {{in_flight: {in_flight}}}}}\n")
    os.makedirs(os.path.join(root, "jobs"))
    for job, spec in scenario.jobs.items():
        with open(os.path.join(root, "jobs", job + ".yaml"), "w") as file:
            file.write(spec)
    return root


def answered(stats):
    """Items the sim answered: live ones (a batched call answers several) and provider-batch ones."""
    live = stats["ok_calls"] - stats["batched_calls"] + stats["batched_items"]
    return live, stats["batches"]["succeeded"]


def outputs(workspace, job):
    directory = os.path.join(workspace, "out", job)
    files = {}
    for path in sorted(glob.glob(os.path.join(directory, "*"))):
        if os.path.basename(path) != "index.json" and os.path.isfile(path):
            with open(path, "rb") as file:
                files[os.path.basename(path)] = file.read()
    return files


def index_items(workspace, job):
    try:
        with open(os.path.join(workspace, "out", job, "index.json")) as file:
            return json.load(file).get("items", [])
    except (OSError, ValueError):
        return []


def completed_with_pending(workspace):
    """{run id: requests still to do} for every completed run that holds some (read with sqlite3)."""
    path = os.path.join(workspace, "cache", "offpeak.sqlite")
    if not os.path.exists(path):
        return {}
    marks = ", ".join("?" for _ in UNFINISHED)
    connection = sqlite3.connect(path, timeout=60)
    try:
        return dict(connection.execute(
            "SELECT runs.id, COUNT(*) FROM runs JOIN requests ON requests.run_id = runs.id "
            f"WHERE runs.state = 'completed' AND requests.state IN ({marks}) GROUP BY runs.id",
            UNFINISHED).fetchall())
    except sqlite3.OperationalError:
        return {}  # tables not made yet: a process stopped while it created the store
    finally:
        connection.close()


def allow_cores():
    """In the child before exec: core files on, whatever the shell's `ulimit -c`."""
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


class Child:
    """One offpeak process, its stdout and stderr drained by threads; `said` is set at its first
    byte on stdout (offpeak writes its result just before it exits)."""

    def __init__(self, argv, env, cwd):
        self.started = time.monotonic()
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, cwd=cwd, preexec_fn=allow_cores)
        self.said = threading.Event()
        self.out, self.err = bytearray(), bytearray()
        self.readers = [threading.Thread(target=self._drain, args=(self.process.stdout, self.out, True)),
                        threading.Thread(target=self._drain, args=(self.process.stderr, self.err, False))]
        for reader in self.readers:
            reader.start()

    def _drain(self, stream, into, marks):
        while True:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            into += chunk
            if marks:
                self.said.set()
        stream.close()

    def alive(self):
        return self.process.poll() is None

    def wait(self, seconds):
        """True if the process ended within `seconds`."""
        try:
            self.process.wait(timeout=max(0.0, seconds))
            return True
        except subprocess.TimeoutExpired:
            return False

    def finish(self):
        self.process.wait()
        for reader in self.readers:
            reader.join()
        return self.out.decode(errors="replace"), self.err.decode(errors="replace")


class Tally:
    """What every worker saw, under one lock; `failures` lists each failure in words."""

    def __init__(self, processes):
        self.lock = threading.Lock()
        self.left = processes
        self.taken = 0
        self.deadline = float("inf")
        self.counts = collections.Counter()
        self.failures = collections.defaultdict(list)
        self.pids = {}
        self.pending_runs = {}
        self.slowest_stop = 0.0
        self.scenario_rows = []

    def stop_starting(self, *_):
        """No new process from now on (--minutes ran out, or SIGUSR1); the generations under way
        are finished and checked, and the summary says how many processes ran."""
        with self.lock:
            self.left = 0

    def take(self):
        with self.lock:
            if self.left <= 0 or time.monotonic() > self.deadline:
                return False
            self.left -= 1
            self.taken += 1
            if self.taken % 50 == 0:
                print(f"stress: {self.taken} processes started, {sum(map(len, self.failures.values()))} "
                      f"failures so far", flush=True)
            return True

    def count(self, *keys):
        with self.lock:
            for key in keys:
                self.counts[key] += 1

    def fail(self, kind, text):
        with self.lock:
            self.failures[kind].append(text)


class Worker:
    """One scenario: its sim, its reference, and workspace after workspace of signalled processes."""

    def __init__(self, scenario, args, tally, rng, env, logs):
        self.scenario, self.args, self.tally, self.rng, self.env, self.logs = scenario, args, tally, rng, env, logs
        self.sim = None
        self.typical = 2.0  # seconds a process that ended on its own took (a running mean)
        self.startup = 0.5  # seconds from start to the first call
        self.processes = self.generations = 0
        self.cores = os.path.join(logs, "cwd-" + scenario.name)
        os.makedirs(self.cores, exist_ok=True)

    def offpeak(self, workspace, *arguments, timeout=900, bin_dir=None):
        """An undisturbed offpeak command (references, finishing): checked like the others for
        crashes, so a sanitizer build's reports there count too."""
        argv = [os.path.join(bin_dir or self.args.bin, "offpeak"), *arguments, "--workspace", workspace]
        child = Child(argv, self.env, self.cores)
        with self.tally.lock:
            self.tally.pids[child.process.pid] = self.scenario.name
        if not child.wait(timeout):
            self.tally.fail("hangs", f"{self.scenario.name}: undisturbed `{' '.join(arguments)}` "
                                     f"still running after {timeout} s")
            self.stacks(child, "undisturbed")
            child.process.kill()
        out, err = child.finish()
        code = child.process.returncode
        if code < 0:
            self.tally.fail("unexplained deaths", f"{self.scenario.name}: undisturbed `{' '.join(arguments)}` "
                                                  f"died of {signal.Signals(-code).name}: {err[-TAIL:]}")
        return subprocess.CompletedProcess(argv, code, out, err)

    def run(self):
        try:
            self.sim = Sim(self.args.sim_bin, self.args.latency_ms, 1, *self.scenario.sim_options)
            self.reference()
            while self.tally.take():
                self.generation()
        except Exception as error:  # a broken script must not pass: it is a failure like any other
            self.tally.fail("script errors", f"{self.scenario.name}: {type(error).__name__}: {error}")
        finally:
            if self.sim is not None:
                self.sim.stop()

    def reference(self):
        """Each job run once, uninterrupted, in a workspace of its own: the outputs every generation
        must end with, and how many items the sim answers for them."""
        workspace = make_workspace(self.sim, self.scenario, self.args.in_flight)
        before = answered(self.sim.stats())
        clock = time.monotonic()
        for job in self.scenario.jobs:
            wait = ["--wait"] if self.scenario.batch_lane else []
            result = self.offpeak(workspace, "run", job, *wait, bin_dir=self.args.reference_bin)
            if result.returncode != 0:
                raise RuntimeError(f"the reference run of {job} exited {result.returncode}: {result.stderr[-TAIL:]}")
        after = answered(self.sim.stats())
        self.planned = [after[0] - before[0], after[1] - before[1]]
        self.expected = {job: outputs(workspace, job) for job in self.scenario.jobs}
        self.reference_seconds = time.monotonic() - clock
        clock = time.monotonic()
        self.offpeak(workspace, "tick")
        self.typical = max(0.2, time.monotonic() - clock)
        self.startup = self.typical
        shutil.rmtree(workspace, ignore_errors=True)

    def generation(self):
        """A new workspace, --generation signalled processes in it, then undisturbed ticks; then
        the outputs and the sim's counters are checked."""
        self.generations += 1
        workspace = make_workspace(self.sim, self.scenario, self.args.in_flight)
        before = answered(self.sim.stats())
        losses = 0  # processes that may have lost their calls in flight
        share = max(1, sum(self.planned) // self.args.generation)
        for number in range(self.args.generation):
            if number and not self.tally.take():
                break
            losses += self.one_process(workspace, share)
        self.finish(workspace, before, losses)
        if not self.args.keep:
            shutil.rmtree(workspace, ignore_errors=True)

    def command(self):
        """`run JOB` (resumes its run, or starts one: from the cache once an earlier one is
        completed) or `tick`, with --json at times; a moment to aim for."""
        rng = self.rng
        if rng.random() < 0.5:
            arguments = ["run", rng.choice(list(self.scenario.jobs))]
        else:
            arguments = ["tick"]
        moment = rng.choices([name for name, _ in MOMENTS], [weight for _, weight in MOMENTS])[0]
        if self.scenario.batch_lane and moment == "calls":
            moment = "seconds"  # the batch lane's calls are not counted one by one
        if moment == "exit" or rng.random() < 0.5:
            arguments.append("--json")  # the result on stdout, just before the process exits
        return arguments + ["--grace", str(self.args.grace)], moment

    def reach(self, child, moment, share):
        """Waits for the moment to signal; False if the process ended on its own first."""
        rng = self.rng
        if moment == "start-up":
            return not child.wait(rng.uniform(0.0, self.startup))
        if moment == "seconds":
            return not child.wait(rng.uniform(0.0, 1.5 * self.typical))
        if moment == "exit":
            deadline = child.started + self.args.max_seconds
            while not child.said.wait(0.05):
                if not child.alive() or time.monotonic() > deadline:
                    return child.alive()
            time.sleep(rng.uniform(0.0, 0.02))
            return child.alive()
        goal = rng.randint(1, 2 * share)
        start, deadline = self.sim.calls(), child.started + self.args.max_seconds
        while child.alive() and self.sim.calls() - start < goal and time.monotonic() < deadline:
            time.sleep(0.005)
        return child.alive()

    def one_process(self, workspace, share):
        """Starts one process, signals it, waits for it, and checks how it ended; returns 1 when it
        may have lost calls in flight (SIGKILL, or still calling after the grace period)."""
        arguments, moment = self.command()
        argv = [os.path.join(self.args.bin, "offpeak"), *arguments, "--workspace", workspace]
        name = self.rng.choice(list(SIGNALS))
        second = self.rng.choice(GENTLE) if name != "KILL" and self.rng.random() < 0.15 else None
        child = Child(argv, self.env, self.cores)
        pid = child.process.pid
        with self.tally.lock:
            self.tally.pids[pid] = self.scenario.name
        self.processes += 1
        self.tally.count("started", "command " + arguments[0])
        sent, lossy, hung = [], 0, False
        if self.reach(child, moment, share):
            child.process.send_signal(SIGNALS[name])
            signalled = time.monotonic()
            sent.append(name)
            self.tally.count("signal " + name, "moment " + moment)
            if second and not child.wait(self.rng.uniform(0.0, self.args.grace)):
                child.process.send_signal(SIGNALS[second])
                sent.append(second)
                self.tally.count("second signal")
            if name == "KILL":
                lossy = 1
                child.wait(60)
            elif not child.wait(self.args.hang_seconds - (time.monotonic() - signalled)):
                hung = self.slow_or_stuck(child, arguments, sent, signalled)
                lossy = 1
            else:
                self.tally.slowest_stop = max(self.tally.slowest_stop, time.monotonic() - signalled)
                if time.monotonic() - signalled > self.args.grace:
                    lossy = 1  # calls still in flight at the end of the grace period were aborted
        else:
            self.tally.count("ended before its signal", "moment " + moment + " (ended before)")
            if child.alive() and not child.wait(self.args.max_seconds - (time.monotonic() - child.started)):
                hung = True
        if hung:
            self.stacks(child, "hang")
            self.tally.fail("hangs", f"{self.scenario.name}: pid {pid} `{' '.join(arguments)}` still running "
                                     f"{'after ' + '+'.join(sent) if sent else 'at --max-seconds'}; stacks in {self.logs}")
            child.process.kill()
            sent.append("KILL")  # ours: the hang is the failure, not the death
            lossy = 1
        out, err = child.finish()
        if not sent:
            self.typical = 0.8 * self.typical + 0.2 * (time.monotonic() - child.started)
        self.judge(child.process.returncode, sent, arguments, out, err, pid, moment)
        if sent:
            code = child.process.returncode
            ended = f"exit {code}" if code >= 0 else f"died of {signal.Signals(-code).name[3:]}"
            self.tally.count(f"after {sent[0]}: {ended}")
        self.check_cores(pid)
        self.check_pending(workspace, arguments, out, child.process.returncode)
        return lossy

    def slow_or_stuck(self, child, arguments, sent, signalled):
        """A process still running --hang-seconds after TERM/INT/HUP: its stacks are saved, then it
        gets as long again; one that ends then is a slow stop, one that does not hangs (True). Both
        fail the run: the stacks tell which work ignored the stop."""
        path = self.stacks(child, "slow-stop")
        what = f"{self.scenario.name}: pid {child.process.pid} `{' '.join(arguments)}` after {'+'.join(sent)}"
        if child.wait(self.args.hang_seconds):
            self.tally.fail("slow stops", f"{what}: exited {time.monotonic() - signalled:.0f} s after the "
                                          f"signal (over --hang-seconds {self.args.hang_seconds:g}); stacks {path}")
            return False
        return True

    def judge(self, code, sent, arguments, out, err, pid, moment):
        what = f"{self.scenario.name}: pid {pid} `{' '.join(arguments)}` sent {'+'.join(sent) or 'nothing'} at {moment}"
        if code < 0:
            died = signal.Signals(-code).name
            explained = died[3:] in sent
            self.tally.count(f"died of {died}" + (" (sent)" if explained else " (NOT SENT)"))
            if not explained:
                self.tally.fail("unexplained deaths", f"{what}: died of {died}: {err[-TAIL:]}")
            return
        self.tally.count(f"exit {code}")
        if code not in (0, 75):
            self.tally.fail("unexpected exit statuses", f"{what}: exit {code}: {err[-TAIL:]}")

    def check_cores(self, pid):
        for path in glob.glob(os.path.join(self.cores, "core*")):
            kept = os.path.join(self.logs, f"{os.path.basename(path)}-{self.scenario.name}-{pid}")
            shutil.move(path, kept)
            self.tally.fail("core dumps", f"{self.scenario.name}: pid {pid} left {kept}")

    def check_pending(self, workspace, arguments, out, code):
        """Issue 21 item 0: no run ends completed (or `run` exits 0) with requests still to do."""
        for run, count in completed_with_pending(workspace).items():
            with self.tally.lock:
                first = run not in self.tally.pending_runs
                self.tally.pending_runs[run] = count
            if first:
                self.tally.fail("completed with pending", f"{self.scenario.name}: run {run} completed with "
                                                          f"{count} requests still to do")
        if arguments[0] == "run" and "--json" in arguments and code == 0:
            try:
                report = json.loads(out)
            except ValueError:
                return
            if report.get("items_done", 0) + report.get("items_failed", 0) < report.get("items_total", 0):
                self.tally.fail("completed with pending", f"{self.scenario.name}: `run` exited 0, state "
                                                          f"{report.get('state')}, {report.get('items_done')} of "
                                                          f"{report.get('items_total')} items done")

    def finish(self, workspace, before, losses):
        """Undisturbed: each job run (if no run of it was ever made) and ticks until one exits 0;
        then the outputs, index.json and the sim's counters are compared with the reference's."""
        statuses = self.offpeak(workspace, "status", "--json")
        jobs_run = {run.get("job") for run in json.loads(statuses.stdout or "{}").get("runs", [])}
        for job in self.scenario.jobs:
            if job not in jobs_run:
                self.offpeak(workspace, "run", job)
        last, deadline = None, time.monotonic() + self.args.max_seconds
        while time.monotonic() < deadline:
            last = self.offpeak(workspace, "tick")
            if last.returncode != 75:
                break
            time.sleep(0.3)
        name = f"{self.scenario.name} generation {self.generations}"
        if last is None or last.returncode != 0:
            self.tally.fail("lost answers", f"{name}: ticks did not finish (last exit "
                                            f"{None if last is None else last.returncode})")
        self.check_pending(workspace, ["tick"], "", 0)
        lost = 0
        for job, expected in self.expected.items():
            got = outputs(workspace, job)
            wrong = sorted(item for item in set(expected) | set(got) if got.get(item) != expected.get(item))
            items = index_items(workspace, job)
            not_done = [item.get("id") for item in items if item.get("state") != "done"]
            if wrong or not_done or len(items) != len(expected):
                lost += max(len(wrong), len(not_done), len(expected) - len(items))
                self.tally.fail("lost answers", f"{name}: {job}: {len(wrong)} outputs missing or different "
                                                f"{wrong[:3]}; index.json lists {len(items)} of {len(expected)}, "
                                                f"not done {len(not_done)} {not_done[:3]}")
        after = answered(self.sim.stats())
        live, batch = after[0] - before[0], after[1] - before[1]
        per_loss = self.args.in_flight * (BATCH_ITEMS if self.scenario.batched else 1)
        allowed = losses * per_loss
        doubled = max(0, live - self.planned[0] - allowed) + max(0, batch - self.planned[1])
        if doubled:
            self.tally.fail("doubled answers", f"{name}: the sim answered {live} live items ({self.planned[0]} "
                                               f"planned, {allowed} allowed for {losses} losses) and {batch} "
                                               f"batch items ({self.planned[1]} planned)")
        if live < self.planned[0] or batch < self.planned[1]:
            self.tally.fail("lost answers", f"{name}: the sim answered {live} live and {batch} batch items, "
                                            f"fewer than the reference's {self.planned}: an item never asked")
        with self.tally.lock:
            self.tally.counts["lost answers"] += lost
            self.tally.counts["doubled answers"] += doubled
            self.tally.scenario_rows.append(
                (name, f"live {live} ({self.planned[0]} planned, +{allowed} allowed), batch {batch} "
                       f"({self.planned[1]} planned); lost {lost}, doubled {doubled}"))

    def stacks(self, child, why):
        """Every thread's stack of a stuck process, by gdb (its frames only), into the log folder."""
        path = os.path.join(self.logs, f"stacks-{why}-{self.scenario.name}-{child.process.pid}.txt")
        try:
            result = subprocess.run(["gdb", "-p", str(child.process.pid), "-batch", "-ex", "thread apply all bt"],
                                    capture_output=True, text=True, timeout=120)
            frames = [line for line in result.stdout.splitlines() if line.startswith(("Thread ", "#"))]
            with open(path, "w") as file:
                file.write("\n".join(frames) + "\n")
        except (OSError, subprocess.TimeoutExpired):
            pass
        return path


def kernel_log():
    """The kernel's log lines now (empty when dmesg cannot be read)."""
    result = subprocess.run(["dmesg"], capture_output=True, text=True)
    return result.stdout.splitlines() if result.returncode == 0 else []


def kernel_findings(before, pids):
    """New kernel log lines about a trap, segfault or protection fault: ours (a pid we started)
    fail the run; other processes' are shown."""
    known = set(before)
    ours, others = [], []
    for line in kernel_log():
        if line in known or not any(word in line for word in ("trap", "segfault", "general protection")):
            continue
        started = any(f"[{pid}]" in line for pid in pids)
        (ours if started else others).append(line)
    return ours, others


def sanitizer_findings(logs):
    """Sanitizer reports in the log folder, grouped by their SUMMARY line ({summary: [files]}), and
    how many reports scripts/tsan.supp suppressed ({pattern: count})."""
    found = collections.defaultdict(list)
    suppressed = collections.Counter()
    for path in sorted(glob.glob(os.path.join(logs, "sanitizer*"))):
        with open(path, errors="replace") as file:
            lines = file.read().splitlines()
        summaries = [line for line in lines if line.startswith("SUMMARY:")]
        matched = [line.split() for line in lines if line.split()[:1] and line.split()[0].isdigit()]
        for count, pattern in (words[:2] for words in matched if len(words) == 2):
            suppressed[pattern] += int(count)
        other = [line for line in lines if line.strip() and not line.startswith("ThreadSanitizer: Matched")
                 and not (line.split()[0].isdigit() and len(line.split()) == 2)]
        if not summaries and other:
            summaries = ["(no SUMMARY line) " + other[0]]
        for summary in summaries:
            found[summary].append(path)
    return found, suppressed


def sanitizer_environment(logs):
    """TSAN_OPTIONS and ASAN_OPTIONS for every process: keep going after a report, send it to a file
    per process in the log folder, leave the exit status alone (TSan), no leak report at exit."""
    env = dict(os.environ, OFFPEAK_NMCLI="")
    prefix = os.path.join(logs, "sanitizer")
    symbolizer = shutil.which("llvm-symbolizer")
    extra = f":external_symbolizer_path={symbolizer}" if symbolizer else ""
    suppressions = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tsan.supp")
    env["TSAN_OPTIONS"] = (f"halt_on_error=0:exitcode=0:log_path={prefix}-tsan:second_deadlock_stack=1"
                           f":suppressions={suppressions}:print_suppressions=1{extra}")
    env["ASAN_OPTIONS"] = f"halt_on_error=0:log_path={prefix}-asan:detect_leaks=0:abort_on_error=0{extra}"
    return env


def copy_binaries(bin_dir, sim_dir):
    binaries = tempfile.mkdtemp(prefix="offpeak-stress-bin-")
    shutil.copy2(os.path.join(bin_dir, "offpeak"), os.path.join(binaries, "offpeak"))
    shutil.copy2(os.path.join(sim_dir, "offpeak-sim"), os.path.join(binaries, "offpeak-sim"))
    return binaries


def summary(tally, workers, args, seed, wall, kernel, sanitizers, suppressed):
    """The table a person reads: what was started and sent, how each process ended, each check."""
    counts = tally.counts
    rows = [("processes started", f"{counts['started']} (run {counts['command run']}, tick {counts['command tick']})")]
    rows += [(f"  sent {name}", str(counts["signal " + name])) for name in SIGNALS]
    rows += [("  a second TERM/INT/HUP", str(counts["second signal"])),
             ("  ended before its signal", str(counts["ended before its signal"]))]
    rows += [(f"  aimed at {name}", f"{counts['moment ' + name]} signalled, "
                                    f"{counts['moment ' + name + ' (ended before)']} ended before")
             for name, _ in MOMENTS]
    for name in SIGNALS:
        after = sorted(key for key in counts if key.startswith(f"after {name}: "))
        rows.append((f"  after {name}", ", ".join(f"{key.split(': ', 1)[1]} {counts[key]}" for key in after)))
    rows.append(("ended by", ""))
    rows += [("  " + key, str(counts[key])) for key in sorted(counts)
             if key.startswith("exit ") or key.startswith("died of ")]
    rows += [
        ("checks", "(each must be 0)"),
        ("  unexplained deaths", str(len(tally.failures["unexplained deaths"]))),
        ("  kernel log lines", f"{len(kernel[0])} of our processes (other processes': {len(kernel[1])})"),
        ("  hangs", str(len(tally.failures["hangs"]))),
        ("  slow stops", f"{len(tally.failures['slow stops'])} (the slowest other stop after TERM/INT/HUP: "
                         f"{tally.slowest_stop:.1f} s)"),
        ("  core dumps", str(len(tally.failures["core dumps"]))),
        ("  unexpected exit statuses", str(len(tally.failures["unexpected exit statuses"]))),
        ("  sanitizer reports", f"{sum(len(files) for files in sanitizers.values())} "
                                f"({len(sanitizers)} distinct); suppressed by scripts/tsan.supp: "
                                f"{sum(suppressed.values())}"),
        ("  lost answers", str(counts["lost answers"])),
        ("  doubled answers", f"{counts['doubled answers']} (beyond the allowed in-flight losses)"),
        ("  completed with pending", f"{len(tally.failures['completed with pending'])} runs or reports"),
        ("  script errors", str(len(tally.failures["script errors"]))),
        ("scenarios", ""),
    ]
    rows += [(f"  {worker.scenario.name}", f"{worker.processes} processes in {worker.generations} workspaces; "
                                           f"reference run {getattr(worker, 'reference_seconds', 0):.0f} s")
             for worker in workers]
    rows += [("  " + name, text) for name, text in sorted(tally.scenario_rows)]
    rows.append(("wall time", f"{wall:.0f} s"))
    if counts["started"] < args.processes:
        print(f"stress: only {counts['started']} of {args.processes} processes started: --minutes or SIGUSR1 "
              "stopped it early")
    print(f"stress: {args.processes} processes, seed {seed}, --items {args.items}, sim latency "
          f"{args.latency_ms} ms, {args.in_flight} in flight, grace {args.grace:g} s, hang after "
          f"{args.hang_seconds:g} s; bin {args.original_bin}")
    chaos.print_rows(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="folder holding offpeak (and offpeak-sim)")
    parser.add_argument("--sim-bin", help="folder holding offpeak-sim (default: --bin)")
    parser.add_argument("--reference-bin", help="folder holding the offpeak that runs the references "
                                                "(default: --bin; a faster build's answers are the same)")
    parser.add_argument("--processes", type=int, default=500, help="processes to start and signal (default 500)")
    parser.add_argument("--seed", type=int, default=None, help="seed of commands, signals and moments")
    parser.add_argument("--items", type=int, default=1100, help="items per job (default 1100: over 1,024)")
    parser.add_argument("--generation", type=int, default=40, help="processes per workspace (default 40)")
    parser.add_argument("--latency-ms", type=int, default=40, help="the sim's latency per call (default 40)")
    parser.add_argument("--in-flight", type=int, default=8, help="calls in flight (default 8)")
    parser.add_argument("--grace", type=float, default=2.0, help="offpeak's --grace (default 2 s)")
    parser.add_argument("--hang-seconds", type=float, default=None,
                        help="a process still running this long after TERM/INT/HUP hangs (default grace + 30)")
    parser.add_argument("--max-seconds", type=float, default=600, help="longest any process may live")
    parser.add_argument("--logs", help="folder for sanitizer reports, stacks and cores (default: a new one)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="start no process after this many minutes (a slow sanitizer build); "
                             "SIGUSR1 does the same at once")
    parser.add_argument("--keep", action="store_true", help="keep the workspaces")
    args = parser.parse_args()
    if args.processes < 1 or args.items < 1 or args.generation < 1 or args.in_flight < 1:
        parser.error("--processes, --items, --generation and --in-flight must be at least 1")
    args.hang_seconds = args.hang_seconds if args.hang_seconds is not None else args.grace + 30
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 1_000_000)
    logs = args.logs or tempfile.mkdtemp(prefix="offpeak-stress-logs-")
    os.makedirs(logs, exist_ok=True)
    args.original_bin = args.bin
    binaries = copy_binaries(args.bin, args.sim_bin or args.bin)
    if args.reference_bin:
        os.makedirs(os.path.join(binaries, "reference"))
        shutil.copy2(os.path.join(args.reference_bin, "offpeak"), os.path.join(binaries, "reference", "offpeak"))
        args.reference_bin = os.path.join(binaries, "reference")
    args.bin = args.sim_bin = binaries
    env = sanitizer_environment(logs)
    kernel_before = kernel_log()
    # The other core busy: offpeak's threads race on one core less.
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    tally = Tally(args.processes)
    if args.minutes is not None:
        tally.deadline = time.monotonic() + 60 * args.minutes
    signal.signal(signal.SIGUSR1, tally.stop_starting)
    rng = random.Random(seed)
    workers = [Worker(scenario, args, tally, random.Random(rng.random()), env, logs)
               for scenario in scenarios(args.items)]
    started = time.monotonic()
    try:
        threads = [threading.Thread(target=worker.run) for worker in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        busy.kill()
        busy.wait()
        shutil.rmtree(binaries, ignore_errors=True)
    kernel = kernel_findings(kernel_before, set(tally.pids))
    for line in kernel[0]:
        tally.fail("kernel log", line)
    sanitizers, suppressed = sanitizer_findings(logs)
    for line, files in sanitizers.items():
        tally.fail("sanitizer reports", f"{len(files)}x {line} (e.g. {files[0]})")
    summary(tally, workers, args, seed, time.monotonic() - started, kernel, sanitizers, suppressed)
    for line in kernel[1]:
        print(f"  (kernel log, not a process of ours: {line})")
    failed = {kind: texts for kind, texts in tally.failures.items() if texts}
    for kind, texts in sorted(failed.items()):
        print(f"FAILURE: {kind}: {len(texts)}", file=sys.stderr)
        for text in texts[:10]:
            print(f"  {text}", file=sys.stderr)
    print(f"logs: {logs}")
    if failed:
        print(f"stress: FAILED (seed {seed})")
        return 1
    if not args.logs:
        shutil.rmtree(logs, ignore_errors=True)
    print(f"stress: passed (seed {seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
