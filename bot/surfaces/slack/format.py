"""Slack text in and out: Slack markup to plain text for the core; Block Kit kept within Slack's limits.

In: Slack sends message text as mrkdwn with `&`, `<`, `>` escaped and mentions, channels, broadcasts and links
inside `<...>`. `to_plain` turns that into the text the person typed (the bot's own mention removed), so the
core never sees Slack markup.
Out: `fit` clips or splits every block to the documented limits (50 blocks, section text 3000, header 150,
fields 10 x 2000, context 10 elements, actions 25 elements, button text 75, value 2000, block_id 255), and
`split` spreads blocks over at most MAX_MESSAGES messages of at most 50 blocks and MESSAGE_CHARS characters of
text each (Slack also refuses a message whose blocks hold "too much" text in total, `msg_blocks_too_long`, an
undocumented limit reported near 12,000 characters; we stay well under it). What does not fit is trimmed with
a note, never sent for Slack to reject. Every string a person typed is escaped before it is echoed (`escape`).
"""
from __future__ import annotations

import re
from typing import Any

BLOCKS_MAX = 50
SECTION_TEXT_MAX = 3000
HEADER_MAX = 150
FIELDS_MAX = 10
FIELD_MAX = 2000
CONTEXT_ELEMENTS_MAX = 10
ACTIONS_ELEMENTS_MAX = 25
BUTTON_TEXT_MAX = 75
BUTTON_VALUE_MAX = 2000
BLOCK_ID_MAX = 255
FALLBACK_MAX = 3000          # the top-level `text` (notifications, screen readers); Slack truncates at 40,000
MESSAGE_CHARS = 9000         # text per message, well under the ~12,000 at which Slack says msg_blocks_too_long
MAX_MESSAGES = 3             # a long answer becomes at most this many messages; the rest is trimmed
INPUT_MAX = 8000             # only this much of a question is read (a 40,000-character paste still gets an answer)

_ANGLE = re.compile(r"<([^<>\n]*)>")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def escape(text: str) -> str:
    """Slack control characters: user text can never become a mention, a broadcast or a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ----- in ------------------------------------------------------------------------------------------------------
def to_plain(text: str | None, bot_user_id: str | None = None) -> str:
    """Slack message markup -> what the person typed: `<@BOT>` removed, `<@U1>` -> @U1, `<url|label>` -> label."""
    def sub(m: re.Match[str]) -> str:
        target, _, label = m.group(1).partition("|")
        if target.startswith("@"):
            uid = target[1:]
            return "" if bot_user_id and uid == bot_user_id else "@" + (label or uid)
        if target.startswith("#"):
            return "#" + (label or target[1:])
        if target.startswith("!"):
            return label or "@" + target[1:].split("^")[0]
        return label or target
    plain = _ANGLE.sub(sub, text or "")
    plain = plain.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return plain.strip()[:INPUT_MAX]


def lang_of(text: str) -> str:
    """The language of Slack-only wording (help, history...): Chinese when the text has Han characters."""
    return "zh" if _CJK.search(text or "") else "en"


# ----- out -----------------------------------------------------------------------------------------------------
def clip(text: str, limit: int) -> str:
    """At most `limit` characters, ending in an ellipsis when cut; never cuts an &amp;-style entity in half."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:] and len(cut) - amp <= 5:
        cut = cut[:amp]
    return cut + "…"


def fallback_text(text: str) -> str:
    """The top-level `text` every message carries: escaped, at most FALLBACK_MAX characters, never empty."""
    out = escape((text or "").strip()) or "…"
    if len(out) > FALLBACK_MAX:
        cut = out.rfind("\n", 0, FALLBACK_MAX - 1)
        out = clip(out[:cut] if cut > FALLBACK_MAX // 2 else out, FALLBACK_MAX)
    return out


def _split_text(text: str, size: int) -> list[str]:
    """Pieces of at most `size` characters, cut at a line break where one is near."""
    parts = []
    while len(text) > size:
        cut = text.rfind("\n", 0, size)
        if cut < size // 2:
            cut = size
            amp = text.rfind("&", cut - 5, cut)
            if amp != -1 and ";" not in text[amp:cut]:
                cut = amp
        parts.append(text[:cut])
        text = text[cut:].lstrip("\n")
    if text.strip():
        parts.append(text)
    return parts


def _text_obj(obj: dict[str, Any], limit: int) -> dict[str, Any]:
    return {**obj, "text": clip(str(obj.get("text") or ""), limit)}


def fit(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each block within its limits: long sections split, other texts clipped, empty blocks dropped."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        block = dict(block)
        if "block_id" in block:
            block["block_id"] = str(block["block_id"])[:BLOCK_ID_MAX]
        if kind == "header":
            text = str((block.get("text") or {}).get("text") or "").strip()
            if text:
                out.append({**block, "text": {"type": "plain_text", "text": clip(text, HEADER_MAX)}})
        elif kind == "section":
            fields = [_text_obj(f, FIELD_MAX) for f in (block.get("fields") or [])[:FIELDS_MAX] if f.get("text")]
            text_obj = block.get("text")
            pieces = _split_text(str(text_obj.get("text") or ""), SECTION_TEXT_MAX) if text_obj else []
            if not pieces and not fields:
                continue
            for i, piece in enumerate(pieces or [None]):
                new = {k: v for k, v in block.items() if k not in ("text", "fields", "block_id")}
                if "block_id" in block and i == 0:
                    new["block_id"] = block["block_id"]
                if piece is not None:
                    new["text"] = {**text_obj, "text": piece}
                if fields and i == 0:
                    new["fields"] = fields
                out.append(new)
        elif kind == "context":
            elements = (block.get("elements") or [])[:CONTEXT_ELEMENTS_MAX]
            each = max(100, min(FIELD_MAX, SECTION_TEXT_MAX // max(1, len(elements))))
            elements = [_text_obj(e, each) if "text" in e else e for e in elements]
            elements = [e for e in elements if e.get("text") or e.get("type") == "image"]
            if elements:
                out.append({**block, "elements": elements})
        elif kind == "actions":
            elements = []
            for e in (block.get("elements") or [])[:ACTIONS_ELEMENTS_MAX]:
                e = dict(e)
                if e.get("type") == "button":
                    e["text"] = _text_obj(e.get("text") or {"type": "plain_text"}, BUTTON_TEXT_MAX)
                    if "value" in e:
                        e["value"] = str(e["value"])[:BUTTON_VALUE_MAX]
                elements.append(e)
            if elements:
                out.append({**block, "elements": elements})
        else:
            out.append(block)
    return out


def block_chars(block: dict[str, Any]) -> int:
    """How much text a block holds (what Slack's cumulative limit counts, approximately)."""
    total = 0
    def walk(node: Any) -> None:
        nonlocal total
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    total += len(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
    walk(block)
    return total


def split(blocks: list[dict[str, Any]], trimmed_note: str, *, max_blocks: int = BLOCKS_MAX,
          max_chars: int = MESSAGE_CHARS, max_messages: int = MAX_MESSAGES) -> list[list[dict[str, Any]]]:
    """Blocks (already `fit`) spread over messages within Slack's limits; beyond max_messages, trimmed."""
    note = {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(trimmed_note, FIELD_MAX)}]}
    messages: list[list[dict[str, Any]]] = [[]]
    chars = 0
    for i, block in enumerate(blocks):
        size = block_chars(block)
        current = messages[-1]
        if current and (len(current) >= max_blocks or chars + size > max_chars):
            if len(messages) == max_messages:
                while current and (len(current) >= max_blocks or chars + block_chars(note) > max_chars):
                    chars -= block_chars(current.pop())
                current.append(note)
                return messages
            messages.append([])
            chars = 0
        messages[-1].append(block)
        chars += size
    return [m for m in messages if m] or [[{"type": "section", "text": {"type": "mrkdwn", "text": "…"}}]]


Message = tuple[str, "list[dict[str, Any]] | None"]      # (fallback text, blocks) of one message


def with_fallbacks(messages: list[list[dict[str, Any]]], first_text: str) -> list[Message]:
    """Give each message its top-level `text`: the whole reply (escaped, clipped) first, then each part's own."""
    out: list[Message] = []
    for i, blocks in enumerate(messages):
        if i == 0:
            text = fallback_text(first_text)
        else:
            first = next((b["text"]["text"] for b in blocks if b.get("type") == "section" and b.get("text")), "")
            text = clip(first, FALLBACK_MAX) or f"({i + 1}/{len(messages)})"
        out.append((text, blocks))
    return out
