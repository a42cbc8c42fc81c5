"""Understand a free-text question: intent, and the slots of DESIGN.md, with scores and runners-up.

Vocabulary is data (rules/lexicon.yaml, and the knowledge base's aliases). The steps:
1. normalise: NFKC (full width -> half width), lower case, control characters out, common Chinese typos and
   traditional characters mapped (lexicon zh_typos / zh_variants);
2. spelling: English tokens that are not known words are corrected to the closest vocabulary word when the
   optimal-string-alignment distance is within the lexicon's cut-off; a tie is no correction;
3. names: models, GPUs and providers as knowledge-base aliases on word boundaries (exact first). A family and a size
   ("llama 70b") or a generation without a size ("qwen2.5") that fits several models - or that omits the generation
   of the one model it fits - is kept as ambiguous with its candidates, never guessed; a misspelt name is matched
   fuzzily (rapidfuzz ratio, explicit cut-off and margin over the runner-up). Names are then masked out of the text;
4. numbers with their units (7B, 70亿, 千亿, 124M, 8k context, 两机十六卡, 8x A100, $3/hr, 两周内);
5. keyword cues for the other slots, and weighted cues for the intents, then a few explicit decision rules.
Deterministic: the same text always gives the same Parse. Fast: everything is compiled once per Parser.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Iterable

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from bot.knowledge.loader import GPU_FAMILIES, KnowledgeBase, parse_yaml
from bot.records.models import Slots
from bot.records.text import ZH_NUMERAL_CHARS, has_cjk, norm_key, normalize, zh_to_number

MAX_CHARS = 4000          # longer input is cut: no question needs more, and matching stays fast
MODEL_FUZZY_CUTOFF = 86   # rapidfuzz ratio for a misspelt model name ...
MODEL_FUZZY_MARGIN = 4    # ... that must beat the best other model by this much, or the match is ambiguous
FAMILY_SIZE_TOLERANCE = 0.2
MAX_FUZZY_TOKENS = 12
JOB_INTENTS = ("finetune", "train", "inference", "rendering")     # order breaks ties
M_MARK, G_MARK = "\ue000", "\ue001"                               # where a model / GPU name was
_SEPARATORS = " -_/()"

_ZH_NUM = f"[{ZH_NUMERAL_CHARS}]+"
_DIGITS = r"(?<![\d.])\d+(?:\.\d+)?"
_ZH_RUN = f"(?<![{ZH_NUMERAL_CHARS}]){_ZH_NUM}"


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

    def as_dict(self) -> dict[str, Any]:
        return {"lang": self.lang, "intent": self.intent, "slots": self.slots.filled(),
                "intent_scores": self.intent_scores, "ambiguous": self.ambiguous, "reset": self.reset,
                "out_of_scope": self.out_of_scope, "unknown_model": self.unknown_model, "unsure": self.unsure,
                "matches": [m.__dict__ for m in self.matches]}


def load_lexicon(rules_dir: Path) -> dict[str, Any]:
    return parse_yaml((rules_dir / "lexicon.yaml").read_text(encoding="utf-8"))


# ----- cue phrases ---------------------------------------------------------------------------------------------------
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


# ----- the parser ----------------------------------------------------------------------------------------------------
class Parser:
    """Built once per (knowledge base, lexicon); `parse` is a pure function of the text."""

    def __init__(self, kb: KnowledgeBase, lexicon: dict[str, Any]):
        self.kb = kb
        self.lex = lexicon
        lx = lexicon
        self.words = {str(k): float(v) for k, v in (lx.get("number_words") or {}).items()}
        en_words = sorted((w for w in self.words if w.isascii() and w not in ("a", "an")), key=len, reverse=True)
        self.EN_NUM = "(?:" + "|".join(re.escape(w) for w in en_words) + ")"
        # a number starts where a run of digits (or numerals) starts: no quadratic scans of long digit runs
        self.NUM = rf"({_DIGITS}|{_ZH_RUN}|半|(?<![a-z]){self.EN_NUM}(?![a-z]))"
        self.NUM_A = rf"({_DIGITS}|{_ZH_RUN}|半|(?<![a-z])(?:an?|{self.EN_NUM[3:-1]})(?![a-z]))"
        self._compile_cues()
        self._compile_numbers()

    # ----- tables built once ------------------------------------------------------------------------------------
    def _compile_cues(self) -> None:
        lx = self.lex
        self.zh_map = {**(lx.get("zh_variants") or {}), **(lx.get("zh_typos") or {})}
        self.zh_map_rx = re.compile("|".join(re.escape(k) for k in sorted(self.zh_map, key=len, reverse=True))) \
            if self.zh_map else None
        self.en_typos = {str(k).lower(): str(v).lower() for k, v in (lx.get("en_typos") or {}).items()}
        # intent cues, longest first across all intents (a longer phrase masks what it covers)
        cues: list[tuple[Cue, str, float]] = []
        for intent, langs in lx["intents"].items():
            for lang in ("en", "zh"):
                for phrase, weight in ((langs or {}).get(lang) or {}).items():
                    cues.append((Cue(str(phrase)), intent, float(weight)))
        self.intent_cues = sorted(cues, key=lambda c: (-len(c[0].phrase), c[0].phrase, c[1]))
        self.intent_names = [i for i in lx["intents"] if i != "neutral"]
        self.recommend = CueSet(_both(lx.get("recommend_cues")))
        self.domain = CueSet(_both(lx.get("domain_cues")))
        self.oos = CueSet(_both(lx.get("out_of_scope_cues")))
        self.unsure = CueSet(_both(lx.get("unsure")))
        self.help_words = CueSet(_both(lx.get("help_words")))
        self.reset_words = [normalize(str(r)) for r in lx.get("reset", [])]
        self.methods = {k: CueSet(v) for k, v in lx["methods"].items()}
        self.precisions = {k: CueSet(v) for k, v in lx["precisions"].items()}
        self.budget = {k: CueSet(v) for k, v in lx["budget"].items()}
        self.duration = {k: CueSet(v) for k, v in lx["duration"].items()}
        self.latency = {k: CueSet(v) for k, v in lx["latency"].items()}
        self.regions = {k: CueSet(v) for k, v in lx["regions"].items()}
        self.topics = {k: CueSet(v) for k, v in lx["topics"].items()}
        self.ordinals = [(Cue(str(k)), int(v)) for k, v in sorted((lx.get("ordinals") or {}).items(),
                                                                 key=lambda kv: (-len(str(kv[0])), str(kv[0])))]
        self.short_days = float(lx.get("short_days", 14))
        self.long_days = float(lx.get("long_days", 180))
        self.qlora_precisions = set(lx.get("qlora_precisions", ["int4", "nf4"]))

    rx_why = re.compile(r"为什么|为啥|怎么会|(?<![a-z])why(?![a-z])")

    def _compile_numbers(self) -> None:
        N, NA = self.NUM, self.NUM_A
        G = G_MARK
        card = r"(?:卡|显卡|gpus?|cards?|accelerators?|npus?)"
        self.rx_nodes = re.compile(rf"(单|{N[1:-1]})\s*(?:台机器|台服务器|台主机|台|机(?!器|房|构)|个节点|节点|nodes?|"
                                   r"machines?|servers?|boxes|hosts?)(?![a-z])")
        self.rx_gpu_counts = [
            re.compile(rf"{N}\s*-?\s*(?:张|块|个|枚)?\s*{card}(?![a-z])"),
            re.compile(rf"{N}\s*(?:[x×*]\s*)?(?:张|块|个)?\s*{G}"),
            re.compile(rf"{G}\s*[x×*]\s*(\d+)(?![\d.])"),
        ]
        self.rx_single = re.compile(r"单卡|单张|单块|一张卡|一块卡|(?<![a-z])(?:a )?(?:single|one) (?:gpu|card)(?![a-z])")
        self.rx_per_node_between = re.compile(r"^\s*[,(]?\s*(?:[x×*]|each with|with|of|每台机器|每台|每机|每个节点|"
                                              r"每节点|per node)?\s*[(]?\s*$")
        self.rx_per_node_after = re.compile(r"^\s*(?:each|per node|per machine|per server|/node|apiece|每台|每机|"
                                            r"的?\s*(?:机器|服务器|节点|主机))")
        self.rx_tokens = re.compile(rf"{N}\s*(t|b|m|k|trillion|billion|million|万亿|千亿|百亿|亿|万)?\s*(?:个)?\s*"
                                    r"(?:tokens?|词元)(?![a-z])")
        self.rx_tokens_after = re.compile(rf"(?:tokens?|词元)\s*(?:数|量)?\s*(?:大概|大约|约|~|:|=|of|about)?\s*{N}\s*"
                                          r"(t|b|m|k|trillion|billion|million|万亿|千亿|百亿|亿|万)(?![a-z])")
        self.rx_params = [
            re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(b|bn|billion|m|million)(?![a-z0-9])"
                       r"(?!\s*(?:tokens?|docs?|documents?|samples?|images?|rows?|examples?|requests?|users?|"
                       r"hours?|条|张|图|样本|token|小时))"),
            re.compile(rf"{N}\s*(亿|千亿|百亿|万亿)(?!\s*(?:tokens?|条|张|次|请求|元|块|美元|人|用户))"),
        ]
        self.rx_seq = [
            re.compile(r"(?:上下文|context(?:\s+(?:length|window|len))?|ctx|seq(?:uence)?(?:[ _-]?len(?:gth)?)?|"
                       r"序列长度|序列|max[_ ]?len(?:gth)?|窗口|长度)\s*(?:of|is|为|是|=|:|长度)?\s*(\d+(?:\.\d+)?)"
                       r"\s*(k|m)?(?![a-z0-9])"),
            re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(k|m)?\s*(?:tokens?\s*(?:of\s*)?)?(?:上下文|context|ctx|"
                       r"seq(?:uence)?(?:[ _-]?len(?:gth)?)?(?![a-z])|序列长度|的上下文|长文本|长度的)"),
            re.compile(r"(?:sequences? of|seqs? of)\s*(\d+)\s*(k)?"),
        ]
        self.rx_batch = re.compile(r"(?<![a-z])(?:batch[ _-]?size|batch|bs|mbs|micro[ -]?batch(?:[ _-]?size)?|批大小|"
                                   r"批次大小|批量大小)\s*(?:of|is|为|是|=|:)?\s*(\d+)(?![\d.])")
        K = r"\s*(k|千|万)?"              # '2k users', '1万并发'
        self.rx_concurrency = [
            re.compile(rf"{N}{K}\s*(?:个)?\s*(?:concurrent|simultaneous|parallel)(?:\s+(?:users?|requests?|sequences?|"
                       r"streams?|sessions?|connections?|people|ppl|clients?))?(?![a-z])"),
            re.compile(rf"{N}{K}\s*(?:个)?\s*(?:video |camera |audio |rtsp |ip )?(?:users?|streams?|ppl|people|clients?|"
                       r"sessions?|cams?|cameras?)(?![a-z])"),
            re.compile(rf"{N}{K}\s*个?\s*(?:人|用户)\s*(?:同时|在线|并发|用|使用)"),
            re.compile(rf"{N}{K}\s*(?:个|路)?\s*(?:用户|并发)"),
            re.compile(rf"(?:并发|concurrency|concurrent users|simultaneous users)\s*(?:数|量)?\s*"
                       rf"(?:of|is|为|是|=|:|约|大概|大约|在|~)?\s*{N}{K}"),
            re.compile(rf"{N}{K}\s*路\s*(?:并发|摄像头|相机|视频|流|监控|通话|直播)"),
            re.compile(rf"{N}{K}\s*个?人(?=\s*(?:[,.;!?]|$|同时|在线|使用|用|左右))"),      # '大概 500 人'
            re.compile(rf"(?:team of|group of)\s*{N}(?![\d.])|{N}\s*-?\s*(?:person|people|人)\s*(?:team|团队)"),
        ]
        self.rx_qps = [
            re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:qps|rps|requests?\s*(?:/|per)\s*s(?:ec(?:ond)?)?|req/s|"
                       r"个?请求\s*(?:/|每)\s*秒)"),
            re.compile(r"(?<![a-z])(?:qps|rps)\s*(?:约|大概|大约|=|:|of|~|在)?\s*(\d+(?:\.\d+)?)"),
            re.compile(rf"每秒\s*(?:约|大概)?\s*{N}\s*个?\s*(?:请求|次|queries|query|requests?)"),
        ]
        cur = r"(?P<cur>\$|¥|usd|rmb|cny|us\$)"
        mult = r"(?P<mult>k|w|万|千|million|mn|m|billion|bn)?"
        self.rx_budget = [
            re.compile(rf"{cur}\s*(?P<num>\d+(?:\.\d+)?)\s*{mult}(?![a-z0-9])"),
            re.compile(rf"(?P<num>{_DIGITS}|{_ZH_RUN})\s*{mult}\s*"
                       r"(?P<cur>元|块钱|块|rmb|人民币|dollars?|usd|美元|美金|刀|bucks)"
                       rf"(?!\s*(?:{G_MARK}|卡|显卡|gpu|a\d|h\d|v\d))"),
            re.compile(rf"(?:预算|budget)\s*(?:是|为|大概|约|大约|around|about|of|is|~|:)?\s*"
                       rf"(?P<per>每个?(?:月|天|年|小时|周))?\s*"
                       rf"(?P<num>\d+(?:\.\d+)?|{_ZH_NUM}(?=\s*(?:万|千|k|元|块)))\s*{mult}(?![a-z0-9])"),
        ]
        self.rx_period_before = re.compile(r"(月预算|每个月|每月|monthly|per month|每天|每日|daily|日预算|每年|年预算|yearly|"
                                           r"每小时|hourly|每周|weekly)[^\d$¥]{0,6}$")
        self.rx_period_after = re.compile(r"^\s*(?:以内|左右|以下|上下)?\s*(?:/|per|an?|each|每个?|一个?)\s*"
                                          r"(hours?|hrs?|h|小时|days?|天|日|months?|mo|月|years?|yr|年|weeks?|周)(?![a-z])"
                                          r"|^\s*(total|in total|overall|总共|总计|总)")
        self.rx_deadline = [
            re.compile(rf"(?:within|in|under|before|by)\s*(?:~|about|around|roughly|approximately|the next)?\s*"
                       rf"{NA}\s*-?\s*(days?|weeks?|months?)(?![a-z])"),
            re.compile(rf"{N}\s*-?\s*(days?|weeks?|months?)\s*(?:max|at most|or less|tops)(?![a-z])"),
            re.compile(rf"{N}\s*(?:个)?\s*(天|周|星期|个月|月)\s*(?:内|之内|以内|(?:能|可以|就)(?:搞定|跑完|完成|训完))"),
            re.compile(rf"(?:deadline|due)\s*(?:is|in|of)?\s*~?\s*{N}\s*(days?|weeks?|天|周)"),
        ]
        self.rx_duration = re.compile(rf"{NA}\s*-?\s*(?:个)?\s*(hours?|hrs?|days?|weeks?|months?|years?|小时|天|周|星期|月|年)"
                                      r"(?![a-z])")
        self.rx_duration_skip_before = re.compile(r"(?:数据|语料|data|of|每|per)\s*$")
        self.rx_duration_skip_after = re.compile(r"^\s*(?:of\s+(?:audio|speech|data|video|recordings?|footage)|"
                                                 r"的(?:音频|语音|数据|视频)|内|之内|以内)")
        self.rx_around_the_clock = re.compile(r"24\s*/\s*7|7\s*[x×*]\s*24")

    @cached_property
    def _typo_vocab(self) -> list[str]:
        words = {str(w).lower() for w in self.lex.get("typo_vocabulary", [])}
        words |= set(self._family_words)
        return sorted(words)

    @cached_property
    def _known_words(self) -> frozenset[str]:
        known = {str(w).lower() for w in self.lex.get("known_words", [])}
        known |= set(self._typo_vocab)
        # every word of the lexicon's own phrases is known
        for section in ("intents", "recommend_cues", "domain_cues", "out_of_scope_cues", "unsure", "methods",
                        "precisions", "budget", "duration", "latency", "topics", "regions", "number_words", "reset",
                        "help_words", "ordinals"):
            stack: list[Any] = [self.lex.get(section)]
            while stack:
                x = stack.pop()
                if isinstance(x, dict):
                    stack.extend(x.keys())
                    stack.extend(v for v in x.values() if isinstance(v, (dict, list)))
                elif isinstance(x, list):
                    stack.extend(x)
                elif isinstance(x, str) and not x.startswith("re:"):
                    known.update(re.findall(r"[a-z]+", x.lower()))
        for table in (self.kb.model_aliases, self.kb.gpu_aliases, self.kb.provider_aliases):
            for key in table:
                known.update(w for w in re.findall(r"[a-z]+", key) if len(w) >= 4 and w == key)
        for m in self.kb.models.values():
            for name in (m.name, *getattr(m, "aliases", [])):
                known.update(re.findall(r"[a-z]+", normalize(name)))
        return frozenset(known)

    @cached_property
    def _lang_neutral(self) -> frozenset[str]:
        """Words that say nothing about the language of a reply: method and precision names, units."""
        words = {"b", "m", "k", "gb", "g", "x", "ms", "bit", "fp", "bf", "int", "nf"}
        for section in ("methods", "precisions"):
            for phrases in self.lex[section].values():
                for p in phrases:
                    if not str(p).startswith("re:"):
                        words.update(re.findall(r"[a-z]{2,}", str(p).lower()))
        return frozenset(words)

    @cached_property
    def _model_aliases(self) -> list[tuple[str, str]]:
        """(compact alias, model id), longest first so 'gpt2xl' wins over 'gpt2'."""
        pairs = {(k, v) for k, v in self.kb.model_aliases.items() if len(k) >= 3}
        return sorted(pairs, key=lambda p: (-len(p[0]), p[0]))

    @cached_property
    def _model_alias_keys(self) -> list[str]:
        return [a for a, _ in self._model_aliases]

    @cached_property
    def _model_order(self) -> dict[str, int]:
        return {mid: i for i, mid in enumerate(self.kb.models)}

    @cached_property
    def _gpu_aliases(self) -> list[tuple[str, str]]:
        pairs = {(k, v) for k, v in self.kb.gpu_aliases.items() if len(k) >= 2}
        pairs |= {(fam, fam) for fam in GPU_FAMILIES}
        return sorted(pairs, key=lambda p: (-len(p[0]), p[0]))

    @cached_property
    def _gpu_family_of(self) -> dict[str, str]:
        return {gid: fam for fam, ids in GPU_FAMILIES.items() for gid in ids} | {fam: fam for fam in GPU_FAMILIES}

    @cached_property
    def _provider_aliases(self) -> list[tuple[str, str]]:
        return sorted(self.kb.provider_aliases.items(), key=lambda p: (-len(p[0]), p[0]))

    @cached_property
    def _families(self) -> dict[str, list[str]]:
        """Bare family word ('llama', 'qwen', also 千问) -> model ids, for 'llama 70b'-style mentions."""
        out: dict[str, list[str]] = {}
        for m in self.kb.models.values():
            word = re.match(r"[a-z]+", m.family.lower())
            if word and len(word.group()) >= 3:
                out.setdefault(word.group(), []).append(m.id)
        for word, fam in (self.lex.get("model_family_words") or {}).items():
            if fam in out:
                out[str(word)] = out[fam]
        return out

    @cached_property
    def _family_words(self) -> list[str]:
        return sorted(w for w in self._families if w.isascii())

    @cached_property
    def _family_size_rx(self) -> re.Pattern:
        words = "|".join(re.escape(w) for w in sorted(self._families, key=len, reverse=True))
        return re.compile(rf"(?<![a-z0-9])({words})[\s\-_:]*(?:(?:chat|instruct|base|it)[\s\-_]*)?"
                          r"(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])")

    @cached_property
    def _nominal_sizes(self) -> dict[str, float]:
        """The size a model's name states ('Qwen2.5-7B' -> 7, though it has 7.6B parameters)."""
        out = {}
        for m in self.kb.models.values():
            size = re.search(r"(?<![\dx.])(\d+(?:\.\d+)?)\s*([bm])\)?$", normalize(m.name))
            if size:
                out[m.id] = float(size.group(1)) / (1000 if size.group(2) == "m" else 1)
        return out

    def _size_fits(self, mid: str, size: float) -> bool:
        nominal = self._nominal_sizes.get(mid)
        if nominal is not None:
            return abs(nominal - size) <= 0.01 * size
        return abs(self.kb.models[mid].params_b - size) / size <= FAMILY_SIZE_TOLERANCE

    @cached_property
    def _generations(self) -> list[tuple[str, list[str]]]:
        """Compact name without its size ('qwen2.5', 'llama3.1') -> the models of that generation, for a generation
        named without a size. Only generations with several models whose key is not an alias of one model."""
        gens: dict[str, list[str]] = {}
        for m in self.kb.models.values():
            tokens = [t for t in re.split(r"[\s\-_]+", normalize(m.name)) if t]
            if len(tokens) >= 2 and re.fullmatch(r"\d+(?:\.\d+)?[bm]", tokens[-1]):
                key = norm_key("".join(tokens[:-1]))
                if len(key) >= 4:
                    gens.setdefault(key, []).append(m.id)
        return sorted(((k, v) for k, v in gens.items() if len(v) >= 2 and k not in self.kb.model_aliases),
                      key=lambda p: (-len(p[0]), p[0]))

    @cached_property
    def _candidate_keys(self) -> dict[str, list[str]]:
        """Model id -> the keys a reply to 'which one do you mean' may use: prefixes of its name's tokens
        ('llama', 'llama3.3', 'llama3.370b'), its aliases, and its version alone ('3.3', '2.5')."""
        out: dict[str, list[str]] = {}
        for m in self.kb.models.values():
            keys: set[str] = set()
            for name in (m.name, m.id):
                tokens = [t for t in re.split(r"[\s\-_]+", normalize(name)) if t]
                for i in range(1, len(tokens) + 1):
                    keys.add(norm_key("".join(tokens[:i])))
                head = re.match(r"([a-z]+)[\s\-_]*(\d+\.\d+)(?![\d])", normalize(name))
                if head:
                    keys.add(head.group(2))   # a version alone: '3.3', '2.5' (not '2': too easily a count)
            keys |= {k for k, v in self.kb.model_aliases.items() if v == m.id}
            out[m.id] = sorted(k for k in keys if k)
        return out

    # ----- the parse ---------------------------------------------------------------------------------------------
    def parse(self, raw: str) -> Parse:
        text = self.normalise(raw)
        lang = "zh" if has_cjk(text) else "en"
        matches: list[Match] = []
        text = self._fix_typos(text, matches)
        ambiguous: dict[str, list[str]] = {}
        slots: dict[str, Any] = {}

        work, model = self._find_model(text, matches, ambiguous)
        if model:
            slots["model"] = model
            slots["params_b"] = self.kb.models[model].params_b
        work, gpus_named = self._find_gpus(work, matches)
        work, model2 = self._fuzzy_model(work, matches, ambiguous) if not model and "model" not in ambiguous \
            else (work, None)
        if model2:
            slots["model"] = model2
            slots["params_b"] = self.kb.models[model2].params_b
        if len(gpus_named) >= 2:
            slots["gpu_models"] = gpus_named
        elif gpus_named:
            slots["gpu_model"] = gpus_named[0]
        provider = self._find_provider(text)
        if provider:
            slots["provider"] = provider
        work = self._card_memory(work, slots)
        work = self._numbers(work, slots, "model" in slots or "model" in ambiguous)
        self._keywords(work, slots)
        unknown = None
        if "model" not in slots and "model" not in ambiguous and "params_b" not in slots:
            unknown = self._unknown_model_word(work)
        scores, recommend = self._intent_scores(work, slots)
        intent, oos = self._decide_intent(work, scores, recommend, slots, ambiguous)
        if oos:
            slots, ambiguous, unknown = {}, {}, None
        self._scope_slots(intent, slots)
        cparams = {c: self.kb.models[c].params_b for c in ambiguous.get("model", [])}
        lang_sure = lang == "zh" or any(w not in self._lang_neutral for w in re.findall(r"[a-z]{2,}", work))
        return Parse(text=text, lang=lang, intent=intent, intent_scores=scores, slots=Slots(**slots),
                     matches=matches, ambiguous=ambiguous, reset=self._is_reset(text), out_of_scope=oos,
                     unknown_model=unknown, unsure=self.unsure.any(text), candidate_params=cparams,
                     lang_sure=lang_sure)

    rx_card_memory = re.compile(
        r"(?<![\w.])(\d{1,3})\s*(?:gb|gib|g)\s*(?:of\s+)?(?:vram\s+|显存\s*(?:的)?\s*)?"
        r"(?:(?:consumer|nvidia|single|gaming)\s+)?(?:cards?|gpus?|graphics cards?|显卡|的卡|卡)(?![a-z])"
        r"|(?:显存|vram)\s*(?:只有|有|is|of|=|:)?\s*(\d{1,3})\s*(?:gb|gib|g)(?![a-z0-9])")

    def _card_memory(self, t: str, slots: dict[str, Any]) -> str:
        """'a 24GB card', '16g 显存的卡', '显存只有 12G': the memory of a GPU the user has or means."""
        m = self.rx_card_memory.search(t)
        if m:
            val = float(m.group(1) or m.group(2))
            if 4 <= val <= 512:
                slots["gpu_memory_gib"] = val
                t = self._blank(t, m.span())
        return t

    # ----- normalising and spelling ------------------------------------------------------------------------------
    def normalise(self, raw: str) -> str:
        text = normalize(raw or "")[:MAX_CHARS]
        text = text.replace("、", ",").replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")
        text = text.replace("（", "(").replace("）", ")").replace("；", ";")
        if self.zh_map_rx is not None and has_cjk(text):
            text = self.zh_map_rx.sub(lambda m: self.zh_map[m.group()], text)
        return text

    def _fix_typos(self, text: str, matches: list[Match]) -> str:
        def fix(m: re.Match) -> str:
            word = m.group()
            better = self._correct(word)
            if better != word:
                matches.append(Match("typo", better, word, 100.0 - 10 * OSA.distance(word, better)))
            return better
        return re.sub(r"(?<![a-z])[a-z]{3,}(?:'[a-z]+)?(?![a-z])", fix, text)

    @lru_cache(maxsize=4096)
    def _correct(self, word: str) -> str:
        if word in self.en_typos:
            return self.en_typos[word]
        if len(word) < 4 or word in self._known_words or "'" in word:
            return word
        limits = {int(k): int(v) for k, v in (self.lex.get("typo_max_edits") or {4: 1, 5: 1, 8: 2}).items()}
        allowed = max((v for k, v in limits.items() if len(word) >= k), default=0)
        if not allowed:
            return word
        vocab = self._typo_vocab if len(word) > 4 else \
            [w for w in self._typo_vocab if w in set(self.lex.get("typo_short_targets") or [])]
        found = process.extract(word, vocab, scorer=OSA.distance, score_cutoff=allowed, limit=3)
        if not found:
            return word
        best = found[0][1]
        top = sorted({w for w, d, _ in found if d == best})
        if len(top) > 1:
            return word            # a tie is ambiguous: leave the word as typed
        return top[0]

    # ----- names -------------------------------------------------------------------------------------------------
    @staticmethod
    def _compact(text: str) -> tuple[str, list[int]]:
        chars, pos = [], []
        for i, ch in enumerate(text):
            if ch in _SEPARATORS:
                continue
            chars.append(ch)
            pos.append(i)
        return "".join(chars), pos

    @staticmethod
    def _boundary_ok(text: str, start: int, end: int) -> bool:
        before = text[start - 1] if start > 0 else " "
        after = text[end] if end < len(text) else " "
        if before.isascii() and before.isalnum():
            # '8xa100' counts as '8x a100'
            if not (before in "x×*" and start >= 2 and text[start - 2].isdigit()):
                return False
        if before == "." and start >= 2 and text[start - 2].isdigit():
            return False
        if after.isascii() and after.isalnum():
            return False
        if after == "." and end + 1 < len(text) and text[end + 1].isdigit():
            return False             # 'llama3' is not a name inside 'llama3.1'
        return True

    def _find_alias(self, text: str, aliases: list[tuple[str, Any]], plural: bool = False
                    ) -> list[tuple[Any, int, int, str]]:
        compact, pos = self._compact(text)
        found: list[tuple[Any, int, int, str]] = []
        taken: list[tuple[int, int]] = []
        for key, rid in aliases:
            start = compact.find(key)
            while start != -1:
                s, e = pos[start], pos[start + len(key) - 1] + 1
                ok = self._boundary_ok(text, s, e)
                if not ok and plural and e < len(text) and text[e] == "s" and self._boundary_ok(text, s, e + 1):
                    ok, e = True, e + 1
                if ok and not any(s < te and ts < e for ts, te in taken):
                    found.append((rid, s, e, text[s:e]))
                    taken.append((s, e))
                start = compact.find(key, start + 1)
        return sorted(found, key=lambda f: f[1])

    @staticmethod
    def _mask(text: str, spans: Iterable[tuple[int, int]], mark: str) -> str:
        for s, e in sorted(spans, reverse=True):
            text = text[:s] + f" {mark} " + text[e:]
        return text

    def _find_model(self, text: str, matches: list[Match], ambiguous: dict[str, list[str]]) -> tuple[str, str | None]:
        found = self._find_alias(text, self._model_aliases)
        if found:
            # the last model named wins ("actually the 72b one"); other mentions are kept as runners-up
            rid, _s, _e, span = found[-1]
            others = sorted({f[0] for f in found if f[0] != rid})
            matches.append(Match("model", rid, span, 100.0, [(o, 100.0) for o in others]))
            return self._mask(text, [(f[1], f[2]) for f in found], M_MARK), rid
        # a family word and a size: "llama 70b", "qwen 7b", "deepseek 7b". Not an alias, so the generation is
        # missing: ambiguous even when the knowledge base holds one candidate (confirm rather than guess)
        for fam in self._family_size_rx.finditer(text):
            size = float(fam.group(2)) / (1000 if fam.group(3) == "m" else 1)
            if size <= 0:
                continue
            cands = [mid for mid in self._families[fam.group(1)] if self._size_fits(mid, size)]
            if cands:
                cands.sort(key=lambda c: self._model_order[c])
                ambiguous["model"] = cands
                score = 100.0 / len(cands)
                matches.append(Match("model", None, fam.group(), round(score, 1), [(c, round(score, 1)) for c in cands]))
                return self._mask(text, [fam.span()], M_MARK), None
        # a generation without a size: "qwen2.5", "llama 3.1"
        found = []
        for f in self._find_alias(text, self._generations):
            rest = text[f[2]:]
            if re.match(r"[\-_]?(?!(?:chat|instruct|base|it|model)(?![a-z]))[a-z]{2,}", rest):
                continue                  # 'qwen2.5-vl-7b' is another model, not a Qwen2.5 of unknown size
            size = re.match(r"[\s\-_]*(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])", rest)
            if size and not any(self._size_fits(c, float(size.group(1)) / (1000 if size.group(2) == "m" else 1))
                                for c in f[0]):
                continue                  # 'llama 3.2 11b vision': a size this generation does not have
            found.append(f)
        if found:
            cands, s, e, span = found[-1]
            ambiguous["model"] = list(cands)
            score = round(100.0 / len(cands), 1)
            matches.append(Match("model", None, span, score, [(c, score) for c in cands]))
            return self._mask(text, [(s, e)], M_MARK), None
        return text, None

    def _fuzzy_model(self, text: str, matches: list[Match], ambiguous: dict[str, list[str]]) -> tuple[str, str | None]:
        """Misspelt names that the token corrector could not fix ('deepseek-r1-distil-qwen-7b')."""
        tried = 0
        for m in re.finditer(r"(?<![a-z0-9])[a-z][a-z0-9.\-]*\d[a-z0-9.\-]*(?:\s+\d+(?:\.\d+)?[bm](?![a-z0-9]))?", text):
            token = m.group().strip(".-")
            if re.fullmatch(r"(?:fp|bf|int|nf|q|w|a|h|v|l|t|p|b|rtx|gtx|zero|stage|x|k|v|e|top|ue|c)\d.*|"
                            r"\d.*|[a-z]+\d+(?:gb?|bit|ms|k|x)|.*\d{3,}[a-z]?s?", token):
                continue
            key = norm_key(token)
            if len(key) < 5:
                continue
            tried += 1
            if tried > MAX_FUZZY_TOKENS:
                break
            found = process.extract(key, self._model_alias_keys, scorer=fuzz.ratio, limit=10,
                                    score_cutoff=MODEL_FUZZY_CUTOFF)
            if not found:
                continue
            best: dict[str, float] = {}
            for alias, score, _ in found:
                if not _same_shape(token, alias):
                    continue
                rid = self.kb.model_aliases[alias]
                best[rid] = max(best.get(rid, 0.0), score)
            if not best:
                continue
            ranked = sorted(best.items(), key=lambda kv: (-kv[1], self._model_order[kv[0]]))
            top_id, top = ranked[0]
            runners = [(r, round(s, 1)) for r, s in ranked[1:4]]
            masked = text[:m.start()] + f" {M_MARK} " + text[m.end():]
            if len(ranked) == 1 or top - ranked[1][1] >= MODEL_FUZZY_MARGIN:
                matches.append(Match("model", top_id, m.group(), round(top, 1), runners))
                return masked, top_id
            cands = [r for r, s in ranked if top - s < MODEL_FUZZY_MARGIN]
            ambiguous["model"] = sorted(cands, key=lambda c: self._model_order[c])
            matches.append(Match("model", None, m.group(), round(top, 1), [(r, round(s, 1)) for r, s in ranked[:4]]))
            return masked, None
        return text, None

    def _find_gpus(self, text: str, matches: list[Match]) -> tuple[str, list[str]]:
        found = list(self._find_alias(text, self._gpu_aliases, plural=True))
        # "A100 40GB vs 80GB", "H100 PCIe 跟 SXM 版": a bare variant after a connector is the same family's sibling
        for rid, s, e, _span in list(found):
            fam = self._gpu_family_of.get(rid)
            if not fam:
                continue
            v = re.match(r"\s*(?:vs\.?|versus|or|还是|和|跟|与|/|,)\s*(\d{2,3}\s*g(?:b|ib)?|sxm\d?|pcie|nvl)(?![a-z0-9])",
                         text[e:])
            if v:
                sib = self.kb.gpu_aliases.get(norm_key(fam + v.group(1)))
                if sib:
                    vs, ve = e + v.start(1), e + v.end(1)
                    if not any(vs < fe and fs < ve for _, fs, fe, _ in found):
                        found.append((sib, vs, ve, text[vs:ve]))
        # "pcie and sxm h100": two variants before a bare family name are two members of it
        for rid, s, e, _span in list(found):
            if rid not in GPU_FAMILIES:
                continue
            v = re.search(r"(\d{2,3}\s*g(?:b|ib)?|sxm\d?|pcie|nvl)\s*(?:and|or|vs\.?|versus|和|跟|还是|与|/|,)\s*"
                          r"(\d{2,3}\s*g(?:b|ib)?|sxm\d?|pcie|nvl)\s*(?:版|版本)?\s*$", text[max(0, s - 30):s])
            sibs = [self.kb.gpu_aliases.get(norm_key(rid + v.group(i))) for i in (1, 2)] if v else []
            if sibs and all(sibs):
                base = max(0, s - 30)
                found.remove((rid, s, e, _span))
                found += [(sibs[0], base + v.start(1), base + v.end(1), v.group(1)),
                          (sibs[1], base + v.start(2), e, text[base + v.start(2):e])]
        found.sort(key=lambda f: f[1])
        out: list[str] = []
        for rid, _s, _e, span in found:
            if rid not in out:
                out.append(rid)
                matches.append(Match("gpu_model", rid, span, 100.0))
        # a family and one of its members named: keep the member
        out = [g for g in out if not (g in GPU_FAMILIES and any(x in GPU_FAMILIES[g] for x in out))]
        return self._mask(text, [(f[1], f[2]) for f in found], G_MARK), out

    def _find_provider(self, text: str) -> str | None:
        found = self._find_alias(text, self._provider_aliases)
        return found[-1][0] if found else None

    def _unknown_model_word(self, text: str) -> str | None:
        m = re.search(r"(?<![a-z0-9])([a-z][a-z0-9.\-]*[a-z.\-]\d+(?:\.\d+)?[bm])(?![a-z0-9])", text)
        return m.group(1) if m else None

    def pick_candidate(self, parse: Parse, candidates: list[str]) -> str | None:
        """The candidate a reply to 'which one do you mean' names: a model among the candidates, a narrower set of
        candidates, a generation or version ('qwen2.5 的那个', 'llama 3.3', '3.1'), or a position ('the second')."""
        cands = [c for c in candidates if c in self.kb.models]
        if not cands:
            return None
        if parse.slots.model in cands:
            return parse.slots.model
        narrowed = [c for c in parse.ambiguous.get("model", []) if c in cands]
        if len(narrowed) == 1:
            return narrowed[0]
        text = parse.text
        best_len, best = 0, set()
        compact, pos = self._compact(text)
        for c in cands:
            for key in self._candidate_keys.get(c, []):
                start = compact.find(key)
                while start != -1:
                    s, e = pos[start], pos[start + len(key) - 1] + 1
                    if self._boundary_ok(text, s, e):
                        if len(key) > best_len:
                            best_len, best = len(key), {c}
                        elif len(key) == best_len:
                            best.add(c)
                        break
                    start = compact.find(key, start + 1)
        if len(best) == 1:
            return best.pop()
        for cue, index in self.ordinals:
            if cue.hit(text):
                i = index - 1 if index > 0 else len(cands) + index
                return cands[i] if 0 <= i < len(cands) else None
        return None

    # ----- numbers ---------------------------------------------------------------------------------------------
    def _num(self, word: str | None) -> float | None:
        if word is None:
            return None
        w = word.strip()
        if w in self.words:
            return self.words[w]
        try:
            return float(w)
        except ValueError:
            return zh_to_number(w)

    @staticmethod
    def _blank(text: str, span: tuple[int, int]) -> str:
        return text[:span[0]] + " " * (span[1] - span[0]) + text[span[1]:]

    def _numbers(self, t: str, slots: dict[str, Any], have_model: bool) -> str:
        if self.rx_around_the_clock.search(t):
            slots["duration"] = "long"
            t = self.rx_around_the_clock.sub(lambda m: " " * len(m.group()), t)
        self._gpus_and_nodes(t, slots)
        t = self._budget_amount(t, slots)
        # training tokens before sizes: "2T tokens", "1000亿 token"; a count under a million is a sample's length
        # ("batch 4, 4096 tokens", "8k tokens"), taken when nothing else names the sequence length
        per_sample = None
        for m in [*self.rx_tokens.finditer(t), *self.rx_tokens_after.finditer(t)]:
            n = self._num(m.group(1))
            if n is None:
                continue
            unit = m.group(2) or ""
            mult = {"t": 1e12, "trillion": 1e12, "万亿": 1e12, "b": 1e9, "billion": 1e9, "千亿": 1e11, "百亿": 1e10,
                    "亿": 1e8, "m": 1e6, "million": 1e6, "万": 1e4, "k": 1e3}.get(unit, 1)
            if n * mult >= 1e6:
                slots["tokens"] = n * mult
                t = self._blank(t, m.span())
                break
            length = n * (1024 if unit == "k" else 1)
            if per_sample is None and unit in ("", "k") and 16 <= length <= 1_000_000:
                per_sample = (int(length), m.span())
        # parameter count when no model is named: "30b", "1.5B", "124m", "70亿参数", "千亿参数"
        if not have_model:
            hits = []
            for rx in self.rx_params:
                m = rx.search(t)
                if m:
                    hits.append(m)
            if hits:
                m = min(hits, key=lambda x: x.start())
                n = self._num(m.group(1))
                unit = m.group(2)
                if n is not None:
                    val = n * {"b": 1, "bn": 1, "billion": 1, "m": 1e-3, "million": 1e-3, "亿": 0.1, "百亿": 10,
                               "千亿": 100, "万亿": 1000}[unit]
                    if 0.001 <= val <= 5000:
                        slots["params_b"] = round(val, 4)
                        t = self._blank(t, m.span())
        for rx in self.rx_seq:
            m = rx.search(t)
            if m:
                val = float(m.group(1)) * {"k": 1024, "m": 1024 * 1024}.get(m.group(2) or "", 1)
                if 16 <= val <= 10_000_000:
                    slots["seq_len"] = int(val)
                    t = self._blank(t, m.span())
                    break
        if "seq_len" not in slots and per_sample is not None:
            slots["seq_len"] = per_sample[0]
            t = self._blank(t, per_sample[1])
        m = self.rx_batch.search(t)
        if m and 1 <= int(m.group(1)) <= 4096:
            slots["batch_size"] = int(m.group(1))
        for rx in self.rx_qps:
            m = rx.search(t)
            if m:
                val = self._num(m.group(1))
                if val and 0 < val <= 1e7:
                    slots["qps"] = float(val)
                    t = self._blank(t, m.span())
                    break
        for rx in self.rx_concurrency:
            m = rx.search(t)
            if m:
                val = self._num(m.group(1))
                if val and m.lastindex and m.lastindex >= 2 and m.group(2):
                    val *= {"k": 1000, "千": 1000, "万": 10000}[m.group(2)]
                if val and 1 <= val <= 100_000 and val == int(val):
                    slots["concurrency"] = int(val)
                    break
        t = self._deadline(t, slots)
        self._duration_numbers(t, slots)
        return t

    def _gpus_and_nodes(self, t: str, slots: dict[str, Any]) -> None:
        nodes_m = self.rx_nodes.search(t)
        nodes = None
        if nodes_m:
            nodes = 1 if nodes_m.group(1) == "单" else self._num(nodes_m.group(1))
            if nodes and nodes == int(nodes) and 1 <= nodes <= 10_000:
                slots["nodes"] = int(nodes)
            else:
                nodes, nodes_m = None, None
        counts = []
        for rx in self.rx_gpu_counts:
            for m in rx.finditer(t):
                if nodes_m and m.start() < nodes_m.end() and nodes_m.start() < m.end():
                    continue              # '两台' is machines, not cards
                counts.append(m)
        gpus = None
        if counts:
            m = min(counts, key=lambda x: x.start())
            n = self._num(m.group(1))
            if n and n == int(n) and 1 <= n <= 100_000:
                gpus = int(n)
                if nodes and nodes > 1 and nodes_m is not None:
                    # "两台 8 卡", "2 nodes x 8 GPUs": a count right after the machines is per machine;
                    # "两机十六卡" keeps the total (a count after 机 that the machines divide is the total)
                    right_after = m.start() >= nodes_m.end() and self.rx_per_node_between.match(
                        t[nodes_m.end():m.start()])
                    total_form = right_after and nodes_m.group(0).endswith("机") and n % nodes == 0 and n > 8
                    per_node = (right_after and not total_form and ("台" in nodes_m.group(0) or n <= 8)) \
                        or self.rx_per_node_after.match(t[m.end():m.end() + 16])
                    if per_node and n * nodes <= 100_000:
                        gpus = int(n * nodes)
        elif self.rx_single.search(t):
            gpus = 1
        if not nodes_m and re.search(r"(?<![a-z])(?:single|one|a)\s+(?:\S+\s+){0,2}(?:node|machine|server|box)(?![a-z])",
                                     t):
            slots.setdefault("nodes", 1)
        if gpus:
            slots["gpus"] = gpus

    def _budget_amount(self, t: str, slots: dict[str, Any]) -> str:
        """'5000 元/月', '$3/hr', '预算每月5万块', 'budget $20k', '1 million dollars'."""
        for rx in self.rx_budget:
            m = rx.search(t)
            if not m:
                continue
            g = m.groupdict()
            cur = g.get("cur")
            if not cur:
                after = re.match(r"\s*(元|块|rmb|人民币|dollars?|usd|美元|美金|刀|\$)", t[m.end():])
                cur = after.group(1) if after else ("元" if has_cjk(t) else "$")
            amount = self._num(g["num"])
            if amount is None or amount <= 0:
                continue
            amount *= {"k": 1e3, "w": 1e4, "万": 1e4, "千": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9,
                       "billion": 1e9}.get(g.get("mult") or "", 1)
            currency = "USD" if re.search(r"\$|usd|dollar|美元|美金|刀|bucks", cur) else "CNY"
            before = self.rx_period_before.search(t[max(0, m.start() - 12):m.start()])
            after_m = self.rx_period_after.match(t[m.end():m.end() + 16])
            word = g.get("per") or ((after_m.group(1) or after_m.group(2)) if after_m else None) \
                or (before.group(1) if before else None)
            period = _period(word) if word else "total"
            if period == "week":          # the contract has no weekly period: the same money per day
                amount, period = amount / 7, "day"
            slots["budget_amount"] = round(float(amount), 2)
            slots["budget_currency"] = currency
            slots["budget_period"] = period
            return self._blank(t, m.span())
        return t

    def _deadline(self, t: str, slots: dict[str, Any]) -> str:
        for rx in self.rx_deadline:
            m = rx.search(t)
            if not m:
                continue
            n = self._num(m.group(1)) if m.group(1) else 1
            if not n or n <= 0:
                continue
            unit = m.group(2)
            days = n * (7 if re.match(r"week|周|星期", unit) else 30 if re.match(r"month|个月|月", unit) else 1)
            if days <= 3650:
                slots["deadline_days"] = float(days)
                return self._blank(t, m.span())
        return t

    def _duration_numbers(self, t: str, slots: dict[str, Any]) -> None:
        for m in self.rx_duration.finditer(t):
            if self.rx_duration_skip_before.search(t[max(0, m.start() - 4):m.start()]) or \
                    self.rx_duration_skip_after.match(t[m.end():m.end() + 24]):
                continue
            n = self._num(m.group(1))
            unit = m.group(2)
            if not n or (unit == "年" and n >= 1000):
                continue                  # '2024年' is a date
            days = n * (1 / 24 if unit[0] in "h小" else 7 if unit[0] in "w周星" else 30 if unit[0] in "m月" else
                        365 if unit[0] in "y年" else 1)
            if days <= self.short_days:
                slots.setdefault("duration", "short")
                return
            if days >= self.long_days:
                slots.setdefault("duration", "long")
                return

    # ----- keyword slots ----------------------------------------------------------------------------------------
    def _keywords(self, text: str, slots: dict[str, Any]) -> None:
        for prec in ("nf4", "int4", "int8", "fp8", "bf16", "fp16", "fp32"):
            if self.precisions[prec].any(text):
                slots["precision"] = prec
                break
        spans = {m: [sp for c in self.methods[m].cues for sp in c.spans(text)] for m in ("qlora", "full", "freeze", "lora")}
        # a method only inside another's phrase ('lora' in '4bit lora') was not said on its own
        said = [m for m, sp in spans.items() if sp and not all(
            any(o != m and os <= s and e <= oe for o, osp in spans.items() for os, oe in osp) for s, e in sp)]
        if said == ["lora"] and slots.get("precision") in self.qlora_precisions:
            said = ["qlora"]              # LoRA on a 4-bit base is QLoRA
        if len(said) == 1:
            slots["method"] = said[0]     # two methods named: the user has not chosen ("全参还是lora还没想好")
        for level in ("high", "medium", "low"):
            if self.budget[level].any(text):
                slots["budget"] = level
                break
        if "duration" not in slots:
            for level in ("long", "short"):
                if self.duration[level].any(text):
                    slots["duration"] = level
                    break
        for level in ("normal", "low"):
            if self.latency[level].any(text):
                slots["latency"] = level
                break
        for region, names in self.regions.items():
            if names.any(text):
                slots["region"] = region
                break
        for topic, words in self.topics.items():
            if words.any(text):
                slots["topic"] = topic
                break

    def _scope_slots(self, intent: str | None, slots: dict[str, Any]) -> None:
        """Slots that only mean something for some intents (DESIGN.md: method for train/finetune; training tokens)."""
        if intent not in (None, "train", "finetune"):
            slots.pop("method", None)
            slots.pop("tokens", None)
        if intent == "explain":
            slots.pop("precision", None)  # 'what is fp8' asks about the format, it does not choose it

    # ----- intent -----------------------------------------------------------------------------------------------
    def _intent_scores(self, text: str, slots: dict[str, Any]) -> tuple[dict[str, float], bool]:
        scores = {k: 0.0 for k in self.intent_names}
        work = text
        for cue, intent, weight in self.intent_cues:
            spans = cue.spans(work)
            if not spans:
                continue
            if intent in scores:
                scores[intent] += weight
            if cue.literal is None:
                continue                  # a pattern spans words that other cues still need ('how does spot .. work')
            for s, e in spans:
                work = work[:s] + "\x00" * (e - s) + work[e:]
        method = slots.get("method")
        if method in ("lora", "qlora", "freeze"):
            scores["finetune"] += 2.0
        elif method == "full" and scores["train"] == 0:
            scores["finetune"] += 1.0
        if slots.get("concurrency") or slots.get("qps") or slots.get("latency") == "low":
            scores["inference"] += 1.5
        if slots.get("tokens"):
            scores["train"] += 1.5
        return {k: round(v, 2) for k, v in scores.items()}, self.recommend.any(text)

    def _is_reset(self, text: str) -> bool:
        """'reset', 'start over please', 'ok, start over', '算了，重新开始': a short message that starts or ends with
        a reset phrase."""
        stripped = re.sub(r"[\s.!?,。！？~:;]+", " ", text).strip()
        if len(stripped) >= 40:
            return False
        return any(stripped == r or stripped.startswith(r + " ") or stripped.endswith(" " + r)
                   or (not r.isascii() and (stripped.startswith(r) or stripped.endswith(r)))
                   for r in self.reset_words)

    def _decide_intent(self, text: str, scores: dict[str, float], recommend: bool, slots: dict[str, Any],
                       ambiguous: dict[str, list[str]]) -> tuple[str | None, bool]:
        if not text.strip():
            return None, True
        job_scores = {k: scores.get(k, 0.0) for k in JOB_INTENTS}
        best_job = max(JOB_INTENTS, key=lambda k: (job_scores[k], -JOB_INTENTS.index(k)))
        if job_scores["rendering"] >= 3 and job_scores["train"] > 0 and best_job == "train":
            best_job = "rendering"        # rendering plus training is the seed's scenario 4
        job = job_scores[best_job]
        n_gpus = len(slots.get("gpu_models") or []) or (1 if slots.get("gpu_model") else 0)
        has_model = bool(slots.get("model") or slots.get("params_b") or ambiguous.get("model"))
        entity = has_model or n_gpus > 0
        oos_cue = self.oos.any(text)
        if oos_cue and not entity and job < 3:
            return None, True
        compare, billing, help_ = scores.get("compare", 0.0), scores.get("billing", 0.0), scores.get("help", 0.0)
        # a comparison of concepts, not of GPUs, asks for an explanation ("bf16 和 fp16 有啥区别")
        explain = scores.get("explain", 0.0) + (compare if n_gpus < 2 else 0.0)
        if help_ >= 2 and help_ >= job + 2 and help_ >= max(explain, billing):
            return "help", False
        if n_gpus >= 2 and compare > 0:
            return "compare", False
        # how billing works is a billing question ('how does spot pricing work')
        if billing >= 2.5 and (job == 0 or billing > job or (not has_model and (not recommend or billing >= job))):
            return "billing", False
        # a what/why word around a named model and a job word asks for that job's answer ("what's the minimum VRAM to
        # LoRA fine-tune qwen2.5-14b?"): the answer carries the memory estimate and its explanation
        why = self.rx_why.search(text) is not None
        if explain >= 2.5 and explain >= billing and (job == 0 or not (recommend or (has_model and job >= explain
                                                                                     and not why))):
            return "explain", False
        if job > 0:
            return best_job, False
        domain = entity or bool(slots.keys() - {"topic"}) or self.domain.any(text) or bool(slots.get("topic"))
        if entity:
            return None, False            # a name alone: the dialogue decides from the session
        if max(explain, billing) > 0 and domain:
            return ("billing" if billing > explain else "explain"), False
        if help_ > 0 or self.help_words.any(text):
            return "help", False
        return None, not domain


def _segments(name: str) -> tuple[list[str], list[str]]:
    parts = re.findall(r"[a-z]+|\d+(?:\.\d+)?", name.lower())
    return [p for p in parts if p[0].isalpha()], [p for p in parts if p[0].isdigit()]


def _same_shape(token: str, alias_key: str) -> bool:
    """A misspelling keeps the numbers and every word of the name: 'deepseek-r1-distil-qwen-7b' is
    DeepSeek-R1-Distill-Qwen-7B, but 'qwen2.5-vl-7b' (an extra word) and 'llama-3.1-7b' (another size) are not."""
    words, numbers = _segments(token)
    awords, anumbers = _segments(alias_key)
    if "".join(numbers).replace(".", "") != "".join(anumbers).replace(".", ""):
        return False
    return all(any(fuzz.ratio(w, a) >= 75 for a in awords) for w in words if len(w) >= 2)


def _period(word: str) -> str:
    w = word.lower()
    for key, period in (("total", "total"), ("overall", "total"), ("总", "total"), ("月", "month"),
                        ("month", "month"), ("mo", "month"), ("小时", "hour"), ("hour", "hour"), ("hr", "hour"),
                        ("每天", "day"), ("每日", "day"), ("日", "day"), ("day", "day"), ("daily", "day"),
                        ("天", "day"), ("年", "year"), ("year", "year"), ("yr", "year"), ("week", "week"),
                        ("周", "week")):
        if key in w:
            return period
    return {"h": "hour", "d": "day", "y": "year"}.get(w, "total")
