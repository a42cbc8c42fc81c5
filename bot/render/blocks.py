"""Render computed advice as Slack Block Kit, within Slack's limits. Wording comes from templates.

Kept apart from bot/render/reply.py (the plain text) so the text and the Slack layout change independently.
"""
from __future__ import annotations

import re
from typing import Any

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
    """Block Kit for a reply, within Slack's limits. Links come only from knowledge-base sources."""
    lang = reply["lang"]
    out: list[dict[str, Any]] = []
    body = escape(reply["text"])
    if reply["status"] == "answer" and reply["recommendations"]:
        top = reply["recommendations"][0]
        head = f"{t.say('label.pick', lang)}: {top['flavor']} ({top['gpu_count']}x {top['gpu_name']})"
        out.append({"type": "header", "text": {"type": "plain_text", "text": _clip(head, SLACK_HEADER_MAX)}})
        body = body.split("\n", 1)[1] if "\n" in body else body
        body = re.sub(r"\n[^\n]*$", "", body) if reply["citations"] else body   # sources go in a context block
    for chunk in _chunks(body, SLACK_SECTION_MAX - 10):
        if len(out) >= SLACK_BLOCKS_MAX - 3:
            break
        if re.search(r"^ {6}\S", chunk, flags=re.M) and "```" not in chunk:
            chunk = f"```{chunk}```"          # aligned columns (considered flavors, checklist) in monospace
        out.append({"type": "section", "text": {"type": "mrkdwn", "text": chunk, "verbatim": True}})
    if reply.get("choices"):
        labels = reply.get("choice_labels") or {}
        elements = []
        for i, choice in enumerate(reply["choices"][:5]):
            elements.append({"type": "button", "action_id": f"followup_choice_{i}",
                             "text": {"type": "plain_text", "text": _clip(labels.get(choice, choice), 75)},
                             "value": _clip(choice, 2000)})
        out.append({"type": "actions", "block_id": "followup", "elements": elements})
    if reply["citations"]:
        elems = []
        for i, c in enumerate(reply["citations"][:SLACK_CONTEXT_MAX]):
            title = escape(_clip(c["title"], 120))
            url = c.get("url") or ""
            text = f"[{i + 1}] <{url}|{title}>" if url.startswith("https://") else f"[{i + 1}] {title}"
            elems.append({"type": "mrkdwn", "text": _clip(text, 2000)})
        out.append({"type": "context", "elements": elems})
    return out[:SLACK_BLOCKS_MAX]


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
