"""A question about the job just planned that asks why ('why not just 4x4090?', '为什么不用4张4090', 'why does it OOM?',
'为什么会爆显存'), or whether a card named can run a job named ('910B 能跑 Qwen2.5-72B 推理吗'): answered with THIS job's
numbers first (bot/plan/why.py), never a primer on the topic. The job and what the dialogue assumed for it are the
session's (the same plan the answer before gave); the session is left as it was, so the next turn refines that job.
"""
from __future__ import annotations

import re
from typing import Any

from bot.conversation.dialogue import _missing, _usual_method
from bot.conversation.intents import JOB_INTENTS
from bot.plan import why as why_math
from bot.records.models import Reply, ViewSection
from bot.render import why as say_why
from bot.render.reply import Citer, sources_line
from bot.render.text import short_text

WHY_NOT = re.compile(r"\bwhy (?:not|no|didn'?t you|don'?t (?:you|we|i)|wouldn'?t|isn'?t|wasn'?t|not just)\b|"
                     r"\bhow come (?:not|you didn'?t)\b|\bwhat'?s wrong with\b|"
                     r"为什么不|为啥不|为何不|怎么不|干嘛不|为什么没(?:有)?(?:用|选|推荐)|不用.{0,12}(?:吗|么)[?？]?$|"
                     # 'A10 不行吗？', 'L4 不行？', 'A10 不可以吗': a question about that card for the job, no refusal
                     r"(?:不行|不可以|不能用|用不了)\s*(?:吗|么|嘛|呢)|(?:不行|不可以)\s*[?？]")
OOM = re.compile(r"(?<![a-z])oom|out of memory|run(?:s|ning)? out of (?:gpu |vram |device )?memory|cuda error: out|"
                 r"爆显存|显存(?:不够|不足|溢出|爆)|oom了|内存溢出")
WHY = re.compile(r"\bwhy\b|\bhow come\b|为什么|为啥|为何|怎么会|原因")
# 'why H100 and not A100?', '为什么选 H100 而不是 A100', 'why this instead of an A100?': the card after it is the one
# set against the plan
INSTEAD = re.compile(r"\band not\b|\bbut not\b|\binstead of\b|\brather than\b|而不是|而非|却不(?:用|选)")
COUNT = re.compile(r"\bso many (?:gpus|cards)\b|\b(?:\d+|two|four|eight) (?:gpus|cards)\b|这么多(?:张)?卡|(?:\d+|两|二|四|八)\s*张(?:卡)?")
CAN_RUN = re.compile(r"能跑|能不能跑|跑得动|跑得了|能否运行|能运行|能不能部署|能部署|能推理|能不能推理|"
                     r"\b(?:can|could) (?:an? |the |one )?(?:[\w.-]+ ){0,3}(?:run|serve|host|train|fine-?tune|handle)\b")


def _assumed(state: dict[str, Any], forms: dict[str, Any]) -> dict[str, Any]:
    """What the dialogue assumed for the job when it answered (the method the field settles, a default size)."""
    intent, slots = state["intent"], state.get("slots") or {}
    assumed: dict[str, Any] = (_usual_method(slots, forms) if intent in ("finetune", "train") else None) or {}
    for slot in _missing(intent, slots, bool(state.get("candidates")), forms):
        spec = forms["slots"][slot]
        if slot == "model":
            sizes = [p for p in (state.get("candidates") or {}).values() if p]
            assumed["params_b"] = max(sizes) if sizes else spec.get("assume_params_b", 7)
        elif "assume" in spec:
            assumed[slot] = spec["assume"]
    return assumed


def _new_job(parse) -> bool:
    s = parse.slots
    return bool(s.model or s.params_b or s.arch or parse.reset)


def _alternative(parser, parse) -> tuple[str | None, int | None]:
    """The card (and count) a why-question sets against the plan: the one after 'and not' / 'instead of' / '而不是',
    else after 'why not' / '为什么不用', else the one named."""
    text = parse.text
    cue = INSTEAD.search(text) if WHY.search(text) else None
    cue = cue or WHY_NOT.search(text)
    if cue:
        tail = parser.parse(text[cue.end():]).slots
        named = tail.gpu_model or (tail.gpu_excluded or [None])[0] or (tail.gpu_models or [None])[0]
        if named:
            return named, tail.gpus
    s = parse.slots
    return (s.gpu_excluded or [None])[0] or s.gpu_model or (s.gpu_models or [None])[-1], s.gpus


def asks_why(parse, state: dict[str, Any]) -> str | None:
    """'why_not', 'why_oom' or 'why_count' when the turn asks that about the job the session answered, else None."""
    if not state or not state.get("answered") or state.get("intent") not in JOB_INTENTS or _new_job(parse):
        return None
    text = parse.text
    s = parse.slots
    named = s.gpu_model or s.gpu_excluded or s.gpu_models
    if OOM.search(text) and (WHY.search(text) or not named):
        return "why_oom"
    if (WHY_NOT.search(text) or (WHY.search(text) and INSTEAD.search(text))) and (named or s.gpus):
        return "why_not"
    if WHY.search(text) and COUNT.search(text) and not (s.gpu_excluded or s.gpu_models):
        return "why_count"
    return None


def answer_why(core, parse, state: dict[str, Any], kind: str) -> tuple[Reply, dict[str, Any]] | None:
    """The reply to a why question about the session's job: its verdict line first, then the reasons or fixes."""
    intent, slots = state["intent"], dict(state.get("slots") or {})
    lang = state.get("lang") or parse.lang
    assumed = _assumed(state, core.forms)
    s = parse.slots
    if kind == "why_not":
        named, count = _alternative(core.parser, parse)
        v = why_math.why_not(core.advisor, intent, slots, assumed, lang, named, count) if named or count else None
        if v is None:
            return None
        cite = Citer(core.kb)
        lines = say_why.why_not_lines(core.templates, v, lang, cite)
    elif kind == "why_count":
        v = why_math.why_oom(core.advisor, intent, slots, assumed, lang)
        if v is None or v["gpus"] < 2 or (s.gpu_model and s.gpu_model not in core.advisor._gpu_ids(s.gpu_model)):
            return None
        v = {**v, "kind": "why_count"}
        cite = Citer(core.kb)
        lines = say_why.why_count_lines(core.templates, v, lang)
    else:
        # 'why does it OOM?' after an answer on their own cards ('Yours: 1 x A100 40GB'): about those cards, never
        # a rental the answer did not lead with
        own = not s.gpu_model and slots.get("gpu_model") and slots.get("gpus")
        v = why_math.why_oom(core.advisor, intent, slots, assumed, lang, slots["gpu_model"] if own else s.gpu_model,
                             slots["gpus"] if own else s.gpus)
        if v is None:
            return None
        cite = Citer(core.kb)
        lines = say_why.why_oom_lines(core.templates, v, lang)
    citations = cite.citations()
    text = "\n".join(lines) + ("\n" + sources_line(citations, lang, core.templates) if citations else "")
    reply = Reply(status="info", lang=lang, intent="explain", slots={k: v for k, v in slots.items() if k != "topic"},
                  kb_version=core.version, text=text, citations=citations, verdict={**v, "line": lines[0]})
    return reply, {**state, "lang": lang}


def asks_can_run(parse) -> bool:
    """'910B 能跑 Qwen2.5-72B 推理吗', 'can Ascend 910B serve llama 70b': a card named and whether it can run a job."""
    return bool(parse.slots.gpu_model and CAN_RUN.search(parse.text))


def can_run_first(core, parse, d, lang: str, asked_before: bool = False
                  ) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """'910B 能跑 Qwen2.5-72B 推理吗', 'can an A100 serve llama 3 70b?': yes or no, the fewest cards and the stack, as the
    section said before the plan (and the verdict), or None when the turn does not ask that."""
    g = d.slots.get("gpu_model")
    if not g or d.intent not in JOB_INTENTS or d.intent == "rendering" or \
            not (CAN_RUN.search(parse.text) or asked_before) or \
            d.slots.get("gpus") or not (d.slots.get("model") or d.slots.get("params_b")):
        return None
    v = why_math.can_run(core.advisor, d.intent, d.slots, d.assumed, lang, g)
    if v is None:
        return None
    line = say_why.can_run_line(core.templates, v, lang)
    return {"key": "verdict", "lines": [line], "sources": v["sources"]}, {**v, "line": line}


# 'wouldn't 8x A10 be cheaper?', 'would 2x 4090 work instead?', 'is 4x4090 enough?', '4090 行不行': the job planned
# again on those cards, with the verdict against the plan before said first
REPLAN_ASK = re.compile(r"cheaper|faster|\bwork\b|\benough\b|\bok(?:ay)?\b|\bfit\b|\binstead\b|what about|"
                        r"what if|how about|why not|行不行|不行[吗么嘛呢?？]|不行$|不可以[吗么?？]|为什么不|为啥不|可以吗|可不可以|够吗|够不够|能不能|便宜|更快|换成|改用|呢[?？]?$")


def replan_verdict(core, parse, before: dict[str, Any], decision, reply: Reply, lang: str) -> None:
    """A follow-up that moves the job answered onto other cards and asks whether that is better ('wouldn't 8x A10
    be cheaper?'): the re-planned answer is led by the verdict of those cards against the plan before (each side's
    time and cost for the job, bot/plan/why.py why_not), on every surface."""
    changed = {c[0] for c in (decision.changed or [])}
    g = parse.slots.gpu_model
    if not g or "gpu_model" not in changed or reply.view is None or reply.status != "answer" or \
            not before.get("answered") or before.get("intent") not in JOB_INTENTS or not REPLAN_ASK.search(parse.text):
        return
    v = why_math.why_not(core.advisor, before["intent"], dict(before.get("slots") or {}), _assumed(before, core.forms),
                         lang, g, parse.slots.gpus)
    if v is None:
        return
    line = say_why.why_not_lines(core.templates, v, lang, reasons_below=False)[0]
    reply.view.sections.insert(0, ViewSection(key="verdict", lines=[line]))
    reply.text = short_text(reply.view, core.templates, lang)
    reply.verdict = {**v, "line": line}


_SIDES = re.compile(r"\s+(?:or|vs\.?|versus|against|compared (?:to|with))\s+|还是|或者|或|和|跟|与|对比|比|/")


def side_counts(parser, text: str, names: list[str]) -> dict[str, int]:
    """'8xA100 or 4xH100', '4 张 4090 还是 1 张 A100': the count said with each GPU compared, by its side of the
    'or'; {} unless every count said belongs to one GPU (a count said once for the job is both sides')."""
    out: dict[str, int] = {}
    for part in _SIDES.split(text):
        s = parser.parse(part).slots
        g = s.gpu_model or ((s.gpu_models or [None])[0] if len(s.gpu_models or []) == 1 else None)
        if g in names and s.gpus and g not in out:
            out[g] = int(s.gpus)
    return out if len(out) >= 1 and sum(1 for n in names if n in out) == len(out) and \
        (len(out) == len(names) or _said_beside(text, names, out)) else {}


def _said_beside(text: str, names: list[str], out: dict[str, int]) -> bool:
    """One side counted and the other not ('8xA100 or H100'): kept only when the count is written on its card."""
    return bool(re.search(r"\d\s*(?:x|×|\*|张|块)\s*\S", text))
