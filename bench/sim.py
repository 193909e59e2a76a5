"""Starting, querying and stopping one offpeak-sim process."""

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

LISTENING = "offpeak-sim listening on "


class SimError(RuntimeError):
    pass


class Sim:
    """One offpeak-sim on a free loopback port; use as a context manager so it is always stopped."""

    def __init__(self, binary: Path, args: list[str], logdir: Path, label: str):
        self.binary = binary
        self.args = args
        self.stdout_path = logdir / f"sim-{label}.out"
        self.stderr_path = logdir / f"sim-{label}.err"
        self.process: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> "Sim":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, timeout: float = 20.0) -> None:
        # Output goes to files, not pipes, so a chatty sim can never block on a full pipe.
        with open(self.stdout_path, "w") as out, open(self.stderr_path, "w") as err:
            self.process = subprocess.Popen(
                [str(self.binary), "--port", "0", "--log-level", "warning", *self.args],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            first = self.stdout_path.read_text().split("\n", 1)[0]
            if first.startswith(LISTENING):
                self.url = first[len(LISTENING):].strip()
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise SimError(
            f"offpeak-sim {' '.join(self.args)} did not start: {self.stderr_path.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def _request(self, method: str, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            text = response.read().decode()
        return json.loads(text) if text.strip() else {}

    def stats(self) -> dict:
        return self._request("GET", "/sim/stats")

    def reset(self) -> None:
        self._request("POST", "/sim/reset", {})

    def expected(self, texts: list[str], chunk: int = 250) -> list[str]:
        """The answer the sim gives to each text sent alone as the user message."""
        answers: list[str] = []
        for start in range(0, len(texts), chunk):
            part = texts[start : start + chunk]
            got = self._request("POST", "/sim/expected", {"texts": part})["answers"]
            if len(got) != len(part):
                raise SimError(f"/sim/expected returned {len(got)} answers for {len(part)} texts")
            answers.extend(got)
        return answers


def has_flags(binary: Path, flags: list[str]) -> bool:
    """Whether this offpeak-sim build has every flag in `flags`."""
    help_text = subprocess.run(
        [str(binary), "--help"], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}
    ).stdout
    return all(flag in help_text for flag in flags)


def has_batch_mode(binary: Path) -> bool:
    """Whether this offpeak-sim build has the flags the benchmark needs."""
    return has_flags(binary, ["--answer-tokens", "--damage-rate"])
