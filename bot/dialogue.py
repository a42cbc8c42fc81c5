"""Slot filling: `(state, parse) -> (new state, Decision)`. Forms are data (rules/dialogue.yaml).

The state is a plain JSON-able dict so that sessions.py can store it as it is:
{"intent", "slots", "follow_ups", "pending", "lang", "answered"}.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from .nlu import Parse

JOB_INTENTS = ("train", "finetune", "inference", "rendering")
INFO_INTENTS = ("compare", "explain", "billing", "help")


@dataclass
class Decision:
    kind: Literal["ask", "answer", "info", "reset", "out_of_scope"]
    intent: str | None
    slots: dict[str, Any]
    missing: list[str] = field(default_factory=list)
    question: str | None = None
    choices: list[str] = field(default_factory=list)
    choice_labels: dict[str, str] = field(default_factory=dict)
    assumed: dict[str, Any] = field(default_factory=dict)


def load_forms(rules_dir: Path) -> dict[str, Any]:
    return yaml.safe_load((rules_dir / "dialogue.yaml").read_text(encoding="utf-8"))


def empty_state() -> dict[str, Any]:
    return {"intent": None, "slots": {}, "follow_ups": 0, "pending": None, "lang": None, "answered": False}


def step(state: dict[str, Any] | None, parse: Parse, forms: dict[str, Any]) -> tuple[dict[str, Any], Decision]:
    state = {**empty_state(), **(state or {})}
    state["slots"] = dict(state.get("slots") or {})
    lang = parse.lang if parse.text else (state.get("lang") or "en")
    if parse.reset:
        return {**empty_state(), "lang": lang}, Decision("reset", None, {})
    state["lang"] = lang
    new = parse.slots.filled()
    intent = parse.intent
    in_job = state["intent"] in JOB_INTENTS

    if intent in INFO_INTENTS:
        # an aside: answer it, keep the job being discussed
        return state, Decision("info", intent, {**state["slots"], **new})
    if intent is None:
        answering = state["pending"] is not None and (new or parse.ambiguous)
        refining = in_job and state["answered"] and (new or parse.ambiguous)
        if not (answering or refining):
            if parse.out_of_scope or not (new or parse.ambiguous):
                return state, Decision("out_of_scope", None, state["slots"])
            intent = None
        else:
            intent = state["intent"]
    if parse.intent in JOB_INTENTS and state["answered"] and ("model" in new or "params_b" in new) \
            and new.get("model") != state["slots"].get("model"):
        # a whole new question (a job and a model) after an answer: start afresh, don't carry old numbers over
        state["slots"] = {}
        state["follow_ups"] = 0
    elif intent in JOB_INTENTS and intent != state["intent"] and state["intent"] in JOB_INTENTS:
        # a different job about the same model keeps what is known; a new model starts afresh
        if "model" in new or "params_b" in new:
            state["slots"] = {}
        state["follow_ups"] = 0
    if intent is None:
        return state, Decision("out_of_scope", None, {**state["slots"], **new})

    merged = dict(state["slots"])
    if "model" in new or "params_b" in new:
        for key in ("model", "params_b"):
            merged.pop(key, None)
    if "gpu_model" in new:
        merged.pop("gpu_models", None)
    merged.update(new)
    if intent != "finetune" and intent != "train":
        merged.pop("method", None)
    state.update(intent=intent, slots=merged)

    missing, ambiguous_q = _missing(intent, merged, parse, forms)
    cap = int(forms.get("max_follow_ups", 2))
    if missing and state["follow_ups"] < cap:
        slot = missing[0]
        spec = forms["slots"][slot]
        if slot == "model" and ambiguous_q:
            question = spec["ambiguous"][lang].format(candidates=", ".join(ambiguous_q))
            choices = ambiguous_q
        else:
            question = spec["question"][lang]
            choices = list(spec.get("choices", []))
        labels = (spec.get("choice_labels") or {}).get(lang, {})
        state.update(follow_ups=state["follow_ups"] + 1, pending=slot, answered=False)
        return state, Decision("ask", intent, merged, missing=missing, question=question, choices=choices,
                               choice_labels=labels)
    assumed: dict[str, Any] = {}
    for slot in missing:
        spec = forms["slots"][slot]
        if slot == "model":
            assumed["params_b"] = spec.get("assume_params_b", 7)
        elif "assume" in spec:
            assumed[slot] = spec["assume"]
    state.update(pending=None, answered=True, follow_ups=0)
    return state, Decision("answer", intent, merged, assumed=assumed)


def _missing(intent: str, slots: dict[str, Any], parse: Parse, forms: dict[str, Any]) -> tuple[list[str], list[str]]:
    out = []
    ambiguous = parse.ambiguous.get("model", []) if "model" not in slots else []
    for slot in forms["forms"].get(intent, []):
        spec = forms["slots"][slot]
        if slot == "model" and ambiguous:
            out.append(slot)
            continue
        if not any(slots.get(s) is not None for s in spec.get("satisfied_by", [slot])):
            out.append(slot)
    return out, ambiguous
