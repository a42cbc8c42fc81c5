"""Socket Mode end to end: `gpu-advisor serve --socket` in a subprocess dials a stand-in Socket Mode server
(tests/socket_stub.py) whose URL the stand-in Web API (tests/slack_stub.py) hands out from apps.connections.open.
Slack's side of the socket is played here: envelopes go in, the bot's ACKs come back on the socket, and its
answers arrive at the stub Web API (chat.postMessage) or at a response_url on the stub. Nothing leaves 127.0.0.1.

The bot and both stubs live for the whole module (about 6 s in all, 3 of them the clean stop: the SDK's
receive loop polls with a 3 s timeout); each test uses its own channel and user ids, every wait is bounded, and
the last test stops the bot with SIGTERM (the fixture kills it if a test failed first).
"""
from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from slack_stub import APP_TOKEN, BOT_TOKEN, BotProcess, TEAM_ID, SlackStub, event_callback
from socket_stub import SocketModeStub

REPO = Path(__file__).resolve().parent.parent
WAIT = 5.0
_ids = itertools.count(1)


def uid(prefix: str) -> str:
    return f"{prefix}{os.getpid() % 1000:03d}S{next(_ids):04d}"


class Bot(BotProcess):
    wait_timeout = WAIT


@pytest.fixture(scope="module")
def stub():
    s = SlackStub()
    yield s
    s.close()


@pytest.fixture(scope="module")
def ws(stub):
    s = SocketModeStub()
    stub.socket_url = s.url
    yield s
    stub.socket_url = None
    s.close()


@pytest.fixture(scope="module")
def bot(stub, ws, tmp_path_factory):
    db = tmp_path_factory.mktemp("slack-socket") / "advisor.db"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLACK_", "ADVISOR_")) and "proxy" not in k.lower()}   # slack_sdk ignores NO_PROXY
    env.update(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_APP_TOKEN=APP_TOKEN, SLACK_API_BASE_URL=stub.api_url,
               ADVISOR_DB=str(db), ADVISOR_LOG_LEVEL="DEBUG", PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1",
               ADVISOR_CACHE_DIR=os.environ.get("ADVISOR_CACHE_DIR", "off"))
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve", "--socket"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log: list[str] = []
    threading.Thread(target=lambda: [log.append(line.rstrip("\n")) for line in proc.stdout], daemon=True).start()
    try:                                                    # connected, or gone: no need to wait out the timeout
        ws.wait_for(lambda s: s.connected or proc.poll() is not None, 15, "a connection")
    except AssertionError:
        pass
    if not ws.connected:
        proc.kill()
        proc.wait(5)
        raise RuntimeError("the bot did not connect over Socket Mode:\n" + "\n".join(log))
    yield Bot(proc, log, db)
    if proc.poll() is None:                                 # the last test stops it; this is for a failed run
        proc.kill()
        proc.wait(5)
    (db.parent / "bot.log").write_text("\n".join(log) + "\n", encoding="utf-8")   # kept for post-mortems


# ----- helpers -----------------------------------------------------------------------------------------------
def dm(text: str, channel: str, user: str) -> dict:
    return {"type": "message", "channel_type": "im", "channel": channel, "user": user, "text": text,
            "ts": f"{time.time():.6f}", "team": TEAM_ID}


def event(ev: dict) -> dict:
    """An events_api envelope's payload: the event_callback body Slack would POST in HTTP mode, as an object."""
    return json.loads(event_callback(ev, uid("Ev")))


def posts(stub: SlackStub, channel: str, ok: bool | None = True) -> list:
    return [c for c in stub.of("chat.postMessage", ok) if c.body.get("channel") == channel]


def responses(stub: SlackStub, name: str) -> list:
    return [c for c in stub.of("response_url") if c.path == f"/response/{name}"]


def slash_payload(stub: SlackStub, text: str, user: str, channel: str) -> tuple[dict, str]:
    """A slash_commands envelope's payload: the slash command's fields, as JSON (Socket Mode sends no form)."""
    name = uid("resp")
    return ({"token": "legacy", "team_id": TEAM_ID, "team_domain": "test", "channel_id": channel,
             "channel_name": "ml-infra", "user_id": user, "user_name": "someone", "command": "/gpu-advisor",
             "text": text, "api_app_id": "A0GPUADV", "is_enterprise_install": "false",
             "response_url": stub.response_url(name), "trigger_id": "13345224609.738474920.8088930838d88f008e0"},
            name)


# ----- connecting -----------------------------------------------------------------------------------------------
def test_connects_with_the_app_token_and_keeps_the_socket_alive(bot, stub, ws):
    [open_call] = stub.of("apps.connections.open")
    assert open_call.ok and open_call.headers["authorization"] == f"Bearer {APP_TOKEN}"
    assert ws.handshakes[0]["path"] == ws.path                  # it dialed the URL apps.connections.open gave
    ws.wait_for(lambda s: s.pings, WAIT, "the client's first ping")      # sent right after the handshake
    ws.ping(b"stub-keepalive")                                  # Slack pings too: the client must pong
    ws.wait_pong(b"stub-keepalive")
    assert ws.errors == []


# ----- surfaces ----------------------------------------------------------------------------------------------
def test_dm_is_acked_on_the_socket_and_answered_through_the_web_api(bot, stub, ws):
    channel, user = uid("D"), uid("U")
    envelope_id = ws.envelope("events_api", event(dm("serve llama 3 70b for 50 users", channel, user)))
    ack = ws.wait_ack(envelope_id)
    assert ack == {"envelope_id": envelope_id}                  # an event's ACK carries nothing else
    [post] = stub.wait_for(lambda s: posts(s, channel), WAIT)
    assert post.headers["authorization"] == f"Bearer {BOT_TOKEN}"   # answers use the bot token, not the app's
    assert "thread_ts" not in post.body and post.body["unfurl_links"] is False
    assert post.body["text"].startswith("Pick: ") and post.body["blocks"][0]["type"] == "header"
    [record] = stub.wait_for(lambda s: bot.audit(channel=channel), WAIT)
    assert record["surface"] == "dm" and record["user"] == user and record["team"] == TEAM_ID


def test_slash_command_is_acked_with_working_then_answered_at_the_response_url(bot, stub, ws):
    user, channel = uid("U"), uid("C")
    payload, name = slash_payload(stub, "serve llama 3 70b for 50 users", user, channel)
    envelope_id = ws.envelope("slash_commands", payload)
    ack = ws.wait_ack(envelope_id)
    assert ack["payload"]["response_type"] == "ephemeral" and "Working" in ack["payload"]["text"]
    [answer] = stub.wait_for(lambda s: responses(s, name), WAIT)
    assert answer.ok and answer.body["response_type"] == "ephemeral" and answer.body["replace_original"] is False
    assert "Pick:" in answer.body["text"]
    [record] = stub.wait_for(lambda s: bot.audit(user=user), WAIT)
    assert record["surface"] == "slash" and record["channel"] == channel


def test_slash_help_is_answered_in_the_ack(bot, stub, ws):
    user = uid("U")
    payload, name = slash_payload(stub, "help", user, uid("C"))
    ack = ws.wait_ack(ws.envelope("slash_commands", payload))
    assert "explain ID" in ack["payload"]["text"]
    stub.settle()
    assert responses(stub, name) == [] and bot.audit(user=user) == []


# ----- idempotency -----------------------------------------------------------------------------------------------
def test_redelivered_event_is_acked_and_answered_once(bot, stub, ws):
    channel, user = uid("D"), uid("U")
    body = event(dm("serve llama 3 8b for 4 users", channel, user))
    first = ws.envelope("events_api", body)
    ws.wait_ack(first)
    stub.wait_for(lambda s: posts(s, channel), WAIT)
    # Slack redelivers an event whose ACK it did not get in time: a new envelope, the same event_id
    again = ws.envelope("events_api", body, retry_attempt=1, retry_reason="timeout")
    assert ws.wait_ack(again) == {"envelope_id": again}
    bot.wait_log(r"already handled \(retry 1, timeout\)")       # the retry headers reached the listener
    stub.settle()
    assert len(posts(stub, channel, ok=None)) == 1
    assert len(bot.audit(channel=channel)) == 1


# ----- last: the whole session ----------------------------------------------------------------------------------
def test_one_connection_no_protocol_errors_and_no_token_in_the_log(bot, stub, ws):
    stub.settle()
    assert len(stub.of("apps.connections.open")) == 1 and len(ws.handshakes) == 1    # never reconnected
    assert ws.errors == []
    assert {c.method for c in stub.of_all() if not c.ok} == set()
    text = "\n".join(bot.log)
    assert "new session has been established" in text
    assert APP_TOKEN not in text and BOT_TOKEN not in text and not re.search(r"xox[bp]-\d|xapp-\d", text)


def test_sigterm_closes_the_socket_and_exits_0(bot, stub, ws):
    bot.proc.send_signal(signal.SIGTERM)                   # docker stop, systemd, Kubernetes
    assert bot.proc.wait(10) == 0
    bot.wait_log(r"Socket Mode stopped")
    ws.wait_for(lambda s: not s.connected, WAIT, "the client to close its connection")
    assert len(stub.of("apps.connections.open")) == 1      # it did not try to reconnect on the way out
