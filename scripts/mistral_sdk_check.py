#!/usr/bin/env python3
"""Checks that Mistral's official `mistralai` SDK reads offpeak-sim's Mistral API and drives its batch jobs.

Usage: python3 scripts/mistral_sdk_check.py --base http://127.0.0.1:PORT

Run it against a sim started with `--batch-delay 1`. The SDK is pointed at the sim's `/mistral`
(its paths carry `/v1`). It makes a plain chat completion and one with a JSON schema, sees a field
Mistral does not know refused with a 422, uploads a batch file, creates a batch job from it, lists
it by its metadata, retrieves it until it ended, downloads its output file (each answer equal to the
live one), and cancels a second job. Prints `mistral_sdk_check: ok` and exits 0, or names the first
failed check and exits 1.
"""

import argparse
import datetime
import json
import sys
import time
import urllib.error
import urllib.request

from mistralai.client import Mistral
from mistralai.client import errors

PROMPT = "What is the capital of France? Answer in one word."


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def wait_until(retrieve, done, what: str):
    deadline = time.monotonic() + 60
    while True:
        job = retrieve()
        if done(job):
            return job
        check(time.monotonic() < deadline, f"{what} did not end within 60 s: {job}")
        time.sleep(0.25)


def check_mistral(base: str) -> None:
    client = Mistral(api_key="sim", server_url=base + "/mistral")
    messages = [{"role": "user", "content": PROMPT}]
    live = client.chat.complete(model="mistral-small-latest", messages=messages, max_tokens=50)
    text = live.choices[0].message.content
    check(isinstance(text, str) and text, f"mistral chat: {live}")
    check(live.usage.prompt_tokens > 0 and live.usage.completion_tokens > 0, f"mistral usage: {live.usage}")
    check(live.usage.total_tokens == live.usage.prompt_tokens + live.usage.completion_tokens, f"total: {live.usage}")
    shaped = client.chat.complete(
        model="mistral-small-latest", messages=messages, max_tokens=200,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": {"type": "object", "properties": {"a": {"type": "string"}}},
                            "strict": True},
        },
    )
    check(shaped.choices[0].finish_reason in ("stop", "length"), f"mistral json_schema: {shaped}")
    try:
        client.chat.complete(model="mistral-small-latest", messages=messages, random_seed=1, max_tokens=5,
                             stop=["x"], temperature=0, top_p=1, n=1, presence_penalty=0, frequency_penalty=0,
                             safe_prompt=False)
    except Exception as error:  # noqa: BLE001 - every field the SDK sends is Mistral's
        raise AssertionError(f"mistral refused a field its own SDK sends: {error}")
    # A field Mistral does not know (OpenAI's `service_tier`) is refused with a 422, as Mistral's
    # own API refuses it; the SDK cannot send one, so the request is made by hand.
    request = urllib.request.Request(
        base + "/mistral/v1/chat/completions", method="POST",
        headers={"authorization": "Bearer sim", "content-type": "application/json"},
        data=json.dumps({"model": "mistral-small-latest", "messages": messages, "service_tier": "flex"}).encode())
    try:
        urllib.request.urlopen(request)
        raise AssertionError("mistral took a field it does not know")
    except urllib.error.HTTPError as error:
        refusal = error.read().decode()
        check(error.code == 422 and "extra_forbidden" in refusal and "service_tier" in refusal,
              f"mistral unknown field: {error.code} {refusal}")

    body = {"max_tokens": 50, "messages": messages}
    ids = [f"sdk-{i}" for i in range(4)]
    lines = "".join(json.dumps({"custom_id": i, "body": body}) + "\n" for i in ids).encode()
    uploaded = client.files.upload(file={"file_name": "input.jsonl", "content": lines}, purpose="batch")
    check(uploaded.purpose == "batch" and uploaded.size_bytes == len(lines), f"mistral file: {uploaded}")
    check(uploaded.num_lines == 4 and uploaded.source == "upload", f"mistral file lines: {uploaded}")
    job = client.batch.jobs.create(
        input_files=[uploaded.id], endpoint="/v1/chat/completions", model="mistral-small-latest",
        metadata={"offpeak_batch": "sdk-check"},
    )
    check(job.status in ("QUEUED", "RUNNING") and job.total_requests == 4, f"mistral job: {job}")
    listed = client.batch.jobs.list(metadata={"offpeak_batch": "sdk-check"})
    check(listed.total == 1 and listed.data[0].id == job.id, f"mistral list: {listed}")
    check(client.batch.jobs.list(metadata={"offpeak_batch": "another"}).total == 0, "mistral list by metadata")
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    check(client.batch.jobs.list(created_after=later).total == 0, "mistral list created_after")
    done = wait_until(lambda: client.batch.jobs.get(job_id=job.id), lambda j: j.status == "SUCCESS", "mistral job")
    check(done.succeeded_requests == 4 and done.failed_requests == 0 and done.error_file is None, f"done: {done}")
    output = client.files.download(file_id=done.output_file).read().decode().splitlines()
    rows = [json.loads(line) for line in output]
    check(sorted(r["custom_id"] for r in rows) == ids, f"mistral output ids: {rows}")
    for row in rows:
        check(row["error"] is None and row["response"]["status_code"] == 200, f"mistral output row: {row}")
        answer = row["response"]["body"]
        check(answer["choices"][0]["message"]["content"] == text, f"mistral batch answer: {row}")
        check(answer["usage"]["completion_tokens"] == live.usage.completion_tokens, f"mistral batch usage: {row}")

    canceled = client.batch.jobs.create(
        requests=[{"custom_id": "c1", "body": body}], endpoint="/v1/chat/completions", model="mistral-small-latest"
    )
    check(client.batch.jobs.cancel(job_id=canceled.id).status in ("CANCELLATION_REQUESTED", "CANCELLED"), "cancel")
    ended = wait_until(lambda: client.batch.jobs.get(job_id=canceled.id), lambda j: j.status == "CANCELLED", "cancel")
    check(ended.failed_requests == 1 and ended.output_file is None, f"mistral cancelled: {ended}")
    try:
        client.batch.jobs.get(job_id="no-such-job")
    except errors.SDKError as error:
        check(error.status_code == 404, f"mistral unknown job: {error}")
    else:
        raise AssertionError("mistral: an unknown job was found")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the sim's base URL, e.g. http://127.0.0.1:8089")
    base = parser.parse_args().base.rstrip("/")
    try:
        check_mistral(base)
    except AssertionError as failure:
        print(f"mistral_sdk_check: FAILED: {failure}")
        return 1
    except Exception as error:  # noqa: BLE001 - any SDK failure is a failed check
        print(f"mistral_sdk_check: FAILED: {type(error).__name__}: {error}")
        return 1
    print("mistral_sdk_check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
