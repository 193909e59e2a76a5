#!/usr/bin/env python3
"""Checks that the official `anthropic` and `openai` Python SDKs parse offpeak-sim's answers.

Usage: python3 scripts/sdk_check.py --base http://127.0.0.1:PORT

Run it against a sim started with default flags (`offpeak-sim --port 0`). Each SDK makes a
document summary and a plain prompt; the parsed text, stop reason and usage must equal what the
sim's documented rules predict (tokens = (UTF-8 bytes + 3) // 4). It also checks that the SDKs
read prompt-cache usage, error bodies (429, 529/503) and see a truncated answer as a transfer
error. Prints `sdk_check: ok` and exits 0, or names the first failed check and exits 1.
"""

import argparse
import sys
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
