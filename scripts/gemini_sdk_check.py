#!/usr/bin/env python3
"""Checks that Google's official `google-genai` Python SDK parses offpeak-sim's Gemini answers.

Usage: python3 scripts/gemini_sdk_check.py --base http://127.0.0.1:PORT

Run it against a sim started with `--batch-delay 1`. The SDK makes a plain prompt, one with a
system instruction and a cut one, one held to a `responseSchema`, reads the implicit cache's
`cachedContentTokenCount` on a second call with a long system instruction, makes, names, lists and
deletes an explicit context cache (`caches`), reads a queued 429
(`RESOURCE_EXHAUSTED` with a `RetryInfo`), and drives Batch Mode with inlined requests (create,
get until it ended, list, cancel). Prints `gemini_sdk_check: ok` and exits 0, or names the first
failed check and exits 1.
"""

import argparse
import json
import sys
import time
import urllib.request
import uuid

from google import genai
from google.genai import errors, types

MODEL = "gemini-2.5-flash"
PROMPT = "What is the capital of France? Answer in one word."
PLAIN_ANSWER = "Answer: What is the capital of France?"


def tokens(text: str) -> int:
    """The sim's one token approximation."""
    return (len(text.encode("utf-8")) + 3) // 4


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def client(base: str) -> genai.Client:
    return genai.Client(
        api_key="sim", http_options=types.HttpOptions(base_url=base, api_version="v1beta",
                                                      retry_options=types.HttpRetryOptions(attempts=1)))


def check_live(base: str) -> None:
    gemini = client(base)
    answer = gemini.models.generate_content(model=MODEL, contents=PROMPT)
    check(answer.text == PLAIN_ANSWER, f"plain text: {answer.text!r}")
    check(answer.candidates[0].finish_reason == types.FinishReason.STOP, f"finish: {answer.candidates[0]}")
    usage = answer.usage_metadata
    check(usage.prompt_token_count == tokens(PROMPT), f"prompt_token_count: {usage}")
    check(usage.candidates_token_count == tokens(PLAIN_ANSWER), f"candidates_token_count: {usage}")
    check(usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count, f"total: {usage}")

    cut = gemini.models.generate_content(
        model=MODEL, contents=PROMPT, config=types.GenerateContentConfig(max_output_tokens=2))
    check(cut.candidates[0].finish_reason == types.FinishReason.MAX_TOKENS, f"cut finish: {cut.candidates[0]}")
    check(cut.usage_metadata.candidates_token_count == 2, f"cut usage: {cut.usage_metadata}")

    shaped = gemini.models.generate_content(
        model=MODEL, contents='<item id="a">one</item>\n<item id="b">two</item>',
        config=types.GenerateContentConfig(
            response_mime_type="application/json",
            response_schema={"type": "OBJECT", "properties": {"a": {"type": "STRING"}, "b": {"type": "STRING"}},
                             "required": ["a", "b"]}))
    check(set(json.loads(shaped.text)) == {"a", "b"}, f"shaped answer: {shaped.text!r}")

    # Gemini 2.5 caches a repeated prefix of >= 1024 tokens on its own, from the second call on.
    system = f"Run {uuid.uuid4()}. " + "Follow the house style closely. " * 160
    config = types.GenerateContentConfig(system_instruction=system)
    first = gemini.models.generate_content(model=MODEL, contents=PROMPT, config=config)
    second = gemini.models.generate_content(model=MODEL, contents=PROMPT, config=config)
    check(not first.usage_metadata.cached_content_token_count, f"first call cached: {first.usage_metadata}")
    check(second.usage_metadata.cached_content_token_count == tokens(system),
          f"second call's cached tokens: {second.usage_metadata}")

    # An explicit context cache: made, named by a call, its tokens billed as cached.
    cache = gemini.caches.create(
        model=MODEL, config=types.CreateCachedContentConfig(system_instruction=system + " Explicitly.", ttl="600s"))
    check(cache.name.startswith("cachedContents/") and cache.usage_metadata.total_token_count >= 1024,
          f"cache: {cache}")
    named = gemini.models.generate_content(
        model=MODEL, contents=PROMPT, config=types.GenerateContentConfig(cached_content=cache.name))
    check(named.usage_metadata.cached_content_token_count == cache.usage_metadata.total_token_count,
          f"cached call's usage: {named.usage_metadata}")
    check(cache.name in [listed.name for listed in gemini.caches.list()], "cache not listed")
    gemini.caches.delete(name=cache.name)

    request = urllib.request.Request(
        base + "/sim/faults", data=json.dumps({"next": ["429"]}).encode(), method="POST",
        headers={"content-type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()
    try:
        gemini.models.generate_content(model=MODEL, contents=PROMPT)
        raise AssertionError("a queued 429 was not raised")
    except errors.ClientError as error:
        check(error.code == 429 and error.status == "RESOURCE_EXHAUSTED", f"429: {error.code} {error.status}")
        details = error.details["error"].get("details", [])
        check(any(d.get("retryDelay") for d in details), f"429 without RetryInfo: {error.details}")


def check_batches(base: str) -> None:
    gemini = client(base)
    live = gemini.models.generate_content(model=MODEL, contents=PROMPT)
    job = gemini.batches.create(
        model=MODEL, src=[{"contents": [{"parts": [{"text": PROMPT}], "role": "user"}]},
                          {"contents": [{"parts": [{"text": "Say yes."}], "role": "user"}]}],
        config={"display_name": "sdk-check"})
    check(job.name.startswith("batches/") and job.display_name == "sdk-check", f"created: {job}")
    for _ in range(100):
        job = gemini.batches.get(name=job.name)
        if job.state.name not in ("JOB_STATE_PENDING", "JOB_STATE_RUNNING"):
            break
        time.sleep(0.1)
    check(job.state.name == "JOB_STATE_SUCCEEDED", f"ended: {job.state}")
    answers = [item.response.text for item in job.dest.inlined_responses]
    check(answers == [live.text, "Answer: Say yes."], f"batch answers: {answers}")
    check(job.name in [listed.name for listed in gemini.batches.list(config={"page_size": 10})], "batch not listed")

    waiting = gemini.batches.create(
        model=MODEL, src=[{"contents": [{"parts": [{"text": PROMPT}], "role": "user"}]}],
        config={"display_name": "sdk-cancel"})
    gemini.batches.cancel(name=waiting.name)
    for _ in range(100):
        waiting = gemini.batches.get(name=waiting.name)
        if waiting.state.name == "JOB_STATE_CANCELLED":
            break
        time.sleep(0.1)
    check(waiting.state.name == "JOB_STATE_CANCELLED", f"canceled: {waiting.state}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the sim's URL, as it printed it")
    args = parser.parse_args()
    for name, run in [("live", check_live), ("batches", check_batches)]:
        try:
            run(args.base)
        except Exception as error:  # noqa: BLE001 - every failure is reported by name
            print(f"gemini_sdk_check: {name}: {type(error).__name__}: {error}")
            return 1
    print("gemini_sdk_check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
