#!/usr/bin/env python3
"""A daily research job (issue 24): what `reuse: unchanged` saves over `reuse: ttl`.

A research job asks one question per page of a site (50 pages, each its own source), every day
for 7 simulated days; from day 2, 3 pages change a day. `cache_ttl: 0s` stands for a day's wait:
every answer and every source is past its TTL at the next run, so the pages are revalidated
(a `304` when unchanged) and `reuse: ttl` pays for every item again, while `reuse: unchanged`
pays only for the items whose page changed. One offpeak-sim serves the pages and answers the
calls; each variant has its own workspace and sim, and both see the same changes.

Prints a Markdown table on stdout: calls and dollars per day for each variant, and the totals.
Python 3 standard library only. Not a test.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim import Sim  # noqa: E402

JOB = "daily"


def set_page(sim: Sim, name: str, text: str) -> None:
    body = json.dumps({"name": name, "content": text}).encode()
    request = urllib.request.Request(
        sim.url + "/sim/sources", data=body, method="POST", headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        reply.read()


def page_text(page: int, version: int) -> str:
    return (f"Page {page}, version {version}. The harbour report for district {page} says the "
            f"catch was {100 + page * 7 + version} crates and the price moved by {version % 5} percent.")


def workspace(root: Path, sim: Sim, pages: int, reuse: str) -> Path:
    (root / "jobs").mkdir(parents=True)
    (root / "offpeak.yaml").write_text(f"provider: sim\nbase_url: {sim.url}\n")
    items = "\n".join(
        f'  - {{id: page-{p:02d}, item: "What changed in district {p}?", sources: ["{sim.url}/sources/page-{p}"]}}'
        for p in range(1, pages + 1))
    (root / "jobs" / f"{JOB}.yaml").write_text(
        f"kind: research\ntemplate: \"Answer in one line. {{{{item}}}}\"\nitems:\n{items}\n"
        f"cache_ttl: 0s\nreuse: {reuse}\nbatching: off\nmax_tokens: 60\n")
    return root


def run(binary: Path, root: Path) -> dict:
    done = subprocess.run(
        [str(binary), "run", JOB, "--workspace", str(root), "--json"], capture_output=True, text=True,
        timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"research bench: offpeak run failed ({done.returncode}): {done.stderr.strip()}")
    return json.loads(done.stdout)["spend"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="folder holding offpeak and offpeak-sim")
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--changes", type=int, default=3, help="pages changed a day from day 2")
    args = parser.parse_args()
    binaries = Path(args.bin)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="offpeak-research-bench-") as scratch:
        for reuse in ["unchanged", "ttl"]:
            with Sim(binaries / "offpeak-sim", [], Path(scratch), reuse) as sim:
                versions = {p: 1 for p in range(1, args.pages + 1)}
                for page, version in versions.items():
                    set_page(sim, f"page-{page}", page_text(page, version))
                root = workspace(Path(scratch) / reuse, sim, args.pages, reuse)
                days = []
                for day in range(1, args.days + 1):
                    if day > 1:
                        # The same pages change in both variants: a fixed walk over the site.
                        for k in range(args.changes):
                            page = (day * args.changes + k) % args.pages + 1
                            versions[page] += 1
                            set_page(sim, f"page-{page}", page_text(page, versions[page]))
                    spend = run(binaries / "offpeak", root)
                    days.append((spend["calls"], spend["dollars"]))
                    print(f"{reuse} day {day}: {spend['calls']} calls, ${spend['dollars']:.6f}", file=sys.stderr)
                rows[reuse] = days
    print(f"A {args.pages}-page daily research job, {args.changes} pages changing a day from day 2; "
          "every TTL passed between days.\n")
    print("| day | pages changed | reuse: unchanged calls | $ | reuse: ttl calls | $ |")
    print("|---:|---:|---:|---:|---:|---:|")
    for day in range(args.days):
        changed = args.pages if day == 0 else args.changes
        (uc, ud), (tc, td) = rows["unchanged"][day], rows["ttl"][day]
        print(f"| {day + 1} | {changed} | {uc} | {ud:.6f} | {tc} | {td:.6f} |")
    total = {k: (sum(c for c, _ in v), sum(d for _, d in v)) for k, v in rows.items()}
    (uc, ud), (tc, td) = total["unchanged"], total["ttl"]
    print(f"| all | | {uc} | {ud:.6f} | {tc} | {td:.6f} |")
    print(f"\nreuse: unchanged pays {uc / tc:.1%} of the calls and {ud / td:.1%} of the dollars of reuse: ttl.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
