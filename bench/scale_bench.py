#!/usr/bin/env python3
"""offpeak at scale: its own CPU time per call under a big backlog, and the report commands on a big
store, as two Markdown tables.

    python3 bench/scale_bench.py                                  # quick scale, this tree's release build
    python3 bench/scale_bench.py --full                           # 100,000 requests, 1,000,000 cache entries
    python3 bench/scale_bench.py --full --before-bin /tmp/base    # the same beside an older release build
    python3 bench/scale_bench.py --postgres                       # SQLite and PostgreSQL side by side

Backlog: N requests submitted (`offpeak submit`) to one `queue: true` job shaped like W-inbox (a
~5.2 KB shared system prompt and instructions, items of 25-120 tokens, `batching: {max_items: 8}`),
then `offpeak run` against an offpeak-sim that answers at once. The run is stopped (SIGTERM) after
`--calls` calls or `--seconds` seconds past its first call. Sampled every half second: the sim's
call count and the offpeak process's user+sys CPU time (/proc), so CPU per call is offpeak's own
work, early in the run and late in the window; peak RSS comes from wait4.

Store: a store made by offpeak's migrator and filled with direct SQL (`scale_store.py`): M cache
entries of ~2 KB answers, R requests, L ledger rows over 90 days, 1,000 runs, 50 idle job specs.
Each report command and an idle tick run once to warm up, then up to `--runs` times (median shown).
With `--before-bin`, the store is made by the older build and copied, so the newer build opens it
as an upgrade would (the time of that first open, migration included, is noted).

With `--postgres`, every measurement is made twice by the same build: on the embedded SQLite store
and on a database of a throwaway PostgreSQL cluster on this machine (`pgcluster.py`, default
settings, over TCP on 127.0.0.1); the store of the second table is moved there with
`offpeak store copy` (its time is noted) and the workspace's `store:` names it.

A `--bin` folder that is not a release build (as `make bench` passes) is ignored and this tree is
built as `make release` builds it (`release.py`): a debug build measures Swift's -Onone code, not offpeak.
Progress goes to stderr; the tables go to stdout and `--out` (default bench/last-scale-run.md).
"""

import argparse
import datetime
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

import pgcluster  # noqa: E402
import release  # noqa: E402
import scale_store  # noqa: E402
import textgen  # noqa: E402
from sim import Sim, SimError  # noqa: E402
from spawner import Spawner  # noqa: E402

JOB = "inbox"
QUICK = {"requests": 10_000, "entries": 100_000, "store_requests": 10_000, "ledger": 25_000,
         "calls": 300, "seconds": 60.0}
FULL = {"requests": 100_000, "entries": 1_000_000, "store_requests": 100_000, "ledger": 250_000,
        "calls": 2000, "seconds": 180.0}
EARLY_CALLS = 200
LATE_CALLS = 200
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


@dataclass
class Build:
    label: str
    folder: Path
    # The PostgreSQL cluster this side's stores are made on; None: the embedded SQLite file.
    cluster: pgcluster.Cluster | None = None

    def store_line(self, name: str) -> str:
        """offpeak.yaml's `store:` line for a new store called `name`: a new database on this side's
        cluster, or nothing (the workspace's SQLite file)."""
        return f"store: {self.cluster.database(name)}\n" if self.cluster else ""

    @property
    def offpeak(self) -> Path:
        return self.folder / "offpeak"

    @property
    def sim(self) -> Path:
        return self.folder / "offpeak-sim"


def release_folder(bin_dir: Path | None) -> Path:
    """`bin_dir` when it is a release build with both binaries, else this tree's release build."""
    if bin_dir is not None and "release" in bin_dir.resolve().parts and (bin_dir / "offpeak").exists() \
            and (bin_dir / "offpeak-sim").exists():
        return bin_dir.resolve()
    try:
        return release.build(["offpeak", "offpeak-sim"], log)
    except release.ReleaseBuildError as error:
        raise BenchError(str(error)) from error


# --- the backlog -------------------------------------------------------------------------------


def inbox_job(rng: random.Random) -> dict:
    return {
        "name": JOB, "kind": "prompt", "tier": "fast", "queue": True, "max_tokens": 60,
        "system": textgen.padded_prose(rng, "You are the inbox agent of an online shop. House rules follow.", 1000),
        "instructions": textgen.padded_prose(rng, "Answer in one or two sentences.", 300),
        "template": "{{item}}", "batching": {"max_items": 8},
    }


def submission_lines(count: int, path: Path, seed: int = 5) -> tuple[dict, Path]:
    """The job, and `count` submission lines for it written to `path`."""
    rng = random.Random(seed)
    job = inbox_job(rng)
    with open(path, "w") as out:
        for n in range(count):
            item = textgen.ticket(rng, n, rng.randint(25, 120))
            out.write(json.dumps({"id": f"c-{n:06d}", "vars": {"item": item}}) + "\n")
    return job, path


@dataclass
class Backlog:
    build: str
    requests: int
    round: int = 1
    submit_seconds: float = 0.0
    first_call: float | None = None
    cpu_to_first_call: float = 0.0
    samples: list[tuple[float, int, float]] = field(default_factory=list)  # (s, calls, cpu s)
    peak_rss_mb: float = 0.0
    exit_status: int | None = None
    error: str = ""

    def window(self, first: int, last: int) -> tuple[float, float] | None:
        """CPU ms per call and calls/s between the samples nearest `first` and `last` calls."""
        start = next((s for s in self.samples if s[1] >= first), None)
        end = next((s for s in reversed(self.samples) if s[1] <= last), None)
        if not start or not end or end[1] <= start[1]:
            return None
        calls = end[1] - start[1]
        return (end[2] - start[2]) * 1000 / calls, calls / max(1e-9, end[0] - start[0])

    @property
    def calls(self) -> int:
        return self.samples[-1][1] if self.samples else 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def run_backlog(spawner: Spawner, build: Build, requests: int, scratch: Path, limits: dict,
                prepared: tuple[dict, Path], round: int = 1) -> Backlog:
    result = Backlog(build=build.label, requests=requests, round=round)
    name = f"{build.label}-{requests}-{round}"
    workspace = scratch / f"backlog-{name}"
    job, lines = prepared
    log(f"backlog {requests:,} / {build.label}{f' (run {round})' if round > 1 else ''}: submitting ...")
    try:
        with Sim(build.sim, [], scratch, f"backlog-{name}") as sim:
            (workspace / "jobs").mkdir(parents=True)
            (workspace / "offpeak.yaml").write_text(
                f"provider: sim\nbase_url: {sim.url}\n" + build.store_line(f"backlog_{requests}_{round}"))
            (workspace / "jobs" / f"{JOB}.yaml").write_text(json.dumps(job, indent=1) + "\n")
            errors = scratch / f"submit-{name}.err"
            submitted = spawner.run([build.offpeak, "submit", "--job", JOB, "--workspace", workspace],
                                    stdin=lines, stderr=errors)
            result.submit_seconds = submitted.wall
            if submitted.status != 0:
                raise BenchError(f"offpeak submit exited {submitted.status}: {errors.read_text()[-500:]}")
            log(f"  submitted in {result.submit_seconds:.1f} s; running until {limits['calls']:,} calls "
                f"or {limits['seconds']:.0f} s past the first call ...")
            watch(spawner, build, workspace, sim, limits, result, scratch)
    except (BenchError, SimError, OSError, subprocess.SubprocessError, ValueError, KeyError) as error:
        result.error = f"{type(error).__name__}: {error}"
        log(f"  failed: {result.error}")
    return result


def watch(spawner: Spawner, build: Build, workspace: Path, sim: Sim, limits: dict, result: Backlog,
          scratch: Path) -> None:
    """Runs the job, sampling calls and CPU, and stops it at the limits."""
    pid = spawner.start([build.offpeak, "run", JOB, "--workspace", workspace],
                        stderr=scratch / f"run-{build.label}-{result.requests}-{result.round}.err")
    start = time.perf_counter()
    outcome: dict = {}
    reaper = threading.Thread(target=lambda: outcome.setdefault("done", spawner.wait()), daemon=True)
    reaper.start()
    try:
        while reaper.is_alive():
            # Every 0.1 s: at 150-250 calls/s the first 200 calls take about a second, and samples
            # half a second apart left that window to two or three of them.
            time.sleep(0.1)
            try:
                cpu = cpu_seconds(pid)
            except (OSError, IndexError):
                break  # exited between the check and the read
            calls = int(sim.stats().get("calls", 0))
            now = time.perf_counter() - start
            result.samples.append((now, calls, cpu))
            if result.first_call is None and calls > 0:
                result.first_call, result.cpu_to_first_call = now, cpu
            if result.first_call is None and now > 900:
                raise BenchError("no call within 900 s")
            if result.first_call is not None and (
                    calls >= limits["calls"] or now - result.first_call >= limits["seconds"]):
                break
    finally:
        if reaper.is_alive():
            stop(pid, signal.SIGTERM)
            reaper.join(120)
            if reaper.is_alive():
                stop(pid, signal.SIGKILL)
                reaper.join()
    done = outcome["done"]
    result.exit_status, result.peak_rss_mb = done.status, done.rss_mb


def stop(pid: int, signal_number: int) -> None:
    try:
        os.kill(pid, signal_number)
    except ProcessLookupError:
        pass  # it ended meanwhile


def backlog_table(rows: list[Backlog]) -> list[str]:
    lines = [
        f"| requests | build | submit lines/s | first call s | offpeak CPU to first call s | calls in window "
        f"| CPU ms/call, calls 1-{EARLY_CALLS} | CPU ms/call, last {LATE_CALLS} calls | calls/s early | "
        f"calls/s late | calls/s, whole window | peak RSS MB |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        build = row.build if len(rows) == len({(r.build, r.requests) for r in rows}) else f"{row.build} #{row.round}"
        if row.error and not row.samples:
            lines.append(f"| {row.requests:,} | {build} | CRASHED: {row.error} ||||||||||")
            continue
        early = row.window(1, 1 + EARLY_CALLS)
        late = row.window(max(1, row.calls - LATE_CALLS), row.calls)
        whole = row.window(1, row.calls)
        cell = (lambda w, i, f: f.format(w[i]) if w else "-")
        lines.append(
            f"| {row.requests:,} | {build} | {row.requests / max(1e-9, row.submit_seconds):,.0f} "
            f"| {row.first_call:.1f} | {row.cpu_to_first_call:.1f} | {row.calls:,} "
            f"| {cell(early, 0, '{:.1f}')} | {cell(late, 0, '{:.1f}')} | {cell(early, 1, '{:.1f}')} "
            f"| {cell(late, 1, '{:.1f}')} | {cell(whole, 1, '{:.1f}')} | {row.peak_rss_mb:,.0f} |"
            if row.first_call is not None else
            f"| {row.requests:,} | {build} | {row.requests / max(1e-9, row.submit_seconds):,.0f} | no call "
            f"| - | 0 | - | - | - | - | - | {row.peak_rss_mb:,.0f} |")
    return lines


def median_table(rows: list[Backlog]) -> list[str]:
    """Each build's runs of one backlog size summed up: the median and the range of the whole
    window's calls/s and CPU per call (runs alternate between builds, so both meet the same noise)."""
    lines = ["| requests | build | runs | calls/s, whole window: median | min - max | CPU ms/call: median |",
             "| ---: | --- | ---: | ---: | ---: | ---: |"]
    keys = list(dict.fromkeys((r.requests, r.build) for r in rows))
    for requests, build in keys:
        windows = [w for r in rows if (r.requests, r.build) == (requests, build)
                   for w in [r.window(1, r.calls)] if w and r.first_call is not None]
        if not windows:
            lines.append(f"| {requests:,} | {build} | 0 | - | - | - |")
            continue
        rates = sorted(w[1] for w in windows)
        cpus = sorted(w[0] for w in windows)
        lines.append(f"| {requests:,} | {build} | {len(windows)} | {statistics.median(rates):.1f} "
                     f"| {rates[0]:.1f} - {rates[-1]:.1f} | {statistics.median(cpus):.1f} |")
    return lines


# --- the store ---------------------------------------------------------------------------------


def store_section(spawner: Spawner, builds: list[Build], scale: scale_store.Scale, scratch: Path, runs: int,
                  system_prompt: str) -> tuple[list[str], dict]:
    base = scratch / "store-base"
    scale_store.write_specs(base, "http://127.0.0.1:9")  # nothing is called: the sim is never started
    log(f"store: {scale.entries:,} cache entries, {scale.requests:,} requests, {scale.ledger:,} ledger rows "
        f"(made by the {builds[0].label} build's migrator) ...")
    start = time.perf_counter()
    made = spawner.run([builds[0].offpeak, "status", "--workspace", base])
    if made.status != 0:
        raise BenchError(f"offpeak status (creating the store) exited {made.status}")
    database = base / "cache" / "offpeak.sqlite"
    scale_store.fill(database, scale, system_prompt)
    fill_seconds = time.perf_counter() - start
    size_mb = database.stat().st_size / 1e6
    log(f"  filled in {fill_seconds:.0f} s ({size_mb:,.0f} MB)")
    timings, first_open = {}, {}
    for build in builds:
        workspace = scratch / f"store-{build.label}"
        shutil.copytree(base, workspace)
        if build.cluster:
            url = build.cluster.database("reports")
            copied = spawner.run([build.offpeak, "store", "copy", "--to", url, "--workspace", workspace])
            if copied.status != 0:
                raise BenchError(f"offpeak store copy exited {copied.status}")
            log(f"  {build.label}: store copied in {copied.wall:.1f} s")
            first_open[f"{build.label} (store copy)"] = copied.wall
            with open(workspace / "offpeak.yaml", "a") as config:
                config.write(f"\nstore: {url}\n")
        first_open[build.label] = spawner.run([build.offpeak, "status", "--workspace", workspace]).wall
        log(f"  {build.label}: first open {first_open[build.label]:.1f} s; timing commands ...")
        timings[build.label] = scale_store.time_commands(spawner, build.offpeak, workspace, runs)
        shutil.rmtree(workspace, ignore_errors=True)
    header = "| command | " + " | ".join(f"{b.label} s | {b.label} RSS MB" for b in builds)
    header += f" | {builds[0].label}/{builds[1].label} |" if len(builds) == 2 else " |"
    lines = [header, "| --- |" + " ---: | ---: |" * len(builds) + (" ---: |" if len(builds) == 2 else "")]
    for name, _ in scale_store.COMMANDS:
        cells = []
        for build in builds:
            timing = timings[build.label][name]
            shown = f"{timing.median:.3f}" + (f" (exit {timing.status})" if timing.status else "")
            cells += [f"{shown} (n={len(timing.seconds)})", f"{timing.rss_mb:.0f}"]
        if len(builds) == 2:
            before, after = (timings[b.label][name].median for b in builds)
            cells.append(f"{before / after:.1f}x")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    info = {"fill_seconds": fill_seconds, "size_mb": size_mb, "first_open": first_open}
    return lines, info


# --- the report --------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path, help="release build folder with offpeak and offpeak-sim (default: build)")
    parser.add_argument("--before-bin", type=Path,
                        help="an older release build to measure beside it (e.g. the commit before a change)")
    parser.add_argument("--full", action="store_true",
                        help="100,000 requests and a store of 1,000,000 cache entries (default: a tenth)")
    parser.add_argument("--requests", type=int, nargs="+", help="backlog sizes (default: 10,000; --full: 100,000)")
    parser.add_argument("--entries", type=int, help="cache entries in the store (default: 100,000; --full: 1,000,000)")
    parser.add_argument("--store-requests", type=int, help="requests in the store (default: 10,000; --full: 100,000)")
    parser.add_argument("--ledger", type=int, help="ledger rows in the store (default: 25,000; --full: 250,000)")
    parser.add_argument("--calls", type=int, help="stop each run after this many calls")
    parser.add_argument("--seconds", type=float, help="...or this many seconds past its first call")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per store command (median shown)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each backlog per build, taking turns, with a table of their medians")
    parser.add_argument("--postgres", action="store_true",
                        help="measure the build on SQLite and on a throwaway PostgreSQL cluster, side by side")
    parser.add_argument("--no-backlog", action="store_true", help="skip the backlog table")
    parser.add_argument("--no-store", action="store_true", help="skip the store table")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--out", type=Path, default=HERE / "last-scale-run.md")
    return parser.parse_args()


def section(bin_dir: Path | None, args: argparse.Namespace | None = None) -> tuple[str, bool]:
    """The scale bench as Markdown, and whether it ran; never raises for a failed part."""
    args = args or argparse.Namespace(before_bin=None, full=False, requests=None, entries=None, store_requests=None,
                                      ledger=None, calls=None, seconds=None, runs=5, repeat=1, postgres=False,
                                      no_backlog=False,
                                      no_store=False, keep=False)
    preset = FULL if args.full else QUICK
    limits = {"calls": args.calls or preset["calls"], "seconds": args.seconds or preset["seconds"]}
    started = time.perf_counter()
    scratch = Path(tempfile.mkdtemp(prefix="offpeak-scale-bench-"))
    parts, ok = [], True
    spawner = Spawner()  # first, while this process is small: see spawner.py
    cluster = None
    try:
        builds = [Build("after", release_folder(bin_dir))]
        if args.before_bin:
            builds.insert(0, Build("before", args.before_bin.resolve()))
        if args.postgres:
            cluster = pgcluster.Cluster()
            builds = [Build("sqlite", builds[-1].folder), Build("postgresql", builds[-1].folder, cluster)]
        job, _ = submission_lines(0, scratch / "none.jsonl")
        system_prompt = job["system"] + "\n\n" + job["instructions"]
        if not args.no_backlog:
            rows = []
            for requests in args.requests or [preset["requests"]]:
                prepared = submission_lines(requests, scratch / f"lines-{requests}.jsonl")
                for round in range(1, args.repeat + 1):
                    for build in builds:
                        rows.append(run_backlog(spawner, build, requests, scratch, limits, prepared, round))
            ok = ok and not any(r.error for r in rows)
            parts += [
                f"Backlog: requests submitted to one `queue: true` job (system prompt + instructions "
                f"{len(system_prompt.encode()):,} bytes, items of 25-120 tokens, batches of up to 8), then "
                f"`offpeak run` against offpeak-sim with no latency, stopped after {limits['calls']:,} calls or "
                f"{limits['seconds']:.0f} s past the first call. CPU is the offpeak process's user+sys time "
                "between samples (every 0.1 s) divided by the calls the sim counted between them; the "
                "whole window runs from the first call to the last sample.", "",
                *backlog_table(rows), ""]
            if args.repeat > 1:
                parts += [f"Medians of the {args.repeat} runs of each build above (run one after the other, "
                          "builds taking turns):", "", *median_table(rows), ""]
        if not args.no_store:
            scale = scale_store.Scale(entries=args.entries or preset["entries"],
                                      requests=args.store_requests or preset["store_requests"],
                                      ledger=args.ledger or preset["ledger"])
            lines, info = store_section(spawner, builds, scale, scratch, args.runs, system_prompt)
            opened = "; ".join(f"{k} {v:.1f} s" for k, v in info["first_open"].items())
            parts += [
                f"Store: {scale.entries:,} cache entries (~2 KB answers), {scale.requests:,} requests (~5.7 KB "
                f"payloads, one open run: half answered, 0.5 % retrying), {scale.ledger:,} ledger rows over 90 "
                f"days, 1,000 runs, 50 idle job specs; {info['size_mb']:,.0f} MB, made in "
                f"{info['fill_seconds']:.0f} s. First `status` on each copy (opening, migrating): {opened}. "
                "Wall seconds, median of the timed runs after one warm-up; RSS is the largest seen.", "",
                *lines, ""]
    except (BenchError, pgcluster.ClusterError, OSError, subprocess.SubprocessError, ValueError,
            KeyError) as error:
        log(f"scale bench failed: {error}")
        parts.append(f"CRASHED: {type(error).__name__}: {error}")
        ok = False
    finally:
        spawner.close()
        if cluster:
            cluster.remove()
        if args.keep:
            log(f"scratch kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    head = [f"## offpeak scale bench, {now}", "",
            f"- Machine: {platform.machine()}, {os.cpu_count()} CPUs; "
            f"{'full scale' if args.full else 'a tenth of full scale (--full for 100k/1M)'}; "
            f"took {time.perf_counter() - started:.0f} s.", ""]
    return "\n".join(head + parts) + "\n", ok


def main() -> int:
    args = parse_args()
    text, ok = section(args.bin, args)
    print(text, end="")
    args.out.write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
