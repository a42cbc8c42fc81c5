"""Render computed advice as Slack Block Kit, within Slack's limits. Wording comes from templates.

Kept apart from bot/render/reply.py (the plain text) so the text and the Slack layout change independently.
"""
from __future__ import annotations

import re
from typing import Any

from bot.render.reply import rentals
from bot.render.templates import Templates

SLACK_SECTION_MAX = 3000
SLACK_HEADER_MAX = 150
SLACK_BLOCKS_MAX = 50
SLACK_CONTEXT_MAX = 10


def escape(text: str) -> str:
    """Slack control characters: user text can never become a mention, a broadcast or a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def blocks(reply: dict[str, Any], t: Templates) -> list[dict[str, Any]]:
    """Block Kit for a reply, within Slack's limits. Links come only from knowledge-base sources.

    An answer is laid out in sections (decision, why, time and cost, checklist, considered, notes, sources);
    other replies (questions, information) are their text, with the follow-up choices as buttons."""
    if reply["status"] == "answer" and reply["recommendations"]:
        out = answer_blocks(reply, t)
    else:
        out = [{"type": "section", "text": {"type": "mrkdwn", "text": chunk, "verbatim": True}}
               for chunk in _chunks(escape(reply["text"]), SLACK_SECTION_MAX - 10)[: SLACK_BLOCKS_MAX - 3]]
        if reply["citations"]:
            out += source_blocks(reply["citations"], t, reply["lang"])
    if reply.get("choices"):
        out.insert(len(out) - _trailing_context(out), _choice_buttons(reply))
    return out[:SLACK_BLOCKS_MAX]


def _trailing_context(out: list[dict[str, Any]]) -> int:
    """How many context blocks (the sources) end the layout: the buttons go before them."""
    n = 0
    for block in reversed(out):
        if block["type"] != "context":
            break
        n += 1
    return n


def _choice_buttons(reply: dict[str, Any]) -> dict[str, Any]:
    labels = reply.get("choice_labels") or {}
    elements = [{"type": "button", "action_id": f"followup_choice_{i}",
                 "text": {"type": "plain_text", "text": _clip(labels.get(choice, choice), 75)},
                 "value": _clip(choice, 2000)} for i, choice in enumerate(reply["choices"][:5])]
    return {"type": "actions", "block_id": "followup", "elements": elements}


STATUS_EMOJI = {"ok": ":white_check_mark:", "warn": ":warning:", "fail": ":x:"}
_COLUMNS = re.compile(r"\s{2,}")


def text_parts(text: str, t: Templates, lang: str) -> dict[str, list[str]]:
    """The answer's text cut at its labelled lines (pick, why, time, considered, checklist, sources...).

    The text's order and wording belong to bot/render/reply.py; the layout only needs to know which line
    starts which part, so it follows any reordering. Lines before the pick (a verdict on the user's GPU, a
    fallback) go to `lead`; indented lines continue the part above them."""
    starts = {key: t.say(f"label.{key}", lang) for key in
              ("pick", "targets", "why", "work", "compute", "batch", "considered", "checklist", "assumed", "notes", "sources")}
    parts: dict[str, list[str]] = {"lead": []}
    current = "lead"
    for line in (text or "").split("\n"):
        bare = line.strip()
        found = next((k for k, label in starts.items()
                      if bare == label or bare.startswith((label + ":", label + "："))), None)
        if found:
            current = found
        elif bare and not line.startswith(" "):
            current = "lead" if "pick" not in parts else "other"
        parts.setdefault(current, []).append(line)
    return parts


def _strip_label(line: str, label: str) -> str:
    bare = line.strip()
    for sep in (":", "："):
        if bare.startswith(label + sep):
            return bare[len(label) + 1:].strip()
    return bare


def answer_blocks(reply: dict[str, Any], t: Templates) -> list[dict[str, Any]]:
    """Header (the decision), then one section per part of the answer, then the sources as context."""
    lang = reply["lang"]
    label = lambda k: t.say(f"label.{k}", lang)  # noqa: E731
    parts = text_parts(reply["text"], t, lang)
    links = _source_links(reply["citations"])
    recs = rentals(reply["recommendations"])
    mine = reply["recommendations"][0] if len(recs) < len(reply["recommendations"]) else None
    top = recs[0] if recs else reply["recommendations"][0]
    # the user's own cards are the question: they head the answer (bot/render/own.py says whether they fit)
    head = f"{label('yours')}: {mine['gpu_count']}x {mine['gpu_name']}" if mine else \
        f"{label('pick')}: {top['flavor']} ({top['gpu_count']}x {top['gpu_name']})"
    out: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": _clip(head, SLACK_HEADER_MAX)}}]

    def section(title: str | None, lines: list[str]) -> None:
        body = "\n".join(x for x in lines if x.strip())
        if body.strip():
            text = (f"*{title}*\n" if title else "") + body
            out.extend({"type": "section", "text": {"type": "mrkdwn", "text": chunk, "verbatim": True}}
                       for chunk in _chunks(text, SLACK_SECTION_MAX - 10))

    pick = [_strip_label(x, label("pick")) for x in parts.get("pick", [])[:1]]
    # the decision, and every stated target met or missed (the critic's `targets`) right under it
    section(None, [escape(x.strip()) for x in parts["lead"]] + [f"*{escape(pick[0])}*" if pick else ""]
            + [escape(x.strip()) for x in parts.get("targets", [])])
    why = parts.get("why", [])
    section(label("why"), [escape(_strip_label(why[0], label("why")))] if why else [])
    cost = [escape(x.strip()) for x in why[1:] + parts.get("pick", [])[1:]]
    cost += [escape(_strip_label(x, label("work"))) for x in parts.get("work", [])]        # samples x tokens x epochs
    cost += [escape(_strip_label(x, label("compute"))) for x in parts.get("compute", [])]
    cost += [escape(_strip_label(x, label("batch"))) for x in parts.get("batch", [])]     # a batch job's rate, hours
    section(t.say("label.time_cost", lang), cost)
    section(label("checklist"), [_check_line(item, t, lang, links) for item in reply["checklist"]])
    others = recs[1:] + reply.get("considered", [])
    section(label("considered"), [_considered_line(line, rec) for line, rec in
                                  zip(parts.get("considered", [])[1:], others)])
    section(None, [escape(x.strip()) for x in parts.get("other", []) + parts.get("notes", []) + parts.get("assumed", [])])
    return out + source_blocks(reply["citations"], t, lang)


def _source_links(citations: list[dict[str, Any]]) -> dict[str, str]:
    """Citation id -> `<url|[n]>` (or plain `[n]` without an https URL), so every reference is a link."""
    out = {}
    for i, c in enumerate(citations):
        url = str(c.get("url") or "")
        out[c["id"]] = f"<{url}|[{i + 1}]>" if _SAFE_URL.match(url) else f"[{i + 1}]"
    return out


def _check_line(item: dict[str, Any], t: Templates, lang: str, links: dict[str, str]) -> str:
    emoji = STATUS_EMOJI.get(item["status"], "")
    name = t.say(f"item.{item['item']}", lang) if f"item.{item['item']}" in t.table else item["item"]
    refs = "".join(links[c] for c in item.get("citations", []) if c in links)
    return f"{emoji} *{escape(name)}* {escape(item['text'])} {refs}".rstrip()


def _considered_line(line: str, rec: dict[str, Any]) -> str:
    """One considered flavor as a compact line: `flavor` GPUs · why it lost (the text's own words for that)."""
    gpus = f"{rec['gpu_count']}x {rec['gpu_name']}"
    why = line.strip()
    for prefix in (rec["flavor"], gpus):
        why = why[len(prefix):].strip() if why.startswith(prefix) else why
    return f"• `{escape(rec['flavor'])}` {escape(gpus)} · {escape(why)}"


_SAFE_URL = re.compile(r"^https://[^\s<>|]+$")
SOURCE_ELEMENT_MAX = 290


def source_blocks(citations: list[dict[str, Any]], t: Templates, lang: str) -> list[dict[str, Any]]:
    """Every cited source as a numbered link, one per context element (ten per block), so all stay reachable.

    An element stays under SOURCE_ELEMENT_MAX characters (bot/surfaces/slack/format.fit clips a context element
    of a full block to 300): the title is shortened, never the URL."""
    sep = "：" if lang == "zh" else ":"
    items = [f"*{t.say('label.sources', lang)}{sep}*"]
    for i, c in enumerate(citations):
        url = str(c.get("url") or "")
        if _SAFE_URL.match(url) and len(url) < SOURCE_ELEMENT_MAX - 40:
            title = escape(_clip(c["title"], SOURCE_ELEMENT_MAX - len(url) - 12))
            items.append(f"<{url}|[{i + 1}] {title}>")
        else:
            items.append(f"[{i + 1}] " + escape(_clip(c["title"], SOURCE_ELEMENT_MAX - 20)))
    return [{"type": "context", "elements": [{"type": "mrkdwn", "text": x} for x in items[i:i + SLACK_CONTEXT_MAX]]}
            for i in range(0, len(items), SLACK_CONTEXT_MAX)] if citations else []


def _chunks(text: str, size: int) -> list[str]:
    text = text or " "
    parts, cur = [], ""
    for line in text.split("\n"):
        while len(line) > size:
            if cur:
                parts.append(cur)
                cur = ""
            parts.append(line[:size])
            line = line[size:]
        if len(cur) + len(line) + 1 > size:
            parts.append(cur)
            cur = line
        else:
            cur = f"{cur}\n{line}" if cur else line
    if cur:
        parts.append(cur)
    return parts or [" "]
