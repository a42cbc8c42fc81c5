"""Cue phrases of the lexicon, compiled once: ASCII on word boundaries, other text as substrings, 're:' patterns."""
from __future__ import annotations

import re
from typing import Any, Iterable


# longer Chinese words in which a shorter cue word does not mean itself ('量化' quantization inside '向量化' vectorize):
# lexicon zh_compound_words, set once by the parser. Chinese has no spaces, so a cue is a substring; a hit that lies
# inside one of these words is not a hit (the longer known word wins, as a word segmenter's longest match would)
_ZH_WORDS: tuple[str, ...] = ()


_CONTAINING: dict[str, tuple[str, ...]] = {}      # a cue -> the known longer words that hold it (most hold none)


def set_zh_words(words: Iterable[str]) -> None:
    global _ZH_WORDS
    _ZH_WORDS = tuple(sorted({str(w).lower() for w in words if w}, key=len, reverse=True))
    _CONTAINING.clear()


def _containing(literal: str) -> tuple[str, ...]:
    got = _CONTAINING.get(literal)
    if got is None:
        got = _CONTAINING[literal] = tuple(w for w in _ZH_WORDS if len(w) > len(literal) and literal in w)
    return got


def inside_zh_word(text: str, start: int, literal: str) -> bool:
    """Does `literal`, found at `start` of `text`, lie inside a longer known Chinese word there?"""
    for w in _containing(literal):
        at = w.find(literal)
        while at != -1:
            if text.startswith(w, start - at) and start - at >= 0:
                return True
            at = w.find(literal, at + 1)
    return False


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
                    if not inside_zh_word(text, i, self.literal):
                        out.append((i, i + len(self.literal)))
                    i = text.find(self.literal, i + len(self.literal))
                return out
        return [m.span() for m in self.rx.finditer(text)]

    def hit(self, text: str) -> bool:
        if self.literal is not None:
            if not self.literal or self.literal not in text:
                return False
            if self.rx is None:
                return not _containing(self.literal) or bool(self.spans(text))
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

