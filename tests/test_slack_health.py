"""Operations end to end: Socket Mode's /readyz follows the WebSocket (kill the socket, readiness fails, liveness
does not), and
/metrics and the per-turn log line after a few turns. `gpu-advisor serve --socket` runs in a subprocess against
the stand-in Web API and Socket Mode server; nothing leaves 127.0.0.1."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from slack_stub import APP_TOKEN, BOT_TOKEN, TEAM_ID, BotProcess, SlackStub, event_callback
from socket_stub import SocketModeStub

REPO = Path(__file__).resolve().parent.parent


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.fixture(scope="module")
def stub():
    s = SlackStub()
    yield s
    s.close()


@pytest.fixture(scope="module")
def bot(stub, tmp_path_factory):
    ws = SocketModeStub()
    stub.socket_url = ws.url
    db = tmp_path_factory.mktemp("health") / "advisor.db"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLACK_", "ADVISOR_")) and "proxy" not in k.lower()}
    env.update(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN, SLACK_API_BASE_URL=stub.api_url,
               ADVISOR_DB=str(db), ADVISOR_LOG_LEVEL="INFO", ADVISOR_LOG_FORMAT="json", PORT="0",
               ADVISOR_SOCKET_PING_S="0.5",
               PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", ADVISOR_CACHE_DIR=os.environ.get("ADVISOR_CACHE_DIR", "off"))
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--socket", "--host", "127.0.0.1"], cwd=REPO,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log: list[str] = []
    threading.Thread(target=lambda: [log.append(line.rstrip("\n")) for line in proc.stdout], daemon=True).start()
    b = BotProcess(proc, log, db)
    b.ws = ws
    try:
        line = b.wait_log(r"/readyz and /metrics on http://127\.0\.0\.1:\d+", 20)
        b.url = re.search(r"/metrics on (http://127\.0\.0\.1:\d+)", line).group(1)
        ws.wait_connected(15)
        yield b
    finally:
        proc.kill()
        proc.wait(5)
        b.ws.close()
        (db.parent / "bot.log").write_text("\n".join(log) + "\n", encoding="utf-8")


def dm(text: str, channel: str, user: str) -> dict:
    return {"type": "message", "channel_type": "im", "channel": channel, "user": user, "text": text,
            "ts": f"{time.time():.6f}", "team": TEAM_ID}


def metric(text: str, name: str, **labels) -> float:
    """The value of one sample of the Prometheus text exposition (0 when absent)."""
    for line in text.splitlines():
        m = re.fullmatch(r"(\w+)(?:\{(.*)\})? (\S+)", line)
        if m and m.group(1) == name and dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or "")) == labels:
            return float(m.group(3))
    return 0.0


def wait_status(url: str, want: int, timeout: float) -> tuple[int, str]:
    deadline = time.monotonic() + timeout
    while (got := get(url))[0] != want:
        assert time.monotonic() < deadline, f"{url} answered {got} for {timeout} s, not {want}"
        time.sleep(0.1)
    return got


def test_metrics_and_the_turn_log_line_after_a_few_turns(bot, stub):
    status, body = wait_status(bot.url + "/readyz", 200, 10)        # ready once the socket is
    health = json.loads(body)
    assert status == 200 and health["ok"] is True and health["mode"] == "socket" and health["socket"] == "connected"
    questions = ["serve llama 3 8b for 20 users", "lora finetune qwen2.5 7b", "finetune qwen2.5 7b"]
    for i, q in enumerate(questions):
        bot.ws.envelope("events_api", json.loads(event_callback(dm(q, f"DH{i}", f"UH{i}"), f"EvH{i}")))
    stub.wait_for(lambda s: len(s.of("chat.postMessage", True)) >= 3, 10)
    stub.fail("chat.postMessage", "channel_not_found")
    bot.ws.envelope("events_api", json.loads(event_callback(dm("serve llama 3 8b", "DH9", "UH9"), "EvH9")))
    stub.wait_for(lambda s: s.of("chat.postMessage", False), 10)
    deadline = time.monotonic() + 5                 # the bot counts the refusal after the stub recorded it
    while not metric(text := get(bot.url + "/metrics")[1], "gpu_advisor_slack_api_errors_total",
                     method="chat.postMessage", error="channel_not_found") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert metric(text, "gpu_advisor_requests_total", surface="dm", outcome="answer") == 3
    assert metric(text, "gpu_advisor_requests_total", surface="dm", outcome="follow_up") == 1
    assert metric(text, "gpu_advisor_answer_seconds_count", surface="dm") == 4
    assert metric(text, "gpu_advisor_slack_api_errors_total", method="chat.postMessage", error="channel_not_found") == 1
    assert metric(text, "gpu_advisor_audit_rows") == 4 and metric(text, "gpu_advisor_sessions") == 4
    assert metric(text, "process_resident_memory_bytes") > 0
    turns = [json.loads(line) for line in bot.log if '"msg": "turn ' in line]
    assert len(turns) == 4
    assert {t["surface"] for t in turns} == {"dm"} and all(re.fullmatch(r"A\d{6}", t["advice_id"]) for t in turns)
    assert {t["status"] for t in turns} == {"answer", "follow_up"} and all(t["latency_ms"] > 0 for t in turns)
    assert not any(q in line for q in questions for line in bot.log)       # never the question itself


def test_readiness_fails_when_the_socket_is_down_and_liveness_does_not(bot, stub):
    assert get(bot.url + "/readyz")[0] == 200 and get(bot.url + "/healthz")[0] == 200
    stub.socket_url = None                          # Slack will not hand out a new socket...
    bot.ws.close()                                  # ...and the current one dies
    _status, body = wait_status(bot.url + "/readyz", 503, 15)
    assert json.loads(body)["socket"] in ("stale", "disconnected") and json.loads(body)["ok"] is False
    assert get(bot.url + "/healthz")[0] == 200       # a Slack outage restarts no pod (liveness is the process)
    assert get(bot.url + "/metrics")[0] == 200       # metrics are still served
