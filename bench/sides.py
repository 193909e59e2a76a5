"""The sides of every comparison: a naive SDK client (sequential, or with requests in flight), and offpeak.

Both talk to an offpeak-sim started for them alone; each returns the answers it got, keyed by
item id, and how long it took. Billing is read from the sim afterwards (see bench.py).
"""

import asyncio
import json
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from workloads import Workload

# What tier `fast` maps to in the workspaces the bench writes (`offpeak.yaml` `models`). Not
# claude-haiku-4-5: its minimum cacheable prefix is 4,096 tokens, so W-classify's ~1,565-token
# few-shot prefix would not be cached. claude-sonnet-4-5 caches from 1,024 tokens and has the same
# price ratios (cache read 0.1x, write 1.25x, output 5x input, batches half).
MODEL = "claude-sonnet-4-5"


class SideCrashed(RuntimeError):
    pass


@dataclass
class SideRun:
    answers: dict[str, str]
    wall_seconds: float
    ledger: dict | None = None  # offpeak's `costs --json` total
    audits: dict = field(default_factory=dict)  # job -> `offpeak audit JOB --json`
    notes: list[str] = field(default_factory=list)


# --- naive -------------------------------------------------------------------------------------


def run_naive(workload: Workload, sim_url: str) -> SideRun:
    """One request per item through the official SDK, sequentially, no prompt caching."""
    import anthropic

    client = anthropic.Anthropic(base_url=sim_url, api_key="sim", max_retries=2)
    answers: dict[str, str] = {}
    start = time.monotonic()
    try:
        for item in workload.items:
            job = workload.job(item.job)
            response = client.messages.create(
                model=MODEL,
                max_tokens=job.max_tokens,
                system=job.system_prompt,
                messages=[{"role": "user", "content": item.message}],
            )
            answers[item.id] = "".join(b.text for b in response.content if b.type == "text")
    except anthropic.APIError as error:
        raise SideCrashed(f"naive client failed after {len(answers)} items: {error}") from error
    return SideRun(answers=answers, wall_seconds=time.monotonic() - start)


def run_naive_concurrent(workload: Workload, sim_url: str, in_flight: int = 8, max_retries: int = 2) -> SideRun:
    """The naive client made concurrent: the official SDK's async client, one request per item,
    at most `in_flight` at once (an asyncio semaphore), no prompt caching. The SDK retries 429s
    and 5xx `max_retries` times, waiting what `retry-after` says. An item whose retries run out
    is left unanswered (counted as not correct, named in the notes) instead of stopping the rest,
    as a script with `asyncio.gather(..., return_exceptions=True)` would."""
    import anthropic

    async def run() -> tuple[dict[str, str], list[str]]:
        client = anthropic.AsyncAnthropic(base_url=sim_url, api_key="sim", max_retries=max_retries)
        gate = asyncio.Semaphore(in_flight)
        answers: dict[str, str] = {}
        failures: list[str] = []

        async def one(item) -> None:
            job = workload.job(item.job)
            async with gate:
                try:
                    response = await client.messages.create(
                        model=MODEL,
                        max_tokens=job.max_tokens,
                        system=job.system_prompt,
                        messages=[{"role": "user", "content": item.message}],
                    )
                except anthropic.APIError as error:
                    failures.append(f"{item.id}: {type(error).__name__}")
                    return
            answers[item.id] = "".join(b.text for b in response.content if b.type == "text")

        try:
            await asyncio.gather(*(one(item) for item in workload.items))
        finally:
            await client.close()
        return answers, failures

    start = time.monotonic()
    answers, failures = asyncio.run(run())
    wall = time.monotonic() - start
    notes = []
    if failures:
        notes.append(f"{len(failures)} items failed after {max_retries} retries, e.g. {failures[0]}")
    return SideRun(answers=answers, wall_seconds=wall, notes=notes)


# --- offpeak -----------------------------------------------------------------------------------


def job_spec(workload: Workload, job_name: str, lane: str | None = None, extra: dict | None = None) -> str:
    """The job spec as JSON text (YAML is a superset of JSON, so every string is quoted safely).
    `lane: batch` sends every call through the provider's batch API (issue 12)."""
    job = workload.job(job_name)
    spec: dict = {
        "name": job.name,
        "kind": job.kind,
        "tier": "fast",
        "system": job.system,
        "template": job.template,
        "max_tokens": job.max_tokens,
    }
    if lane:
        # The batch lane leaves `batching` unset, so offpeak packs up to 100 items a prompt there
        # (a batch's latency does not matter; the model's output limit still bounds each prompt).
        spec["lane"] = lane
    else:
        spec["batching"] = {"max_items": 8}
    if job.instructions:
        spec["instructions"] = job.instructions
    if job.queue:
        spec["queue"] = True
    elif workload.feed == "files":
        spec["inputs"] = job.inputs
    else:
        spec["items"] = [{"id": i.id, "item": i.text} for i in workload.items if i.job == job.name]
    spec.update(extra or {})
    return json.dumps(spec, indent=1) + "\n"


def make_workspace(
    workload: Workload, workspace: Path, sim_url: str, lane: str | None = None, settings: str = "",
    spec_extra: dict | None = None,
) -> None:
    """`settings`: more offpeak.yaml lines (e.g. `structured_output: off\\n`); `spec_extra`: more
    fields of every job spec (e.g. `{"audit": "off"}`)."""
    (workspace / "jobs").mkdir(parents=True)
    (workspace / "offpeak.yaml").write_text(
        f"provider: sim\nbase_url: {sim_url}\nmodels: {{sim: {{fast: {MODEL}}}}}\n{settings}")
    for job in workload.jobs:
        (workspace / "jobs" / f"{job.name}.yaml").write_text(job_spec(workload, job.name, lane, spec_extra))
    for item in workload.items:
        if item.file:
            path = workspace / item.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(item.text)


def offpeak(binary: Path, args: list[str], stdin: str | None = None, ok=(0,)) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(binary), *args], input=stdin, capture_output=True, text=True, timeout=1800)
    if result.returncode not in ok:
        raise SideCrashed(
            f"offpeak {' '.join(args[:2])} exited {result.returncode}: "
            f"{(result.stderr or result.stdout).strip()[-1500:]}")
    return result


def submit(binary: Path, workload: Workload, workspace: Path, job_name: str) -> None:
    lines = [
        json.dumps({"id": i.id, "vars": {"item": i.text}}) for i in workload.items if i.job == job_name
    ]
    result = offpeak(
        binary, ["submit", "--job", job_name, "--workspace", str(workspace)], stdin="\n".join(lines) + "\n")
    printed = [line for line in result.stdout.splitlines() if line.strip()]
    if len(printed) != len(lines):
        raise SideCrashed(f"offpeak submit --job {job_name} printed {len(printed)} ids for {len(lines)} lines")


def read_answers(workspace: Path, job_name: str) -> dict[str, str]:
    folder = workspace / "out" / job_name
    index_path = folder / "index.json"
    if not index_path.exists():
        return {}
    answers = {}
    for entry in json.loads(index_path.read_text())["items"]:
        if entry.get("state") == "done" and entry.get("file"):
            text = (folder / entry["file"]).read_text()
            answers[entry["id"]] = text[:-1] if text.endswith("\n") else text
    return answers


def run_offpeak(
    workload: Workload, sim_url: str, bin_dir: Path, workspace: Path, lane: str | None = None,
    settings: str = "", spec_extra: dict | None = None,
) -> SideRun:
    """Writes a workspace, (submits the requests,) runs every job, and reads answers and ledger.
    With `lane="batch"` each job goes through provider batches and `offpeak run --wait` stays
    until they are collected."""
    binary = bin_dir / "offpeak"
    make_workspace(workload, workspace, sim_url, lane, settings, spec_extra)
    wait = ["--wait"] if lane == "batch" else []
    notes = []
    start = time.monotonic()
    if workload.feed == "submit":
        for job in workload.jobs:
            submit(binary, workload, workspace, job.name)
    for job in workload.jobs:
        # 69 = some items failed: not a crash, it shows up as wrong answers.
        result = offpeak(binary, ["run", job.name, "--workspace", str(workspace), "--json", *wait], ok=(0, 69))
        if result.returncode != 0:
            notes.append(f"offpeak run {job.name} exited {result.returncode}")
    wall = time.monotonic() - start
    answers: dict[str, str] = {}
    for job in workload.jobs:
        answers.update(read_answers(workspace, job.name))
    costs = json.loads(offpeak(binary, ["costs", "--workspace", str(workspace), "--json"]).stdout)
    audits = {
        job.name: json.loads(offpeak(binary, ["audit", job.name, "--workspace", str(workspace), "--json"]).stdout)
        for job in workload.jobs
    }
    return SideRun(answers=answers, wall_seconds=wall, ledger=costs["total"], notes=notes, audits=audits)
