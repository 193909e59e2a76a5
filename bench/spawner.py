"""Starts the scale bench's commands from a small process of its own, so each one's peak RSS is its own.

Linux keeps a process's peak RSS across exec: a command forked from the bench (which holds a
hundred thousand requests, or has just filled a 2 GB store) would report the bench's size as its
own. The spawner is started first, while the bench is small; it runs one command at a time and
reports its pid, then its exit status, wall time, CPU time and peak RSS (wait4).
"""

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Outcome:
    status: int
    wall: float
    cpu: float
    rss_mb: float


class Spawner:
    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=30)

    def start(self, args: list[str], stdin: Path | None = None, stdout: Path | None = None,
              stderr: Path | None = None) -> int:
        """Starts `args`; returns its pid. Call `wait` next."""
        request = {"args": [str(a) for a in args], "stdin": stdin and str(stdin),
                   "stdout": stdout and str(stdout), "stderr": stderr and str(stderr)}
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())["pid"]

    def wait(self) -> Outcome:
        assert self.process.stdout
        line = self.process.stdout.readline()
        if not line:
            raise OSError("the spawner exited")
        done = json.loads(line)
        return Outcome(done["status"], done["wall"], done["cpu"], done["maxrss_kb"] / 1024)

    def run(self, args: list[str], **files) -> Outcome:
        self.start(args, **files)
        return self.wait()


def serve() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        opened = []
        streams = []
        for key, mode in [("stdin", "rb"), ("stdout", "wb"), ("stderr", "wb")]:
            if request.get(key):
                opened.append(open(request[key], mode))
                streams.append(opened[-1])
            else:
                streams.append(subprocess.DEVNULL)
        start = time.perf_counter()
        child = subprocess.Popen(request["args"], stdin=streams[0], stdout=streams[1], stderr=streams[2])
        print(json.dumps({"pid": child.pid}), flush=True)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        for stream in opened:
            stream.close()
        print(json.dumps({"status": child.returncode, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                          "maxrss_kb": usage.ru_maxrss}), flush=True)


if __name__ == "__main__":
    serve()
