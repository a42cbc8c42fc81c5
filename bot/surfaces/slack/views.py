"""`/gpu-advisor history` and `/gpu-advisor explain ID`: audit records as Slack messages.

Who sees what (decided here, documented in docs/slack.md): `history` lists the asking user's own advice in
this workspace. `explain ID` shows a record when it belongs to the asking user, or when it was given in a
channel thread (@mention) of the same workspace, which everyone in that channel could already read; advice
given to someone else in a DM or as a private slash reply answers "no advice ID that you can see", the same
as an id that does not exist. Records from the CLI (no workspace) are never shown on Slack.
Every stored string a person typed is escaped; links come only from the record's knowledge-base citations.
"""
from __future__ import annotations

import re
from typing import Any

from bot.records.models import AnswerView
from bot.surfaces.slack import text as T
from bot.surfaces.slack.blocks import details_blocks
from bot.surfaces.slack.format import Message, clip, escape, fit, split, with_fallbacks

HISTORY_LIMIT = 10
_ID = re.compile(r"^[A-Za-z0-9]{1,20}$")
_SAFE_URL = re.compile(r"^https://[^\s<>|]+$")


def pick(record: dict[str, Any]) -> str:
    """ "p3.2xlarge.8 (1x NVIDIA A100 80GB)", escaped, or "" when the record recommended nothing."""
    recs = record.get("recommendations") or []
    if not recs:
        return ""
    top = recs[0]
    return f"{escape(str(top.get('flavor')))} ({top.get('gpu_count')}x {escape(str(top.get('gpu_name') or top.get('gpu')))})"


def _one_line(text: str | None, limit: int) -> str:
    return escape(clip(" ".join((text or "").split()), limit))


def history_messages(audit: Any, user: str, team: str, lang: str, cmd: str) -> list[Message]:
    rows = [r for r in audit.list(limit=HISTORY_LIMIT, user=user) if team and (r.get("team") or "") == team]
    if not rows:
        return [(T.say("history_empty", lang, cmd=cmd), None)]
    lines = []
    for r in rows:
        top = pick(r)
        lines.append(f"`{r['id']}` {r['ts'][:16].replace('T', ' ')} · {r['surface']} · {r['status']} · "
                     f"{_one_line(r.get('question'), 120)}" + (f" → {top}" if top else ""))
    head = T.say("history_head", lang, n=len(rows))
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": head}},
              {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines), "verbatim": True}},
              {"type": "context", "elements": [{"type": "mrkdwn", "text": T.say("history_hint", lang, cmd=cmd)}]}]
    return with_fallbacks(split(fit(blocks), "…"), head)


def visible(record: dict[str, Any] | None, user: str, team: str) -> bool:
    """Your own advice, and advice given in a channel thread of your workspace (see the module docstring)."""
    if not record or not team or (record.get("team") or "") != team:
        return False
    return record.get("user") == user or record.get("surface") == "mention"


def explain_messages(audit: Any, advice_id: str, user: str, team: str, lang: str, cmd: str) -> list[Message]:
    if not advice_id:
        return [(T.say("explain_usage", lang, cmd=cmd), None)]
    record = audit.get(advice_id) if _ID.match(advice_id) else None
    if not visible(record, user, team):
        return [(T.say("explain_missing", lang, id=escape(clip(advice_id, 40)), cmd=cmd), None)]
    reply = record.get("reply") or {}
    trace = sorted(record.get("rule_trace") or [], key=lambda r: not r.get("fired"))
    rules = "\n".join(
        f"{'✓' if r.get('fired') else '·'} *{escape(str(r.get('rule')))}* "
        f"({T.say('fired' if r.get('fired') else 'not_fired', lang)}): {escape(str(r.get('because') or ''))}"
        for r in trace) or T.say("explain_no_rules", lang)
    sources = []
    for i, c in enumerate(reply.get("citations") or []):
        title, url = escape(clip(str(c.get("title") or c.get("id")), 200)), str(c.get("url") or "")
        sources.append(f"[{i + 1}] <{url}|{title}>" if _SAFE_URL.match(url) else f"[{i + 1}] {title}")
    question = " ".join((record.get("question") or "").split())
    head = T.say("explain_head", lang, id=record["id"])
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": head}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": T.say(
            "explain_meta", lang, ts=record["ts"].replace("T", " "), surface=record["surface"],
            status=record["status"], kb=escape(str(record.get("kb_version") or "-")))}]},
        {"type": "section", "text": {"type": "mrkdwn", "verbatim": True,
                                     "text": T.say("explain_question", lang, question=_one_line(question, 500))}},
    ]
    if pick(record):
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": T.say("explain_pick", lang, pick=pick(record))}})
    blocks.append({"type": "section", "text": {"type": "mrkdwn", "verbatim": True,
                                               "text": T.say("explain_rules", lang) + "\n" + rules}})
    if sources:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "verbatim": True,
                                                   "text": T.say("explain_sources", lang) + "\n" + "\n".join(sources)}})
    note = T.say("trimmed", lang, cmd=cmd, id=record["id"])
    return with_fallbacks(split(fit(blocks), note), f"{head}: {clip(question, 500)}")


def details_messages(audit: Any, advice_id: str, user: str, team: str, t: Any, cmd: str) -> list[Message]:
    """The details of an answer (its Details button): built from the recorded answer's view, as the short form was."""
    record = audit.get(advice_id) if _ID.match(advice_id or "") else None
    reply = (record or {}).get("reply") or {}
    lang = reply.get("lang") or "en"
    if not visible(record, user, team) or not reply.get("view"):
        return [(T.say("details_missing", lang, id=escape(clip(advice_id or "", 40)), cmd=cmd), None)]
    blocks = [b.to_dict() for b in details_blocks(AnswerView.model_validate(reply["view"]), t, lang)]
    note = T.say("trimmed", lang, cmd=cmd, id=record["id"])
    return with_fallbacks(split(fit(blocks), note), reply.get("details") or record["id"])
