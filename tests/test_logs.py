"""bot.surfaces.logs: text or JSON lines, the level from the environment, and no Slack secret in any log line."""
from __future__ import annotations

import io
import json
import logging

import pytest

from bot.records.errors import ConfigError
from bot.surfaces.logs import TOKEN_MARK, redact, setup_logging

SECRET = "8f14e45fceea167a5a36dedd4bea2543"          # shaped like a signing secret (32 hex)
BOT = "xoxb-1111111111-2222222222-AbCdEfGhIjKlMnOpQrStUvWx"


@pytest.fixture
def capture(monkeypatch):
    """Set up logging into a buffer; restore the root logger afterwards."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    for name in ("ADVISOR_LOG_FORMAT", "ADVISOR_LOG_LEVEL", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN",
                 "SLACK_SIGNING_SECRET"):
        monkeypatch.delenv(name, raising=False)
    buf = io.StringIO()

    def setup(**kw):
        setup_logging(stream=buf, **kw)
        return buf

    yield setup
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])
    logging.captureWarnings(False)


@pytest.mark.parametrize("text, expected", [
    # bot, user, app-level, refresh (rotating) and legacy tokens all go
    (f"token {BOT} used", f"token {TOKEN_MARK} used"),
    ("xoxp-123-456-789-abcdef", TOKEN_MARK),
    ("app xapp-1-A0123-4567-deadbeef!", f"app {TOKEN_MARK}!"),
    ("refresh xoxe.xoxp-1-Mi0yLTE0 and xoxe-1-My0xLTE0", f"refresh {TOKEN_MARK} and {TOKEN_MARK}"),
    ("url=https://x/?t=xoxa-2-abc", f"url=https://x/?t={TOKEN_MARK}"),
    # words that only resemble a prefix stay
    ("the xoxb prefix, boxoxb-no, xapp alone", "the xoxb prefix, boxoxb-no, xapp alone"),
])
def test_redact_token_shapes(text, expected):
    assert redact(text) == expected


def test_text_format_is_the_default_and_redacts_message_and_args(capture, monkeypatch):
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SECRET)
    buf = capture()
    logging.getLogger("gpu_advisor.test").info("posting with %s and secret %s", BOT, SECRET)
    line = buf.getvalue()
    assert "INFO gpu_advisor.test: posting with [redacted token] and secret [redacted]" in line
    assert BOT not in line and SECRET not in line
    assert line[:4].isdigit() and "Z INFO" in line             # UTC timestamp first


def test_json_lines_with_extras_and_exception_redacted(capture, monkeypatch):
    monkeypatch.setenv("ADVISOR_LOG_FORMAT", "json")
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT)
    buf = capture()
    log = logging.getLogger("gpu_advisor.slack")
    try:
        raise RuntimeError(f"Slack said invalid_auth for {BOT}")
    except RuntimeError:
        log.exception("call failed", extra={"channel": "C123", "header": f"Bearer {BOT}"})
    rec = json.loads(buf.getvalue().strip())
    assert rec["level"] == "ERROR" and rec["logger"] == "gpu_advisor.slack" and rec["msg"] == "call failed"
    assert rec["channel"] == "C123" and rec["header"] == "Bearer [redacted]"
    assert "RuntimeError" in rec["exc"] and BOT not in buf.getvalue()


def test_secret_inside_an_object_repr_is_caught_by_the_formatter(capture):
    buf = capture(json=True, secrets=[SECRET])

    class Leaky:
        def __repr__(self):
            return f"Leaky(secret={SECRET})"
    logging.getLogger("x").warning("settings: %r", Leaky())
    assert SECRET not in buf.getvalue() and "[redacted]" in buf.getvalue()


def test_level_from_environment(capture, monkeypatch):
    monkeypatch.setenv("ADVISOR_LOG_LEVEL", "warning")
    buf = capture()
    logging.getLogger("x").info("quiet")
    logging.getLogger("x").warning("loud")
    assert "quiet" not in buf.getvalue() and "loud" in buf.getvalue()


@pytest.mark.parametrize("name, value", [
    ("ADVISOR_LOG_FORMAT", "yaml"),        # only text or json
    ("ADVISOR_LOG_LEVEL", "LOUD"),         # not a level
])
def test_bad_values_say_what_to_use(capture, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as err:
        capture()
    assert name in str(err.value) and "set " + name.lower() in str(err.value).lower()


def test_calling_twice_keeps_one_handler_and_filters_foreign_handlers(capture):
    other = io.StringIO()
    foreign = logging.StreamHandler(other)
    logging.getLogger().addHandler(foreign)
    capture()
    buf = capture(json=True)
    ours = [h for h in logging.getLogger().handlers if getattr(h, "_gpu_advisor", False)]
    assert len(ours) == 1
    logging.getLogger("x").warning("token %s", BOT)
    assert BOT not in other.getvalue() and TOKEN_MARK in other.getvalue()
    assert json.loads(buf.getvalue().strip())["msg"] == f"token {TOKEN_MARK}"
