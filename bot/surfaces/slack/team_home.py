"""Workspace settings on the App Home: the team's default cloud, display currency and audit retention.

Everyone sees the current values on their Home tab; the workspace's admins (whoever installed the app in it, in
OAuth mode, and the Slack user ids of ADVISOR_SLACK_ADMINS) also get an *Edit* button, which opens a modal with
three inputs (block_actions `team_settings_edit` -> views.open; view_submission `team_settings`). The submission
is checked again on the server: the submitter must be an admin of the team the modal was opened for, the cloud a
provider and the currency a code of the knowledge base, the retention a whole number of days (1 to 3650) or empty.
Stored in `team_settings` (bot/store/team_settings.py); how answers use them: bot/surfaces/slack/app.py `_defaults`.
"""
from __future__ import annotations

from typing import Any

from bot.store.team_settings import MAX_RETENTION_DAYS
from bot.surfaces.slack import text as T
from bot.surfaces.slack.format import clip

EDIT_ACTION = "team_settings_edit"
MODAL_ID = "team_settings"
UNSET = "-"
BLOCKS = ("ts_provider", "ts_currency", "ts_retention")


def currencies(kb: Any) -> list[str]:
    """The codes answers can be converted to (the knowledge base's dated exchange rates)."""
    return sorted({r.base for r in kb.rates.values()} | {r.currency for r in kb.rates.values()})


def _describe(kb: Any, settings: dict[str, Any], server_provider: str, lang: str) -> str:
    provider = settings.get("provider") or server_provider
    cloud = kb.providers[provider].name if provider in kb.providers else provider
    if not settings.get("provider"):
        cloud = T.say("home_server_default", lang, name=cloud)
    currency = settings.get("currency") or T.say("home_as_published", lang)
    days = settings.get("retention_days")
    retention = T.say("team_days", lang, n=days) if days else T.say("team_forever", lang)
    return T.say("team_values", lang, cloud=cloud, currency=currency, retention=retention)


def team_section(kb: Any, settings: dict[str, Any], server_provider: str, *, admin: bool, lang: str
                 ) -> list[dict[str, Any]]:
    """The Home tab's blocks for the workspace settings: the values, and Edit for admins."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "block_id": "team_settings",
         "text": {"type": "mrkdwn", "text": T.say("team_head", lang) + "\n" + _describe(kb, settings, server_provider,
                                                                                          lang)}}]
    notes = []
    if settings.get("updated_by"):
        notes.append(T.say("team_by", lang, user=settings["updated_by"], when=str(settings.get("updated"))[:10]))
    if admin:
        blocks.append({"type": "actions", "block_id": "team_settings_actions", "elements": [
            {"type": "button", "action_id": EDIT_ACTION, "value": "edit",
             "text": {"type": "plain_text", "text": T.say("team_edit", lang)}}]})
    else:
        notes.append(T.say("team_admins_only", lang))
    if notes:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(notes)}]})
    return blocks


def _option(text: str, value: str) -> dict[str, Any]:
    return {"text": {"type": "plain_text", "text": clip(text, 75)}, "value": value}


def _select(block_id: str, label: str, options: list[dict[str, Any]], chosen: str | None) -> dict[str, Any]:
    element = {"type": "static_select", "action_id": "value", "options": options}
    initial = next((o for o in options if o["value"] == (chosen or UNSET)), None)
    if initial:
        element["initial_option"] = initial
    return {"type": "input", "block_id": block_id, "optional": True, "element": element,
            "label": {"type": "plain_text", "text": label}}


def settings_modal(kb: Any, team: str, settings: dict[str, Any], server_provider: str, lang: str) -> dict[str, Any]:
    """The modal of the Edit button; private_metadata carries the team it edits (checked again on submission)."""
    server_name = kb.providers[server_provider].name if server_provider in kb.providers else server_provider
    clouds = [_option(T.say("home_server_default", lang, name=server_name), UNSET)] + \
        [_option(p.name, pid) for pid, p in kb.providers.items()]
    codes = [_option(T.say("home_as_published", lang), UNSET)] + [_option(c, c) for c in currencies(kb)]
    days = {"type": "number_input", "action_id": "value", "is_decimal_allowed": False, "min_value": "1",
            "max_value": str(MAX_RETENTION_DAYS)}
    if settings.get("retention_days"):
        days["initial_value"] = str(settings["retention_days"])
    return {"type": "modal", "callback_id": MODAL_ID, "private_metadata": team,
            "title": {"type": "plain_text", "text": T.say("team_modal_title", lang)},
            "submit": {"type": "plain_text", "text": T.say("team_save", lang)},
            "close": {"type": "plain_text", "text": T.say("team_cancel", lang)},
            "blocks": [
                _select(BLOCKS[0], T.say("team_cloud_label", lang), clouds[:100], settings.get("provider")),
                _select(BLOCKS[1], T.say("team_currency_label", lang), codes[:100], settings.get("currency")),
                {"type": "input", "block_id": BLOCKS[2], "optional": True, "element": days,
                 "label": {"type": "plain_text", "text": T.say("team_retention_label", lang)},
                 "hint": {"type": "plain_text", "text": T.say("team_retention_hint", lang)}}]}


def read_submission(view: dict[str, Any], kb: Any, lang: str = "en") -> tuple[dict[str, Any], dict[str, str]]:
    """(provider, currency, retention_days) from a view_submission, and Slack's per-block errors (empty: valid)."""
    values = ((view.get("state") or {}).get("values")) or {}

    def picked(block: str) -> str | None:
        element = (values.get(block) or {}).get("value") or {}
        chosen = ((element.get("selected_option") or {}).get("value")) if isinstance(element, dict) else None
        return None if chosen in (None, "", UNSET) else str(chosen)

    provider, currency = picked(BLOCKS[0]), picked(BLOCKS[1])
    raw = str((((values.get(BLOCKS[2]) or {}).get("value")) or {}).get("value") or "").strip()
    errors: dict[str, str] = {}
    if provider is not None and provider not in kb.providers:
        errors[BLOCKS[0]] = T.say("home_cloud_pick", lang)
    if currency is not None and currency not in currencies(kb):
        errors[BLOCKS[1]] = T.say("home_currency_pick", lang)
    days = int(raw) if raw.isdigit() else None
    if raw and (days is None or not 1 <= days <= MAX_RETENTION_DAYS):
        errors[BLOCKS[2]] = T.say("team_retention_bad", lang, max=MAX_RETENTION_DAYS)
    return {"provider": provider, "currency": currency, "retention_days": days}, errors
