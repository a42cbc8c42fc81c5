"""The Slack edge's pieces without a server: settings, log redaction, Slack markup in, Block Kit limits out,
and start-up failures of `gpu-advisor serve` (a subprocess, as an operator would see them)."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.records.errors import ConfigError
from bot.surfaces.slack.format import (BLOCKS_MAX, FALLBACK_MAX, MESSAGE_CHARS, block_chars, fallback_text, fit, lang_of,
                              split, to_plain)
from bot.surfaces.slack.settings import SlackSettings, TokenFieldFilter
from slack_stub import APP_TOKEN, SlackStub, check_message, validate_blocks

REPO = Path(__file__).resolve().parent.parent
BOT = "xoxb-1234-5678-abcdefghijkl"
SECRET = "8f742231b10e8888abcd991234567a5b"


# ----- settings ---------------------------------------------------------------------------------------------------
@pytest.fixture
def env(monkeypatch):
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_API_BASE_URL",
                 "ADVISOR_SLASH_COMMAND", "ADVISOR_LOG_LEVEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SECRET)
    return monkeypatch


def test_settings_defaults(env):
    s = SlackSettings.from_env("http")
    assert s.api_base_url == "https://slack.com/api/" and s.slash_command == "/gpu-advisor"
    assert BOT not in repr(s) and SECRET not in repr(s)


@pytest.mark.parametrize("name, value, mode, says", [
    # each row: the variable, a bad value (None: unset), the mode, and what the message must name
    ("SLACK_BOT_TOKEN", None, "http", "SLACK_BOT_TOKEN is not set"),
    ("SLACK_BOT_TOKEN", "xoxp-1234-5678-userTokenSecret", "http", "SLACK_BOT_TOKEN is malformed"),   # a user token
    ("SLACK_BOT_TOKEN", "hunter2-not-a-token", "http", "SLACK_BOT_TOKEN is malformed"),
    ("SLACK_SIGNING_SECRET", None, "http", "SLACK_SIGNING_SECRET is not set"),
    ("SLACK_SIGNING_SECRET", "short-secret-value", "http", "SLACK_SIGNING_SECRET is malformed"),
    ("SLACK_APP_TOKEN", None, "socket", "SLACK_APP_TOKEN is not set"),
    ("SLACK_APP_TOKEN", "xoxb-1234-5678-wrongKindOfToken", "socket", "SLACK_APP_TOKEN is malformed"),
    ("SLACK_API_BASE_URL", "ftp://slack.example/api", "http", "SLACK_API_BASE_URL"),
    ("SLACK_API_BASE_URL", "not a url", "http", "SLACK_API_BASE_URL"),
    ("ADVISOR_SLASH_COMMAND", "gpu advisor", "http", "ADVISOR_SLASH_COMMAND"),
])
def test_settings_name_the_bad_variable_and_hide_its_value(env, name, value, mode, says):
    if value is None:
        env.delenv(name, raising=False)
    else:
        env.setenv(name, value)
    with pytest.raises(ConfigError) as err:
        SlackSettings.from_env(mode)
    assert says in str(err.value)
    if value and name.startswith("SLACK_") and "URL" not in name:
        assert value not in str(err.value)


def test_socket_mode_needs_no_signing_secret(env):
    env.delenv("SLACK_SIGNING_SECRET")
    env.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    env.setenv("SLACK_API_BASE_URL", "http://127.0.0.1:9/api")
    s = SlackSettings.from_env("socket")
    assert s.app_token == APP_TOKEN and s.signing_secret is None and s.api_base_url.endswith("/api/")


def test_serve_logging_redacts_tokens_and_token_fields(env):
    """serve's logging: bot/surfaces/logs.py (token shapes, secret values) plus TokenFieldFilter (request bodies)."""
    import io

    from bot.surfaces.slack.settings import setup_logging
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        setup_logging(SlackSettings.from_env("http"))
        buf = io.StringIO()
        for h in root.handlers:
            if getattr(h, "_gpu_advisor", False):
                h.stream = buf
        log = logging.getLogger("slack_bolt.RequestVerification")
        log.warning("bad signature, body: token=legacyVerif&team_id=T1 %s", '{"token": "legacyVerif2"}')
        log.warning("sent %s with Authorization: Bearer %s, secret %s", "x", BOT, SECRET)
        try:
            raise RuntimeError(f"failed with {BOT}")
        except RuntimeError:
            log.exception("boom")
        text = buf.getvalue()
        assert "legacyVerif" not in text and BOT not in text and SECRET not in text and "[redacted" in text
        assert "token=[redacted]&team_id=T1" in text
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
        for h in saved[0]:
            root.addHandler(h)
        root.setLevel(saved[1])


def test_token_field_filter():
    assert TokenFieldFilter.redact('{"token": "abc", "x": 1}') == '{"token": "[redacted]", "x": 1}'
    assert TokenFieldFilter.redact("Authorization: Bearer abc.def") == "Authorization: [redacted]"


# ----- Slack markup in -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, plain", [
    ("<@UBOT> serve llama 3 70b", "serve llama 3 70b"),                      # the bot's own mention goes
    ("ask <@U123|ann> about <#C1|ml-infra>", "ask @ann about #ml-infra"),
    ("<!channel> hi <!subteam^S1|@infra>", "@channel hi @infra"),
    ("see <https://evil.example|this> and <https://x.example>", "see this and https://x.example"),
    ("a &lt;b&gt; &amp; c", "a <b> & c"),                                     # Slack's escapes undone
    ("&lt;!channel&gt;", "<!channel>"),                                       # typed literally: plain text now
])
def test_to_plain(raw, plain):
    assert to_plain(raw, "UBOT") == plain


def test_lang_of():
    assert lang_of("帮助") == "zh" and lang_of("help") == "en"


# ----- Block Kit out -------------------------------------------------------------------------------------------
def test_fit_and_split_keep_every_limit():
    huge = [{"type": "header", "text": {"type": "plain_text", "text": "H" * 500}}]
    huge += [{"type": "section", "text": {"type": "mrkdwn", "text": ("line &amp; more\n" * 400)}} for _ in range(60)]
    huge += [{"type": "section", "fields": [{"type": "mrkdwn", "text": "f" * 3000}] * 15}]
    huge += [{"type": "section", "text": {"type": "mrkdwn", "text": ""}}]
    huge += [{"type": "context", "elements": [{"type": "mrkdwn", "text": "c" * 5000}] * 12}]
    huge += [{"type": "actions", "block_id": "b" * 300, "elements": [
        {"type": "button", "action_id": f"a{i}", "text": {"type": "plain_text", "text": "t" * 100}, "value": "v" * 3000}
        for i in range(30)]}]
    messages = split(fit(huge), "_trimmed_")
    assert 1 <= len(messages) <= 3
    for blocks in messages:
        assert validate_blocks(blocks) is None
        assert len(blocks) <= BLOCKS_MAX and sum(block_chars(b) for b in blocks) <= MESSAGE_CHARS
        assert check_message({"channel": "C1", "text": "x", "blocks": blocks}) is None
    assert messages[-1][-1]["elements"][0]["text"] == "_trimmed_"
    assert "&am…" not in str(messages) and "&amp…" not in str(messages)     # no entity cut in half


def test_short_reply_is_one_message_untouched():
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "hello"}}]
    assert split(fit(blocks), "x") == [blocks]


def test_fallback_text():
    assert fallback_text("") == "…"
    assert fallback_text("<!channel> & co") == "&lt;!channel&gt; &amp; co"
    long = fallback_text(("word " * 30 + "\n") * 400)
    assert len(long) <= FALLBACK_MAX


def test_stub_rejects_what_slack_rejects():
    ok = {"type": "section", "text": {"type": "mrkdwn", "text": "x"}}
    assert check_message({"channel": "C", "text": "t", "blocks": [ok]}) is None
    assert check_message({"channel": "C", "text": "t", "blocks": [ok] * 51}).startswith("invalid_blocks")
    assert check_message({"channel": "C", "blocks": [ok]}) == "missing_fallback_text"
    assert check_message({"channel": "C", "text": "t" * 40001}) == "msg_too_long"
    header = {"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}
    assert check_message({"channel": "C", "text": "t", "blocks": [header]}).startswith("invalid_blocks")
    big = {"type": "section", "text": {"type": "mrkdwn", "text": "x" * 2900}}
    assert check_message({"channel": "C", "text": "t", "blocks": [big] * 5}) == "msg_blocks_too_long"


# ----- start-up, as an operator sees it --------------------------------------------------------------------------
def _serve(args: list[str], extra_env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "ADVISOR_"))}
    env.update(PYTHONPATH=str(REPO), ADVISOR_DB=str(tmp_path / "a.db"), **extra_env)
    return subprocess.run([sys.executable, "-m", "bot", "serve", *args], cwd=REPO, env=env, text=True,
                          capture_output=True, timeout=60)


def test_serve_without_a_token_stops_and_names_it(tmp_path):
    out = _serve(["--http", "--port", "3999"], {"SLACK_SIGNING_SECRET": SECRET}, tmp_path)
    assert out.returncode != 0 and "SLACK_BOT_TOKEN is not set" in out.stderr
    assert "Traceback" not in out.stderr


def test_serve_with_a_malformed_token_never_prints_it(tmp_path):
    bad = "xoxp-9999-8888-thisIsAUserTokenValue"
    out = _serve(["--http", "--port", "3999"], {"SLACK_BOT_TOKEN": bad, "SLACK_SIGNING_SECRET": SECRET}, tmp_path)
    assert out.returncode != 0 and "SLACK_BOT_TOKEN is malformed" in out.stderr
    assert bad not in out.stderr + out.stdout


def test_socket_mode_with_a_rejected_app_token_stops_with_a_clear_message(tmp_path):
    stub = SlackStub()
    try:
        out = _serve(["--socket", "--port", "0"], {"SLACK_BOT_TOKEN": stub.bot_token, "SLACK_APP_TOKEN": APP_TOKEN,
                                                   "SLACK_API_BASE_URL": stub.api_url}, tmp_path)
        [call] = stub.of("apps.connections.open")
    finally:
        stub.close()
    assert call.headers["authorization"] == f"Bearer {APP_TOKEN}"       # Socket Mode used SLACK_API_BASE_URL
    assert out.returncode != 0 and "invalid_auth" in out.stderr and "SLACK_APP_TOKEN" in out.stderr
    assert APP_TOKEN not in out.stderr + out.stdout and stub.bot_token not in out.stderr + out.stdout


# ----- the app in-process: building needs no network; a failing turn is reported, not swallowed -------------------
class _BrokenService:
    def __init__(self, audit):
        self.audit = audit

    def ask(self, *args, **kwargs):
        raise RuntimeError("the core fell over")


def test_build_app_calls_nothing_and_a_failing_turn_is_reported(tmp_path, caplog):
    import json
    import time

    from slack_bolt.request import BoltRequest

    from bot.store.audit import AuditLog
    from bot.surfaces.slack.app import build_app
    from slack_stub import BOT_TOKEN, event_callback, sign

    stub = SlackStub()
    try:
        settings = SlackSettings(bot_token=BOT_TOKEN, signing_secret=SECRET, api_base_url=stub.api_url)
        app = build_app(settings, _BrokenService(AuditLog(tmp_path / "a.db")))
        assert stub.calls == []                                       # no auth.test at construction
        body = event_callback({"type": "message", "channel_type": "im", "channel": "D1", "user": "U1",
                               "text": "用 LoRA 微调 Qwen2.5-7B", "ts": "1.000001"}, "Ev1")
        headers = {k.lower(): [v] for k, v in sign(body, SECRET).items()}
        headers["content-type"] = ["application/json"]
        with caplog.at_level(logging.ERROR, logger="gpu_advisor.slack"):
            assert app.dispatch(BoltRequest(body=body, headers=headers)).status == 200
            [post] = stub.wait_for(lambda s: s.of("chat.postMessage"))
            end = time.monotonic() + 5
            while "the core fell over" not in caplog.text and time.monotonic() < end:
                time.sleep(0.05)
        assert post.ok and "出错" in post.body["text"]                  # told, in the language of the question
        assert "Slack job Ev1 (dm) failed after 3 attempt(s)" in caplog.text      # retried, then given up
        assert "the core fell over" in caplog.text
        assert json.loads(json.dumps(post.body))["unfurl_links"] is False
    finally:
        stub.close()


def test_manifest_matches_the_app():
    import yaml
    manifest = yaml.safe_load((REPO / "deploy" / "slack-app-manifest.yml").read_text(encoding="utf-8"))
    settings = manifest["settings"]
    assert set(settings["event_subscriptions"]["bot_events"]) == {"app_mention", "message.im", "message.channels",
                                                                  "message.groups", "app_home_opened"}
    assert settings["interactivity"]["is_enabled"] is True and settings["socket_mode_enabled"] is True
    assert {"app_mentions:read", "chat:write", "commands", "im:history", "channels:history",
            "groups:history"} <= set(manifest["oauth_config"]["scopes"]["bot"])
    from bot.surfaces.slack.interactions import SHORTCUT_ID
    [shortcut] = manifest["features"]["shortcuts"]
    assert shortcut["type"] == "message" and shortcut["callback_id"] == SHORTCUT_ID
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    [command] = manifest["features"]["slash_commands"]
    assert command["command"] == "/gpu-advisor"
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True
    assert len(manifest["display_information"]["name"]) <= 35
    assert len(manifest["display_information"]["description"]) <= 140
    example = (REPO / "deploy" / "slack.env.example").read_text(encoding="utf-8")
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "ADVISOR_SLASH_COMMAND"):
        assert name in example
