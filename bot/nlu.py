"""Understand a free-text question: intent, and the slots of DESIGN.md, with scores and runners-up.

Vocabulary is data (rules/lexicon.yaml, and the knowledge base's aliases). The steps: normalise the text, correct
misspelt domain words (rapidfuzz, explicit cut-off), find model / GPU / provider names as aliases on word
boundaries (exact first, then fuzzy with a cut-off; a family plus a size that fits several generations is kept as
ambiguous, never guessed), then numbers with their units, then keyword cues for everything else. Deterministic:
the same text always gives the same Parse.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml
from rapidfuzz import fuzz, process

from .knowledge import KnowledgeBase
from .models import Slots
from .text import ZH_NUMERAL_CHARS, has_cjk, norm_key, normalize, zh_to_number

MAX_CHARS = 4000          # longer input is cut: no question needs more, and matching stays fast
MODEL_FUZZY_CUTOFF = 88
GPU_FAMILIES = {"a100": ["a100-40gb", "a100-80gb"], "v100": ["v100-16gb", "v100-32gb"],
                "h100": ["h100-sxm", "h100-pcie", "h100-nvl"]}
NUM = rf"(\d+(?:\.\d+)?|[{ZH_NUMERAL_CHARS}]+)"


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

    def as_dict(self) -> dict[str, Any]:
        return {"lang": self.lang, "intent": self.intent, "slots": self.slots.filled(),
                "intent_scores": self.intent_scores, "ambiguous": self.ambiguous, "reset": self.reset,
                "out_of_scope": self.out_of_scope, "unknown_model": self.unknown_model,
                "matches": [m.__dict__ for m in self.matches]}


def load_lexicon(rules_dir: Path) -> dict[str, Any]:
    return yaml.safe_load((rules_dir / "lexicon.yaml").read_text(encoding="utf-8"))


class Parser:
    """Built once per (knowledge base, lexicon); `parse` is a pure function of the text."""

    def __init__(self, kb: KnowledgeBase, lexicon: dict[str, Any]):
        self.kb = kb
        self.lex = lexicon
        self.cutoff = float(lexicon.get("typo_cutoff", 84))

    # ----- tables built once ------------------------------------------------------------------------------------
    @cached_property
    def _typo_words(self) -> list[str]:
        words = set(self.lex.get("typo_vocabulary", []))
        for cues in self.lex["intents"].values():
            words.update(w.strip() for w in cues.get("en", {}) if re.fullmatch(r"[a-z\-]{5,}", w.strip()))
        return sorted(words)

    @cached_property
    def _model_aliases(self) -> list[tuple[str, str]]:
        """(compact alias, model id), longest first so 'gpt2xl' wins over 'gpt2'."""
        pairs = {(k, v) for k, v in self.kb.model_aliases.items() if len(k) >= 3}
        return sorted(pairs, key=lambda p: (-len(p[0]), p[0]))

    @cached_property
    def _gpu_aliases(self) -> list[tuple[str, str]]:
        pairs = {(k, v) for k, v in self.kb.gpu_aliases.items() if len(k) >= 2}
        pairs |= {(fam, fam) for fam in GPU_FAMILIES}
        return sorted(pairs, key=lambda p: (-len(p[0]), p[0]))

    @cached_property
    def _families(self) -> dict[str, list[str]]:
        """Bare family word ('llama', 'qwen') -> model ids, for 'llama 70b'-style mentions."""
        out: dict[str, list[str]] = {}
        for m in self.kb.models.values():
            word = re.match(r"[a-z]+", m.family.lower())
            if word and len(word.group()) >= 3:
                out.setdefault(word.group(), []).append(m.id)
        return out

    # ----- the parse ---------------------------------------------------------------------------------------------
    def parse(self, raw: str) -> Parse:
        text = normalize(raw)[:MAX_CHARS]
        lang = "zh" if has_cjk(text) else "en"
        text = self._fix_typos(text)
        matches: list[Match] = []
        ambiguous: dict[str, list[str]] = {}
        slots: dict[str, Any] = {}
        masked = text

        model, masked = self._find_model(masked, matches, ambiguous)
        if model:
            slots["model"] = model
            slots["params_b"] = self.kb.models[model].params_b
        gpus_named, masked = self._find_gpus(masked, matches)
        if len(gpus_named) >= 2:
            slots["gpu_models"] = gpus_named
        elif gpus_named:
            slots["gpu_model"] = gpus_named[0]
        provider = self._find_provider(text)
        if provider:
            slots["provider"] = provider
        self._numbers(masked, slots, "model" in slots or "model" in ambiguous)
        self._keywords(text, slots)
        unknown = None
        if "model" not in slots and "model" not in ambiguous and "params_b" not in slots:
            unknown = self._unknown_model_word(text)
        scores = self._intent_scores(text, slots)
        reset = self._is_reset(text)
        intent, oos = self._decide_intent(text, scores, slots, ambiguous)
        if intent not in ("train", "finetune") and "method" in slots and intent is not None:
            if intent == "inference":
                slots.pop("method")
        return Parse(text=text, lang=lang, intent=intent, intent_scores=scores, slots=Slots(**slots),
                     matches=matches, ambiguous=ambiguous, reset=reset, out_of_scope=oos, unknown_model=unknown)

    def _fix_typos(self, text: str) -> str:
        def fix(m: re.Match) -> str:
            word = m.group()
            if len(word) < 5 or word in self._typo_words:
                return word
            best = process.extractOne(word, self._typo_words, scorer=fuzz.ratio, score_cutoff=self.cutoff)
            return best[0] if best else word
        return re.sub(r"[a-z][a-z\-]{4,}", fix, text)

    # names on word boundaries: the compact text drops spaces/dashes; a map keeps original positions
    @staticmethod
    def _compact(text: str) -> tuple[str, list[int]]:
        chars, pos = [], []
        for i, ch in enumerate(text):
            if ch in " -_/()（）":
                continue
            chars.append(ch)
            pos.append(i)
        return "".join(chars), pos

    @staticmethod
    def _boundary_ok(text: str, start: int, end: int) -> bool:
        before = text[start - 1] if start > 0 else " "
        after = text[end] if end < len(text) else " "
        return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())

    def _find_alias(self, text: str, aliases: list[tuple[str, str]]) -> list[tuple[str, int, int, str]]:
        compact, pos = self._compact(text)
        found: list[tuple[str, int, int, str]] = []
        taken: list[tuple[int, int]] = []
        for key, rid in aliases:
            start = compact.find(key)
            while start != -1:
                s, e = pos[start], pos[start + len(key) - 1] + 1
                if self._boundary_ok(text, s, e) and not any(s < te and ts < e for ts, te in taken):
                    found.append((rid, s, e, text[s:e]))
                    taken.append((s, e))
                start = compact.find(key, start + 1)
        return sorted(found, key=lambda f: f[1])

    def _find_model(self, text: str, matches: list[Match], ambiguous: dict[str, list[str]]) -> tuple[str | None, str]:
        found = self._find_alias(text, self._model_aliases)
        if found:
            # the last model named wins ("actually the 72b one"), but distinct mentions are kept as runners-up
            rid, s, e, span = found[-1]
            others = sorted({f[0] for f in found if f[0] != rid})
            matches.append(Match("model", rid, span, 100.0, [(o, 100.0) for o in others]))
            for _rid, s2, e2, _ in found:
                text = text[:s2] + " " * (e2 - s2) + text[e2:]
            return rid, text
        # a family word and a size: "llama 70b", "qwen 7b"
        fam = re.search(r"\b([a-z]{3,})\s*-?\s*(\d+(?:\.\d+)?)\s*([bm])\b", text)
        if fam and fam.group(1) in self._families:
            size = float(fam.group(2)) / (1000 if fam.group(3) == "m" else 1)
            cands = sorted(mid for mid in self._families[fam.group(1)]
                           if abs(self.kb.models[mid].params_b - size) / size < 0.2)
            if len(cands) == 1:
                matches.append(Match("model", cands[0], fam.group(), 90.0))
                return cands[0], text[:fam.start()] + " " * len(fam.group()) + text[fam.end():]
            if len(cands) > 1:
                ambiguous["model"] = cands
                matches.append(Match("model", None, fam.group(), 0.0, [(c, 90.0) for c in cands]))
                return None, text[:fam.start()] + " " * len(fam.group()) + text[fam.end():]
        # fuzzy: model-like tokens ("lamma3-8b", "deepsek-v3") against the alias keys
        for m in re.finditer(r"[a-z][a-z0-9.\-]*\d[a-z0-9.\-]*(?:\s+[0-9.]+[bm]\b)?", text):
            key = norm_key(m.group())
            if len(key) < 4:
                continue
            best = process.extract(key, [a for a, _ in self._model_aliases], scorer=fuzz.ratio, limit=3,
                                   score_cutoff=MODEL_FUZZY_CUTOFF)
            if best:
                ids = []
                for alias, score, idx in best:
                    rid = self._model_aliases[idx][1]
                    if rid not in [i for i, _ in ids]:
                        ids.append((rid, score))
                top = ids[0]
                if len(ids) > 1 and ids[1][1] >= top[1] - 1:
                    ambiguous["model"] = [i for i, _ in ids]
                    matches.append(Match("model", None, m.group(), top[1], ids))
                    return None, text
                matches.append(Match("model", top[0], m.group(), top[1], ids[1:]))
                return top[0], text[:m.start()] + " " * len(m.group()) + text[m.end():]
        return None, text

    def _find_gpus(self, text: str, matches: list[Match]) -> tuple[list[str], str]:
        found = self._find_alias(text, self._gpu_aliases)
        out: list[str] = []
        for rid, s, e, span in found:
            if rid not in out:
                out.append(rid)
                matches.append(Match("gpu_model", rid, span, 100.0))
            text = text[:s] + " " * (e - s) + text[e:]
        return out, text

    def _find_provider(self, text: str) -> str | None:
        found = self._find_alias(text, sorted(self.kb.provider_aliases.items(), key=lambda p: -len(p[0])))
        return found[-1][0] if found else None

    def _unknown_model_word(self, text: str) -> str | None:
        m = re.search(r"\b([a-z][a-z0-9.\-]*\d+(?:\.\d+)?[bm])\b", text)
        return m.group(1) if m else None

    # ----- numbers ---------------------------------------------------------------------------------------------
    def _numbers(self, text: str, slots: dict[str, Any], have_model: bool) -> None:
        t = text
        num = _to_num
        # nodes and GPUs: "两机十六卡", "2 nodes x 8 gpus", "单机八卡", "8卡", "4 x a100", "两张4090"
        m = re.search(rf"(单|{NUM[1:-1]})\s*(?:台机器|台服务器|台|机|个节点|节点|nodes?|machines?|servers?)\s*[,x*×]?\s*"
                      rf"(?:每台|每机|每个节点|each with|with|of)?\s*{NUM}\s*(?:张|块|个)?\s*(?:卡|gpus?|cards?|显卡)"
                      rf"(\s*(?:each|per node|per machine|每台))?", t)
        if m:
            nodes = 1 if m.group(1) == "单" else num(m.group(1))
            per = num(m.group(2))
            each = bool(m.group(3)) or bool(re.search(r"每台|每机|每个节点|each with", m.group()))
            if nodes and per:
                slots["nodes"] = int(nodes)
                slots["gpus"] = int(nodes * per) if each else int(per)
            t = t.replace(m.group(), " ")
        else:
            m = re.search(rf"{NUM}\s*(?:台机器|台服务器|个节点|节点|nodes?|machines?|台)(?![a-z])", t)
            if m and num(m.group(1)):
                slots["nodes"] = int(num(m.group(1)))
            if re.search(r"单机|single node|one node|one machine|single machine", t):
                slots.setdefault("nodes", 1)
            m = (re.search(rf"{NUM}\s*(?:张|块|个)?\s*(?:卡|gpus?\b|cards?\b|显卡|块显卡)", t)
                 or re.search(rf"{NUM}\s*(?:张|块)\s*[a-z]", t)
                 or re.search(rf"(?<![\w.])(\d+)\s*[x*×]\s*[a-z]", t)
                 or re.search(rf"[a-z0-9]\s*[x*×]\s*(\d+)\b(?!\s*[bmk])", t))
            if m and num(m.group(1)):
                val = int(num(m.group(1)))
                if 0 < val <= 4096:
                    slots["gpus"] = val
            elif re.search(r"单卡|一张卡|single gpu|one gpu|1 gpu|a single card", t):
                slots["gpus"] = 1
        # training tokens before sizes: "2T tokens", "1000亿 token"
        m = re.search(rf"{NUM}\s*(t|b|m|k|万亿|亿|万|千亿|trillion|billion|million)?\s*(?:tokens?|个?token|词元)", t)
        if m and m.group(2):
            val = _scaled(num(m.group(1)), m.group(2))
            if val and val >= 1e6:
                slots["tokens"] = val
                t = t.replace(m.group(), " ")
        # parameter count when no model is named: "30b", "1.5B", "124m", "70亿参数", "千亿参数"
        if not have_model:
            m = (re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(b|bn|billion|m|million)\b(?!\s*tokens?)", t)
                 or re.search(rf"{NUM}\s*(亿|千亿|万亿)\s*(?:参数|级|规模|的模型|模型)?", t)
                 or re.search(rf"(千亿|万亿|百亿)", t))
            if m:
                if m.lastindex == 1 and m.group(1) in ("千亿", "万亿", "百亿"):
                    val = {"百亿": 10.0, "千亿": 100.0, "万亿": 1000.0}[m.group(1)]
                else:
                    n = num(m.group(1))
                    unit = m.group(2)
                    val = None
                    if n is not None:
                        val = {"b": n, "bn": n, "billion": n, "m": n / 1000, "million": n / 1000,
                               "亿": n / 10, "千亿": n * 100, "万亿": n * 1000}[unit]
                if val and 0.001 <= val <= 5000:
                    slots["params_b"] = round(val, 4)
        # context / sequence length
        m = (re.search(rf"(?:上下文|context(?: length| window)?|seq(?:uence)?[ _-]?len(?:gth)?|序列长度|max[_ ]len(?:gth)?|"
                       rf"长度|窗口)\s*(?:of|is|为|是|=|:)?\s*(\d+(?:\.\d+)?)\s*(k)?", t)
             or re.search(r"(\d+(?:\.\d+)?)\s*(k)\s*(?:上下文|context|ctx|tokens?|长文本|长度|序列|seq)", t)
             or re.search(r"(\d{3,6})\s*(k)?\s*(?:tokens? (?:of )?context|长度的|token 上下文|的上下文)", t)
             or re.search(r"(?:seq(?:uence)?s? of|sequences of)\s*(\d+)\s*(k)?", t))
        if m:
            val = float(m.group(1)) * (1024 if m.group(2) else 1)
            if 16 <= val <= 10_000_000:
                slots["seq_len"] = int(val)
        # batch size
        m = re.search(r"(?:batch[ _-]?size|batch|bs|mbs|micro[ -]?batch|批大小|批次大小)\s*(?:of|is|为|是|=|:)?\s*(\d+)", t)
        if m:
            slots["batch_size"] = int(m.group(1))
        # concurrency and qps
        m = (re.search(rf"{NUM}\s*(?:个)?\s*(?:concurrent|simultaneous|parallel)?\s*(?:users?|用户|人同时|人在线|个用户|并发|路并发|路)", t)
             or re.search(rf"(?:并发|concurrency|concurrent users?|simultaneous users?)\s*(?:of|is|为|是|=|:|约|大概|量)?\s*{NUM}", t))
        if m and num(m.group(1)):
            val = num(m.group(1))
            if re.search(r"[万]", m.group()) and val < 100:
                val *= 10000
            if 1 <= val <= 1e7:
                slots["concurrency"] = int(val)
        m = re.search(r"(\d+(?:\.\d+)?)\s*(?:qps|rps|requests? per second|req/s|个请求每秒)|(?:qps|每秒)\s*(?:约|大概|=|:)?\s*(\d+)", t)
        if m:
            slots["qps"] = float(m.group(1) or m.group(2))
        # budget amounts: "5000 元/月", "$3/hour", "每月 1 万", "under $2/hr", "预算 2万"
        m = (re.search(r"(\$|¥|￥|usd|rmb|cny)\s*(\d+(?:\.\d+)?)\s*(k|万)?\s*(?:/|per|每|an|a)?\s*(hour|hr|h|小时|day|天|month|mo|月|year|yr|年)?", t)
             or re.search(rf"{NUM}\s*(k|万|千)?\s*(元|块|rmb|人民币|dollars?|usd|美元|美金|刀)\s*(?:/|每|一|per|a)?\s*(小时|hour|hr|h|天|day|月|month|年|year)?", t)
             or re.search(rf"(?:每|per)\s*(小时|月|天|年|hour|month|day|year)\s*{NUM}\s*(k|万|千)?\s*(元|块|美元|刀|dollars?)?", t))
        if m:
            _budget_amount(m, slots)
        # deadline: "两周内", "within a month", "in 10 days", "3 天内"
        m = (re.search(rf"{NUM}\s*(天|周|个月|月|星期|days?|weeks?|months?)\s*(?:内|之内|以内|完成|搞定|跑完)", t)
             or re.search(rf"(?:within|in|under|before)\s*(?:a|one|{NUM[1:-1]})?\s*(days?|weeks?|months?)\b", t)
             or re.search(r"(?:deadline|due)\s*(?:is|in)?\s*(\d+)\s*(days?|weeks?)", t))
        if m:
            _deadline(m, slots)

    # ----- keyword slots ----------------------------------------------------------------------------------------
    def _cue(self, text: str, phrases) -> str | None:
        for p in sorted(phrases, key=len, reverse=True):
            p = str(p).lower()
            if re.fullmatch(r"[a-z0-9][a-z0-9 \-]*", p):
                if re.search(rf"(?<![a-z0-9]){re.escape(p)}(?![a-z0-9])", text):
                    return p
            elif p in text:
                return p
        return None

    def _keywords(self, text: str, slots: dict[str, Any]) -> None:
        for method in ("qlora", "full", "freeze", "lora"):
            if self._cue(text, self.lex["methods"][method]):
                slots["method"] = method
                break
        for prec in ("nf4", "int4", "int8", "fp8", "bf16", "fp16", "fp32"):
            if self._cue(text, self.lex["precisions"][prec]):
                slots["precision"] = prec
                break
        for level in ("high", "medium", "low"):
            if self._cue(text, self.lex["budget"][level]):
                slots["budget"] = level
                break
        for level in ("long", "short"):
            if self._cue(text, self.lex["duration"][level]):
                slots["duration"] = level
                break
        if "duration" not in slots:
            m = re.search(rf"{NUM}\s*(小时|天|周|个月|月|年|hours?|days?|weeks?|months?|years?)", text)
            if m and _to_num(m.group(1)) and "deadline_days" not in slots:
                days = _to_num(m.group(1)) * {"小": 1 / 24, "h": 1 / 24, "天": 1, "d": 1, "周": 7, "w": 7,
                                                "个": 30, "月": 30, "m": 30, "年": 365, "y": 365}[m.group(2)[0]]
                if re.search(r"跑|run|train|训练|用|rent|租|need|for", text):
                    slots["duration"] = "long" if days >= 60 else "short"
        for level in ("low", "normal"):
            if self._cue(text, self.lex["latency"][level]):
                slots["latency"] = level
                break
        for region, names in self.lex["regions"].items():
            if self._cue(text, names):
                slots["region"] = region
                break
        for topic, words in self.lex["topics"].items():
            if self._cue(text, words):
                slots["topic"] = topic
                break

    def _intent_scores(self, text: str, slots: dict[str, Any]) -> dict[str, float]:
        scores: dict[str, float] = {}
        padded = f" {text} "
        for intent, cues in self.lex["intents"].items():
            total = 0.0
            for lang in ("en", "zh"):
                for phrase, weight in (cues.get(lang) or {}).items():
                    p = str(phrase).lower()
                    if p.startswith(" ") or p.endswith(" "):
                        hit = p in padded
                    elif re.fullmatch(r"[a-z0-9][a-z0-9 \-/.']*", p):
                        hit = re.search(rf"(?<![a-z0-9]){re.escape(p)}(?![a-z0-9])", text) is not None
                    else:
                        hit = p in text
                    if hit:
                        total += float(weight)
            scores[intent] = total
        if slots.get("method") in ("lora", "qlora", "freeze"):
            scores["finetune"] += 1.5
        if slots.get("concurrency") or slots.get("qps") or slots.get("latency") == "low":
            scores["inference"] += 1.5
        if slots.get("tokens"):
            scores["train"] += 1.5
        if len(slots.get("gpu_models") or []) >= 2:
            scores["compare"] += 1.5
        return {k: round(v, 2) for k, v in scores.items()}

    def _is_reset(self, text: str) -> bool:
        stripped = re.sub(r"[\s.!?,。！？]+", " ", text).strip()
        return any(stripped == r or stripped.startswith(r + " ") for r in self.lex["reset"]) and len(stripped) < 40

    def _decide_intent(self, text: str, scores: dict[str, float], slots: dict[str, Any],
                       ambiguous: dict[str, list[str]]) -> tuple[str | None, bool]:
        order = ["finetune", "train", "inference", "rendering", "compare", "explain", "billing", "help"]
        job = {k: scores[k] for k in ("finetune", "train", "inference", "rendering")}
        info = {k: scores[k] for k in ("compare", "explain", "billing", "help")}
        has_entity = any(k in slots for k in ("model", "params_b", "gpu_model", "gpu_models")) or bool(ambiguous)
        domain = has_entity or self._cue(text, self.lex["domain_cues"]["en"] + self.lex["domain_cues"]["zh"])
        oos_cue = self._cue(text, self.lex["out_of_scope_cues"]["en"] + self.lex["out_of_scope_cues"]["zh"])
        if not any(scores.values()) and not has_entity:
            if oos_cue or not domain:
                return None, True
        if oos_cue and not has_entity and max(job.values()) < 3:
            return None, True
        best_job = max(order[:4], key=lambda k: (job[k], -order.index(k)))
        best_info = max(order[4:], key=lambda k: (info[k], -order.index(k)))
        # finetune words beat plain "train" ("用 LoRA 训练" is a fine-tune)
        if job["finetune"] >= 2.5 and job["train"] > 0 and best_job == "train" and job["train"] - job["finetune"] < 2:
            best_job = "finetune"
        if len(slots.get("gpu_models") or []) >= 2 and info["compare"] >= 1.5:
            return "compare", False
        if info[best_info] > 0 and info[best_info] >= job[best_job] + (0 if best_info != "help" else 1):
            if best_info == "help" and (has_entity or job[best_job] > 0):
                pass
            else:
                return best_info, False
        if job[best_job] > 0:
            return best_job, False
        if has_entity:
            # a bare model name with a method is a fine-tune; with nothing else, most likely serving or training
            if slots.get("method"):
                return "finetune", False
            if slots.get("concurrency") or slots.get("qps"):
                return "inference", False
            if info[best_info] > 0:
                return best_info, False
            return None, False
        if info[best_info] > 0:
            return best_info, False
        return (None, not domain)


def _to_num(word: str | None) -> float | None:
    if word is None:
        return None
    try:
        return float(word)
    except ValueError:
        return zh_to_number(word)


def _scaled(n: float | None, unit: str) -> float | None:
    if n is None:
        return None
    mult = {"t": 1e12, "trillion": 1e12, "万亿": 1e12, "b": 1e9, "billion": 1e9, "千亿": 1e11, "亿": 1e8,
            "m": 1e6, "million": 1e6, "万": 1e4, "k": 1e3}
    return n * mult.get(unit, 1)


_PERIOD = {"hour": "hour", "hr": "hour", "h": "hour", "小时": "hour", "day": "day", "天": "day", "month": "month",
           "mo": "month", "月": "month", "year": "year", "yr": "year", "年": "year"}


def _budget_amount(m: re.Match, slots: dict[str, Any]) -> None:
    g = [x for x in m.groups()]
    text = m.group()
    currency = "USD" if re.search(r"\$|usd|dollar|美元|美金|刀", text) else "CNY"
    nums = [x for x in g if x and (re.fullmatch(r"\d+(?:\.\d+)?", x) or (x and all(c in ZH_NUMERAL_CHARS for c in x)))]
    if not nums:
        return
    amount = _to_num(nums[0])
    if amount is None:
        return
    if re.search(r"\d\s*k\b|\dk", text):
        amount *= 1000
    if "万" in text and amount < 1000:
        amount *= 10000
    elif "千" in text and amount < 100:
        amount *= 1000
    period = None
    for x in g:
        if x and x in _PERIOD:
            period = _PERIOD[x]
    slots["budget_amount"] = amount
    slots["budget_currency"] = currency
    slots["budget_period"] = period or "total"


def _deadline(m: re.Match, slots: dict[str, Any]) -> None:
    text = m.group()
    n = None
    for x in m.groups():
        if x and re.fullmatch(r"\d+(?:\.\d+)?", x) or (x and all(c in ZH_NUMERAL_CHARS for c in x)):
            n = _to_num(x)
            break
    if n is None:
        n = 1
    unit = 1
    if re.search(r"周|星期|week", text):
        unit = 7
    elif re.search(r"月|month", text):
        unit = 30
    slots["deadline_days"] = n * unit
