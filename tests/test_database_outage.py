"""The Slack app through a PostgreSQL outage (issue 34): `gpu-advisor serve --http` on a database reached through a
loopback proxy (tests/tcp_proxy.py) that the test switches off for ADVISOR_OUTAGE_S seconds (15 by default)
while signed DMs and slash commands keep arriving. Every acknowledged request must be answered exactly once
after the database is back, none with an apology; /readyz must answer within 1 s throughout and say the
database is down while it is, /healthz (liveness) 200 throughout; the log must hold no traceback. Before this round: 6 of 44 DMs got only the
"could not be recorded" apology, 4 tracebacks, /healthz hung 5 s twice."""
from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from slack_stub import BOT_TOKEN, TEAM_ID, SlackStub, bot_env, event_callback, send, sign, start_http
from tcp_proxy import TcpProxy

from bot.store.backend import open_audit

SECRET = "8f742231b10e8888abcd991234567a5b"
OUTAGE_S = float(os.environ.get("ADVISOR_OUTAGE_S", "15"))
QUESTIONS = ("hi", "how much memory does llama 3 8b need?", "what gpu for qlora llama 3 8b")


def _via(url: str, port: int) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{parts.username or 'postgres'}@127.0.0.1:{port}"))


class Health:
    """Polls GET /readyz (or `path`) every 0.25 s in a thread: (seconds taken, HTTP status, body) per call."""

    def __init__(self, base: str, path: str = "/readyz"):
        self.base, self.path, self.seen, self._stop = base, path, [], threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            began = time.monotonic()
            try:
                with urllib.request.urlopen(self.base + self.path, timeout=5) as resp:
                    status, body = resp.status, resp.read()
            except urllib.error.HTTPError as err:
                status, body = err.code, err.read()
            except OSError as exc:                      # a hang past 5 s, a refused connection: both failures
                status, body = 0, str(exc).encode()
            self.seen.append((time.monotonic() - began, status, json.loads(body or b"{}") if status else {}))

    def stop(self) -> list:
        self._stop.set()
        self._thread.join(10)
        return self.seen


@pytest.fixture
def outage_bot(postgres_url, tmp_path):
    """(stub, proxy, base URL, log, database URL through the proxy): one replica; stopped after."""
    stub = SlackStub()
    proxy = TcpProxy("127.0.0.1", urlsplit(postgres_url).port or 5432)
    url = _via(postgres_url, proxy.port)
    open_audit(url)                                     # the schema, before the bot starts
    env = bot_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SECRET, SLACK_API_BASE_URL=stub.api_url,
                  ADVISOR_DB=url, ADVISOR_SPOOL_DIR=str(tmp_path / "spool"), ADVISOR_INBOX_SCAN_S="1", PORT="0")
    proc, base, log = start_http(env, timeout=60)
    yield stub, proxy, base, log, url
    proc.terminate()
    try:
        proc.wait(15)
    except Exception:                                   # noqa: BLE001 - a hung stop is itself reported by asserts
        proc.kill()
    proxy.down()
    stub.close()


def _dm(base: str, channel: str, n: int) -> int:
    event = {"type": "message", "channel_type": "im", "channel": channel, "user": "U0OUTAGE",
             "text": QUESTIONS[n % len(QUESTIONS)], "ts": f"{time.time():.6f}", "team": TEAM_ID}
    body = event_callback(event, f"EvOut{os.getpid()}x{n}")
    return send(base + "/slack/events", body, "application/json", sign(body, SECRET))[0]


def _slash(base: str, stub: SlackStub, name: str) -> tuple[int, str]:
    form = urllib.parse.urlencode({"command": "/gpu-advisor", "text": "what gpu for qlora llama 3 8b",
                                   "user_id": "U0OUTAGE", "channel_id": "C0OUTAGE", "team_id": TEAM_ID,
                                   "response_url": stub.response_url(name), "trigger_id": "1.2.3"})
    status, body, _ = send(base + "/slack/events", form, "application/x-www-form-urlencoded", sign(form, SECRET))
    return status, body


def test_a_postgresql_outage_loses_no_acknowledged_request(outage_bot):
    stub, proxy, base, log, url = outage_bot
    health, live = Health(base), Health(base, "/healthz")
    tag = f"{os.getpid() % 1000:03d}"
    channels, slashes, acks = [], [], []

    def dm() -> None:
        channels.append(f"D{tag}OUT{len(channels):03d}")
        acks.append(_dm(base, channels[-1], len(channels)))

    for _ in range(4):                                  # the database up
        dm()
    proxy.down()
    down_at = time.monotonic()
    while time.monotonic() - down_at < OUTAGE_S:        # a DM every 0.5 s and a slash command every 5 s
        dm()
        if len(channels) % 10 == 0:
            slashes.append(f"out{tag}s{len(slashes)}")
            status, body = _slash(base, stub, slashes[-1])
            acks.append(status)
            assert "could not be recorded" not in body
        time.sleep(0.5)
    proxy.up()
    for _ in range(4):                                  # back
        dm()
    assert acks == [200] * len(acks)

    def answered(s: SlackStub) -> bool:
        posted = {c.body.get("channel") for c in s.of("chat.postMessage")}
        replied = {c.path.rsplit("/", 1)[-1] for c in s.of("response_url")}
        return set(channels) <= posted and set(slashes) <= replied
    try:
        stub.wait_for(answered, 90)
    except AssertionError:
        posted = {c.body.get("channel") for c in stub.of("chat.postMessage")}
        if os.environ.get("ADVISOR_OUTAGE_LOG"):
            Path(os.environ["ADVISOR_OUTAGE_LOG"]).write_text("\n".join(log))
        raise AssertionError(f"not answered: {sorted(set(channels) - posted)}; log:\n" + "\n".join(log[-60:]))
    stub.settle(1.0)
    seen, lived = health.stop(), live.stop()

    per_channel = {ch: [c for c in stub.of("chat.postMessage", None) if c.body.get("channel") == ch]
                   for ch in channels}
    assert {ch: len(p) for ch, p in per_channel.items() if len(p) != 1} == {}          # each exactly once
    texts = [p[0].body.get("text") or "" for p in per_channel.values()]
    texts += [c.body.get("text") or "" for c in stub.of("response_url") if c.path.rsplit("/", 1)[-1] in slashes]
    assert not [t for t in texts if "could not be recorded" in t or "Sorry" in t]
    assert len([c for c in stub.of("response_url") if c.path.rsplit("/", 1)[-1] in slashes]) >= len(slashes)

    audit = open_audit(url)
    rows = [r for r in audit.iter_all() if r.get("channel") in per_channel]
    assert sorted(r["channel"] for r in rows) == sorted(channels) and audit.verify().ok

    slowest = max(s for s, _, _ in seen)
    print(f"outage {OUTAGE_S:g} s: {len(channels)} DMs and {len(slashes)} slash commands acknowledged, each answered "
          f"once; /readyz {len(seen)} calls, slowest {slowest * 1000:.0f} ms")
    assert slowest < 1.0, f"/readyz took {slowest:.2f} s"
    assert any(status == 503 and facts.get("database") == "down" for _, status, facts in seen)
    assert seen[-1][1] == 200 and seen[-1][2]["database"] == "up"
    assert lived and all(status == 200 and took < 1.0 for took, status, _ in lived)    # liveness never failed
    assert not [line for line in log if "Traceback" in line], "\n".join(log[-40:])
    assert any("the database is back after" in line for line in log)
