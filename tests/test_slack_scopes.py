"""The Slack app asks for exactly the bot scopes its code needs (issue 33 item 6: im:read and im:write were asked for
and never used): the scopes of every Web API method the code calls, of every event the manifest subscribes to, and
`commands` for the slash command and the shortcut. A new API call without its scope in the manifest fails here, and
so does a scope nothing uses. Scopes per method and event: Slack's reference (docs.slack.dev/reference/methods/...,
/reference/events/...), 'Required scopes' for bot tokens."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

import pytest

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "deploy" / "slack-app-manifest.yml"
MENTION_ONLY = REPO / "deploy" / "slack-app-manifest-mention-only.yml"
HISTORY = "history of the conversation types the bot gets messages from"

# method -> the bot scopes it needs where this app calls it. The history methods (Outbound.find: was a part of a
# resumed job posted already?) need the history scope of the conversation's type: the types the app gets message
# events for. Where it lacks one (mention-only, in a channel) the check says "cannot tell" and posts the part.
METHOD_SCOPES: dict[str, set[str]] = {
    "auth.test": set(),
    "chat.postMessage": {"chat:write"},
    "chat.update": {"chat:write"},
    "conversations.history": {HISTORY},
    "conversations.replies": {HISTORY},
    "views.open": set(),          # a trigger_id is the permission
    "views.publish": set(),       # the Home tab
    "oauth.v2.access": set(),     # the install flow (client id and secret)
}
EVENT_SCOPES: dict[str, set[str]] = {
    "app_home_opened": set(),
    "app_mention": {"app_mentions:read"},
    "message.channels": {"channels:history"},
    "message.groups": {"groups:history"},
    "message.im": {"im:history"},
    "message.mpim": {"mpim:history"},
    "app_uninstalled": set(),
    "tokens_revoked": set(),
}
FAMILIES = ("admin", "apps", "assistant", "auth", "bookmarks", "bots", "calls", "chat", "conversations", "dnd", "emoji",
            "files", "im", "mpim", "oauth", "pins", "reactions", "reminders", "search", "stars", "usergroups", "users",
            "views", "workflows")
CALL = re.compile(rf"\.((?:{'|'.join(FAMILIES)}))_([A-Za-z0-9]+(?:_[A-Za-z0-9]+)*)\(")


def methods_called() -> dict[str, list[str]]:
    """Every slack_sdk WebClient method called in bot/ (`client.chat_postMessage(` -> chat.postMessage), and
    where; plus `oauth.v2.access`, which Bolt's OAuth flow calls for the install (bot/surfaces/slack/oauth.py)."""
    found: dict[str, list[str]] = {}
    for path in sorted((REPO / "bot").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for m in CALL.finditer(text):
            method = f"{m.group(1)}.{m.group(2).replace('_', '.')}"      # slack_sdk: chat_postMessage, oauth_v2_access
            found.setdefault(method, []).append(str(path.relative_to(REPO)))
        if "OAuthSettings(" in text:
            found.setdefault("oauth.v2.access", []).append(str(path.relative_to(REPO)))
    return found


def manifest(path: Path = MANIFEST) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_the_scan_finds_the_calls_it_should():
    called = methods_called()
    assert {"chat.postMessage", "chat.update", "views.publish", "conversations.replies", "auth.test"} <= set(called)
    assert "bot/surfaces/slack/outbound.py" in called["chat.postMessage"]


@pytest.mark.parametrize("path", [MANIFEST, MENTION_ONLY], ids=lambda p: p.name)
def test_manifest_scopes_are_exactly_what_the_code_uses(path):
    m = manifest(path)
    called = methods_called()
    unknown = sorted(set(called) - set(METHOD_SCOPES))
    assert not unknown, f"add the bot scopes of {unknown} (called in {[called[u] for u in unknown]}) to METHOD_SCOPES"
    events = m["settings"]["event_subscriptions"]["bot_events"]
    assert not set(events) - set(EVENT_SCOPES), "add the new event's scope to EVENT_SCOPES"
    history = set().union(*(EVENT_SCOPES[e] for e in events if e.startswith("message.")))
    need = set().union(*(history if s == HISTORY else {s} for x in called for s in METHOD_SCOPES[x]),
                       *(EVENT_SCOPES[e] for e in events))
    if m["features"].get("slash_commands") or m["features"].get("shortcuts"):
        need.add("commands")
    have = set(m["oauth_config"]["scopes"]["bot"])
    assert have - need == set(), f"scopes asked for and never used: {sorted(have - need)}"
    assert need - have == set(), f"scopes used and not asked for: {sorted(need - have)}"
    assert not {"im:read", "im:write"} & have
    assert "user" not in m["oauth_config"]["scopes"]                 # no user token at all


def test_the_oauth_install_asks_for_the_same_scopes():
    from bot.surfaces.slack.oauth import BOT_SCOPES
    assert sorted(BOT_SCOPES) == sorted(manifest()["oauth_config"]["scopes"]["bot"])


def test_mention_only_reads_no_channel_and_is_otherwise_the_same_app():
    full, mention = manifest(), manifest(MENTION_ONLY)
    assert not {"channels:history", "groups:history", "mpim:history"} & set(mention["oauth_config"]["scopes"]["bot"])
    assert set(mention["settings"]["event_subscriptions"]["bot_events"]) == {"app_home_opened", "app_mention",
                                                                            "message.im"}
    assert mention["features"] == full["features"]
    assert {k: v for k, v in mention["settings"].items() if k != "event_subscriptions"} == \
        {k: v for k, v in full["settings"].items() if k != "event_subscriptions"}


@pytest.mark.parametrize("path", [MANIFEST, MENTION_ONLY], ids=lambda p: p.name)
def test_subscribed_events_are_handled(path):
    """Each bot event of the manifest has a listener (message.* all arrive as the `message` event)."""
    code = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "bot" / "surfaces" / "slack").glob("*.py"))
    for event in manifest(path)["settings"]["event_subscriptions"]["bot_events"]:
        name = event.split(".")[0]
        assert f'app.event("{name}")' in code, event
