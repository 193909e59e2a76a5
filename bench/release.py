"""How the benches build offpeak for release: as `make release` does, with the same flags.

A release `offpeak` is linked with the Swift runtime and Foundation inside it
(`--static-swift-stdlib`): most of a cron `tick` is start-up, and loading ~50 shared libraries was a
fifth of an idle one. Every release build here uses these flags, so the builds share SwiftPM's
products: a change of flags rebuilds every package, minutes on two cores. `-no-pie` links a
fixed-address executable: a position-independent one carried 3 MB of relocations the loader applied
at every start (peak memory of `--version` 24.3 MB with them, 21.4 MB without).
"""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["-c", "release", "--static-swift-stdlib", "-Xlinker", "-no-pie"]


class ReleaseBuildError(Exception):
    pass


def build(products: list[str], log) -> Path:
    """Builds `products` in release mode; returns the folder holding them."""
    for product in products:
        log(f"building {product} in release mode (swift build {' '.join(FLAGS)} --product {product}) ...")
        done = subprocess.run(["swift", "build", *FLAGS, "--product", product], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise ReleaseBuildError(f"release build failed: {done.stderr.strip()[-500:]}")
    path = subprocess.run(["swift", "build", *FLAGS, "--show-bin-path"], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    return Path(path.stdout.strip())
