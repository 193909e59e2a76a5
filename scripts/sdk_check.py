#!/usr/bin/env python3
"""Checks that the official `anthropic` and `openai` Python SDKs parse offpeak-sim's answers (DeepSeek's too).

Usage: python3 scripts/sdk_check.py --base http://127.0.0.1:PORT

Run it against a sim started with default flags (`offpeak-sim --port 0`). Each SDK makes a
document summary and a plain prompt; the parsed text, stop reason and usage must equal what the
sim's documented rules predict (tokens = (UTF-8 bytes + 3) // 4). It also checks that the SDKs
read prompt-cache usage, error bodies (429, 529/503) and see a truncated answer as a transfer
error, that OpenAI's SDK reads the Responses API (`client.responses.create`), and drives both providers' batch APIs (create, retrieve until ended, list, cancel, results
and output files; a batch answer equals the live one). Prints `sdk_check: ok` and exits 0, or names the first failed check and exits 1.
"""

import argparse
import json
import sys
import time
import uuid

import anthropic
import openai

DOCUMENT = "# Quarterly report\n\nSales rose in March. Costs fell sharply!\nProfit doubled.  The board was pleased."
SUMMARY = "Sales rose in March. Costs fell sharply! Profit doubled. The board was pleased."
PROMPT = "What is the capital of France? Answer in one word."
PLAIN_ANSWER = "Answer: What is the capital of France?"
SYSTEM = "You are a careful assistant."


def tokens(text: str) -> int:
    """The sim's one token approximation."""
    return (len(text.encode("utf-8")) + 3) // 4


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def check_anthropic(base: str) -> None:
    client = anthropic.Anthropic(base_url=base, api_key="sim", max_retries=0)
    user = f"Summarize this document.\n<document>\n{DOCUMENT}\n</document>"
    msg = client.messages.create(
        model="claude-sim", max_tokens=200, system=SYSTEM, messages=[{"role": "user", "content": user}]
    )
    check(msg.content[0].text == SUMMARY, f"anthropic summary text: {msg.content[0].text!r}")
    check(msg.stop_reason == "end_turn", f"anthropic stop_reason: {msg.stop_reason}")
    check(msg.usage.input_tokens == tokens(SYSTEM) + tokens(user), f"anthropic input_tokens: {msg.usage}")
    check(msg.usage.output_tokens == tokens(SUMMARY), f"anthropic output_tokens: {msg.usage}")
    check(msg.usage.cache_creation_input_tokens == 0, f"anthropic cache fields: {msg.usage}")

    msg = client.messages.create(
        model="claude-sim", max_tokens=3, messages=[{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]
    )
    check(msg.content[0].text == PLAIN_ANSWER[:12], f"anthropic cut text: {msg.content[0].text!r}")
    check(msg.stop_reason == "max_tokens", f"anthropic cut stop_reason: {msg.stop_reason}")
    check(msg.usage.input_tokens == tokens(PROMPT), f"anthropic plain input_tokens: {msg.usage}")
    check(msg.usage.output_tokens == 3, f"anthropic plain output_tokens: {msg.usage}")

    # A marked system prompt of >= 1024 tokens is written to the cache, then read from it.
    long_system = f"Run {uuid.uuid4()}. " + "Follow the house style closely. " * 160
    system = [{"type": "text", "text": long_system, "cache_control": {"type": "ephemeral"}}]
    usages = []
    for _ in range(2):
        msg = client.messages.create(
            model="claude-sim", max_tokens=100, system=system, messages=[{"role": "user", "content": PROMPT}]
        )
        usages.append(msg.usage)
    check(usages[0].cache_creation_input_tokens == tokens(long_system), f"anthropic cache write: {usages[0]}")
    check(usages[1].cache_read_input_tokens == tokens(long_system), f"anthropic cache read: {usages[1]}")
    check(usages[1].input_tokens == tokens(PROMPT), f"anthropic input beside cache: {usages[1]}")
    check(usages[0].cache_creation.ephemeral_5m_input_tokens == tokens(long_system), f"5-minute write: {usages[0]}")
    # The 1-hour cache (`ttl: 1h`): its writes told apart in `cache_creation`; a TTL the API does not
    # know is refused.
    hour_system = f"Run {uuid.uuid4()}. " + "Follow the house style closely. " * 160
    marked = [{"type": "text", "text": hour_system, "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    msg = client.messages.create(
        model="claude-sim", max_tokens=100, system=marked, messages=[{"role": "user", "content": PROMPT}]
    )
    creation = msg.usage.cache_creation
    check(msg.usage.cache_creation_input_tokens == tokens(hour_system), f"anthropic 1-hour write: {msg.usage}")
    check(creation.ephemeral_1h_input_tokens == tokens(hour_system), f"anthropic 1-hour write: {creation}")
    check(creation.ephemeral_5m_input_tokens == 0, f"anthropic 1-hour write, no 5-minute: {creation}")
    marked[0]["cache_control"]["ttl"] = "2h"
    expect_error(
        lambda: client.messages.create(
            model="claude-sim", max_tokens=10, system=marked, messages=[{"role": "user", "content": PROMPT}]
        ),
        anthropic.BadRequestError, "'5m' or '1h'",
    )

    expect_error(
        lambda: client.messages.create(
            model="claude-sim", max_tokens=10, messages=[{"role": "user", "content": PROMPT}],
            extra_headers={"x-sim-fault": "429"},
        ),
        anthropic.RateLimitError, "rate_limit_error",
    )
    expect_error(
        lambda: client.messages.create(
            model="claude-sim", max_tokens=10, messages=[{"role": "user", "content": PROMPT}],
            extra_headers={"x-sim-fault": "529"},
        ),
        anthropic.APIStatusError, "overloaded_error",
    )
    expect_error(
        lambda: client.messages.create(
            model="claude-sim", max_tokens=10, messages=[{"role": "user", "content": PROMPT}],
            extra_headers={"x-sim-fault": "truncate"},
        ),
        anthropic.APIConnectionError, None,
    )


def check_openai(base: str) -> None:
    client = openai.OpenAI(base_url=base + "/v1", api_key="sim", max_retries=0)
    user = f"Summarize this document.\n<document>\n{DOCUMENT}\n</document>"
    completion = client.chat.completions.create(
        model="gpt-sim", messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    )
    choice = completion.choices[0]
    check(choice.message.content == SUMMARY, f"openai summary text: {choice.message.content!r}")
    check(choice.finish_reason == "stop", f"openai finish_reason: {choice.finish_reason}")
    usage = completion.usage
    check(usage.prompt_tokens == tokens(SYSTEM) + tokens(user), f"openai prompt_tokens: {usage}")
    check(usage.completion_tokens == tokens(SUMMARY), f"openai completion_tokens: {usage}")
    check(usage.total_tokens == usage.prompt_tokens + usage.completion_tokens, f"openai total_tokens: {usage}")
    check(usage.prompt_tokens_details.cached_tokens == 0, f"openai cached_tokens: {usage}")

    completion = client.chat.completions.create(
        model="gpt-sim", max_completion_tokens=100, messages=[{"role": "user", "content": PROMPT}]
    )
    check(completion.choices[0].message.content == PLAIN_ANSWER, f"openai plain text: {completion.choices[0]}")
    check(completion.choices[0].finish_reason == "stop", f"openai plain finish_reason: {completion.choices[0]}")
    check(completion.usage.prompt_tokens == tokens(PROMPT), f"openai plain prompt_tokens: {completion.usage}")
    check(completion.usage.completion_tokens == tokens(PLAIN_ANSWER), f"openai plain usage: {completion.usage}")

    completion = client.chat.completions.create(
        model="gpt-sim", max_tokens=2, messages=[{"role": "user", "content": PROMPT}]
    )
    check(completion.choices[0].finish_reason == "length", f"openai cut finish_reason: {completion.choices[0]}")
    check(completion.usage.completion_tokens == 2, f"openai cut usage: {completion.usage}")

    # OpenAI caches a system prompt of >= 1024 tokens on its own, from the second call on.
    long_system = f"Run {uuid.uuid4()}. " + "Follow the house style closely. " * 160
    messages = [{"role": "system", "content": long_system}, {"role": "user", "content": PROMPT}]
    first = client.chat.completions.create(model="gpt-sim", messages=messages).usage
    second = client.chat.completions.create(model="gpt-sim", messages=messages).usage
    check(first.prompt_tokens_details.cached_tokens == 0, f"openai first cached_tokens: {first}")
    check(second.prompt_tokens_details.cached_tokens == tokens(long_system), f"openai cache hit: {second}")
    check(second.prompt_tokens == tokens(long_system) + tokens(PROMPT), f"openai prompt with cache: {second}")

    expect_error(
        lambda: client.chat.completions.create(
            model="gpt-sim", messages=[{"role": "user", "content": PROMPT}], extra_headers={"x-sim-fault": "429"}
        ),
        openai.RateLimitError, "offpeak-sim: simulated rate limit",
    )
    expect_error(
        lambda: client.chat.completions.create(
            model="gpt-sim", messages=[{"role": "user", "content": PROMPT}], extra_headers={"x-sim-fault": "529"}
        ),
        openai.InternalServerError, "simulated overload",
    )


def check_openai_responses(base: str) -> None:
    """OpenAI's Responses API (`/v1/responses`): instructions, input messages, usage with cached and
    reasoning tokens, a cut answer as `incomplete`, a structured answer through `text.format`,
    `prompt_cache_retention` (`24h`, `in_memory`, anything else refused), the
    quota fault as the SDK's RateLimitError with OpenAI's `insufficient_quota`."""
    client = openai.OpenAI(base_url=base + "/v1", api_key="sim", max_retries=0)
    user = f"Summarize this document.\n<document>\n{DOCUMENT}\n</document>"
    response = client.responses.create(
        model="gpt-sim", instructions=SYSTEM, input=[{"role": "user", "content": user}], store=False
    )
    check(response.output_text == SUMMARY, f"responses summary text: {response.output_text!r}")
    check(response.status == "completed", f"responses status: {response.status}")
    usage = response.usage
    check(usage.input_tokens == tokens(SYSTEM) + tokens(user), f"responses input_tokens: {usage}")
    check(usage.output_tokens == tokens(SUMMARY), f"responses output_tokens: {usage}")
    check(usage.input_tokens_details.cached_tokens == 0, f"responses cached_tokens: {usage}")
    check(usage.output_tokens_details.reasoning_tokens == 0, f"responses reasoning_tokens: {usage}")
    check(usage.total_tokens == usage.input_tokens + usage.output_tokens, f"responses total_tokens: {usage}")

    response = client.responses.create(model="gpt-sim", input=PROMPT, max_output_tokens=100)
    check(response.output_text == PLAIN_ANSWER, f"responses plain text: {response.output_text!r}")

    response = client.responses.create(model="gpt-sim", input=user, max_output_tokens=16)
    check(response.status == "incomplete", f"responses cut status: {response.status}")
    check(response.incomplete_details.reason == "max_output_tokens", f"responses cut: {response.incomplete_details}")
    check(response.usage.output_tokens == 16, f"responses cut usage: {response.usage}")

    long_instructions = f"Run {uuid.uuid4()}. " + "Follow the house style closely. " * 160
    first = client.responses.create(model="gpt-sim", instructions=long_instructions, input=PROMPT).usage
    second = client.responses.create(model="gpt-sim", instructions=long_instructions, input=PROMPT).usage
    check(first.input_tokens_details.cached_tokens == 0, f"responses first cached_tokens: {first}")
    check(second.input_tokens_details.cached_tokens == tokens(long_instructions), f"responses cache hit: {second}")
    # Extended retention and the cache key, as offpeak sends them, typed by the SDK; an unknown
    # retention refused as OpenAI refuses it.
    kept = client.responses.create(
        model="gpt-sim", instructions=long_instructions, input=PROMPT, prompt_cache_key="offpeak-sdk",
        prompt_cache_retention="24h",
    ).usage
    check(kept.input_tokens_details.cached_tokens == tokens(long_instructions), f"responses 24h: {kept}")
    expect_error(
        lambda: client.responses.create(
            model="gpt-sim", input=PROMPT, extra_body={"prompt_cache_retention": "1h"}),
        openai.BadRequestError, "Supported values are: 'in_memory' and '24h'",
    )

    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
              "additionalProperties": False}
    response = client.responses.create(
        model="gpt-sim", input=PROMPT,
        text={"format": {"type": "json_schema", "name": "answers", "schema": schema, "strict": True}},
    )
    check(response.status == "completed", f"responses structured answer: {response}")
    expect_error(
        lambda: client.responses.create(
            model="gpt-sim", input=PROMPT, text={"format": {"type": "json_schema", "name": "answers"}}),
        openai.BadRequestError, "text.format.schema",
    )

    expect_error(
        lambda: client.responses.create(model="gpt-sim", input=PROMPT, extra_headers={"x-sim-fault": "quota"}),
        openai.RateLimitError, "You exceeded your current quota",
    )


def check_deepseek(base: str) -> None:
    """DeepSeek's API as its docs use it: the `openai` SDK pointed at its base URL (the sim's
    `/deepseek`), usage in its own fields, JSON output mode, and `json_schema` refused."""
    client = openai.OpenAI(base_url=base + "/deepseek", api_key="sim", max_retries=0)
    long_system = f"Run {uuid.uuid4()}. Answer in JSON. " + "Follow the house style closely. " * 20
    messages = [{"role": "system", "content": long_system}, {"role": "user", "content": PROMPT}]
    first = client.chat.completions.create(model="deepseek-flash", messages=messages)
    second = client.chat.completions.create(
        model="deepseek-flash", messages=messages, response_format={"type": "json_object"}
    )
    for usage in (first.usage, second.usage):
        check(usage.prompt_tokens_details is None, f"deepseek prompt_tokens_details: {usage}")
        hit, miss = usage.prompt_cache_hit_tokens, usage.prompt_cache_miss_tokens
        check(hit + miss == usage.prompt_tokens, f"deepseek hit + miss: {usage}")
    check(first.usage.prompt_cache_hit_tokens == 0, f"deepseek first call: {first.usage}")
    hit = second.usage.prompt_cache_hit_tokens
    check(hit == tokens(long_system) // 64 * 64 and hit > 0, f"deepseek cache hit in units of 64: {second.usage}")
    expect_error(
        lambda: client.chat.completions.create(
            model="deepseek-flash", messages=messages,
            response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}},
        ),
        openai.BadRequestError, "This response_format type is unavailable now",
    )


def wait_until(retrieve, done, what: str):
    """Retrieves until `done(batch)`; the sim ends a batch after `--batch-delay` seconds."""
    deadline = time.monotonic() + 60
    while True:
        batch = retrieve()
        if done(batch):
            return batch
        check(time.monotonic() < deadline, f"{what} did not end within 60 s: {batch}")
        time.sleep(0.25)


def check_anthropic_batches(base: str) -> None:
    client = anthropic.Anthropic(base_url=base, api_key="sim", max_retries=0)
    live = client.messages.create(model="claude-sim", max_tokens=100, messages=[{"role": "user", "content": PROMPT}])
    params = {"model": "claude-sim", "max_tokens": 100, "messages": [{"role": "user", "content": PROMPT}]}
    ids = [f"sdk-{i}" for i in range(4)]
    batch = client.messages.batches.create(requests=[{"custom_id": i, "params": params} for i in ids])
    check(batch.id.startswith("msgbatch_") and batch.processing_status == "in_progress", f"anthropic batch: {batch}")
    check(batch.request_counts.processing == 4, f"anthropic batch counts: {batch.request_counts}")
    ended = wait_until(
        lambda: client.messages.batches.retrieve(batch.id), lambda b: b.processing_status == "ended", "anthropic batch"
    )
    check(ended.request_counts.succeeded == 4 and ended.ended_at is not None, f"anthropic ended: {ended}")
    results = list(client.messages.batches.results(batch.id))
    check(sorted(r.custom_id for r in results) == ids, f"anthropic result ids: {[r.custom_id for r in results]}")
    check([r.custom_id for r in results] != ids, "anthropic results came in submission order")
    for result in results:
        check(result.result.type == "succeeded", f"anthropic result: {result}")
        message = result.result.message
        check(message.content[0].text == live.content[0].text, f"anthropic batch text: {message.content}")
        check(message.usage.output_tokens == live.usage.output_tokens, f"anthropic batch usage: {message.usage}")
    listed = client.messages.batches.list(limit=1)
    check(listed.data[0].id == batch.id, f"anthropic list: {listed}")

    canceled = client.messages.batches.create(requests=[{"custom_id": "c1", "params": params}])
    canceling = client.messages.batches.cancel(canceled.id)
    check(canceling.processing_status in ("canceling", "ended"), f"anthropic cancel: {canceling}")
    ended = wait_until(
        lambda: client.messages.batches.retrieve(canceled.id), lambda b: b.processing_status == "ended",
        "anthropic canceled batch",
    )
    check(ended.request_counts.canceled == 1, f"anthropic canceled counts: {ended.request_counts}")
    check([r.result.type for r in client.messages.batches.results(canceled.id)] == ["canceled"], "anthropic canceled")
    expect_error(
        lambda: client.messages.batches.create(requests=[{"custom_id": "no spaces", "params": params}]),
        anthropic.BadRequestError, "custom_id",
    )


def check_openai_batches(base: str) -> None:
    client = openai.OpenAI(base_url=base + "/v1", api_key="sim", max_retries=0)
    live = client.chat.completions.create(model="gpt-sim", messages=[{"role": "user", "content": PROMPT}])
    body = {"model": "gpt-sim", "messages": [{"role": "user", "content": PROMPT}]}
    ids = [f"sdk-{i}" for i in range(4)]
    lines = "".join(
        json.dumps({"custom_id": i, "method": "POST", "url": "/v1/chat/completions", "body": body}) + "\n" for i in ids
    )
    uploaded = client.files.create(file=("input.jsonl", lines.encode()), purpose="batch")
    check(uploaded.id.startswith("file-") and uploaded.bytes == len(lines.encode()), f"openai file: {uploaded}")
    check(client.files.content(uploaded.id).content == lines.encode(), "openai input file content")
    batch = client.batches.create(
        input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h", metadata={"run": "sdk"}
    )
    check(batch.id.startswith("batch_") and batch.status == "validating", f"openai batch: {batch}")
    done = wait_until(lambda: client.batches.retrieve(batch.id), lambda b: b.status == "completed", "openai batch")
    check(done.request_counts.completed == 4 and done.request_counts.failed == 0, f"openai counts: {done}")
    check(done.metadata == {"run": "sdk"} and done.error_file_id is None, f"openai done: {done}")
    output = client.files.content(done.output_file_id).text.splitlines()
    rows = [json.loads(line) for line in output]
    check([r["custom_id"] for r in rows] != ids, "openai output came in submission order")
    check(sorted(r["custom_id"] for r in rows) == ids, f"openai output ids: {rows}")
    for row in rows:
        check(row["error"] is None and row["response"]["status_code"] == 200, f"openai output row: {row}")
        answer = row["response"]["body"]
        check(answer["choices"][0]["message"]["content"] == live.choices[0].message.content, f"openai row: {row}")
        check(answer["usage"]["completion_tokens"] == live.usage.completion_tokens, f"openai usage: {row}")
    check(client.batches.list(limit=1).data[0].id == batch.id, "openai list")

    canceled = client.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h")
    check(client.batches.cancel(canceled.id).status in ("cancelling", "cancelled"), "openai cancel")
    ended = wait_until(lambda: client.batches.retrieve(canceled.id), lambda b: b.status == "cancelled", "openai cancel")
    check(ended.request_counts.failed == 4 and ended.output_file_id is None, f"openai cancelled: {ended}")


def expect_error(call, error_type, text) -> None:
    """`call` must raise `error_type`, whose message mentions `text` when given."""
    try:
        call()
    except error_type as error:
        check(text is None or text in str(error), f"{error_type.__name__} message: {error}")
        return
    except Exception as error:  # noqa: BLE001 - report what was raised instead
        raise AssertionError(f"expected {error_type.__name__}, got {type(error).__name__}: {error}")
    raise AssertionError(f"expected {error_type.__name__}, got an answer")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the sim's base URL, e.g. http://127.0.0.1:8089")
    base = parser.parse_args().base.rstrip("/")
    try:
        check_anthropic(base)
        check_openai(base)
        check_openai_responses(base)
        check_deepseek(base)
        check_anthropic_batches(base)
        check_openai_batches(base)
    except AssertionError as failure:
        print(f"sdk_check: FAILED: {failure}")
        return 1
    except Exception as error:  # noqa: BLE001 - any SDK failure is a failed check
        print(f"sdk_check: FAILED: {type(error).__name__}: {error}")
        return 1
    print("sdk_check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
