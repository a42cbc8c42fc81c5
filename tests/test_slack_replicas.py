"""Two `serve --http` replicas on one PostgreSQL database, the stand-in Slack API on loopback: events spread over
both, every event also retried at the other replica; each is answered exactly once and the one audit chain
verifies; then one replica is killed with work in flight and a new one started. Bounded: 16 + 24 events."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from slack_stub import BOT_TOKEN, TEAM_ID, SlackStub, event_callback, send, sign

from bot.store.backend import open_audit

REPO = Path(__file__).resolve().parent.parent
SECRET = "8f742231b10e8888abcd991234567a5b"
EVENTS = 16


def _serve(url: str, api_url: str) -> tuple[subprocess.Popen, str, list[str]]:
    """One replica: `gpu-advisor serve --http` on a free port, its log collected; (process, base URL, log)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "ADVISOR_"))
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env["ADVISOR_CACHE_DIR"] = os.environ.get("ADVISOR_CACHE_DIR", "off")
    env.update(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SECRET, SLACK_API_BASE_URL=api_url,
               ADVISOR_DB=url, PORT="0", PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1",
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--http", "--host", "127.0.0.1"], cwd=REPO,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log: list[str] = []
    threading.Thread(target=lambda: [log.append(line.rstrip("\n")) for line in proc.stdout], daemon=True).start()
    end = time.monotonic() + 60
    while time.monotonic() < end and proc.poll() is None:
        for line in list(log):
            if m := re.search(r"listening on (http://127\.0\.0\.1:\d+)", line):
                return proc, m.group(1), log
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("a replica did not start:\n" + "\n".join(log))


@pytest.fixture
def replicas(postgres_url):
    """(stub, started, start): two replicas running; start() adds one; all stopped after (killed ones excepted)."""
    stub = SlackStub()
    open_audit(postgres_url)                       # the schema first: replicas would otherwise wait on its lock
    started = []

    def start():
        started.append(_serve(postgres_url, stub.api_url))
        return started[-1]

    start(), start()
    yield stub, started, start
    for proc, _, _ in started:
        if proc.poll() is None:
            proc.terminate()
    for proc, _, log in started:
        try:
            assert proc.wait(15) in (0, -9), "\n".join(log[-20:])
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    stub.close()


def _post(base: str, body: str, retry: int = 0) -> int:
    headers = {**sign(body, SECRET), **({"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
                                        if retry else {})}
    return send(base + "/slack/events", body, "application/json", headers)[0]


def test_two_replicas_answer_each_event_once(replicas, postgres_url):
    stub, started, _ = replicas
    channels = _spread(EVENTS, [base for _, base, _ in started], "R")
    stub.wait_for(lambda s: len({c.body.get("channel") for c in s.of("chat.postMessage", True)}
                                & set(channels)) == EVENTS, 60)
    _answered_once(stub, channels, postgres_url)


def _spread(n: int, bases: list[str], tag: str) -> list[str]:
    """n DMs, each sent to one replica and retried at the other (all acknowledged); returns their channels."""
    channels = [f"D{os.getpid() % 1000:03d}{tag}{i:03d}" for i in range(n)]
    bodies = [event_callback({"type": "message", "channel_type": "im", "channel": ch, "user": "U0REPLICA",
                              "text": "serve llama 3 8b for 4 users", "ts": f"{time.time():.6f}", "team": TEAM_ID},
                             f"Ev{tag}{os.getpid()}x{i}") for i, ch in enumerate(channels)]
    acks: list[int] = []
    threads = [threading.Thread(target=lambda i=i, b=b: acks.extend(
        (_post(bases[i % 2], b), _post(bases[(i + 1) % 2], b, 1)))) for i, b in enumerate(bodies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert acks == [200] * (2 * n)
    return channels


def _answered_once(stub: SlackStub, channels: list[str], url: str) -> None:
    stub.settle()
    per_channel = {ch: 0 for ch in channels}
    for call in stub.of("chat.postMessage", None):
        if call.body.get("channel") in per_channel:
            per_channel[call.body["channel"]] += 1
    assert set(per_channel.values()) == {1}, per_channel
    log = open_audit(url)
    rows = [r for r in log.iter_all() if r.get("channel") in per_channel]
    assert sorted(r["channel"] for r in rows) == sorted(channels) and log.verify().ok


def test_a_replica_killed_mid_load_loses_nothing_and_answers_each_once(replicas, postgres_url):
    """Slack slow, one replica kill -9'd with work in flight, a new one started: every acknowledged DM answered
    exactly once, the survivor's running jobs never taken over."""
    stub, started, start = replicas
    stub.delay("chat.postMessage", 0.3)                     # posts in flight when the replica dies
    channels = _spread(24, [base for _, base, _ in started], "K")
    started[0][0].kill()                                     # SIGKILL: no clean shutdown
    started[0][0].wait(5)
    answered = {c.body.get("channel") for c in stub.of("chat.postMessage", True)} & set(channels)
    assert len(answered) < len(channels)                     # the kill really interrupted the work
    stub.delay("chat.postMessage", 0)
    _, _, log = start()                                      # the replacement resumes the dead replica's jobs
    end = time.monotonic() + 10
    while not any(re.search(r"resuming \d+ unfinished Slack job", line) for line in log):
        assert time.monotonic() < end, "the new replica resumed nothing: " + "\n".join(log[-10:])
        time.sleep(0.05)
    stub.wait_for(lambda s: set(channels) <= {c.body.get("channel") for c in s.of("chat.postMessage", True)}, 60)
    _answered_once(stub, channels, postgres_url)
