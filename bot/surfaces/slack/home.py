"""The App Home tab: the user's recent advice, their default cloud and display currency, the workspace's settings
(bot/surfaces/slack/team_home.py: editable by its admins), and a short how-to.

Published with views.publish on app_home_opened and after each settings change. Wording in the language of the
user's latest advice (English when there is none). Only the user's own advice in this workspace is listed, as
`/gpu-advisor history` does; every stored string a person typed is escaped.
"""
from __future__ import annotations

from typing import Any

from bot.surfaces.slack import text as T
from bot.surfaces.slack.format import clip, fit
from bot.surfaces.slack.team_home import team_section
from bot.surfaces.slack.views import _one_line, pick

RECENT = 5
HOME_BLOCKS_MAX = 100                  # a Home tab holds up to 100 blocks (slack_sdk View.blocks_max_length)
SERVER_DEFAULT = "-"


def _recent(audit: Any, user: str, team: str) -> list[dict[str, Any]]:
    rows = audit.list(limit=RECENT * 4, user=user)
    return [r for r in rows if team and (r.get("team") or "") == team and r.get("surface") != "cli"][:RECENT]


def _provider_select(kb: Any, chosen: str | None, lang: str, server_default: str, default_key: str = "home_server_default"
                     ) -> dict[str, Any]:
    default_name = kb.providers[server_default].name if server_default in kb.providers else server_default
    options = [{"text": {"type": "plain_text", "text": clip(T.say(default_key, lang, name=default_name), 75)},
                "value": SERVER_DEFAULT}]
    options += [{"text": {"type": "plain_text", "text": clip(p.name, 75)}, "value": pid}
                for pid, p in kb.providers.items()]
    select = {"type": "static_select", "action_id": "home_provider", "options": options,
              "placeholder": {"type": "plain_text", "text": T.say("home_cloud_pick", lang)}}
    select["initial_option"] = next((o for o in options if o["value"] == (chosen or SERVER_DEFAULT)), options[0])
    return select


def _currency_select(kb: Any, chosen: str | None, lang: str, workspace: str | None = None) -> dict[str, Any]:
    codes = sorted({r.base for r in kb.rates.values()} | {r.currency for r in kb.rates.values()})
    unset = T.say("home_team_default", lang, name=workspace) if workspace else T.say("home_as_published", lang)
    options = [{"text": {"type": "plain_text", "text": unset}, "value": SERVER_DEFAULT}]
    options += [{"text": {"type": "plain_text", "text": code}, "value": code} for code in codes]
    return {"type": "static_select", "action_id": "home_currency", "options": options,
            "placeholder": {"type": "plain_text", "text": T.say("home_currency_pick", lang)},
            "initial_option": next((o for o in options if o["value"] == (chosen or SERVER_DEFAULT)), options[0])}


def home_lang(service: Any, user: str, team: str) -> str:
    """The language of the user's latest advice in this workspace (English when there is none)."""
    rows = _recent(service.audit, user, team)
    return ((rows[0].get("reply") or {}).get("lang") if rows else None) or "en"


def home_view(service: Any, state: Any, *, user: str, team: str, cmd: str, admin: bool = False) -> dict[str, Any]:
    """The Home tab's view object for `user` (`admin`: may edit the workspace's settings)."""
    rows = _recent(service.audit, user, team)
    lang = ((rows[0].get("reply") or {}).get("lang") if rows else None) or "en"
    kb = service.core.kb
    prefs = state.prefs(team, user)
    workspace = state.team_settings(team)
    server = service.core.advisor.default_provider
    default_cloud, default_key = (workspace["provider"], "home_team_default") if workspace.get("provider") \
        else (server, "home_server_default")
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": T.say("home_title", lang)}},
        {"type": "section", "text": {"type": "mrkdwn", "text": T.say("help", lang, cmd=cmd)}},
        {"type": "divider"},
        {"type": "section", "block_id": "home_settings", "text": {"type": "mrkdwn", "text": T.say("home_cloud", lang)},
         "accessory": _provider_select(kb, prefs.get("provider"), lang, default_cloud, default_key)},
        {"type": "section", "block_id": "home_currency", "text": {"type": "mrkdwn", "text": T.say("home_currency", lang)},
         "accessory": _currency_select(kb, prefs.get("currency"), lang, workspace.get("currency"))},
        *team_section(kb, workspace, server, admin=admin, lang=lang),
        {"type": "divider"},
        {"type": "section", "text": {"type": "mrkdwn", "text": T.say("home_recent", lang)}},
    ]
    if not rows:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": T.say("history_empty", lang,
                                                                                        cmd=cmd)}]})
    for r in rows:
        top = pick(r)
        line = f"`{r['id']}` {r['ts'][:16].replace('T', ' ')} · {_one_line(r.get('question'), 150)}"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "verbatim": True,
                                                   "text": line + (f"\n→ {top}" if top else "")},
                       "accessory": {"type": "button", "action_id": f"explain_{r['id']}", "value": r["id"],
                                     "text": {"type": "plain_text", "text": T.say("btn_explain", lang)}}})
    return {"type": "home", "blocks": fit(blocks)[:HOME_BLOCKS_MAX]}
