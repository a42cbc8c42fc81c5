"""Sources listed are the ones the text cites (issue 16): every planner scenario's answer, in both languages, as
text, as Slack blocks and as `ask --json` citations.

Each claim cites its sources where it is made ([n] after the pick's flavor and price, the memory estimate, the
training time, the checklist items, the notes); the sources line lists exactly the numbers some marker uses, in
order of first use, and the JSON `citations` are those sources in that order.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.surfaces.slack.blocks import blocks, details_blocks

SCENARIOS = yaml.safe_load((Path(__file__).parent / "scenarios" / "planner.yaml").read_text(encoding="utf-8"))[
    "scenarios"]
MARKER = re.compile(r"\[(\d+)\]")
SOURCES_LABEL = ("Sources:", "来源:")


def _body_and_sources(text: str) -> tuple[str, str]:
    """The reply's text without its sources line, and that line."""
    lines = text.split("\n")
    listed = [x for x in lines if x.startswith(SOURCES_LABEL)]
    assert len(listed) <= 1, text
    return "\n".join(x for x in lines if not x.startswith(SOURCES_LABEL)), (listed[0] if listed else "")


def _check(r: dict) -> None:
    """The short form lists exactly the sources it cites, 1..k; the details list the rest, k+1..n, and cite them;
    together they cite every source, numbered in order of first use."""
    body, sources = _body_and_sources(r["text"])
    more, more_sources = _body_and_sources(r.get("details") or "")
    cited = {int(n) for n in MARKER.findall(body)}
    listed = {int(n) for n in MARKER.findall(sources)}
    numbers = set(range(1, len(r["citations"]) + 1))
    assert cited == listed == set(range(1, len(listed) + 1)), (sorted(cited), sorted(listed), r["text"])
    listed_more = {int(n) for n in MARKER.findall(more_sources)}
    assert listed_more == numbers - listed, (sorted(listed_more), sorted(numbers - listed))
    assert cited | {int(n) for n in MARKER.findall(more)} == numbers, (r["text"], r.get("details"))
    ids = [c["id"] for c in r["citations"]]
    assert len(ids) == len(set(ids)), ids
    first_use = [int(n) for n in MARKER.findall(body + "\n" + more)]
    assert sorted(set(first_use), key=first_use.index) == sorted(numbers), "numbered in order of first use"
    for item in r["checklist"]:
        assert set(item["citations"]) <= set(ids), item


@pytest.mark.parametrize("s", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_sources_are_exactly_those_cited(core, s):
    reply, _ = core.turn(s["q"], {})
    r = reply.model_dump()
    if r["status"] not in ("answer", "info"):
        return
    _check(r)
    slack = blocks(r, core.templates)
    if reply.view and r["recommendations"]:        # the Details button's blocks
        slack += [b.to_dict() for b in details_blocks(reply.view, core.templates, r["lang"])]
    context = " ".join(e["text"] for b in slack if b["type"] == "context" for e in b["elements"])
    shown = " ".join(b["text"]["text"] for b in slack if b["type"] == "section")
    in_sections = {int(n) for n in MARKER.findall(shown)}
    in_context = {int(n) for n in MARKER.findall(context)}
    assert in_sections == in_context == set(range(1, len(r["citations"]) + 1)), (in_sections, in_context)


def test_the_set_covers_both_languages():
    zh = [s for s in SCENARIOS if any("\u4e00" <= c <= "\u9fff" for c in s["q"])]
    assert len(zh) >= 20 and len(SCENARIOS) - len(zh) >= 20


@pytest.mark.parametrize("question", [
    "A10 or L4 for a 13B chatbot, 20 users?",          # a comparison with a job: plans and spec lines
    "A100 和 H100 哪个好？",
    "what is ZeRO-3?",                                  # an explanation
    "华为云竞价实例怎么计费",                               # billing
])
def test_info_replies_cite_what_they_list(core, question):
    reply, _ = core.turn(question, {})
    r = reply.model_dump()
    assert r["status"] in ("answer", "info") and r["citations"], r["text"]
    _check(r)


def test_a_note_cites_its_source(core):
    """Training on a card without bf16 says so and cites where bf16 support comes from (Ampere onwards)."""
    reply, _ = core.turn("full finetune qwen2.5 0.5b on a T4, 100M tokens", {})
    r = reply.model_dump()
    note = next((x for x in (r["text"] + "\n" + r["details"]).split("\n") if "bf16" in x and ("Notes" in x or "说明" in x)), None)
    if note is None:
        pytest.skip("the pick is not a card without bf16: " + r["recommendations"][0]["gpu"])
    n = int(MARKER.findall(note)[0])
    assert r["citations"][n - 1]["id"] == "mmengine-amp-docs"
