#!/usr/bin/env python3
"""The README's pictures of `offpeak dashboard`, made from the demo workspace.

Copies the demo workspace (offpeak.yaml, jobs/, samples/) to a scratch folder, starts offpeak-sim,
and gives it a few days of history through the hidden `--now`: `digest` twelve and four days ago,
`questions` eight days ago on AC, then `questions` again today on battery (deferred) and a tick of
the host `laptop`. Then it serves the dashboard and has headless chromium (scripts/browse.py)
photograph each view into docs/images/.

    python3 scripts/screenshots.py [--bin DIR] [--out docs/images]
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import browse  # noqa: E402

FIXTURES = ROOT / "Tests" / "Fixtures" / "sysfs"
VIEWS = [  # (file, page, element; None: the top of the page, as a window 1100 by 560 shows it)
    ("dashboard.png", "/", None),
    ("dashboard-waiting.png", "/", "#queue"),
    ("dashboard-money.png", "/", "#money"),
    ("dashboard-cache.png", "/", "#cache"),
    ("dashboard-hosts.png", "/", "#hosts"),
    ("dashboard-run.png", "/runs/{run}", "body"),
]


def first_line(process, pattern, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        line = process.stdout.readline()
        match = re.search(pattern, line or "")
        if match:
            return match.group(1)
    raise SystemExit(f"no line matching {pattern!r} in {seconds} s")


def noon(days_ago):
    day = datetime.date.today() - datetime.timedelta(days=days_ago)
    local = datetime.datetime.combine(day, datetime.time(12, 0)).astimezone()
    return local.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", help="where offpeak and offpeak-sim are (default: swift build --show-bin-path)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"))
    args = parser.parse_args()
    bin_dir = Path(args.bin or subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, check=True,
                                              capture_output=True, text=True).stdout.strip())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="offpeak-shots-"))
    workspace = scratch / "demo"
    workspace.mkdir()
    for name in ["offpeak.yaml", "jobs", "samples"]:
        source = ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, workspace / name)
    servers = []
    try:
        sim = subprocess.Popen([str(bin_dir / "offpeak-sim"), "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        servers.append(sim)
        sim_url = first_line(sim, r"offpeak-sim listening on (http\S+)")

        def offpeak(*arguments, sysfs="ac-wifi", check=True):
            environment = dict(os.environ, OFFPEAK_SYSFS_ROOT=str(FIXTURES / sysfs), OFFPEAK_HOST="laptop",
                               OFFPEAK_NMCLI="")
            result = subprocess.run([str(bin_dir / "offpeak"), *arguments, "--workspace", str(workspace)],
                                    env=environment, capture_output=True, text=True)
            if check and result.returncode not in (0, 75):
                raise SystemExit(f"offpeak {' '.join(arguments)}: {result.returncode}\n{result.stderr}")
            return result

        base = ["--provider", "sim", "--base-url", sim_url]
        offpeak("run", "digest", *base, "--now", noon(12))
        offpeak("run", "questions", *base, "--now", noon(8))
        offpeak("run", "digest", *base, "--no-cache", "--now", noon(4))
        (workspace / "offpeak.yaml").write_text(
            (workspace / "offpeak.yaml").read_text() + f"base_url: {sim_url}\n")
        offpeak("run", "questions", "--refresh", sysfs="battery-wifi")
        offpeak("tick", sysfs="battery-wifi")
        status = json.loads(offpeak("status", "--json").stdout)
        run = next(line["id"] for line in status["runs"] if line["job"] == "digest")

        dashboard = subprocess.Popen(
            [str(bin_dir / "offpeak"), "dashboard", "--port", "0", "--refresh", "0", "--workspace", str(workspace)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env=dict(os.environ, OFFPEAK_SYSFS_ROOT=str(FIXTURES / "battery-wifi"), OFFPEAK_NMCLI=""))
        servers.append(dashboard)
        url = first_line(dashboard, r"offpeak dashboard: (http://[0-9.:]+)/")
        for file, page, element in VIEWS:
            # An element's picture is cut at the window's edge: a tall window shows each whole.
            driver = browse.browser(width=1100, height=560 if element is None else 3000)
            try:
                step = {"url": url + page.format(run=run), "screenshot": str(out / file)}
                if element:
                    step["element"] = element
                browse.visit(driver, step)
            finally:
                driver.quit()
            print(out / file)
    finally:
        for server in servers:
            server.terminate()
            server.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
