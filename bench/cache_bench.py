#!/usr/bin/env python3
"""offpeak's TTL cache against Python's diskcache on the same hit-lookup workload, and LZ4 on the
sample documents, as two Markdown tables.

    python3 bench/cache_bench.py                          # builds offpeak-bench in release mode first
    python3 bench/cache_bench.py --bin .build/release     # uses the release build there
    python3 bench/cache_bench.py --before-bin DIR         # adds an older release build's rows

A debug build measures Swift's -Onone code, not offpeak, so a `--bin` folder that is not a release
build (as `make bench` passes) is ignored for this part and offpeak-bench is built with
`bench/release.py`, as `make release` builds (incremental; the first time takes minutes).

Both caches hold the same N answers (the same keys and ~2 KB texts, written by `offpeak-bench cache
--texts-out`) and answer the same number of random hit lookups, 5 rounds each; the medians are
compared. offpeak's lookups are timed twice: with each key at hand, and computing it from the
item's ~2 KB request first (canonical JSON, then SHA-256), as a run does; SHA-256's time alone is
given too. `--before-bin DIR` (a folder with an older release build's `offpeak-bench`) times that
build on the same workload in the same run, so a change is judged before and after on one machine
state. `bench/bench.py` runs this after its own table. Progress goes to stderr.
"""

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

import release  # noqa: E402

ENTRIES = 10_000
LOOKUPS = 100_000
PAYLOAD_BYTES = 2048
ROUNDS = 5
SEED = 42


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


def ensure_diskcache() -> None:
    try:
        import diskcache  # noqa: F401
    except ImportError:
        log("installing diskcache (python3 -m pip install --quiet diskcache)")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "diskcache"], check=True)


def release_bench_binary() -> Path:
    """Builds offpeak-bench in release mode (a debug build measures Swift's -Onone, not offpeak)."""
    try:
        return release.build(["offpeak-bench"], log) / "offpeak-bench"
    except release.ReleaseBuildError as error:
        raise BenchError(str(error)) from error


def run_json(command: list[str]) -> dict:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"{' '.join(command[:2])} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


@dataclass
class Side:
    name: str
    per_second: float
    rounds: list[float]
    fill_seconds: float
    note: str = ""


def offpeak_side(binary: Path, scratch: Path, label: str = "") -> tuple[Side, Path, dict]:
    texts = scratch / f"texts{label}.jsonl"
    log(f"offpeak{label}: {ENTRIES:,} answers, {ROUNDS} rounds of {LOOKUPS:,} hit lookups ...")
    result = run_json([
        str(binary), "cache", "--entries", str(ENTRIES), "--lookups", str(LOOKUPS),
        "--payload-bytes", str(PAYLOAD_BYTES), "--rounds", str(ROUNDS), "--seed", str(SEED),
        "--dir", str(scratch / f"offpeak{label}"), "--texts-out", str(texts),
    ])
    if result.get("misses"):
        raise BenchError(f"offpeak missed {result['misses']} lookups")
    side = Side(f"offpeak{label} `ResponseCache.answer(for:)`", result["lookups_per_second"],
                result["round_seconds"], result["fill_seconds"])
    return side, texts, result


def diskcache_side(texts: Path, scratch: Path) -> Side:
    import diskcache

    entries = [json.loads(line) for line in texts.read_text().splitlines() if line]
    log(f"diskcache: {len(entries):,} answers, {ROUNDS} rounds of {LOOKUPS:,} hit lookups ...")
    with diskcache.Cache(str(scratch / "diskcache")) as cache:
        start = time.perf_counter()
        for entry in entries:
            cache.set(entry["key"], entry["text"])
        fill = time.perf_counter() - start
        keys = [entry["key"] for entry in entries]
        chooser = random.Random(SEED)
        order = [keys[chooser.randrange(len(keys))] for _ in range(LOOKUPS)]
        rounds = []
        misses = 0
        get = cache.get
        for _ in range(ROUNDS):
            start = time.perf_counter()
            for key in order:
                if get(key) is None:
                    misses += 1
            rounds.append(time.perf_counter() - start)
        if misses:
            raise BenchError(f"diskcache missed {misses} lookups")
        policy = cache.eviction_policy
    return Side("diskcache `Cache.get`", LOOKUPS / statistics.median(rounds), rounds, fill,
                note=f"eviction policy {policy}")


def lz4_rows(binary: Path) -> dict:
    samples = sorted(str(path) for path in (ROOT / "samples").glob("*.md"))
    if not samples:
        raise BenchError("no samples/*.md")
    log(f"lz4: {len(samples)} sample files ...")
    return run_json([str(binary), "lz4", *samples])


def keyed_side(result: dict, label: str = "") -> Side:
    """The same lookups, each computing its key from the item's request first, as a run does."""
    return Side(f"offpeak{label}, key from the request (`RequestPlanner.cacheKey` + `answer(for:)`)",
                result["keyed_lookups_per_second"], result["keyed_round_seconds"], result["fill_seconds"])


def cache_table(sides: list[Side], disk: Side) -> list[str]:
    lines = [
        "| cache | hit lookups/s (median of 5) | µs per lookup | fill s | ratio offpeak/diskcache |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for side in [*sides, disk]:
        shown = f"{side.per_second / disk.per_second:.2f}x"
        lines.append(
            f"| {side.name} | {side.per_second:,.0f} | {1e6 / side.per_second:.2f} | {side.fill_seconds:.2f} "
            f"| {shown} |")
    return lines


def lz4_table(result: dict) -> list[str]:
    lines = [
        "| file | bytes | LZ4 frame bytes | ratio | compress MB/s | decompress MB/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in result["files"]:
        lines.append(
            f"| {Path(row['file']).name} | {row['bytes']:,} | {row['compressed_bytes']:,} | {row['ratio']:.2f} "
            f"| {row['compress_mb_per_second']:,.0f} | {row['decompress_mb_per_second']:,.0f} |")
    lines.append(
        f"| **all** | {result['bytes']:,} | {result['compressed_bytes']:,} | {result['ratio']:.2f} "
        f"| {result['compress_mb_per_second']:,.0f} | {result['decompress_mb_per_second']:,.0f} |")
    return lines


def bench_binary(bin_dir: Path | None) -> Path:
    """`bin_dir`'s offpeak-bench when that is a release build, else a fresh release build's."""
    if bin_dir is not None and "release" in bin_dir.resolve().parts and (bin_dir / "offpeak-bench").exists():
        return bin_dir / "offpeak-bench"
    return release_bench_binary()


def section(bin_dir: Path | None = None, before_bin: Path | None = None) -> tuple[str, bool]:
    """The cache bench as Markdown, and whether it ran; never raises for a failed side.

    `before_bin`: a folder holding an older release build's `offpeak-bench`, timed on the same
    workload in the same run (its rows are labelled "(before)")."""
    scratch = Path(tempfile.mkdtemp(prefix="offpeak-cache-bench-"))
    before_rows: list[Side] = []
    try:
        ensure_diskcache()
        binary = bench_binary(bin_dir)
        if before_bin is not None:
            before_binary = before_bin / "offpeak-bench"
            if not before_binary.exists():
                raise BenchError(f"no offpeak-bench in {before_bin}")
            before, _, before_raw = offpeak_side(before_binary, scratch, " (before)")
            before_rows = [before, keyed_side(before_raw, " (before)")]
        offpeak, texts, raw = offpeak_side(binary, scratch)
        disk = diskcache_side(texts, scratch)
        lz4 = lz4_rows(binary)
    except (BenchError, OSError, subprocess.SubprocessError, ValueError, KeyError) as error:
        log(f"cache bench failed: {error}")
        return f"## offpeak cache bench\n\nCRASHED: {type(error).__name__}: {error}\n", False
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    ratio = offpeak.per_second / disk.per_second
    verdict = "PASS" if ratio >= 1.0 else "FAIL"
    lines = [
        "## offpeak cache bench",
        "",
        f"- {ENTRIES:,} answers of ~{raw['average_text_bytes']:,} bytes of seeded English-like text, the same "
        f"keys and texts on both sides; {LOOKUPS:,} random hit lookups a round, {ROUNDS} rounds, median shown.",
        f"- offpeak: `offpeak-bench cache` (`{binary}`): SQLite read (WAL, memory-mapped, one snapshot shared "
        "for up to 10 ms, the statement prepared once), the payload's XXH64 checked, its LZ4 block decoded "
        "into a `CachedAnswer` (a binary record: no JSON parse), and the hit counted (per entry and per day, "
        "written in batches). Stored "
        f"{raw['raw_bytes']:,} bytes of answer records as {raw['stored_bytes']:,} bytes of LZ4 payloads; "
        f"{raw['hits_counted']:,} hits counted, in memory, written at least every 5 s: the batch still pending "
        f"after the rounds took {raw['flush_seconds']:.3f} s to write "
        f"({raw['flush_seconds'] * 1e6 / max(1, raw['hits_counted']):.2f} µs a hit; add it for the full cost).",
        f"- diskcache {_diskcache_version()}: `diskcache.Cache(dir)`, `cache.set(key, text)` then `cache.get(key)` "
        f"({disk.note}: a get writes nothing); values are the plain strings.",
        f"- Rounds (s): offpeak {', '.join(f'{s:.3f}' for s in offpeak.rounds)}; "
        f"diskcache {', '.join(f'{s:.3f}' for s in disk.rounds)}.",
        f"- Key from the request: each lookup first builds the item's cache key as a run does (canonical JSON "
        f"of a ~{PAYLOAD_BYTES:,}-byte request, then SHA-256); SHA-256 alone takes {raw['hash_microseconds']:.2f} µs "
        f"for one request text, the whole key alone {raw['key_microseconds']:.2f} µs. "
        f"Rounds (s): {', '.join(f'{s:.3f}' for s in raw['keyed_round_seconds'])}.",
        "",
        *cache_table([*before_rows, offpeak, keyed_side(raw)], disk),
        "",
        f"LZ4 frames (`offpeak-bench lz4 samples/*.md`, median of {lz4['runs']} runs; MB = 10^6 bytes):",
        "",
        *lz4_table(lz4),
        "",
        f"- {verdict}: offpeak hit lookups at least as fast as diskcache ({ratio:.2f}x).",
    ]
    return "\n".join(lines) + "\n", True


def _diskcache_version() -> str:
    try:
        import diskcache
        return diskcache.__version__
    except ImportError:
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", type=Path,
                        help="a release build folder with offpeak-bench (default: build one)")
    parser.add_argument("--before-bin", type=Path, metavar="DIR",
                        help="an older release build folder with offpeak-bench: its rows too, same run")
    args = parser.parse_args()
    text, ok = section(args.bin, args.before_bin)
    print(text, end="")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
