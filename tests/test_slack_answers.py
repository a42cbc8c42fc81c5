"""What people do with an answer on Slack, end to end against the running app and the stand-in Slack API:
the answer's Block Kit layout (sections, checklist emoji, every source a link), refinements, Explain, feedback,
Share in channel, thread follow-ups without a new @mention, the message shortcut and the App Home tab.
Every message and view the bot sends is checked by the stub against Slack's published limits."""
from __future__ import annotations

import json
import re
import time

from slack_stub import BOT_USER_ID, TEAM_ID, check_message, validate_blocks
from test_slack_app import (all_text, block_text, bot, click, dm, mention, posts, responses, slash, stub,  # noqa: F401
                            uid, wait_posts)


def action_payload(stub, *, user: str, channel: str, ts: str, action: dict, blocks: list, text: str = "x",
                   ephemeral: bool = False, response: bool = True) -> tuple[dict, str]:
    """A block_actions payload for one element (a button or a menu choice) of a message."""
    name = uid("act")
    payload = {
        "type": "block_actions", "team": {"id": TEAM_ID, "domain": "test"},
        "user": {"id": user, "username": "someone", "team_id": TEAM_ID}, "api_app_id": "A0GPUADV",
        "token": "legacy", "trigger_id": "1.2.3",
        "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": ephemeral},
        "channel": {"id": channel, "name": "x"},
        "message": {"type": "message", "user": BOT_USER_ID, "ts": ts, "text": text, "blocks": blocks},
        "actions": [{**action, "action_ts": f"{time.time():.6f}"}],
    }
    if response:
        payload["response_url"] = stub.response_url(name)
    return {"payload": json.dumps(payload)}, name


def element(blocks: list, action_id: str) -> tuple[dict, dict]:
    """(actions block, element) of the element with this action_id."""
    for b in blocks:
        for e in (b.get("elements") or []) + ([b["accessory"]] if b.get("accessory") else []):
            if e.get("action_id") == action_id:
                return b, e
    raise AssertionError(f"no element {action_id} in {[b.get('block_id') for b in blocks]}")


def press(stub, post_body: dict, ts: str, user: str, action_id: str, option: str | None = None, **kw):
    block, e = element(post_body["blocks"], action_id)
    act = {"type": e["type"], "action_id": action_id, "block_id": block["block_id"]}
    if option is None:
        act.update(value=e["value"], text=e["text"])
    else:
        chosen = next(o for o in e["options"] if o["value"] == option)
        act["selected_option"] = chosen
    channel = post_body.get("channel") or kw.pop("channel")
    return action_payload(stub, user=user, channel=channel, ts=ts, action=act, blocks=post_body["blocks"],
                          text=post_body.get("text") or "x", **kw)


def ask_dm(bot, stub, text: str) -> tuple[str, str, object]:
    channel, user = uid("D"), uid("U")
    bot.event(dm(text, channel, user))
    [post] = wait_posts(stub, channel)
    return channel, user, post


# ----- the answer's layout ---------------------------------------------------------------------------------
def test_answer_is_laid_out_in_sections_with_every_source_linked(bot, stub, kb):
    channel, user, post = ask_dm(bot, stub, "lora finetune qwen2.5 7b on 1B tokens on aws")
    blocks = post.body["blocks"]
    assert check_message(post.body) is None
    texts = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert blocks[0]["type"] == "header" and blocks[0]["text"]["text"].startswith("Pick: ")
    for title in ("*Why*", "*Time and cost*", "*Checklist*"):
        assert any(t.startswith(title) for t in texts), title
    checklist = next(t for t in texts if t.startswith("*Checklist*"))
    assert ":white_check_mark:" in checklist and "```" not in "".join(texts)   # no monospace wall of text
    assert not any(t.startswith("*Also considered*") for t in texts)           # short first: after the fold
    record = bot.audit(channel=channel)[0]
    # the Details button brings the rest to whoever pressed it: the plans considered, the checklist's reasons
    fields, name = press(stub, post.body, post.answer["ts"], user, "details")
    bot.form(fields)
    [details] = stub.wait_for(lambda s: responses(s, name))
    assert details.body["response_type"] == "ephemeral" and check_message(details.body, need_channel=False) is None
    more = [b["text"]["text"] for b in details.body["blocks"] if b["type"] == "section"]
    for title in ("*Checklist*", "*Also considered*"):
        assert any(t.startswith(title) for t in more), title
    considered = next(t for t in more if t.startswith("*Also considered*")).split("\n")[1:]
    assert [row.split("`")[1] for row in considered] == [r["flavor"] for r in record["reply"]["view"]["considered"]]
    citations = record["reply"]["citations"]
    assert len(citations) > 10                       # more than one context block's worth
    context = " ".join(e["text"] for b in blocks + details.body["blocks"] if b["type"] == "context"
                       for e in b["elements"])
    for i, c in enumerate(citations):
        if (c["url"] or "").startswith("https://"):
            assert f"<{c['url']}|[{i + 1}] " in context, c["id"]
        else:
            assert f"[{i + 1}] " in context
    # the controls: refinements + Explain with the conversation in the block_id, feedback with the advice id
    refine, _ = element(blocks, "refine_cheaper")
    assert refine["block_id"].startswith("refine|dm|") and refine["block_id"].endswith("|" + user)
    feedback, helpful = element(blocks, "feedback_helpful")
    assert feedback["block_id"] == f"feedback|{record['id']}" and helpful["value"] == record["id"]
    assert not any(e.get("action_id") == "share" for b in blocks for e in b.get("elements") or [])  # DMs: no share
    _, clouds = element(blocks, "refine_cloud")
    assert "en:aws" not in [o["value"] for o in clouds["options"]] and "en:gcp" in [o["value"] for o in clouds["options"]]


def test_refinements_continue_the_conversation(bot, stub):
    channel, user, post = ask_dm(bot, stub, "lora finetune qwen2.5 7b on 1B tokens on aws")
    ts = post.answer["ts"]
    status, _, elapsed = bot.form(press(stub, post.body, ts, user, "refine_cloud", option="en:gcp")[0])
    assert status == 200 and elapsed < 3
    second = wait_posts(stub, channel, 2)[1]
    assert "Google Cloud" in second.body["text"]
    bot.form(press(stub, post.body, ts, user, "refine_cheaper")[0])
    wait_posts(stub, channel, 3)
    bot.form(press(stub, post.body, ts, user, "refine_gpu", option="en:a100-80gb")[0])
    wait_posts(stub, channel, 4)
    records = stub.wait_for(lambda s: len(r := bot.audit(channel=channel)) == 4 and r)
    assert [r["surface"] for r in records] == ["button", "button", "button", "dm"]
    assert records[2]["slots"]["provider"] == "gcp" and records[1]["slots"]["budget"] == "low"
    assert records[0]["slots"]["gpu_model"] == "a100-80gb"
    assert len({r["session"] for r in records}) == 1
    # the same refinement pressed twice is answered once; a stranger is told privately to ask their own
    bot.form(press(stub, post.body, ts, user, "refine_cheaper")[0])
    fields, name = press(stub, post.body, ts, uid("U"), "refine_cheaper")
    bot.form(fields)
    [note] = stub.wait_for(lambda s: responses(s, name))
    assert "someone else" in note.body["text"]
    stub.settle()
    assert len(posts(stub, channel)) == 4


def test_faster_asks_for_half_the_time(bot, stub):
    channel, _user, post = ask_dm(bot, stub, "pretrain llama 3 8b on 100B tokens on 8 gpus")
    _, faster = element(post.body["blocks"], "refine_faster")
    days = bot.audit(channel=channel)[0]["reply"]["compute"]["days"]
    assert faster["value"] == f"finish within {max(1, int(days // 2))} days"


def test_explain_and_feedback_buttons(bot, stub):
    channel, user, post = ask_dm(bot, stub, "serve llama 3 8b for 20 users")
    advice = bot.audit(channel=channel)[0]["id"]
    fields, name = press(stub, post.body, post.answer["ts"], user, "explain")
    bot.form(fields)
    [explain] = stub.wait_for(lambda s: responses(s, name))
    assert explain.body["response_type"] == "ephemeral" and "Rule trace" in block_text(explain)
    fields, name = press(stub, post.body, post.answer["ts"], user, "feedback_not_helpful")
    bot.form(fields)
    thanks, shown = stub.wait_for(lambda s: len(r := responses(s, name)) == 2 and r)
    assert advice in thanks.body["text"] and thanks.body["response_type"] == "ephemeral"
    # the answer itself shows the vote: the message is replaced with the counts on its feedback buttons
    assert shown.body["replace_original"] and check_message(shown.body, need_channel=False) is None
    _, voted = element(shown.body["blocks"], "feedback_not_helpful")
    assert voted["text"]["text"].endswith(" · 1"), voted
    # no helpful vote yet: that button reads as it did
    assert element(shown.body["blocks"], "feedback_helpful")[1]["text"] == \
        element(post.body["blocks"], "feedback_helpful")[1]["text"]
    assert len(shown.body["blocks"]) == len(post.body["blocks"])
    bot.form(press(stub, post.body, post.answer["ts"], user, "feedback_helpful")[0])   # a change of mind
    bot.form(press(stub, post.body, post.answer["ts"], uid("U"), "feedback_helpful")[0])
    from bot.store.slack_state import SlackState
    votes = stub.wait_for(lambda s: len(v := [f for f in SlackState(bot.db).feedback() if f["advice_id"] == advice])
                          == 2 and all(f["helpful"] for f in v) and v)
    assert {f["team"] for f in votes} == {TEAM_ID}
    import urllib.request
    with urllib.request.urlopen(bot.url + "/metrics", timeout=5) as resp:       # every click counted
        text = resp.read().decode()
    assert re.search(r'^gpu_advisor_feedback_total\{vote="helpful"\} [2-9]', text, re.M)
    assert re.search(r'^gpu_advisor_feedback_total\{vote="not_helpful"\} [1-9]', text, re.M)


# ----- share, shortcut ---------------------------------------------------------------------------------------
def test_private_slash_answer_is_shared_in_the_channel(bot, stub):
    user, channel = uid("U"), uid("C")
    fields, name = slash(stub, "lora finetune qwen2.5 7b", user, channel)
    bot.form(fields)
    [answer] = stub.wait_for(lambda s: responses(s, name))
    body = {**answer.body, "channel": channel}
    _, share = element(body["blocks"], "share")
    record = bot.audit(user=user)[0]
    assert share["value"] == record["id"]
    # only the asker can share it
    fields, other = press(stub, body, "1.1", uid("U"), "share", ephemeral=True)
    bot.form(fields)
    [refused] = stub.wait_for(lambda s: responses(s, other))
    assert refused.body["response_type"] == "ephemeral" and "no longer valid" in refused.body["text"]
    fields, name = press(stub, body, "1.1", user, "share", ephemeral=True)
    bot.form(fields)
    shared, note = stub.wait_for(lambda s: len(r := responses(s, name)) == 2 and r)
    assert shared.ok and shared.body["response_type"] == "in_channel"
    assert f"Shared by <@{user}>" in block_text(shared) and "Pick:" in block_text(shared)
    assert not any(e.get("action_id") == "share" for b in shared.body["blocks"] for e in b.get("elements") or [])
    assert note.body["replace_original"] is True and note.body["response_type"] == "ephemeral"


def test_message_shortcut_answers_the_message_privately(bot, stub):
    user, channel = uid("U"), uid("C")
    name = uid("sc")
    payload = {"type": "message_action", "callback_id": "ask_about_message", "trigger_id": "1.2.3",
               "team": {"id": TEAM_ID, "domain": "test"}, "user": {"id": user, "name": "someone"},
               "channel": {"id": channel, "name": "ml"}, "message_ts": "1700000000.000200",
               "message": {"type": "message", "user": uid("U"), "ts": "1700000000.000200",
                           "text": "we need to serve <https://x.test|llama 3 70b> for 50 users, what should we rent?"},
               "response_url": stub.response_url(name), "token": "legacy"}
    status, _, elapsed = bot.form({"payload": json.dumps(payload)})
    assert status == 200 and elapsed < 3
    [answer] = stub.wait_for(lambda s: responses(s, name))
    assert answer.ok and answer.body["response_type"] == "ephemeral" and "Pick:" in block_text(answer)
    assert element(answer.body["blocks"], "share")
    [record] = bot.audit(user=user)
    assert record["surface"] == "shortcut" and "llama 3 70b" in record["question"] and "x.test" not in record["question"]


# ----- threads -------------------------------------------------------------------------------------------
def thread_message(text: str, channel: str, user: str, thread: str) -> dict:
    return {"type": "message", "channel_type": "channel", "channel": channel, "user": user, "text": text,
            "ts": f"{time.time():.6f}", "thread_ts": thread, "team": TEAM_ID}


def test_a_thread_continues_without_a_new_mention(bot, stub):
    channel, user = uid("C"), uid("U")
    root = f"{time.time():.6f}"
    bot.event(mention("finetune qwen2.5 7b", channel, user, ts=root))
    wait_posts(stub, channel)
    bot.event(thread_message("qlora please", channel, user, root))
    second = wait_posts(stub, channel, 2)[1]
    assert second.body["thread_ts"] == root and second.body["blocks"][0]["type"] == "header"
    assert bot.audit(channel=channel)[0]["slots"]["method"] == "qlora"
    # people talking to each other in the thread, and threads the bot is not in, are left alone
    bot.event(thread_message(f"<@{uid('U')}> what do you think?", channel, user, root))
    bot.event(thread_message("serve llama 3 8b", channel, user, f"{float(root) - 100:.6f}"))
    bot.event(thread_message("and for 10 users?", channel, user, root))        # the sentinel
    wait_posts(stub, channel, 3)
    stub.settle()
    assert len(posts(stub, channel)) == 3


# ----- App Home -----------------------------------------------------------------------------------------
def home_event(user: str) -> dict:
    return {"type": "app_home_opened", "user": user, "channel": uid("D"), "tab": "home",
            "event_ts": f"{time.time():.6f}"}


def views_of(stub, user: str) -> list:
    return [c for c in stub.of("views.publish", True) if c.body.get("user_id") == user]


def test_app_home_lists_recent_advice_and_sets_the_default_cloud(bot, stub):
    channel, user = uid("D"), uid("U")
    bot.event(home_event(user))
    [empty] = stub.wait_for(lambda s: views_of(s, user))
    assert "no advice yet" in all_text(empty)
    bot.event(dm("lora finetune qwen2.5 7b", channel, user))
    [first] = wait_posts(stub, channel)
    assert "Huawei Cloud" in first.body["text"]                 # the server's default cloud
    bot.event(home_event(user))
    view = stub.wait_for(lambda s: len(v := views_of(s, user)) == 2 and v)[1].body["view"]
    assert validate_blocks(view["blocks"], 100) is None
    advice = bot.audit(channel=channel)[0]["id"]
    assert advice in json.dumps(view) and "lora finetune qwen2.5 7b" in json.dumps(view)
    select = next(b["accessory"] for b in view["blocks"] if b.get("block_id") == "home_settings")
    assert select["initial_option"]["value"] == "-"
    gcp = next(o for o in select["options"] if o["value"] == "gcp")
    fields, _ = action_payload(stub, user=user, channel="", ts="", response=False, blocks=view["blocks"],
                               action={"type": "static_select", "action_id": "home_provider",
                                       "block_id": "home_settings", "selected_option": gcp})
    payload = json.loads(fields["payload"])
    payload.update(container={"type": "view", "view_id": "V0HOME"}, view={"id": "V0HOME", "type": "home"})
    payload.pop("channel"), payload.pop("message")
    assert bot.form({"payload": json.dumps(payload)})[0] == 200
    view = stub.wait_for(lambda s: len(v := views_of(s, user)) == 3 and v)[2].body["view"]
    select = next(b["accessory"] for b in view["blocks"] if b.get("block_id") == "home_settings")
    assert select["initial_option"]["value"] == "gcp"
    bot.event(dm("reset", channel, user))
    bot.event(dm("lora finetune qwen2.5 7b", channel, uid("U")))   # another user keeps the server default
    other = [p for p in wait_posts(stub, channel, 3) if "Pick" in p.body["text"]]
    bot.event(dm("serve llama 3 8b for 10 users", uid("D"), user))
    mine = stub.wait_for(lambda s: [p for p in s.of("chat.postMessage", True)
                                    if p.body["channel"] != channel and "Google Cloud" in p.body["text"]])
    assert mine and all("Google Cloud" not in p.body["text"] for p in other[1:])
    # Explain from the Home tab goes to the app's DM with the user (Home actions carry no response_url)
    _, explain = element(view["blocks"], f"explain_{advice}")
    fields, _ = action_payload(stub, user=user, channel="", ts="", response=False, blocks=view["blocks"],
                               action={"type": "button", "action_id": explain["action_id"], "value": advice,
                                       "block_id": "x"})
    bot.form(fields)
    stub.wait_for(lambda s: [p for p in s.of("chat.postMessage", True)
                             if p.body["channel"] == user and "Rule trace" in block_text(p)])
    assert re.search(r"A\d{6}", advice)


def test_display_currency_from_the_home_tab(bot, stub, kb):
    channel, user = uid("D"), uid("U")
    bot.event(home_event(user))
    view = stub.wait_for(lambda s: views_of(s, user))[0].body["view"]
    select = next(b["accessory"] for b in view["blocks"] if b.get("block_id") == "home_currency")
    assert select["initial_option"]["value"] == "-" and {"EUR", "CNY"} <= {o["value"] for o in select["options"]}
    eur = next(o for o in select["options"] if o["value"] == "EUR")
    fields, _ = action_payload(stub, user=user, channel="", ts="", response=False, blocks=view["blocks"],
                               action={"type": "static_select", "action_id": "home_currency",
                                       "block_id": "home_currency", "selected_option": eur})
    bot.form(fields)
    view = stub.wait_for(lambda s: len(v := views_of(s, user)) == 2 and v)[1].body["view"]
    assert next(b["accessory"] for b in view["blocks"]
                if b.get("block_id") == "home_currency")["initial_option"]["value"] == "EUR"
    bot.event(dm("lora finetune qwen2.5 7b on aws", channel, user))
    [post] = wait_posts(stub, channel)
    top = bot.audit(channel=channel)[0]["reply"]["recommendations"][0]
    line = next(e["text"] for b in post.body["blocks"] if b["type"] == "context" for e in b["elements"]
                if "your currency" in e["text"])
    assert f"≈ {kb.convert(top['price_per_hour'], top['currency'], 'EUR'):,.2f} EUR/h" in line
    [rate] = kb.rates_used(top["currency"], "EUR")
    assert f"ECB rate of {rate.date.isoformat()}" in line and "<https://" in line
    blocks = post.body["blocks"]
    assert [b["type"] for b in blocks[:3]] == ["header", "section", "context"]     # right under the decision
