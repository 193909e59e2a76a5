#!/usr/bin/env python3
"""What croniter says fires next, for comparing offpeak's cron evaluation against it.

Reads JSON lines {"expr": "...", "from": <epoch seconds>, "tz": "Europe/Berlin"} on stdin and
prints, for each, one JSON line:

  {"raw": <epoch>|null, "first_pass": <epoch>|null, "error": "..."|null}

raw        croniter's next fire time strictly after `from`, read in `tz` (null: none found).
first_pass the same, but skipping fire times that are the second occurrence of a wall-clock time
           repeated when clocks go back: croniter fires those twice, offpeak (like systemd and
           vixie cron for fixed times) fires once, the first time.

croniter runs with implement_cron_bug=True: day-of-month and day-of-week combine with OR only
when neither field starts with '*', as in vixie/POSIX cron.
"""

import json
import sys
from datetime import datetime
from zoneinfo import ZoneInfo

from croniter import croniter

# A repeated hour holds at most 60 fire times (one a minute); a few more for safety.
MAX_SKIPS = 200


def is_second_occurrence(moment, zone):
    """True if the same wall-clock time already happened earlier (clocks went back)."""
    local = moment.astimezone(zone).replace(tzinfo=None)
    first = local.replace(tzinfo=zone, fold=0)
    return first.timestamp() < moment.timestamp()


def answer(case):
    zone = ZoneInfo(case["tz"])
    start = datetime.fromtimestamp(case["from"], tz=zone)
    try:
        it = croniter(case["expr"], start, implement_cron_bug=True)
        raw = it.get_next(datetime)
        first_pass = raw
        skips = 0
        while first_pass is not None and is_second_occurrence(first_pass, zone):
            skips += 1
            first_pass = it.get_next(datetime) if skips < MAX_SKIPS else None
    except Exception as error:  # croniter's own errors, and "no next date found"
        name = type(error).__name__
        if name == "CroniterBadDateError":
            return {"raw": None, "first_pass": None, "error": None}
        return {"raw": None, "first_pass": None, "error": f"{name}: {error}"}
    return {
        "raw": int(raw.timestamp()),
        "first_pass": int(first_pass.timestamp()) if first_pass is not None else None,
        "error": None,
    }


def main():
    for line in sys.stdin:
        line = line.strip()
        if line:
            print(json.dumps(answer(json.loads(line))), flush=False)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
