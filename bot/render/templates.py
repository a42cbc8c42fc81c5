"""The wording of replies, in both languages, loaded from bot/render/templates/*.yaml (messages.yaml first, then the
other files in name order: one file per area, each key defined once)."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from bot.knowledge.loader import parse_yaml

_FILE = Path(__file__).with_name("templates") / "messages.yaml"


class _Default(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class Templates:
    def __init__(self, table: dict[str, dict[str, str]]):
        self.table = table

    @property
    def keys(self) -> set[str]:
        return set(self.table)

    def change(self, text: str, lang: str) -> str:
        """A 'what would make it fit' step (estimate.make_it_fit names them in English) in the reply's language."""
        m = re.fullmatch(r"(.*) over (\d+) GPUs", text)
        key, ctx = (f"fitstep.{m.group(1)} over {{n}} GPUs", {"n": m.group(2)}) if m else (f"fitstep.{text}", {})
        return self.say(key, lang, **ctx) if key in self.table else text

    def say(self, key: str, lang: str, **ctx: Any) -> str:
        entry = self.table[key]
        text = entry.get(lang) or entry["en"]
        if "{" not in text:
            return text
        return text.format_map(_Default({k: self._word(v, lang) for k, v in ctx.items()}))

    def _word(self, v: Any, lang: str) -> Any:
        """A value "@key" is another template's wording (the plan says "@price.undated"; the words live here)."""
        if isinstance(v, str) and v.startswith("@") and v[1:] in self.table:
            return self.say(v[1:], lang)
        return _fmt(v)


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.2g}" if abs(v) < 1 else f"{v:.1f}"
    return v


@lru_cache(maxsize=1)
def default_templates() -> Templates:
    table: dict[str, dict[str, str]] = dict(parse_yaml(_FILE.read_text(encoding="utf-8")))
    for extra in sorted(_FILE.parent.glob("*.yaml")):
        if extra != _FILE:
            more = parse_yaml(extra.read_text(encoding="utf-8")) or {}
            twice = set(more) & set(table)
            if twice:
                raise ValueError(f"{extra.name}: template keys defined twice: {sorted(twice)}")
            table.update(more)
    return Templates(table)
