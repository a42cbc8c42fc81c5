"""Liveness apart from readiness, over real HTTP (issue 33 item 5, issue 34 item 1): GET /healthz answers 200 while
the process serves, whatever the database or Slack do; GET /readyz says 503 with the reason when the database is
away, never waits longer than READY_TIMEOUT_S, and in HTTP mode reports an unreachable Slack API without failing;
/metrics has the inbox backlog and the oldest unfinished job's age. Socket Mode's readiness following the
WebSocket is tests/test_slack_health.py (a real bot process)."""
from __future__ import annotations

import datetime as dt
import json
import re
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from slack_stub import BOT_TOKEN, event_callback, send, sign
from test_slack_faults import SECRET, stub  # noqa: F401  (the stand-in Slack API, one per module)


def get(url: str, timeout: float = 5.0) -> tuple[int, dict[str, Any] | str, float]:
    began = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            status, body = resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        status, body = err.code, err.read().decode()
    took = time.monotonic() - began
    try:
        return status, json.loads(body), took
    except ValueError:
        return status, body, took


class Server:
    """serve.py's waitress server around wsgi_app, on a free loopback port, in a thread."""

    def __init__(self, app: Any = None, health: Any = None):
        from bot.surfaces.slack.serve import _server, http_health, with_inbox, wsgi_app
        ready = health or with_inbox(http_health, app)
        self.server = _server(wsgi_app(app, ready, SECRET), "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.effective_port}"
        threading.Thread(target=self.server.run, daemon=True).start()

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def served(stub, tmp_path):
    from bot.surfaces.service import Service
    from bot.surfaces.slack.app import build_app
    from bot.surfaces.slack.settings import SlackSettings
    stub.reset()
    settings = SlackSettings(bot_token=BOT_TOKEN, signing_secret=SECRET, api_base_url=stub.api_url)
    app = build_app(settings, Service(db=tmp_path / "advisor.db"))
    server = Server(app)
    yield app, server
    server.close()
    app.advisor_stop(2.0)


def dm(url: str, text: str, n: int) -> int:
    event = {"type": "message", "channel_type": "im", "channel": f"DPROBE{n}", "user": f"UPROBE{n}", "text": text,
             "ts": f"{time.time():.6f}"}
    body = event_callback(event, f"EvProbe{n}-{time.time_ns()}")
    return send(url + "/slack/events", body, "application/json", sign(body, SECRET))[0]


def test_liveness_and_readiness_are_separate_endpoints(served):
    _app, server = served
    status, live, took = get(server.url + "/healthz")
    assert status == 200 and live["ok"] is True and live["uptime_s"] >= 0 and took < 1.0
    assert "database" not in live and "socket" not in live           # liveness reads nothing that can be away
    status, ready, _ = get(server.url + "/readyz")
    assert status == 200 and ready["ok"] is True and ready["mode"] == "http"
    assert ready["database"] == "up" and ready["slack_api"] == "reachable" and "oldest_job_s" in ready
    for path in ("/healthz", "/readyz"):
        assert send(server.url + path, "", "text/plain")[0] == 405
        head = urllib.request.Request(server.url + path, method="HEAD")
        with urllib.request.urlopen(head, timeout=5) as resp:
            assert resp.status == 200 and resp.read() == b""


def test_database_away_fails_readiness_not_liveness(served, stub):
    """The inbox cannot be written: /readyz 503 at once, naming it; /healthz still 200 (no restart for an outage);
    when the database takes writes again, ready again."""
    app, server = served
    bot = app.advisor_health.__self__
    bot.inbox.db.conn.execute("PRAGMA query_only = ON")            # SQLite answers as for a read-only file
    assert dm(server.url, "serve llama 3 8b", 1) == 200             # kept in the spool, acknowledged
    status, ready, took = get(server.url + "/readyz")
    assert status == 503 and ready["ok"] is False and ready["database"] == "down" and took < 1.0
    assert "read-only" in ready["storage"] and ready["spooled"] == 1
    status, live, took = get(server.url + "/healthz")
    assert status == 200 and live["ok"] is True and took < 1.0
    bot.inbox.db.conn.execute("PRAGMA query_only = OFF")
    deadline = time.monotonic() + 15
    while (got := get(server.url + "/readyz"))[0] != 200:
        assert time.monotonic() < deadline, got
        time.sleep(0.1)
    stub.wait_for(lambda s: s.of("chat.postMessage", True), 15)     # the kept question answered once back


def test_a_stuck_readiness_check_answers_503_within_its_bound():
    from bot.surfaces.slack.serve import READY_TIMEOUT_S
    release = threading.Event()

    def stuck() -> tuple[bool, dict]:
        release.wait(10)
        return True, {}
    server = Server(health=stuck)
    try:
        status, ready, took = get(server.url + "/readyz")
        assert status == 503 and "took over" in ready["error"] and took < READY_TIMEOUT_S + 0.5
        status, _live, took = get(server.url + "/healthz")
        assert status == 200 and took < 0.5
    finally:
        release.set()
        server.close()


def test_http_mode_reports_an_unreachable_slack_api_but_stays_ready():
    """Slack connects to an HTTP-mode bot; an outage of Slack's Web API is said on /readyz, and every replica
    staying in the Service keeps recording the events Slack sends (their replies wait in the inbox)."""
    from bot.surfaces.slack.outbound import THROTTLE
    from bot.surfaces.slack.serve import http_health
    server = Server(health=http_health)
    try:
        THROTTLE.away("chat.postMessage", "C1", "connection refused")
        status, ready, _ = get(server.url + "/readyz")
        assert status == 200 and ready["slack_api"] == "unreachable" and ready["slack_api_why"] == "connection refused"
        THROTTLE.reached()
        assert get(server.url + "/readyz")[1]["slack_api"] == "reachable"
    finally:
        THROTTLE.reached()
        server.close()


def metric(text: str, name: str) -> float | None:
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def test_inbox_backlog_and_oldest_job_age_on_metrics(tmp_path):
    """Jobs not finished and the age of the oldest, as the database watch last read them, on GET /metrics."""
    from bot.store.inbox import Inbox
    from bot.surfaces import metrics
    from bot.surfaces.slack.dbwatch import DatabaseWatch
    ten_min_ago = dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=10)
    clock = [ten_min_ago]
    inbox = Inbox(tmp_path / "advisor.db", clock=lambda: clock[0])
    watch = DatabaseWatch(inbox, None, lambda job: None)
    server = Server(health=lambda: (True, {}))
    try:
        for n in range(3):
            inbox.put(f"job{n}", "dm", {"text": f"q{n}"})
            clock[0] = ten_min_ago + dt.timedelta(minutes=5)
        inbox.finish("job0", advice_id=None, delivered=True)        # the oldest is done: job1 (5 min) is oldest
        inbox.start("job1")
        watch._refresh()
        metrics.gate(lambda: True)
        metrics.bind_inbox(watch.backlog, watch.oldest_age)
        status, text, _ = get(server.url + "/metrics")
        assert status == 200
        assert metric(text, "gpu_advisor_inbox_backlog") == 2                 # job1 running, job2 queued
        assert 300 - 5 <= metric(text, "gpu_advisor_inbox_oldest_job_age_seconds") <= 300 + 30
        for n in (1, 2):
            inbox.finish(f"job{n}", advice_id=None, delivered=True)
        watch._refresh()
        _, text, _ = get(server.url + "/metrics")
        assert metric(text, "gpu_advisor_inbox_backlog") == 0
        assert metric(text, "gpu_advisor_inbox_oldest_job_age_seconds") == 0
    finally:
        metrics.bind_inbox(lambda: 0.0, lambda: 0.0)
        server.close()
        inbox.close()
