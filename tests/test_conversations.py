"""Each transcript in tests/conversations/ through Core.turn, from a fresh session: statuses, intents, the slots
asked for and the slots known after every turn (the slots a turn lists must be there; others may be too), and words
the reply must contain (`text_has`: in its text or its stated assumptions)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

FOLDER = Path(__file__).resolve().parent / "conversations"
FILES = sorted(FOLDER.glob("*.yaml"))


def _same(expected, got) -> bool:
    if isinstance(expected, (int, float)) and not isinstance(expected, bool) and isinstance(got, (int, float)):
        return abs(got - expected) <= 0.01 * abs(expected)
    if isinstance(expected, list) and isinstance(got, list):
        return sorted(map(str, expected)) == sorted(map(str, got))
    return expected == got


KNOWN_EXPECT = {"status", "intent", "lang", "missing", "choices", "text_has", "slots"}


def test_there_are_transcripts():
    assert len(FILES) >= 35


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_conversation(core, path):
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    state: dict = {}
    for i, turn in enumerate(doc["turns"], 1):
        reply, state = core.turn(turn["user"], state, today=doc.get("today"))     # 'by Friday' needs a today
        expect = turn.get("expect") or {}
        where = f"{path.stem} turn {i}: {turn['user']!r}"
        for key in ("status", "intent", "lang"):
            if key in expect:
                assert getattr(reply, key) == expect[key], (where, key, getattr(reply, key), reply.text[:300])
        unknown = set(expect) - KNOWN_EXPECT
        assert not unknown, (where, "expectation keys this harness does not check", unknown)
        if "missing" in expect:
            assert reply.missing == expect["missing"], (where, reply.missing)
        if "choices" in expect:       # the buttons under a follow-up
            assert reply.choices == expect["choices"], (where, reply.choices)
        if reply.status == "follow_up":
            assert reply.follow_up and reply.missing, where          # a question, and what it asks for
        for words in expect.get("text_has") or []:
            assert words in reply.text + reply.details or any(words in a for a in reply.assumptions), (where, words, reply.text[:400])
        for slot, value in (expect.get("slots") or {}).items():
            assert _same(value, reply.slots.get(slot)), (where, slot, reply.slots)
        assert reply.lang in ("zh", "en") and reply.text, where
