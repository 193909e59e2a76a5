"""Where the built binaries are, found from this checkout rather than from one machine's paths:
`swift build --show-bin-path` run in the checkout (the debug build), else its `.build/debug`.
Python 3 standard library only."""

import subprocess
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def default_bin() -> Path:
    """The checkout's debug build folder, as `swift build --show-bin-path` names it."""
    try:
        shown = subprocess.run(["swift", "build", "--show-bin-path"], cwd=CHECKOUT, capture_output=True,
                               text=True, timeout=120)
        if shown.returncode == 0 and shown.stdout.strip():
            return Path(shown.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired):
        pass
    return CHECKOUT / ".build" / "debug"
