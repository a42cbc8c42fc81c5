"""Slot filling: `(state, parse) -> (new state, Decision)`. Forms are data (rules/dialogue.yaml).

The state is a plain JSON-able dict so that sessions.py can store it as it is:
{"intent", "slots", "follow_ups", "pending", "lang", "answered", "asked", "candidates"}.

Rules:
- a job intent (train, finetune, inference, rendering) fills its form: the slots the form lists, in order of how much
  they change the answer. A slot is asked at most once per job, and at most `max_follow_ups` questions are asked per
  job; after that the bot answers and states what it assumed.
- a reply to a follow-up (no intent of its own) merges into the job; "not sure" / "你看着办" leaves the slot to the
  bot. Later values override earlier ones; a new model drops the old model's size.
- an ambiguous model ("llama 70b") is asked back with its candidates, never guessed (kept in `candidates` so the next
  turn can name one of them).
- info intents (compare, explain, billing, help) are asides: answered at once, the job in progress is kept.
- a model or GPU named with no job at all is asked back: fine-tune, train or serve? (`missing: [intent]`)
- "reset" / "重新开始" clears the session; "new question: ..." clears it and reads the rest as a fresh question.
- an aside is remembered until the next job turn: "what about a 13B model then?" right after "A10 or L4 for a 7B
  chatbot, 20 users?" asks the same comparison again for the 13B, not "fine-tune, train or serve?".
- a refinement changes only what it names, and what follows from it: "same but 2 nodes" after "one 8 x H100 node"
  is 16 GPUs, not 8 GPUs over 2 nodes.
- a method the job's field settles (rules/dialogue.yaml `usual`: Whisper and YOLO are fine-tuned whole; GRPO on a
  7B trains the whole policy) is assumed and said, not asked.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bot.conversation.image_tokens import said_image_tokens
from bot.conversation.nlu import Parse
from bot.plan.load import CHAT_PROMPT
from bot.knowledge.loader import parse_yaml

JOB_INTENTS = ("train", "finetune", "inference", "rendering")
INFO_INTENTS = ("compare", "explain", "billing", "help")
TRAINING_ONLY = ("method", "tokens", "sharding", "offload", "epochs", "mfu", "runs")    # slots that only describe training jobs


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
    same_for: tuple[str, str, list[str]] | None = None      # (slot, value assumed, values with the same pick)
    # (slot, value answered for, values that fit the user's own cards, values that do not, values that fit only with
    # state offloaded to host RAM)
    fits_for: tuple[str, str, list[str], list[str], list[str]] | None = None
    cheaper: bool = False        # 'cheaper?' after an answer: what each concession would save is part of the answer
    # a follow-up that changed what the last answer was planned for ('如果QPS涨到50呢', 'we only have A100 quota'):
    # each slot it changed as (slot, value before, value now); the answer re-plans the same job and says so first
    changed: list[tuple[str, Any, Any]] = field(default_factory=list)


def load_forms(rules_dir: Path) -> dict[str, Any]:
    return parse_yaml((rules_dir / "dialogue.yaml").read_text(encoding="utf-8"))


def empty_state() -> dict[str, Any]:
    return {"intent": None, "slots": {}, "follow_ups": 0, "pending": None, "lang": None, "answered": False,
            "asked": [], "candidates": {}, "aside": None}


def _new_job(state: dict[str, Any], keep_slots: bool) -> None:
    if not keep_slots:
        state["slots"] = {}
    state.update(follow_ups=0, asked=[], pending=None, answered=False, candidates={})


def _loaded(state: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of the saved state with every key present (sessions saved by older versions lack some)."""
    state = {**empty_state(), **(state or {})}
    state["slots"] = dict(state.get("slots") or {})
    state["asked"] = list(state.get("asked") or [])
    cands = state.get("candidates") or {}
    # (sessions saved before candidates kept their sizes hold a plain list)
    state["candidates"] = dict(cands) if isinstance(cands, dict) else {str(c): None for c in cands}
    return state


def step(state: dict[str, Any] | None, parse: Parse, forms: dict[str, Any]) -> tuple[dict[str, Any], Decision]:
    state = _loaded(state)
    # the reply is in the language of the question; a reply of names and numbers only keeps the session's
    lang = parse.lang if parse.text and (parse.lang_sure or not state.get("lang")) else (state.get("lang") or parse.lang)
    new = parse.slots.filled()
    new.pop("topic", None)
    # a factor is applied to the load on file: the job's, or (after a comparison of cards for it, which keeps no job)
    # the load the comparison was sized for ('L4s vs H100s for 50 req/s?' then 'and if traffic triples?')
    on_file = state.get("slots") or {}
    scaled_aside = bool(new.get("load_scale")) and not _has_load(on_file) \
        and _has_load((state.get("aside") or {}).get("slots") or {})
    if scaled_aside:
        on_file = state["aside"]["slots"]
    new = _with_image_tokens(state, parse.intent, new, parse.text)
    new = _scaled_load(on_file, new)
    new = _restated_amount(state.get("slots") or {}, new, parse.text)
    new = _counted_as_the_job(state, new)
    new = _targets_restated(on_file if _has_load(on_file) else (state.get("aside") or {}).get("slots") or {}, new,
                            parse.text)
    new_model = "model" in new or "params_b" in new
    ambiguous = list(parse.ambiguous.get("model") or [])
    intent = parse.intent
    if parse.reset:
        if intent is None and not new and not ambiguous:
            return {**empty_state(), "lang": lang}, Decision("reset", None, {})
        state = empty_state()             # 'new question: serve llama 3 8b' - start afresh with this question
    state["lang"] = lang
    in_job = state["intent"] in JOB_INTENTS
    before = dict(state["slots"]) if in_job and state["answered"] else None      # what the last answer planned for
    if in_job and state["answered"] and intent in JOB_INTENTS and intent != state["intent"] \
            and not (new_model or ambiguous) and not _says_new_job(parse, intent, state["intent"]):
        intent = None          # 'can our own 8 x 3090 run it?' after a fine-tune: the same job on other cards

    if intent in ("explain", "help") and in_job and (state["answered"] or state["pending"]) and new \
            and _nothing_to_explain(parse, new):
        # 'ok so what's the cheapest setup that actually works?', '必须一周内完成' (a job asked about or answered):
        # the job again, refined
        intent = None
    if intent == "billing" and in_job and state["answered"] and new.get("budget_amount") and not parse.slots.topic:
        intent = None          # 'we can't pay more than 2 USD per hour': a price cap on the job, not a billing question
    aside = state.get("aside")
    versus = state.get("versus") or {}
    compared = versus.get("job_intent") or (aside or {}).get("job")
    if intent in (None, "explain") and aside and aside.get("intent") == "compare" and compared in JOB_INTENTS \
            and (JOB_QUANTITIES & new.keys() and _nothing_to_explain(parse, new) or _another_card(aside, new)) \
            and not scaled_aside \
            and ((aside.get("slots") or {}).get("model") or (aside.get("slots") or {}).get("params_b")):
        # '老板要求 5 天内跑完，怎么配？' after 'H100 or A100 for this fine-tune?': the job compared, planned now on the side
        # the comparison preferred (else on either card compared), with what this turn adds
        intent = compared
        sides = (aside.get("slots") or {}).get("gpu_models")
        chosen = versus.get("chosen") or ({"gpu_allowed": list(sides)} if sides else {})
        if _another_card(aside, new):      # 'use NVadsA10 v5 instead' after 'A100 or H100?': the job on that card
            chosen = {}
        state["aside"] = {**aside, "slots": {**aside["slots"], **chosen}}
        if in_job:
            _new_job(state, keep_slots=False)
            in_job, before = False, None
            state["intent"] = None
    if intent in INFO_INTENTS:
        # an aside: answer it, keep the job being discussed
        topic = {"topic": parse.slots.topic} if parse.slots.topic else {}   # what the aside is about, not kept
        # the cloud of an aside just answered ('g6e.xlarge vs g6.xlarge', then 'is spot ok for that?') stays named
        before = (state.get("aside") or {}).get("slots") or {}
        cloud = {k: before[k] for k in ("provider", "provider_uncovered") if k in before}
        slots = {**_other_cloud({**state["slots"], **cloud}, new), **new, **topic}
        jobs = {k: v for k, v in (parse.intent_scores or {}).items() if k in ("train", "finetune", "inference") and v > 0}
        job = max(jobs, key=lambda k: (jobs[k], k)) if jobs else (state["intent"] if in_job else None)
        state["aside"] = {"intent": intent, "slots": slots, "job": job} if intent != "help" else None
        return state, Decision("info", intent, slots)
    aside, state["aside"] = state.get("aside"), None
    asks_cheaper = False
    if intent is None:
        answering = state["pending"] not in (None, "intent") and bool(new or ambiguous or parse.unsure)
        if aside and new and not answering and not parse.out_of_scope:
            return _refine_aside(state, aside, new)
        # any turn about the job refines it ('use unsloth', 'the dataset is 50k samples'); only turns with nothing
        # job-related are out of scope
        refining = in_job and state["answered"] and bool(new or ambiguous or parse.job_words) \
            and not (parse.unknown_model and not new)      # '换成bge-small呢': a model not on file is asked about
        if not (answering or refining):
            if not parse.out_of_scope and (new_model or ambiguous or new.get("gpu_model")) and "intent" in forms:
                return _ask_intent(state, new, ambiguous, parse, forms, lang)
            if not parse.out_of_scope and not parse.unknown_model and not in_job and "opener" in forms:
                return _ask_intent(state, new, ambiguous, parse, forms, lang, form="opener")   # 'need a gpu for ML'
            return state, Decision("out_of_scope", None, state["slots"])
        intent = state["intent"]
        asks_cheaper = refining and new.get("budget") == "low"     # 'cheaper?', '便宜点的方案呢', 'the cheapest setup that works?'
    elif not in_job:
        asked_intent = state["pending"] == "intent"
        kept = {k: state[k] for k in ("follow_ups", "asked", "candidates")}
        _new_job(state, keep_slots=asked_intent)    # the answer to 'what do you want to do with it?' keeps the model
        if asked_intent:
            state.update(kept)
        elif aside:      # 'ok, serve it on L4 then' after a comparison: the model and load compared are the job's
            state["slots"] = {k: v for k, v in aside["slots"].items() if k not in ("gpu_models", "topic")}
    elif intent != state["intent"]:
        # a different job about the same model keeps what is known; a new model starts afresh
        _new_job(state, keep_slots=not (new_model or ambiguous))
    elif state["answered"] and (new_model or ambiguous) and new.get("model") != state["slots"].get("model"):
        # a whole new question (a job and a model) after an answer: don't carry the old numbers over
        _new_job(state, keep_slots=False)
    merged = _merge(state, new, ambiguous, intent, parse)
    state, decision = _ask_or_answer(state, intent, merged, forms, lang, parse.text)
    decision.cheaper = asks_cheaper and decision.kind == "answer"
    if before is not None and decision.kind == "answer" and state["intent"] == intent:
        decision.changed = changed_slots(before, merged)
    return state, decision


# what a follow-up can change about a job, in the order the answer says it (the rest are internal or derived)
SAID_SLOTS = ("model", "params_b", "method", "algorithm", "precision", "gpu_model", "gpus", "nodes", "gpu_memory_gib",
              "gpu_excluded", "gpu_allowed", "max_gpus", "provider", "region", "qps", "concurrency", "audio_rate",
              "request_tokens", "output_tokens", "ttft_ms", "tpot_ms", "deadline_days", "budget_amount", "daily_users", "tokens",
              "dataset_items", "items", "epochs", "seq_len", "sample_tokens", "image_size", "sampling_steps", "batch_size",
              "generations", "generation_tokens", "fanout", "item_input_tokens", "item_output_tokens", "batch_tokens",
              "token_rate", "fps", "e2e_ms", "latency_ms", "latency", "peak_factor", "usage_hours_month", "runs",
              "train_steps", "mfu", "sharding", "offload", "network", "dataset", "image_tokens")
# the slots a follow-up's change is NOT said of, each for its reason: said through another slot (the load's words,
# the budget's currency and period, a schedule's parts, a model's family or name), bookkeeping of how a value was
# said, a factor the dialogue turns into the slots it scales, an aside's subject, or a flag of the request's kind.
# Every slot of records.models.Slots is in exactly one of the two (tests/test_follow_up_changes.py): a new slot
# that a follow-up can change is said, never silently re-planned.
UNSAID_SLOTS = frozenset({
    "model_family", "model_name", "arch", "gpu_models", "load_scale", "work_scale", "renting", "rent_more", "budget",
    "budget_currency", "budget_period", "duration", "concurrency_users", "usage_hours_day", "usage_days_week",
    "token_role", "production", "qps_basis", "load", "fanout_unit", "request_mix", "dataset_unit", "dataset_items_low",
    "controlnet", "packing", "generation_max", "network_gbps", "provider_uncovered", "topic", "kind", "offline",
    "item_unit", "items_each", "item_input_chars", "item_input_words", "item_output_chars", "item_output_words", "batch_task",
    # a card not on file is judged by its memory (gpu_memory_gib, said); a model's kind and the model on file it was
    # sized as follow from the model (said); the average beside a peak is said in the Work line, the peak (qps) sized
    "gpu_name", "modality", "sized_as_kind", "qps_average"})


# the quantities a job is planned on: one said after a comparison of the job asks for the job's plan
JOB_QUANTITIES = frozenset({"deadline_days", "budget_amount", "qps", "concurrency", "dataset_items", "tokens", "items",
                            "daily_users", "token_rate", "ttft_ms", "tpot_ms"})


def changed_slots(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """The slots whose value a follow-up changed, as (slot, before, after); a model's size goes with its name."""
    out = [(k, before.get(k), after.get(k)) for k in SAID_SLOTS if after.get(k) is not None
           and before.get(k) != after.get(k)]
    if any(k == "model" for k, _, _ in out):
        out = [c for c in out if c[0] != "params_b"]
    if before.get("budget_period") != after.get("budget_period"):
        # a total budget become a price cap an hour (or the other way): another kind of limit, said as set anew
        out = [(k, None if k == "budget_amount" else b, a) for k, b, a in out]
    return out


def _says_new_job(parse: Parse, intent: str, current: str) -> bool:
    """Does a follow-up name another job outright ('serve it instead', '那部署呢', 'now pre-train one from
    scratch')? A weak cue ('能跑吗', 'run it on') is a question about the same job on other terms, not a new job."""
    scores = parse.intent_scores or {}
    return scores.get(intent, 0.0) >= 2.5 and scores.get(intent, 0.0) > scores.get(current, 0.0)


def _merge(state: dict[str, Any], new: dict[str, Any], ambiguous: list[str], intent: str, parse: Parse
           ) -> dict[str, Any]:
    """The job's slots after this turn: later values override earlier ones, a new model drops the old one's size,
    training-only slots leave a serving job; the candidates of an ambiguous model are kept for the next turn."""
    new_model = "model" in new or "params_b" in new
    merged = _other_cloud(state["slots"], new)
    if new_model or ambiguous:
        for key in ("model", "params_b", "arch"):
            merged.pop(key, None)
    new = {**new, **_rescaled_gpus(merged, new)}
    if "gpus" in new and "nodes" not in new:
        merged.pop("nodes", None)      # a restated count is split over machines afresh
    if any(k in new for k in ("qps", "token_rate", "daily_users", "audio_rate")) and "load" not in new:
        # a rate restated ('QPS变成20') is the load now: the words of the old one (its count, a daily basis) go
        for key in ("load", "qps_basis", "qps_average", "daily_users", "peak_factor"):
            if key not in new:
                merged.pop(key, None)
    if "concurrency" in new and "concurrency_users" not in new:
        merged.pop("concurrency_users", None)     # '50 并发' after '200 users': requests in flight now
    if "gpu_model" in new:
        merged.pop("gpu_models", None)
    if ("gpu_allowed" in new or "gpu_excluded" in new) and "gpu_model" not in new \
            and merged.get("gpu_model") not in (new.get("gpu_allowed") or []):
        for key in ("gpu_model", "gpu_models", "gpus", "nodes"):     # the card of the last plan is not to be had
            merged.pop(key, None)
    if "gpu_model" in new or "gpus" in new:
        # a card named again is to be had: the limits said before give way to it
        if new.get("gpu_model") in (merged.get("gpu_excluded") or []):
            merged["gpu_excluded"] = [g for g in merged["gpu_excluded"] if g != new["gpu_model"]] or None
        if new.get("gpu_model") and new["gpu_model"] not in (merged.get("gpu_allowed") or [new["gpu_model"]]):
            merged.pop("gpu_allowed", None)
    if "gpu_models" in new:
        merged.pop("gpu_model", None)
    merged.update(new)
    merged.pop("topic", None)
    if intent not in ("finetune", "train"):
        for key in TRAINING_ONLY:
            merged.pop(key, None)
    if ambiguous:
        state["candidates"] = {c: parse.candidate_params.get(c) for c in ambiguous}
        if "model" in state["asked"]:
            state["asked"].remove("model")      # a new ambiguity is a new question
    elif "model" in merged or "params_b" in merged:
        state["candidates"] = {}
    state.update(intent=intent, slots=merged)
    return merged


def _other_cloud(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The slots kept when a turn names a cloud: the one named last is the job's, covered or not."""
    if "provider" in new or "provider_uncovered" in new:
        return {k: v for k, v in old.items() if k not in ("provider", "provider_uncovered")}
    return dict(old)


def _ask_or_answer(state: dict[str, Any], intent: str, merged: dict[str, Any], forms: dict[str, Any], lang: str,
                   text: str = "") -> tuple[dict[str, Any], Decision]:
    """The first missing slot not asked yet, while under the follow-up cap; otherwise the answer, with the
    defaults it assumes for what is still missing."""
    missing = _missing(intent, merged, bool(state["candidates"]), forms)
    askable = [s for s in missing if s not in state["asked"]]
    cap = int(forms.get("max_follow_ups", 2))
    if askable and state["follow_ups"] < cap:
        slot = askable[0]
        spec = forms["slots"][slot]
        cands = list(state["candidates"]) if slot == "model" else []
        if cands:
            question = spec["ambiguous"][lang].format(candidates=", ".join(cands))
            choices = cands
        else:
            alt = _choices_for(spec, merged, text)
            question = alt.get("question", spec["question"])[lang]
            choices = list(alt.get("choices", spec.get("choices", [])))
        labels = (spec.get("choice_labels") or {}).get(lang, {})
        state["asked"].append(slot)
        state.update(follow_ups=state["follow_ups"] + 1, pending=slot, answered=False)
        return state, Decision("ask", intent, merged, missing=[slot], question=question, choices=choices,
                               choice_labels=labels)
    # the method the job's field settles: a training job's only (a transcription has no method to assume)
    assumed: dict[str, Any] = (_usual_method(merged, forms) if intent in ("finetune", "train") else None) or {}
    for slot in missing:
        spec = forms["slots"][slot]
        if slot == "model":
            sizes = [p for p in state["candidates"].values() if p]
            # an unresolved ambiguity: size the job for the largest candidate (the safe side for memory)
            assumed["params_b"] = max(sizes) if sizes else spec.get("assume_params_b", 7)
        elif "assume" in spec:
            assumed[slot] = spec["assume"]
    state.update(pending=None, answered=True)
    return state, Decision("answer", intent, merged, assumed=assumed)


def _refine_aside(state: dict[str, Any], aside: dict[str, Any], new: dict[str, Any]) -> tuple[dict[str, Any], Decision]:
    """The aside asked again with what this turn changed ('what about a 13B model then?' after a comparison): a new
    model replaces the old one and its size, as in a job."""
    slots = dict(aside["slots"])
    if "model" in new or "params_b" in new:
        for key in ("model", "params_b", "arch"):
            slots.pop(key, None)
    slots.update(new)
    state["aside"] = {"intent": aside["intent"], "slots": slots}
    return state, Decision("info", aside["intent"], slots)


# the slots a service's load is said in (a rate, users at once, users a day, audio streams)
LOAD_SLOTS = ("concurrency", "qps", "token_rate", "daily_users", "audio_rate")


def _has_load(slots: dict[str, Any]) -> bool:
    return any(slots.get(k) for k in LOAD_SLOTS)


def _scaled_load(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """'what if usage triples' after a service was sized: its users and request rate times the factor (a daily count
    kept as the same kind of rate); with no load on file the factor says nothing and is dropped."""
    new = _scaled_work(old, new)
    scale = new.pop("load_scale", None)
    if not scale:
        return new
    scaled = {k: (math.ceil(old[k] * scale) if k in ("concurrency", "daily_users") else round(old[k] * scale, 5))
              for k in LOAD_SLOTS if old.get(k) and k not in new}
    if "concurrency" in scaled and old.get("concurrency_users"):
        scaled["concurrency_users"] = True        # the same people, more of them: still not all in flight
    if scaled and old.get("load") and "load" not in new:
        # the load as it was said, scaled with it (its count, period and basis kept)
        said = dict(old["load"])
        if said.get("count"):
            said["count"] = round(said["count"] * scale, 5)
        scaled["load"] = said
        scaled.update({k: old[k] for k in ("qps_basis", "peak_factor") if old.get(k) and k not in new})
    return {**new, **scaled}


def _with_image_tokens(state: dict[str, Any], intent: str | None, new: dict[str, Any], text: str) -> dict[str, Any]:
    """'each image is about 4000 vision tokens' of a vision-language service (said first or in a follow-up): the
    request's prompt is its text plus its images' tokens, the prompt the plan is sized for (a change of the image's
    size replaces the image part, the text part stays). The words the parser read as other slots (the image's tokens
    as the prompt, the images as a dataset) go."""
    said = said_image_tokens(text) if text else None
    old = state.get("slots") or {}
    if not said or (intent or state.get("intent")) != "inference" or any(
            old.get(k) for k in ("offline", "items", "batch_tokens")):
        return new          # (a batch job's images are sized per item: plan/batch.py)
    count, per = said
    image = count * per
    out = dict(new)
    if out.get("items") in (per, image, count) and not out.get("offline"):
        for key in ("items", "item_unit", "batch_task"):      # 'every picture turns into ~2500 image tokens'
            out.pop(key, None)
    for key in ("request_tokens", "seq_len"):      # the image's own figure, read as the prompt or the window
        if out.get(key) and any(abs(out[key] - x) <= 0.03 * x for x in (per, image)):
            out.pop(key)
    if out.get("dataset_unit") == "images" and out.get("dataset_items") == count:
        out.pop("dataset_items")
        out.pop("dataset_unit")
    # the text part: said now, else the prompt on file less its images, else a window said of the service (a
    # serving job's 'requests of 300 tokens' may be on file as its window), else a chat's
    text_prompt = out.get("request_tokens") or max(0, int(old.get("request_tokens") or 0) - int(old.get("image_tokens")
                                                                                                or 0)) \
        or (old.get("seq_len") if not old.get("request_tokens") else None) or CHAT_PROMPT
    out["request_tokens"] = int(text_prompt + image)
    out["image_tokens"] = image
    return out


def _counted_as_the_job(state: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A count restated in a follow-up is the job's own count: '3M images' after an image model's training is its
    training set (the parser reads a count of images with no training words as a batch to run through), and a
    training set said of a batch job ('数据集变成30万张图') is the batch's items."""
    old = state.get("slots") or {}
    if state.get("intent") in ("train", "finetune") and new.get("items") and not new.get("dataset_items") \
            and new.get("item_unit") in ("image", "item", None):
        unit = "images" if new.get("item_unit") == "image" else (old.get("dataset_unit") or "samples")
        count = float(new["items"])
        new = {k: v for k, v in new.items() if not k.startswith("item") and k not in ("offline", "batch_task")}
        return {**new, "dataset_items": count, "dataset_unit": unit}
    if state.get("intent") == "inference" and old.get("request_tokens") and new.get("seq_len") \
            and not new.get("request_tokens"):
        new = {k: v for k, v in new.items() if k != "seq_len"} | {"request_tokens": int(new["seq_len"])}  # '输入改成8k'
    if old.get("items") and new.get("dataset_items") and not new.get("items") and new.get("dataset_unit") != "audio_hours":
        new = {k: v for k, v in new.items() if k not in ("dataset_items", "dataset_unit")} | \
            {"items": int(new["dataset_items"])}
    return new


# a rate said as a whole service's ('total', 'throughput', '总吞吐'), not one stream's speed
_AGGREGATE = re.compile(r"(?<![a-z])(?:total|throughput|aggregate|overall|in all|altogether|combined|fleet|cluster)"
                        r"(?![a-z])|总|吞吐|合计|一共|整体|集群")


def _targets_restated(old: dict[str, Any], new: dict[str, Any], text: str) -> dict[str, Any]:
    """A service's latency targets restated in a follow-up ('we could live with 15 tok/s and 3s TTFT', '首字延迟放宽到
    5 秒'): a bare token rate after a service whose load is said in requests or users is each stream's speed (its time
    per output token), not a new load of 15 tokens a second; a target relaxed past what 'low latency' means takes the
    'low' flag off with it."""
    if not _has_load(old) or old.get("token_rate"):
        return new
    if new.get("token_rate") and not new.get("tpot_ms") and new["token_rate"] <= 300 \
            and not _AGGREGATE.search(text.lower()) and not any(new.get(k) for k in ("qps", "concurrency", "daily_users")):
        speed = new["token_rate"]
        new = {k: v for k, v in new.items() if k not in ("token_rate", "token_role", "qps_basis")
               and not (k == "load" and (v or {}).get("unit") == "tokens")}
        new["tpot_ms"] = round(1000 / speed, 2)
    if ("ttft_ms" in new or "tpot_ms" in new) and "latency" not in new and old.get("latency") == "low":
        ttft = new.get("ttft_ms", old.get("ttft_ms"))
        tpot = new.get("tpot_ms", old.get("tpot_ms"))
        if (ttft is None or ttft > 1000) and (tpot is None or tpot > 50):
            new["latency"] = "normal"
    return new


def _scaled_work(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """'数据量翻倍', 'the dataset triples' after a job was sized: its amount (training set, tokens, batch items) times the
    factor; a load scale said of a job with no load but an amount of work ('量翻倍' of a transcription) is the work."""
    scale = new.pop("work_scale", None)
    if not scale and new.get("load_scale") and not _has_load(old):
        scale = new.pop("load_scale")
    if not scale:
        return new
    scaled = {k: (math.ceil(old[k] * scale) if k == "items" else round(old[k] * scale, 3))
              for k in ("dataset_items", "tokens", "items", "batch_tokens") if old.get(k) and k not in new}
    return {**new, **scaled}


# a follow-up that restates the amount of a load already sized, without its unit ('what about 200k a day?', '如果每天
# 20 万张呢', 'what if it's 1000 calls?', '改成 500 路呢'): a number, its multiplier, and a period or a stream's noun
_AMOUNT = re.compile(r"(?<![\d.])(\d+(?:[.,]\d+)*)\s*(k|m|万|千|百万|亿)?(?![\d])")
_AMOUNT_PERIOD = re.compile(r"(?<![a-z])(?:a|per|an|each|every)\s+(day|hour|week|month)(?![a-z])|/\s*(day|hour)|"
                            r"每(天|日|小时|周|月)|(天|日|小时|周|月)")
_AMOUNT_STREAMS = re.compile(r"(?<![a-z])(?:calls?|streams?|cameras?|channels?|users?|sessions?)(?![a-z])|路|通话|摄像头")
_PERIOD_OF = {"day": "day", "hour": "hour", "week": "week", "month": "month", "天": "day", "日": "day",
              "小时": "hour", "周": "week", "月": "month"}
_MULT = {"k": 1e3, "m": 1e6, "千": 1e3, "万": 1e4, "百万": 1e6, "亿": 1e8}


# a follow-up that is a bare number with a verb of change and nothing else ('make it 100', 'what about 200?', '改成 200',
# '那 500 呢'): the new value of the one load the service was sized for
_BARE_CHANGE = re.compile(r"^\s*(?:(?:ok|okay|so|and|then|hmm|well|actually)[,\s]+)*(?:make\s+it|change\s+it\s+to|set\s+it\s+to|"
                          r"bump\s+it\s+(?:up\s+)?to|raise\s+it\s+to|lower\s+it\s+to|drop\s+it\s+to|what\s+about|how\s+about|"
                          r"what\s+if\s+(?:it'?s|it\s+is|we\s+have)|try|let'?s\s+say|say|if\s+it'?s|at)?\s*"
                          r"(\d+(?:\.\d+)?)\s*(k|万|千)?\s*(?:then|instead|now)?\s*[?？.!。]*\s*$"
                          r"|^\s*(?:那|那么|如果|要是)?\s*(?:改成|变成|换成|改为|调到|提到|加到|降到|涨到|是|有)?\s*"
                          r"(\d+(?:\.\d+)?)\s*(万|千|k)?\s*(?:呢|吧|的话|的话呢|怎么样|如何)?\s*[?？.!。]*\s*$")


def _bare_change(old: dict[str, Any], text: str) -> dict[str, Any]:
    """The load a bare number restates, when the service has exactly one (users at once, or a rate)."""
    m = _BARE_CHANGE.match(text.lower())
    loads = [k for k in ("concurrency", "qps") if old.get(k)]
    if not m or len(loads) != 1 or old.get("load", {}).get("period") not in (None, "second") or old.get("daily_users"):
        return {}
    n = float(m.group(1) or m.group(3)) * {"k": 1e3, "千": 1e3, "万": 1e4}.get(m.group(2) or m.group(4) or "", 1)
    if loads == ["concurrency"] and 1 <= n <= 100_000:
        return {"concurrency": int(n)}
    if loads == ["qps"] and 0 < n <= 1e6:
        return {"qps": n, "load": {"count": n, "unit": "requests", "period": "second"}}
    return {}


def _restated_amount(old: dict[str, Any], new: dict[str, Any], text: str) -> dict[str, Any]:
    """A load sized before (a count per period, or streams at once) restated as a bare number in a follow-up: the
    same load at the new amount, in the same unit and period ('200k a day' after '50k SDXL images a day' is 200,000
    images a day, not a 204,800-token sequence; '1000 calls' after '300 concurrent calls' is 1,000 streams)."""
    if not text or any(k in new for k in ("qps", "load", "concurrency", "daily_users", "token_rate", "model")):
        return new
    t = text.lower()
    bare = _bare_change(old, t) if not (new.keys() - {"seq_len", "tokens", "dataset_items", "items", "gpus"}) else {}
    if bare:
        return {**{k: v for k, v in new.items() if k not in ("seq_len", "tokens", "dataset_items", "items", "gpus")},
                **bare}
    m = _AMOUNT.search(t)
    if not m:
        return new
    try:
        n = float(m.group(1).replace(",", "")) * _MULT.get(m.group(2) or "", 1)
    except ValueError:
        return new
    after = t[m.end():m.end() + 16]
    load = old.get("load") or {}
    period = _AMOUNT_PERIOD.search(after) or _AMOUNT_PERIOD.search(t[max(0, m.start() - 8):m.start()])
    said = next((g for g in period.groups() if g), None) if period else None
    if load.get("count") and old.get("qps") and said and _PERIOD_OF.get(said) == load.get("period") and n > 0:
        ratio = n / load["count"]
        out = {k: v for k, v in new.items() if k not in ("seq_len", "tokens", "dataset_items", "items")}
        return {**out, "qps": float(f"{old['qps'] * ratio:.5g}"), "load": {**load, "count": n}}
    if old.get("concurrency") and _AMOUNT_STREAMS.match(after.strip().lstrip("个")) and 1 <= n <= 100_000:
        out = {k: v for k, v in new.items() if k not in ("seq_len", "tokens", "dataset_items", "items")}
        return {**out, "concurrency": int(n)}
    return new


def _rescaled_gpus(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """'same but 2 nodes' after 'one 8 x H100 node' (or after '8 H100s', one machine's worth): the machines change and
    each keeps its cards, 16 GPUs in all. A count over 8 with no node count said was never one machine's, so it is
    spread over the new nodes as it is."""
    if "nodes" not in new or "gpus" in new or not old.get("gpus"):
        return {}
    nodes = old.get("nodes") or (1 if old["gpus"] <= 8 else None)
    if not nodes or old["gpus"] % nodes:
        return {}
    return {"gpus": old["gpus"] // nodes * new["nodes"]}


# a flavor name ('p2s.2xlarge.8', 'g6e.12xlarge', 'gpu_1x_a10', 'a2-highgpu-1g'): something to explain
_FLAVOR_LIKE = re.compile(r"\b[a-z]+\d*[a-z]*\.\d*x?large(?:\.\d+)?\b|\bgpu_\d+x_\w+|\b[a-z]\d+-\w*gpu-\w+")


def _another_card(aside: dict[str, Any], new: dict[str, Any]) -> bool:
    """A card named after a comparison of others ('what if we int4 it and use the A10 instead?'): the job on it."""
    sides = (aside.get("slots") or {}).get("gpu_models") or []
    return bool(new.get("gpu_model")) and new["gpu_model"] not in sides and not new.get("gpu_models")


def _nothing_to_explain(parse: Parse, new: dict[str, Any]) -> bool:
    """An 'explain' question with no subject (no topic, GPU or flavor named) that only carries job slots ('what's the
    cheapest setup that actually works?' after an answer): the job refined, not a request for the help text."""
    named = parse.slots.topic or new.get("gpu_model") or new.get("gpu_models")
    return not named and not _FLAVOR_LIKE.search(parse.text.lower())


def _choices_for(spec: dict[str, Any], slots: dict[str, Any], text: str) -> dict[str, Any]:
    """The first `choices_when` entry whose slots the job has and whose cues the text has ('caption 10B images':
    vision-language models as the buttons; 'embeddings for 100 QPS': encoders), else nothing: the slot's own
    question and choices stand."""
    low = f"{text.lower()} "
    return next((alt for alt in spec.get("choices_when", [])
                 if all(slots.get(k) == v for k, v in (alt.get("slots") or {}).items())
                 and (not alt.get("cues") or any(c in low for c in alt["cues"]))), {})


def _ask_intent(state: dict[str, Any], new: dict[str, Any], ambiguous: list[str], parse: Parse,
                forms: dict[str, Any], lang: str, form: str = "intent") -> tuple[dict[str, Any], Decision]:
    """A model or GPU named with no job ('is the h20 any good for deepseek r1?'), or a vague opener about GPUs and
    models ('need a gpu for ML', '想跑个大模型，给个配置'): one question, what the job is, with a button for each."""
    spec = forms[form]
    _new_job(state, keep_slots=False)
    state["slots"] = dict(new)
    if ambiguous:
        state["candidates"] = {c: parse.candidate_params.get(c) for c in ambiguous}
    state.update(intent=None, pending="intent", follow_ups=1, asked=["intent"])
    labels = (spec.get("choice_labels") or {}).get(lang, {})
    return state, Decision("ask", None, dict(new), missing=["intent"], question=spec["question"][lang],
                           choices=list(spec.get("choices", [])), choice_labels=labels)


def _usual_method(slots: dict[str, Any], forms: dict[str, Any]) -> dict[str, Any] | None:
    """The method the job's field settles when the user names none (rules/dialogue.yaml `usual`), with why, as the
    answer's assumption ({"method": "full", "method_why": "whole_model"}); None when it is the user's choice."""
    spec = (forms.get("slots") or {}).get("method") or {}
    if slots.get("method"):
        return None
    kind = _job_kind(slots, forms)
    params = slots.get("params_b")
    for usual in spec.get("usual", []):
        if usual.get("kinds") and kind not in usual["kinds"]:
            continue
        if not all(slots.get(s) for s in usual.get("slots", [])):
            continue
        if usual.get("max_params_b") is not None and (params is None or params > usual["max_params_b"]):
            continue
        return {"method": usual["method"], "method_why": usual["because"]}
    return None


def _missing(intent: str, slots: dict[str, Any], ambiguous: bool, forms: dict[str, Any]) -> list[str]:
    out = []
    for slot in forms["forms"].get(intent, []):
        spec = forms["slots"][slot]
        if slot == "model" and ambiguous and not slots.get("model"):
            out.append(slot)
            continue
        if slot == "method" and _usual_method(slots, forms):
            continue
        if not any(slots.get(s) is not None for s in spec.get("satisfied_by", [slot])) and \
                _asked_here(spec.get("ask_when"), slots, forms):
            out.append(slot)
    return out


def _asked_here(when: dict[str, Any] | None, slots: dict[str, Any], forms: dict[str, Any]) -> bool:
    """A slot that only changes the answer for some jobs (`ask_when`: the kinds of job, and the slots that must be
    known, e.g. a dataset's size once there is a deadline to meet). The job's kind is the one said ('detection',
    'ASR'), else the named model's (forms['model_kinds'], filled from the knowledge base when the turn is built)."""
    if not when:
        return True
    kind = _job_kind(slots, forms)
    if when.get("kinds") and kind not in when["kinds"]:
        return False
    return all(slots.get(s) is not None for s in when.get("slots", []))


def _job_kind(slots: dict[str, Any], forms: dict[str, Any]) -> str | None:
    """The job's kind: the one said ('detection', 'ASR'), else the named model's (forms['model_kinds'], filled from
    the knowledge base when the turn is built); None for a model known only by its size."""
    return slots.get("kind") or (forms.get("model_kinds") or {}).get(slots.get("model") or "")
