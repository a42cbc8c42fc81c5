"""How fast gpu-advisor is: one table of cold start, warm latency, Slack HTTP throughput and catalog growth.

Sections (each row of the table says what it measured and against which target):

1. Cold start: the median wall time of `python -m bot ask "..."` in a fresh process (what `gpu-advisor ask`
   runs), against the bare import of its libraries (`python -c "import slack_bolt, rapidfuzz, pydantic, yaml,
   sqlite_utils, click"`). Target: within 1.5x. Measured with a warm YAML parse cache (the state after the first
   run on a machine) and, for information, with the cache off.
2. Warm latency: a few hundred varied questions (tests/nlu/questions.yaml, the conversation transcripts in
   tests/conversations/ replayed with their session state, and generated variations) through `Core.turn` in one
   process, after one untimed pass; p50 / p99. Targets: p50 <= 2 ms, p99 <= 10 ms. The same questions through
   `Service.ask` (session load/save and the audit write, one SQLite file) are reported separately.
3. Slack HTTP: `gpu-advisor serve --http` in a subprocess on loopback, a stand-in Slack Web API in this process,
   signed slash commands and app_mention events from a few client threads; acknowledged requests per second and
   answered requests per second (the stub received the reply). Bounded in count and time.
4. Planner: the planner's scenario questions (tests/scenarios/planner.yaml) through `Core.turn`, warm; p50 / p99
   per answer and the number of plans (flavor x instances x replicas) each answer searched. Target: p50 < 50 ms.
5. Catalog growth: synthetic knowledge bases of 100, 1 000 and 10 000 flavors (real flavors copied with new ids
   and prices), the same answer-producing questions through `Core.turn` on each; p50 / p99 and the growth.

It is a benchmark, not a test: nothing fails, the verdict column only compares with the targets.
Run: python bench/latency.py [--quick] [--profile] [--skip-slack]. Everything stays on loopback; every loop is bounded.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import hmac
import http.client
import http.server
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BARE_IMPORTS = "import slack_bolt, rapidfuzz, pydantic, yaml, sqlite_utils, click"
COLD_QUESTION = "lora finetune qwen2.5 7b, tight budget"
TARGET_P50_MS, TARGET_P99_MS, TARGET_COLD_RATIO, TARGET_GROWTH = 2.0, 10.0, 1.5, 1.5
TARGET_PLAN_MS = 50.0        # issue 16: warm time per planned answer


# ----- the table -----------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Row:
    section: str
    measure: str
    result: str
    target: str = ""
    verdict: str = ""


def verdict(ok: bool | None) -> str:
    return "" if ok is None else ("ok" if ok else "MISSED")


def print_table(header: list[str], rows: list[Row]) -> None:
    for line in header:
        print(line)
    cols = ["section", "measure", "result", "target", ""]
    cells = [[r.section, r.measure, r.result, r.target, r.verdict] for r in rows]
    widths = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    line = "  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()
    print(line)
    print("  ".join("-" * w for w in widths))
    for x in cells:
        print("  ".join(c.ljust(w) for c, w in zip(x, widths)).rstrip())


def machine() -> list[str]:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) / 1024 / 1024:.0f} GiB RAM"
    cores = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    return [f"machine: {cpu}, {cores} logical CPU(s) ({usable} usable){mem}; {platform.system()} "
            f"{platform.release()}",
            f"python:  {platform.python_implementation()} {platform.python_version()} ({sys.executable})"]


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), nearest rank: p99 of 300 samples is the 297th smallest."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, round(q / 100 * len(s) + 0.5) - 1))
    return s[k]


def ms(x: float) -> str:
    return f"{x:.2f} ms" if x < 100 else f"{x:.0f} ms"


# ----- questions -------------------------------------------------------------------------------------------------------
def questions(limit: int, seed: int = 8) -> list[tuple[str, str | None]]:
    """(text, conversation id or None). Labelled questions, transcript turns (in order, one id per transcript) and
    generated variations, shuffled per conversation so that the order is varied but each transcript stays in order."""
    import yaml
    single: list[str] = []
    qfile = ROOT / "tests" / "nlu" / "questions.yaml"
    if qfile.exists():
        single += [q["text"] for q in yaml.safe_load(qfile.read_text(encoding="utf-8")) or [] if q.get("text")]
    convs: list[list[str]] = []
    for path in sorted((ROOT / "tests" / "conversations").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        turns = [t.get("user") for t in doc.get("turns") or [] if isinstance(t, dict) and t.get("user")]
        if turns:
            convs.append(turns)
    rng = random.Random(seed)
    models = ["qwen2.5-7b", "Qwen2.5 72B", "llama 3.1 8b", "llama-3-70b", "mistral 7b", "glm-4-9b", "baichuan2-13b",
              "deepseek-r1-distill-qwen-32b", "bert-large", "a 13B model", "a 3b model", "yi-34b"]
    en = ["lora finetune {m}, tight budget", "full finetune {m} on {g} gpus", "qlora {m} cheapest option",
          "serve {m} for {c} concurrent users", "inference for {m}, low latency, {c} users",
          "pretrain {m} on {t}B tokens in {d} days", "which instance to train {m} with fp8",
          "compare a100 and h100 for {m}", "what is nvlink and do I need it for {m}", "spot or on-demand for {m}?"]
    zh = ["用 LoRA 微调 {m}，预算有限", "全参微调 {m}，{g} 张卡够吗", "部署 {m} 推理服务，{c} 并发", "QLoRA 微调 {m} 最便宜的方案",
          "训练 {m}，{t}B token，{d} 天内完成", "{m} 推理要什么卡，延迟要低", "A100 和 H800 哪个适合 {m}", "竞价实例适合训练 {m} 吗"]
    variations = []
    for i in range(max(0, limit)):
        tmpl = rng.choice(en if i % 2 else zh)
        variations.append(tmpl.format(m=rng.choice(models), g=rng.choice([1, 2, 4, 8, 16]),
                                      c=rng.choice([1, 8, 50, 200]), t=rng.choice([10, 100, 1000]),
                                      d=rng.choice([3, 7, 30])))
    units: list[list[tuple[str, str | None]]] = [[(q, None)] for q in single + variations]
    units += [[(t, f"conv{i}") for t in turns] for i, turns in enumerate(convs)]
    rng.shuffle(units)
    out = [item for unit in units for item in unit]
    return out[:limit] if limit else out


def run_turns(core, items: list[tuple[str, str | None]], repeat: int = 1
              ) -> tuple[list[float], list[str], list[tuple[str, str | None]]]:
    """Time each Core.turn (ms). Conversation turns carry their state; single questions start fresh."""
    times: list[float] = []
    statuses: list[str] = []
    answered: list[tuple[str, str | None]] = []
    clock = time.perf_counter
    for _ in range(repeat):
        states: dict[str, Any] = {}
        for text, conv in items:
            state = states.get(conv) if conv else None
            t0 = clock()
            reply, new_state = core.turn(text, state)
            times.append((clock() - t0) * 1000)
            statuses.append(reply.status)
            if conv:
                states[conv] = new_state
            elif reply.status == "answer":
                answered.append((text, None))
    return times, statuses, answered


# ----- 1. cold start -----------------------------------------------------------------------------------------------
def median_run(cmd: list[str], env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:4])}... failed: {proc.stderr.decode(errors='replace')[-800:]}")
    return statistics.median(times) * 1000


def bench_cold(tmp: Path, runs: int) -> list[Row]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ADVISOR_DB": str(tmp / "cold.db"),
           "ADVISOR_CACHE_DIR": str(tmp / "cache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)             # measure with .pyc files, as an installed package runs
    ask = [sys.executable, "-m", "bot", "ask", COLD_QUESTION]
    bare = [sys.executable, "-c", BARE_IMPORTS]
    subprocess.run(ask, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, timeout=120, check=True)  # warm caches
    subprocess.run(bare, env=env, cwd=ROOT, timeout=120, check=True)
    interp = median_run([sys.executable, "-c", "pass"], env, runs)
    base = median_run(bare, env, runs)
    cold = median_run(ask, env, runs)
    nocache = median_run(ask, {**env, "ADVISOR_CACHE_DIR": "off"}, max(1, runs // 2))
    ratio = cold / base
    return [
        Row("cold start", "python -c pass (interpreter)", ms(interp)),
        Row("cold start", "bare imports of the libraries", ms(base)),
        Row("cold start", f"gpu-advisor ask (median of {runs})", f"{ms(cold)} = {ratio:.2f}x bare",
            f"<= {TARGET_COLD_RATIO}x", verdict(ratio <= TARGET_COLD_RATIO)),
        Row("cold start", "  same, YAML parse cache off", f"{ms(nocache)} = {nocache / base:.2f}x bare"),
    ]


# ----- 2. warm latency -----------------------------------------------------------------------------------------------
def bench_warm(core, items, repeat: int, tmp: Path) -> tuple[list[Row], list[tuple[str, str | None]]]:
    run_turns(core, items)                                   # untimed pass: lazy regexes, caches
    times, statuses, answered = run_turns(core, items, repeat)
    counts = {s: statuses.count(s) for s in sorted(set(statuses))}
    p50, p99 = pct(times, 50), pct(times, 99)
    ans = [t for t, s in zip(times, statuses) if s == "answer"]
    rows = [
        Row("warm", f"Core.turn, {len(items)} questions x{repeat} "
                    f"({', '.join(f'{v} {k}' for k, v in counts.items())})",
            f"p50 {ms(p50)}, p99 {ms(p99)}, max {ms(max(times))}",
            f"p50 <= {TARGET_P50_MS:g} ms, p99 <= {TARGET_P99_MS:g} ms",
            verdict(p50 <= TARGET_P50_MS and p99 <= TARGET_P99_MS)),
        Row("warm", "  answers only", f"p50 {ms(pct(ans, 50))}, p99 {ms(pct(ans, 99))}" if ans else "-"),
    ]
    from bot.surfaces.service import Service
    svc = Service(core=core, db=tmp / "warm.db")
    for text, conv in items[:20]:
        svc.ask(text, surface="cli", user="bench", session=conv or "warmup")
    stimes = []
    for i, (text, conv) in enumerate(items):
        t0 = time.perf_counter()
        svc.ask(text, surface="cli", user="bench", session=conv or f"q{i}")
        stimes.append((time.perf_counter() - t0) * 1000)
    rows.append(Row("warm", f"Service.ask (+ session + audit write), {len(items)} questions",
                    f"p50 {ms(pct(stimes, 50))}, p99 {ms(pct(stimes, 99))}"))
    return rows, answered


# ----- 3. Slack HTTP -------------------------------------------------------------------------------------------------
class StubSlack(http.server.ThreadingHTTPServer):
    """A stand-in Slack Web API on loopback: answers every method with ok, records which request got a reply."""
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), StubHandler)
        self.lock = threading.Lock()
        self.answered: dict[int, float] = {}
        self.calls: dict[str, int] = {}

    def record(self, method: str, ref: int | None) -> None:
        with self.lock:
            self.calls[method] = self.calls.get(method, 0) + 1
            if ref is not None and ref not in self.answered:
                self.answered[ref] = time.perf_counter()


class StubHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:                 # quiet
        pass

    def do_GET(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: dict[str, Any] = {}
        with contextlib.suppress(ValueError):
            if raw.lstrip().startswith(b"{"):
                body = json.loads(raw)
            else:
                body = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
        path = urllib.parse.urlparse(self.path).path
        method = path.rstrip("/").rsplit("/", 1)[-1]
        ref = None
        m = re.match(r"/resp/(\d+)$", path) or re.match(r"C(\d+)X$", str(body.get("channel") or ""))
        if m:
            ref = int(m.group(1))
        self.server.record("response_url" if path.startswith("/resp/") else method, ref)  # type: ignore[attr-defined]
        if method == "auth.test":
            out = {"ok": True, "url": "https://bench.slack.com/", "team": "bench", "user": "advisor",
                   "team_id": "T0BENCH", "user_id": "U0BOT", "bot_id": "B0BOT", "is_enterprise_install": False}
        elif method in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
            out = {"ok": True, "channel": body.get("channel"), "ts": f"{time.time():.6f}",
                   "message": {"text": body.get("text", ""), "ts": f"{time.time():.6f}"}}
        else:
            out = {"ok": True}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def signed(secret: str, body: bytes, ctype: str) -> dict[str, str]:
    ts = str(int(time.time()))
    sig = "v0=" + hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"Content-Type": ctype, "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig}


def slack_requests(n: int, stub_port: int, texts: list[str]) -> list[tuple[bytes, str, int]]:
    out = []
    for i in range(n):
        text = texts[i % len(texts)]
        if i % 2:
            body = urllib.parse.urlencode({
                "token": "bench", "team_id": "T0BENCH", "team_domain": "bench", "channel_id": f"C{i}X",
                "channel_name": "bench", "user_id": f"U{i % 17}BENCH", "user_name": "bench",
                "command": os.environ.get("ADVISOR_SLASH_COMMAND", "/gpu-advisor"), "text": text,
                "api_app_id": "A0BENCH", "trigger_id": f"{i}.bench",
                "response_url": f"http://127.0.0.1:{stub_port}/resp/{i}"}).encode()
            out.append((body, "application/x-www-form-urlencoded", i))
        else:
            ts = f"{1_700_000_000 + i}.000100"
            body = json.dumps({
                "token": "bench", "team_id": "T0BENCH", "api_app_id": "A0BENCH", "type": "event_callback",
                "event_id": f"Ev{uuid.uuid4().hex[:12].upper()}", "event_time": int(time.time()),
                "authorizations": [{"team_id": "T0BENCH", "user_id": "U0BOT", "is_bot": True}],
                "event": {"type": "app_mention", "user": f"U{i % 17}BENCH", "text": f"<@U0BOT> {text}", "ts": ts,
                          "channel": f"C{i}X", "event_ts": ts, "channel_type": "channel"},
            }).encode()
            out.append((body, "application/json", i))
    return out


def bench_slack(tmp: Path, n: int, clients: int, deadline_s: float, texts: list[str]) -> list[Row]:
    if not (ROOT / "bot" / "surfaces" / "slack" / "app.py").exists():
        return [Row("slack http", "signed requests to serve --http", "skipped: bot/surfaces/slack/app.py not present")]
    stub = StubSlack()
    threading.Thread(target=stub.serve_forever, daemon=True).start()
    port = free_port()
    secret = uuid.uuid4().hex                           # 32 hex characters, as Slack's
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ADVISOR_DB": str(tmp / "slack.db"),
           "ADVISOR_CACHE_DIR": str(tmp / "cache"), "SLACK_BOT_TOKEN": "xoxb-0000-bench-token",
           "SLACK_SIGNING_SECRET": secret, "SLACK_API_BASE_URL": f"http://127.0.0.1:{stub.server_port}/api/",
           "PORT": str(port)}
    env.pop("SLACK_APP_TOKEN", None)
    log = open(tmp / "serve.log", "wb")  # noqa: SIM115 -- the server writes it until it is stopped below
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--http", "--host", "127.0.0.1",
                             "--port", str(port)], env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        up = time.monotonic()
        while True:
            if proc.poll() is not None:
                raise RuntimeError("serve exited: " + (tmp / "serve.log").read_text(errors="replace")[-1500:])
            with contextlib.suppress(OSError):
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/healthz")
                if c.getresponse().status == 200:
                    break
            if time.monotonic() - up > 30:
                raise RuntimeError("serve did not answer /healthz within 30 s")
            time.sleep(0.05)
        startup = time.monotonic() - up
        # one warm-up request, then the measured batch
        reqs = slack_requests(n + 1, stub.server_port, texts)
        warm_body, warm_type, _ = reqs.pop(0)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("POST", "/slack/events", body=warm_body, headers=signed(secret, warm_body, warm_type))
        c.getresponse().read()
        wait_until(lambda: 0 in stub.answered, 10)
        acks: list[float] = []
        codes: dict[int, int] = {}
        lock = threading.Lock()
        queue = list(reqs)
        end = time.perf_counter() + deadline_s

        def client() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            while time.perf_counter() < end:
                with lock:
                    if not queue:
                        return
                    body, ctype, _i = queue.pop()
                t0 = time.perf_counter()
                try:
                    conn.request("POST", "/slack/events", body=body, headers=signed(secret, body, ctype))
                    resp = conn.getresponse()
                    resp.read()
                    code = resp.status
                except (OSError, http.client.HTTPException):
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    code = 0
                with lock:
                    acks.append((time.perf_counter() - t0) * 1000)
                    codes[code] = codes.get(code, 0) + 1

        t0 = time.perf_counter()
        threads = [threading.Thread(target=client) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(deadline_s + 15)
        acked_s = time.perf_counter() - t0
        sent = len(acks)
        wait_until(lambda: len(stub.answered) - 1 >= sent, max(1.0, end + 15 - time.perf_counter()))
        answered = [v for k, v in stub.answered.items() if k != 0]
        done_s = (max(answered) - t0) if answered else float("nan")
        ok = codes.get(200, 0)
        rss = rss_mib(proc.pid)
        calls = ", ".join(f"{k} {v}" for k, v in sorted(stub.calls.items()))
        return [
            Row("slack http", "serve --http start until /healthz answers", ms(startup * 1000)),
            Row("slack http", f"{sent} signed requests, {clients} clients: acknowledged",
                f"{ok / acked_s:.0f} req/s; ack p50 {ms(pct(acks, 50))}, p99 {ms(pct(acks, 99))}",
                "ack < 3 s (Slack)", verdict(ok == sent and pct(acks, 99) < 3000)),
            Row("slack http", "  answered (the reply reached the stub Web API)",
                f"{len(answered) / done_s:.0f} req/s ({len(answered)} of {sent})" if answered else "none",
                "", verdict(len(answered) == sent)),
            Row("slack http", "  Web API calls the stub received", calls),
            Row("slack http", "  server memory (RSS) after the run", f"{rss:.0f} MiB" if rss else "n/a"),
        ] + ([Row("slack http", "  non-200 answers", json.dumps({str(k): v for k, v in codes.items() if k != 200}),
                  "", "MISSED")] if ok != sent else [])
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()
        stub.shutdown()
        stub.server_close()


def rss_mib(pid: int) -> float | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return None


def wait_until(cond: Callable[[], bool], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


# ----- 4. catalog growth ---------------------------------------------------------------------------------------------
def synthetic_kb(kb, size: int, seed: int = 8):
    """A copy of `kb` with exactly `size` flavors: real ones (a sample, when fewer), plus copies with new ids and
    prices 5-60 % above the original, spread over the providers as the real catalog is."""
    from types import MappingProxyType
    rng = random.Random(seed + size)
    real = list(kb.flavors.values())
    if size <= len(real):
        by_provider: dict[str, list] = {}
        for f in real:
            by_provider.setdefault(f.provider, []).append(f)
        chosen = []
        while len(chosen) < size:                            # round-robin over providers keeps each one present
            for fs in by_provider.values():
                if fs and len(chosen) < size:
                    chosen.append(fs.pop(rng.randrange(len(fs))))
        flavors = {f.id: f for f in chosen}
    else:
        flavors = dict(kb.flavors)
        i = 0
        while len(flavors) < size:
            f = real[i % len(real)]
            i += 1
            name = f"{f.flavor}-syn{i}"
            upd: dict[str, Any] = {"id": f"{f.provider}/{name}", "flavor": name}
            if f.price and f.price.on_demand:
                factor = 1.05 + 0.55 * rng.random()
                upd["price"] = f.price.model_copy(update={
                    "on_demand": round(f.price.on_demand * factor, 4),
                    "spot": round(f.price.spot * factor, 4) if f.price.spot else None})
            flavors[upd["id"]] = f.model_copy(update=upd)
    return dataclasses.replace(kb, flavors=MappingProxyType(dict(sorted(flavors.items()))),
                               version=f"{kb.version}-syn{size}")


def core_on(kb, base):
    from bot.plan.advisor import Advisor
    from bot.conversation.turn import Core
    from bot.conversation.nlu import Parser
    return Core(kb, base.rules, Parser(kb, base.parser.lex), base.forms, base.templates,
                Advisor(kb, base.rules, base.templates, base.advisor.default_provider))


def bench_catalog(base, answered: list[tuple[str, str | None]], sizes: list[int], repeat: int) -> list[Row]:
    rows: list[Row] = []
    p50s: dict[int, float] = {}
    qs = answered[:80]
    for size in sizes:
        kb = synthetic_kb(base.kb, size)
        core = core_on(kb, base)
        run_turns(core, qs)                                 # untimed: cached indexes, regexes
        times, _statuses, _ = run_turns(core, qs, repeat)
        p50s[size] = pct(times, 50)
        rows.append(Row("catalog", f"{size:>6,} flavors: {len(qs)} answer questions x{repeat}",
                        f"p50 {ms(p50s[size])}, p99 {ms(pct(times, 99))}"))
    if len(sizes) > 1:
        growth = p50s[sizes[-1]] / p50s[sizes[0]]
        rows.append(Row("catalog", f"p50 growth {sizes[0]:,} -> {sizes[-1]:,} flavors", f"{growth:.1f}x",
                        f"<= {TARGET_GROWTH}x (flat)", verdict(growth <= TARGET_GROWTH)))
    return rows


# ----- main ----------------------------------------------------------------------------------------------------------
def bench_planner(core, repeat: int) -> list[Row]:
    """The planner on its own scenario set (tests/scenarios/planner.yaml): warm time per answer through
    `Core.turn`, and how many plans (flavor x instances x replicas) each answer searched."""
    import yaml
    scenarios = yaml.safe_load((ROOT / "tests" / "scenarios" / "planner.yaml").read_text(encoding="utf-8"))
    texts = [s["q"] for s in scenarios["scenarios"]]
    searched: list[int] = []
    advise = core.advisor.advise

    def counting(*args: Any, **kwargs: Any):
        advice = advise(*args, **kwargs)
        searched.append(advice.plans_searched)
        return advice
    core.advisor.advise = counting
    try:
        for text in texts:                                  # untimed: caches of the knowledge base and rules
            core.turn(text, {})
        searched.clear()
        times = []
        for _ in range(repeat):
            for text in texts:
                t0 = time.perf_counter()
                core.turn(text, {})
                times.append((time.perf_counter() - t0) * 1000)
    finally:
        core.advisor.advise = advise
    p50, p99 = pct(times, 50), pct(times, 99)
    return [Row("planner", f"{len(texts)} scenario questions x{repeat} through Core.turn",
                f"p50 {ms(p50)}, p99 {ms(p99)}, max {ms(max(times))}", f"p50 < {TARGET_PLAN_MS:g} ms",
                verdict(p50 < TARGET_PLAN_MS)),
            Row("planner", "plans searched per answer (flavor x instances x replicas)",
                f"median {statistics.median(searched):.0f}, max {max(searched)}, total {sum(searched):,}"
                if searched else "none")]


def profile_turns(core, items: list[tuple[str, str | None]], top: int = 20) -> None:
    import cProfile
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    run_turns(core, items)
    prof.disable()
    print(f"\nprofile of {len(items)} warm Core.turn calls (top {top} by own time):")
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


@contextlib.contextmanager
def isolated_env(tmp: Path) -> Iterator[None]:
    """The in-process parts use a throw-away database and cache; nothing touches the user's own files."""
    keep = {k: os.environ.get(k) for k in ("ADVISOR_DB", "ADVISOR_CACHE_DIR")}
    os.environ["ADVISOR_DB"] = str(tmp / "bench.db")
    os.environ["ADVISOR_CACHE_DIR"] = str(tmp / "cache")
    try:
        yield
    finally:
        for k, v in keep.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs and questions (about 30 s)")
    ap.add_argument("--profile", action="store_true", help="after the table, cProfile the warm turns")
    ap.add_argument("--skip-slack", action="store_true", help="leave out the Slack HTTP section")
    ap.add_argument("--skip-cold", action="store_true", help="leave out the cold-start section")
    args = ap.parse_args(argv)
    q = args.quick
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-bench-") as tmpdir, isolated_env(Path(tmpdir)):
        tmp = Path(tmpdir)
        if not args.skip_cold:
            rows += bench_cold(tmp, runs=3 if q else 9)
        from bot.conversation.turn import Core
        t0 = time.perf_counter()
        core = Core.load()
        load_ms = (time.perf_counter() - t0) * 1000
        items = questions(150 if q else 600)
        rows.append(Row("warm", f"Core.load in-process ({len(core.kb.flavors)} flavors)", ms(load_ms)))
        warm_rows, answered = bench_warm(core, items, 1 if q else 3, tmp)
        rows += warm_rows
        rows += bench_planner(core, 1 if q else 3)
        if not args.skip_slack:
            try:
                rows += bench_slack(tmp, 60 if q else 400, 4 if q else 8, 20 if q else 60,
                                    [t for t, _ in answered] or [COLD_QUESTION])
            except Exception as exc:                      # a benchmark reports, it does not crash
                rows.append(Row("slack http", "signed requests to serve --http",
                                "error: " + " ".join(str(exc).split())[:200], "", "MISSED"))
        rows += bench_catalog(core, answered, [100, 1_000, 10_000], 1 if q else 3)
        header = ["gpu-advisor latency benchmark" + (" (--quick)" if q else ""), *machine(),
                  f"knowledge: {len(core.kb.flavors)} flavors, {len(core.kb.models)} models, "
                  f"{len(core.rules.rules)} rules; version {core.version}", ""]
        print_table(header, rows)
        if args.profile:
            profile_turns(core, items)
    return 0


if __name__ == "__main__":
    sys.exit(main())
