"""The Slack app end to end: `gpu-advisor serve --http` in a subprocess, real signed HTTP requests to it, and a
stand-in Slack Web API on loopback (tests/slack_stub.py) that records what the bot sends and rejects what Slack
would reject. Nothing leaves 127.0.0.1.

Each test uses its own channel and user ids (the server and its database live for the whole module), and waits
for what it expects with a bounded poll. "Nothing was posted" is checked with a sentinel: after the message that
must be ignored, a normal one is sent in the same channel and exactly one answer must arrive.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from slack_stub import (BOT_ID, BOT_TOKEN, BOT_USER_ID, TEAM_ID, BotProcess, SlackStub, bot_env, check_message,
                        event_callback, send, sign, start_http)

SECRET = "8f742231b10e8888abcd991234567a5b"
_ids = itertools.count(1)


def uid(prefix: str) -> str:
    return f"{prefix}{os.getpid() % 1000:03d}X{next(_ids):04d}"


class Bot(BotProcess):
    """The running HTTP server: its URL, its log and its database."""

    def __init__(self, proc: subprocess.Popen, url: str, log: list[str], db: Path):
        super().__init__(proc, log, db)
        self.url = url

    def events(self, body: str, *, secret: str = SECRET, ts: int | None = None, headers: dict | None = None,
               content_type: str = "application/json") -> tuple[int, str, float]:
        return send(self.url + "/slack/events", body, content_type, {**sign(body, secret, ts), **(headers or {})})

    def event(self, event: dict, event_id: str | None = None, **kw) -> tuple[int, str, float]:
        return self.events(event_callback(event, event_id or uid("Ev")), **kw)

    def form(self, fields: dict, **kw) -> tuple[int, str, float]:
        return self.events(urllib.parse.urlencode(fields), content_type="application/x-www-form-urlencoded", **kw)


@pytest.fixture(scope="module")
def stub():
    s = SlackStub()
    yield s
    s.close()


@pytest.fixture(scope="module")
def bot(stub, tmp_path_factory):
    db = tmp_path_factory.mktemp("slack") / "advisor.db"
    env = bot_env(SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SECRET, SLACK_API_BASE_URL=stub.api_url,
                  ADVISOR_DB=str(db), ADVISOR_LOG_LEVEL="DEBUG", PORT="0")
    proc, url, log = start_http(env)
    yield Bot(proc, url, log, db)
    (db.parent / "bot.log").write_text("\n".join(log) + "\n", encoding="utf-8")   # kept for post-mortems
    proc.terminate()                                        # SIGTERM: a clean stop, exit status 0
    try:
        assert proc.wait(10) == 0
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


# ----- helpers -----------------------------------------------------------------------------------------------
def dm(text: str, channel: str, user: str, ts: str | None = None, **extra) -> dict:
    return {"type": "message", "channel_type": "im", "channel": channel, "user": user, "text": text,
            "ts": ts or f"{time.time():.6f}", "team": TEAM_ID, **extra}


def mention(text: str, channel: str, user: str, ts: str | None = None, **extra) -> dict:
    return {"type": "app_mention", "channel": channel, "user": user, "text": f"<@{BOT_USER_ID}> {text}",
            "ts": ts or f"{time.time():.6f}", "team": TEAM_ID, **extra}


def posts(stub: SlackStub, channel: str, ok: bool | None = True) -> list:
    return [c for c in stub.of("chat.postMessage", ok) if c.body.get("channel") == channel]


def wait_posts(stub: SlackStub, channel: str, n: int = 1, timeout: float = 10.0) -> list:
    return stub.wait_for(lambda s: (p := posts(s, channel)) and len(p) >= n and p, timeout)


def responses(stub: SlackStub, name: str) -> list:
    return [c for c in stub.of("response_url") if c.path == f"/response/{name}"]


def all_text(call) -> str:
    return json.dumps(call.body, ensure_ascii=False)


def block_text(call) -> str:
    blocks = call.body.get("blocks") or []
    return "\n".join(re.findall(r'"text": "((?:[^"\\]|\\.)*)"', json.dumps(blocks, ensure_ascii=False)))


def slash(stub: SlackStub, text: str, user: str, channel: str | None = None) -> tuple[dict, str]:
    name = uid("resp")
    return ({"token": "legacy", "team_id": TEAM_ID, "team_domain": "test", "channel_id": channel or uid("C"),
             "channel_name": "ml-infra", "user_id": user, "user_name": "someone", "command": "/gpu-advisor",
             "text": text, "api_app_id": "A0GPUADV", "is_enterprise_install": "false",
             "response_url": stub.response_url(name), "trigger_id": "13345224609.738474920.8088930838d88f008e0"},
            name)


def click(stub: SlackStub, post, user: str, choice: str) -> tuple[dict, str]:
    """The block_actions payload Slack sends when `user` presses the button labelled `choice` on `post`."""
    blocks = post.body["blocks"]
    actions = next(b for b in blocks if b["type"] == "actions")
    button = next(e for e in actions["elements"] if e["value"] == choice)
    ts, channel = post.answer["ts"], post.body["channel"]
    name = uid("act")
    payload = {
        "type": "block_actions", "team": {"id": TEAM_ID, "domain": "test"},
        "user": {"id": user, "username": "someone", "team_id": TEAM_ID}, "api_app_id": "A0GPUADV",
        "token": "legacy", "trigger_id": "1.2.3",
        "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": False,
                      **({"thread_ts": post.body["thread_ts"]} if post.body.get("thread_ts") else {})},
        "channel": {"id": channel, "name": "x"},
        "message": {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "ts": ts, "text": post.body["text"],
                    "blocks": blocks, **({"thread_ts": post.body["thread_ts"]} if post.body.get("thread_ts") else {})},
        "response_url": stub.response_url(name),
        "actions": [{"type": "button", "action_id": button["action_id"], "block_id": actions["block_id"],
                     "text": button["text"], "value": button["value"], "action_ts": f"{time.time():.6f}"}],
    }
    return {"payload": json.dumps(payload)}, name


# ----- serving -----------------------------------------------------------------------------------------------
def test_healthz_and_routes(bot):
    with urllib.request.urlopen(bot.url + "/healthz", timeout=5) as resp:
        assert resp.status == 200 and json.loads(resp.read())["ok"] is True
        assert resp.headers["Server"] == "gpu-advisor"        # waitress (our ident), not Bolt's dev server
    assert send(bot.url + "/healthz", "", "text/plain")[0] == 405
    with urllib.request.urlopen(bot.url + "/metrics", timeout=5) as resp:    # Prometheus, in HTTP mode too
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain; version=")
        assert b"gpu_advisor_answer_seconds" in resp.read()
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(bot.url + "/slack/events", timeout=5)
    assert err.value.code == 405
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(bot.url + "/nope", timeout=5)
    assert err.value.code == 404


def test_url_verification_challenge(bot):
    body = json.dumps({"token": "legacy", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
                       "type": "url_verification"})
    status, text, _ = bot.events(body)
    assert status == 200 and "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" in text


# ----- surfaces ----------------------------------------------------------------------------------------------
def test_dm_answer(bot, stub):
    channel, user = uid("D"), uid("U")
    status, _, elapsed = bot.event(dm("serve llama 3 70b for 50 users", channel, user))
    assert status == 200 and elapsed < 3
    [post] = wait_posts(stub, channel)
    assert "thread_ts" not in post.body                     # a DM is answered in the DM itself
    assert post.body["unfurl_links"] is False and post.body["unfurl_media"] is False
    assert post.headers["authorization"] == f"Bearer {BOT_TOKEN}"
    assert post.body["text"].startswith("Pick: ")            # the fallback text
    header = post.body["blocks"][0]
    assert header["type"] == "header" and header["text"]["text"].startswith("Pick: ")
    [record] = stub.wait_for(lambda s: bot.audit(channel=channel))
    assert record["surface"] == "dm" and record["user"] == user and record["team"] == TEAM_ID
    assert record["status"] == "answer" and record["event_id"]


def test_dm_in_chinese_is_answered_in_chinese(bot, stub):
    channel, user = uid("D"), uid("U")
    bot.event(dm("用 LoRA 微调 Qwen2.5-7B，预算有限", channel, user))
    [post] = wait_posts(stub, channel)
    assert post.body["blocks"][0]["text"]["text"].startswith("推荐")
    assert bot.audit(channel=channel)[0]["reply"]["lang"] == "zh"


def test_mention_is_answered_in_its_thread_and_the_thread_continues(bot, stub):
    channel, user = uid("C"), uid("U")
    root = f"{time.time():.6f}"
    bot.event(mention("finetune qwen2.5 7b", channel, user, ts=root))
    [first] = wait_posts(stub, channel)
    assert first.body["thread_ts"] == root
    assert any(b["type"] == "actions" for b in first.body["blocks"])        # the follow-up offers buttons
    reply_ts = f"{float(root) + 5:.6f}"
    bot.event(mention("LoRA", channel, user, ts=reply_ts, thread_ts=root))
    second = wait_posts(stub, channel, 2)[1]
    assert second.body["thread_ts"] == root                # in the thread of the mention, not of the reply
    assert second.body["blocks"][0]["type"] == "header"
    records = stub.wait_for(lambda s: len(r := bot.audit(channel=channel)) == 2 and r)
    assert {r["surface"] for r in records} == {"mention"}
    assert records[0]["session"] == records[1]["session"]
    assert records[0]["slots"]["model"] == "qwen2.5-7b" and records[0]["slots"]["method"] == "lora"


def test_follow_up_over_two_dms(bot, stub):
    channel, user = uid("D"), uid("U")
    bot.event(dm("finetune qwen2.5 7b", channel, user))
    [question] = wait_posts(stub, channel)
    assert "LoRA" in question.body["text"]
    bot.event(dm("qlora please", channel, user))
    answer = wait_posts(stub, channel, 2)[1]
    assert answer.body["blocks"][0]["text"]["text"].startswith("Pick: ")
    newest = bot.audit(channel=channel)[0]
    assert newest["slots"]["model"] == "qwen2.5-7b" and newest["slots"]["method"] == "qlora"


def test_slash_command_acks_fast_then_answers(bot, stub):
    user = uid("U")
    fields, name = slash(stub, "serve llama 3 70b for 50 users", user)
    status, body, elapsed = bot.form(fields)
    assert status == 200 and elapsed < 3.0
    ack = json.loads(body)
    assert ack["response_type"] == "ephemeral" and "Working" in ack["text"]
    [answer] = stub.wait_for(lambda s: responses(s, name))
    assert answer.ok and answer.body["response_type"] == "ephemeral"
    assert answer.body["replace_original"] is False and answer.body["unfurl_links"] is False
    assert "You asked" in block_text(answer) and "Pick:" in block_text(answer)
    [record] = stub.wait_for(lambda s: bot.audit(user=user))
    assert record["surface"] == "slash" and record["channel"] == fields["channel_id"]


def test_slash_help_history_and_explain(bot, stub, kb):
    user = uid("U")
    fields, _ = slash(stub, "help", user)
    status, body, _ = bot.form(fields)
    assert status == 200 and "explain ID" in json.loads(body)["text"]

    fields, name = slash(stub, "lora finetune qwen2.5 7b, tight budget", user)
    bot.form(fields)
    stub.wait_for(lambda s: responses(s, name))
    advice_id = bot.audit(user=user)[0]["id"]

    fields, name = slash(stub, "history", user)
    assert bot.form(fields)[0] == 200
    [history] = stub.wait_for(lambda s: responses(s, name))
    assert advice_id in block_text(history) and "lora finetune qwen2.5 7b" in block_text(history)

    fields, name = slash(stub, f"explain {advice_id}", user)
    bot.form(fields)
    [explain] = stub.wait_for(lambda s: responses(s, name))
    text = block_text(explain)
    assert f"Advice {advice_id}" in text and "Rule trace" in text and "Sources" in text
    links = re.findall(r"<(https?://[^|>]+)\|", text)
    assert links and set(links) <= {s.url for s in kb.sources.values()}

    # someone else's slash advice is private: not found, not even confirmed to exist
    fields, name = slash(stub, f"explain {advice_id}", uid("U"))
    bot.form(fields)
    [other] = stub.wait_for(lambda s: responses(s, name))
    assert "No advice" in other.body["text"] and "Rule trace" not in block_text(other)


def test_button_click_continues_the_conversation(bot, stub):
    channel, user = uid("D"), uid("U")
    bot.event(dm("finetune qwen2.5 7b", channel, user))
    [question] = wait_posts(stub, channel)
    fields, _ = click(stub, question, user, "LoRA")
    status, _, elapsed = bot.form(fields)
    assert status == 200 and elapsed < 3
    answer = wait_posts(stub, channel, 2)[1]
    assert answer.body["blocks"][0]["text"]["text"].startswith("Pick: ")
    record = stub.wait_for(lambda s: [r for r in bot.audit(channel=channel) if r["surface"] == "button"])[0]
    assert record["slots"]["method"] == "lora" and record["slots"]["model"] == "qwen2.5-7b"
    assert record["session"] == bot.audit(channel=channel, surface="dm")[0]["session"]
    [update] = stub.wait_for(lambda s: [c for c in s.of("chat.update", True) if c.body["channel"] == channel])
    assert update.body["ts"] == question.answer["ts"]
    assert not any(b["type"] == "actions" for b in update.body["blocks"]) and "LoRA" in block_text(update)
    # a second click on the same question (double click, or another button) is not answered again
    fields, _ = click(stub, question, user, "QLoRA")
    bot.form(fields)
    stub.settle()
    assert len(posts(stub, channel)) == 2


def test_button_in_a_thread_and_a_strangers_click(bot, stub):
    channel, user, stranger = uid("C"), uid("U"), uid("U")
    root = f"{time.time():.6f}"
    bot.event(mention("finetune qwen2.5 7b", channel, user, ts=root))
    [question] = wait_posts(stub, channel)
    fields, name = click(stub, question, stranger, "QLoRA")
    bot.form(fields)
    [note] = stub.wait_for(lambda s: responses(s, name))
    assert note.body["response_type"] == "ephemeral" and "someone else" in note.body["text"]
    fields, _ = click(stub, question, user, "QLoRA")
    bot.form(fields)
    answer = wait_posts(stub, channel, 2)[1]
    assert answer.body["thread_ts"] == root
    assert bot.audit(channel=channel)[0]["slots"]["method"] == "qlora"


# ----- idempotency and self-events -----------------------------------------------------------------------------
def test_retried_event_is_answered_once(bot, stub):
    channel, user = uid("D"), uid("U")
    body = event_callback(dm("serve llama 3 8b for 4 users", channel, user), uid("Ev"))
    assert bot.events(body)[0] == 200
    assert bot.events(body, headers={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})[0] == 200
    assert bot.events(body, headers={"X-Slack-Retry-Num": "2", "X-Slack-Retry-Reason": "http_timeout"})[0] == 200
    wait_posts(stub, channel)
    stub.settle()
    assert len(posts(stub, channel, ok=None)) == 1
    assert len(bot.audit(channel=channel)) == 1
    bot.wait_log(r"already handled \(retry (1|2), http_timeout\)")


def test_message_and_app_mention_of_one_message_are_answered_once(bot, stub):
    channel, user = uid("C"), uid("U")
    ts = f"{time.time():.6f}"
    text = f"<@{BOT_USER_ID}> serve llama 3 8b for 4 users"
    bot.event({"type": "message", "channel_type": "channel", "channel": channel, "user": user, "text": text,
               "ts": ts, "team": TEAM_ID})
    bot.event(mention("serve llama 3 8b for 4 users", channel, user, ts=ts))
    # and in a DM, where both could arrive too
    dm_channel = uid("D")
    bot.event(dm(text, dm_channel, user, ts=ts))
    bot.event(mention("serve llama 3 8b for 4 users", dm_channel, user, ts=ts))
    wait_posts(stub, channel)
    wait_posts(stub, dm_channel)
    stub.settle()
    assert len(posts(stub, channel, ok=None)) == 1 and len(posts(stub, dm_channel, ok=None)) == 1


def test_bot_messages_are_ignored(bot, stub):
    channel, user = uid("D"), uid("U")
    bot.event(dm("serve llama 3 8b", channel, BOT_USER_ID, bot_id=BOT_ID))                  # itself
    bot.event(dm("serve llama 3 8b", channel, BOT_USER_ID))                                 # itself, no bot_id
    bot.event({**dm("serve llama 3 8b", channel, "", subtype="bot_message", bot_id="B0OTHER"), "user": None})
    bot.event(dm("serve llama 3 8b", channel, "U0WEBHOOK", bot_id="B0OTHER", bot_profile={"id": "B0OTHER"}))
    bot.event(dm("edited", channel, user, subtype="message_changed"))
    bot.event(dm("serve llama 3 8b for 2 users", channel, user))                            # the sentinel
    wait_posts(stub, channel)
    stub.settle()
    assert len(posts(stub, channel, ok=None)) == 1
    assert [r["user"] for r in bot.audit(channel=channel)] == [user]


# ----- request verification ------------------------------------------------------------------------------------
def test_bad_signature_and_stale_timestamp_are_401(bot, stub):
    channel, user = uid("D"), uid("U")
    body = event_callback(dm("serve llama 3 8b", channel, user), uid("Ev"))
    assert bot.events(body, secret="0" * 32)[0] == 401
    assert bot.events(body, ts=int(time.time()) - 600)[0] == 401       # signed correctly, but 10 minutes old
    tampered = body.replace("llama 3 8b", "llama 3 70b")
    headers = sign(body, SECRET)
    assert send(bot.url + "/slack/events", tampered, "application/json", headers)[0] == 401
    assert send(bot.url + "/slack/events", body, "application/json")[0] == 401             # unsigned
    fields, _ = slash(stub, "help", user)
    assert bot.form(fields, secret="f" * 32)[0] == 401
    stub.settle()
    assert posts(stub, channel, ok=None) == [] and bot.audit(channel=channel) == []


# ----- what reaches Slack ---------------------------------------------------------------------------------------
INJECTION = ("<!channel> <!here|here> <!everyone> &lt;!channel&gt; &lt;https://evil.example/x|totally safe&gt; "
             "<https://evil.example/phish|click here> <@U0VICTIM> serve llama 3 8b for 4 users")


def _assert_safe(calls, kb) -> None:
    allowed = {s.url for s in kb.sources.values() if s.url}
    for call in calls:
        text = all_text(call)
        for bad in ("<!channel>", "<!here", "<!everyone>", "<https://evil", "<@U0VICTIM>"):
            assert bad not in text, (bad, call.method)
        for url in re.findall(r"<(https?://[^|>\s]+)[|>]", text):
            assert url in allowed, url
        assert call.body.get("link_names") in (None, False, 0) and call.body.get("parse") != "full"


def test_channel_and_link_injection_is_escaped(bot, stub, kb):
    channel, user = uid("D"), uid("U")
    bot.event(dm(INJECTION, channel, user))
    wait_posts(stub, channel)
    fields, name = slash(stub, "history", user)            # history echoes the question
    bot.form(fields)
    stub.wait_for(lambda s: responses(s, name))
    fields, ask_name = slash(stub, INJECTION, user)        # the slash answer echoes it too
    bot.form(fields)
    stub.wait_for(lambda s: responses(s, ask_name))
    calls = posts(stub, channel, ok=None) + responses(stub, name) + responses(stub, ask_name)
    _assert_safe(calls, kb)
    echoed = block_text(responses(stub, name)[0]) + block_text(responses(stub, ask_name)[0])
    assert "&lt;!channel&gt;" in echoed            # what was typed literally is shown, escaped


def test_40000_character_message_gets_an_answer_slack_accepts(bot, stub, kb):
    channel, user = uid("D"), uid("U")
    text = "serve llama 3 70b for 50 users. " + "<!channel> & more context " * 1600
    assert len(text) > 40_000
    status, _, elapsed = bot.event(dm(text, channel, user))
    assert status == 200 and elapsed < 3
    [post] = wait_posts(stub, channel)
    assert check_message(post.body) is None and len(post.body["text"]) <= 3000
    _assert_safe([post], kb)


def test_long_explain_is_split_or_trimmed_within_limits(bot, stub):
    user = uid("U")
    fields, name = slash(stub, "train a 70b model from scratch on 2T tokens in 30 days", user)
    bot.form(fields)
    stub.wait_for(lambda s: responses(s, name))
    advice_id = bot.audit(user=user)[0]["id"]
    fields, name = slash(stub, f"explain {advice_id}", user)
    bot.form(fields)
    parts = stub.wait_for(lambda s: responses(s, name))
    stub.settle()
    parts = responses(stub, name)
    assert 1 <= len(parts) <= 3 and all(p.ok for p in parts)


# ----- the Web API client ---------------------------------------------------------------------------------------
def test_rate_limited_post_is_retried(bot, stub):
    channel, user = uid("D"), uid("U")
    stub.ratelimit("chat.postMessage", times=1, retry_after=1)
    bot.event(dm("serve llama 3 8b for 4 users", channel, user))
    ok = stub.wait_for(lambda s: posts(s, channel), timeout=15)
    tries = posts(stub, channel, ok=None)
    assert [c.status for c in tries] == [429, 200] and len(ok) == 1
    assert tries[1].at - tries[0].at >= 0.9                 # it waited for Retry-After


def test_failed_post_is_logged_with_its_reason(bot, stub):
    channel, user = uid("D"), uid("U")
    stub.fail("chat.postMessage", "not_in_channel")
    bot.event(dm("serve llama 3 8b for 4 users", channel, user))
    bot.wait_log(rf"chat\.postMessage to {channel} failed: not_in_channel")


def test_button_in_a_chinese_conversation_answers_in_chinese(bot, stub):
    channel, user = uid("D"), uid("U")
    bot.event(dm("微调 qwen2.5 7b", channel, user))
    [question] = wait_posts(stub, channel)
    fields, _ = click(stub, question, user, "QLoRA")
    bot.form(fields)
    answer = wait_posts(stub, channel, 2)[1]
    assert answer.body["blocks"][0]["text"]["text"].startswith("推荐")
    [update] = stub.wait_for(lambda s: [c for c in s.of("chat.update", True) if c.body["channel"] == channel])
    assert "已选择" in block_text(update)


def test_tokens_never_reach_the_log(bot, stub):
    # last in this module, so the log holds the DEBUG output of every request above; and self-sufficient:
    channel, user = uid("D"), uid("U")
    body = event_callback(dm("serve llama 3 8b", channel, user), uid("Ev"))
    assert bot.events(body, secret="0" * 32)[0] == 401           # refused before anything is parsed
    bot.event(dm("serve llama 3 8b", channel, user))
    wait_posts(stub, channel)
    stub.settle()
    text = "\n".join(bot.log)
    assert "chat.postMessage" in text                       # the Web API calls were logged (at DEBUG) ...
    assert BOT_TOKEN not in text and SECRET not in text     # ... but never the token or the signing secret,
    assert "refused: bad signature" in text and "legacy-verification-token" not in text  # nor a body's token
    assert not re.search(r"xox[bp]-\d", text)
