"""A reply as Slack Block Kit, built from the answer's view (bot/render/view.py), never from its text.

Every block is a typed `slack_sdk.models.blocks` object, whose validation enforces Slack's limits when it is turned
into JSON (a header over 150 characters raises here, not at Slack). An answer is its short form: a header with the
decision and its counts, a section per part of the decision (the pick, why, time and cost), the checklist at a
glance and the sources those cite; the Details button (bot/surfaces/slack/controls.py) brings `details_blocks`: each
part's details, the checklist with its reasons, the plans considered (each row from its own plan), notes,
assumptions and the other sources. Replies that are not answers (questions back, information) are their text, with
the follow-up's choices as buttons.
"""
from __future__ import annotations

import re
from itertools import groupby
from typing import Any

from slack_sdk.models.blocks import (ActionsBlock, Block, ButtonElement, ContextBlock, HeaderBlock,
                                     MarkdownTextObject, PlainTextObject, SectionBlock)

from bot.records.models import AnswerView, CheckRow, ConsideredRow, ViewSection
from bot.render.templates import Templates
from bot.surfaces.slack.format import BUTTON_TEXT_MAX, HEADER_MAX, clip, escape

SECTION_MAX = 3000           # https://docs.slack.dev/reference/block-kit/blocks/section-block
BLOCKS_MAX = 50
CONTEXT_MAX = 10
SOURCE_ELEMENT_MAX = 290     # under format.fit's 300-character clip of a context element of a full block
STATUS_EMOJI = {"ok": ":white_check_mark:", "warn": ":warning:", "fail": ":x:"}
_SAFE_URL = re.compile(r"^https://[^\s<>|]+$")


def blocks(reply: dict[str, Any], t: Templates) -> list[dict[str, Any]]:
    """Block Kit for a reply, as JSON dicts of validated typed blocks. Links come only from knowledge-base sources."""
    view = reply.get("view")
    if reply["status"] == "answer" and view:
        typed = AnswerView.model_validate(view)
        out = answer_blocks(typed, t, reply["lang"])
        if not reply.get("recommendations"):       # no plan, so no Details button: the details come along
            out += details_blocks(typed, t, reply["lang"])
    else:
        out = [_section(chunk) for chunk in chunks(escape(reply.get("text") or ""))][: BLOCKS_MAX - 3]
        out += source_blocks(reply.get("citations") or [], t, reply["lang"])
    if reply.get("choices"):
        trailing = sum(1 for _ in _trailing(out, "context"))
        out.insert(len(out) - trailing, _choice_buttons(reply))
    return [b.to_dict() for b in out[:BLOCKS_MAX]]


def answer_blocks(view: AnswerView, t: Templates, lang: str) -> list[Block]:
    """The short form: a header (the decision with its counts), a section per part of the decision, the checklist
    at a glance, and the sources those cite. The rest is behind the Details button (`details_blocks`)."""
    label = lambda k: t.say(f"label.{k}", lang)  # noqa: E731
    out: list[Block] = [_header(view.headline)] if view.headline else []
    out += _section_blocks([s for s in view.sections if s.lines and not s.folded])
    glance = " · ".join(f"{STATUS_EMOJI.get(c.status, '')} {escape(c.name)}" for c in view.checklist)
    out += _titled(label("checklist"), [glance])
    return out + source_blocks([s.model_dump() for s in view.sources[: view.short_sources]], t, lang)


def details_blocks(view: AnswerView, t: Templates, lang: str) -> list[Block]:
    """After the fold: each part's details, the checklist with its reasons, the plans considered (each row from its
    own plan), notes and assumptions, and the sources cited here and not in the short form."""
    label = lambda k: t.say(f"label.{k}", lang)  # noqa: E731
    out: list[Block] = [_header(f"{label('details')}: {view.headline}")] if view.headline else []
    out += _titled(None, [escape(line) for s in view.sections if not s.folded for line in s.more])
    out += _section_blocks([s for s in view.sections if s.lines and s.folded])
    out += _titled(None, [escape(line) for s in view.sections if s.folded for line in s.more])
    links = {s.n: f"<{s.url}|[{s.n}]>" if _SAFE_URL.match(str(s.url or "")) else f"[{s.n}]" for s in view.sources}
    out += _titled(label("checklist"), [check_line(c, links) for c in view.checklist])
    out += _titled(label("considered"), [considered_line(r) for r in view.considered])
    out += _titled(None, [escape(n) for n in view.notes] +
                   ([f"*{label('assumed')}:* {escape(view.assumed)}"] if view.assumed else []))
    return out + source_blocks([s.model_dump() for s in view.sources[view.short_sources:]], t, lang)


def _section_blocks(sections: list[ViewSection]) -> list[Block]:
    """The sections that share a heading ("Time and cost") as one block each; the pick's line in bold."""
    out: list[Block] = []
    for title, group in groupby(sections, key=lambda s: s.title):
        lines: list[str] = []
        for s in group:
            first, rest = escape(s.lines[0]), [escape(x.strip()) for x in s.lines[1:]]
            if s.key == "pick":
                first = f"*{first}*"
            elif s.label and s.label != title:
                first = f"*{escape(s.label)}:* {first}"
            lines += [first.strip(), *rest]
        out += _titled(escape(title) if title else None, lines)
    return out


def check_line(c: CheckRow, links: dict[int, str]) -> str:
    refs = "".join(links[n] for n in c.refs if n in links)
    return f"{STATUS_EMOJI.get(c.status, '')} *{escape(c.name)}* {escape(c.text)} {refs}".rstrip()


def considered_line(r: ConsideredRow) -> str:
    """One plan that lost, from its own row: `flavor` GPUs · why it lost (with its own price where it says one)."""
    count = f"{r.instances} x " if r.instances > 1 else ""
    return f"• {count}`{escape(r.flavor)}` {r.gpu_count}x {escape(r.gpu_name)} · {escape(r.verdict)}"


def _header(text: str) -> HeaderBlock:
    return HeaderBlock(text=PlainTextObject(text=clip(text, HEADER_MAX)))


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text, verbatim=True))


def _titled(title: str | None, lines: list[str]) -> list[Block]:
    body = "\n".join(x for x in lines if x.strip())
    if not body:
        return []
    return [_section(chunk) for chunk in chunks((f"*{title}*\n" if title else "") + body)]


def _trailing(out: list[Block], kind: str):
    for block in reversed(out):
        if block.type != kind:
            return
        yield block


def _choice_buttons(reply: dict[str, Any]) -> ActionsBlock:
    labels = reply.get("choice_labels") or {}
    return ActionsBlock(block_id="followup", elements=[
        ButtonElement(action_id=f"followup_choice_{i}", value=clip(choice, 2000),
                      text=PlainTextObject(text=clip(labels.get(choice, choice), BUTTON_TEXT_MAX)))
        for i, choice in enumerate(reply["choices"][:5])])


def source_blocks(citations: list[dict[str, Any]], t: Templates, lang: str) -> list[Block]:
    """Every cited source as a numbered link, one per context element (ten per block), so all stay reachable.

    An element stays under SOURCE_ELEMENT_MAX characters: the title is shortened, never the URL."""
    if not citations:
        return []
    sep = "：" if lang == "zh" else ":"
    items = [f"*{t.say('label.sources', lang)}{sep}*"]
    for i, c in enumerate(citations):
        n, url = c.get("n") or i + 1, str(c.get("url") or "")
        if _SAFE_URL.match(url) and len(url) < SOURCE_ELEMENT_MAX - 40:
            items.append(f"<{url}|[{n}] {escape(clip(c['title'], SOURCE_ELEMENT_MAX - len(url) - 12))}>")
        else:
            items.append(f"[{n}] " + escape(clip(c["title"], SOURCE_ELEMENT_MAX - 20)))
    return [ContextBlock(elements=[MarkdownTextObject(text=x) for x in items[i:i + CONTEXT_MAX]])
            for i in range(0, len(items), CONTEXT_MAX)]


def chunks(text: str, size: int = SECTION_MAX - 10) -> list[str]:
    """Text cut at line ends into pieces a section holds (a line longer than that is cut inside)."""
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
