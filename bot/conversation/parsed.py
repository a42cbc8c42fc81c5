"""What the parser returns: a Parse (intent, slots, scores, ambiguity) and the Matches behind it; the lexicon loader."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.knowledge.loader import parse_yaml
from bot.records.models import Slots


@dataclass
class Match:
    slot: str
    value: Any
    text: str
    score: float
    runners_up: list[tuple[str, float]] = field(default_factory=list)


@dataclass
class Parse:
    text: str
    lang: str
    intent: str | None
    intent_scores: dict[str, float]
    slots: Slots
    matches: list[Match]
    ambiguous: dict[str, list[str]]
    reset: bool = False
    out_of_scope: bool = False
    unknown_model: str | None = None
    unsure: bool = False                                  # "not sure" / "你看着办": leaves the open slot to the bot
    candidate_params: dict[str, float] = field(default_factory=dict)   # params_b of ambiguous model candidates
    lang_sure: bool = True                                # False: only names and numbers ('qwen2.5-7b', 'lora')
    job_words: bool = False                               # says something about a job (a tool, the dataset) ...
    invalid: dict[str, float] = field(default_factory=dict)   # a negative or zero count, asked back ('-8 gpus')
    absurd: dict[str, float] = field(default_factory=dict)    # beyond any cloud ('1e12 users'), answered as such
    versus: dict[str, Any] | None = None                  # two precisions, methods, clouds or flavors compared
    capability: dict[str, Any] | None = None              # 'does the T4 support bf16?': the card's yes or no
    platform: str | None = None                           # 'what breaks moving this to Ascend 910B': the card moved to

    def as_dict(self) -> dict[str, Any]:
        return {"lang": self.lang, "intent": self.intent, "slots": self.slots.filled(),
                "intent_scores": self.intent_scores, "ambiguous": self.ambiguous, "reset": self.reset,
                "out_of_scope": self.out_of_scope, "unknown_model": self.unknown_model, "unsure": self.unsure,
                "matches": [m.__dict__ for m in self.matches]}


def load_lexicon(rules_dir: Path) -> dict[str, Any]:
    return parse_yaml((rules_dir / "lexicon.yaml").read_text(encoding="utf-8"))

