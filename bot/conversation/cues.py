"""Cue phrases of the lexicon, compiled once: ASCII on word boundaries, other text as substrings, 're:' patterns."""
from __future__ import annotations

import re
from typing import Any, Iterable


class Cue:
    """One phrase of the lexicon, compiled: ASCII on word boundaries (optional plural), other text as a substring,
    're:' as a regular expression."""
    __slots__ = ("phrase", "literal", "rx")

    def __init__(self, phrase: str):
        p = str(phrase).lower()
        self.phrase = p
        if p.startswith("re:"):
            self.literal, self.rx = None, re.compile(p[3:])
            return
        stripped = p.strip()
        self.literal = stripped
        if stripped.isascii() and stripped:
            head = r"(?<![a-z0-9])" if stripped[0].isalnum() else ""
            tail = r"(?:s|es)?(?![a-z0-9])" if stripped[-1].isalnum() else ""
            self.rx = re.compile(head + re.escape(stripped) + tail)
        else:
            self.rx = None

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self.literal is not None:
            if not self.literal or self.literal not in text:
                return []
            if self.rx is None:
                out, i = [], text.find(self.literal)
                while i != -1:
                    out.append((i, i + len(self.literal)))
                    i = text.find(self.literal, i + len(self.literal))
                return out
        return [m.span() for m in self.rx.finditer(text)]

    def hit(self, text: str) -> bool:
        if self.literal is not None:
            if not self.literal or self.literal not in text:
                return False
            if self.rx is None:
                return True
        return self.rx.search(text) is not None


class CueSet:
    def __init__(self, phrases: Iterable[str]):
        self.cues = sorted((Cue(p) for p in phrases), key=lambda c: (-len(c.phrase), c.phrase))

    def first(self, text: str) -> str | None:
        for c in self.cues:
            if c.hit(text):
                return c.phrase
        return None

    def any(self, text: str) -> bool:
        return self.first(text) is not None

    def all(self, text: str) -> list[str]:
        return [c.phrase for c in self.cues if c.hit(text)]


def _both(d: dict[str, Any] | list | None) -> list[str]:
    if not d:
        return []
    if isinstance(d, dict):
        return [str(x) for x in (d.get("en") or [])] + [str(x) for x in (d.get("zh") or [])]
    return [str(x) for x in d]

