"""One quantity grammar for both languages: the amounts of work and load a question states.

A quantity is a number x a unit x an optional rate x an optional "each":
- the number: digits ('50000', '1.2'), Chinese numerals ('三千', '十万'), a multiplier (k, M, B, thousand, million,
  billion, 千, 万, 百万, 千万, 亿), a range ('50-80k', '1到2万': its upper end, the lower kept), hedges before or after
  ('about', '~', '约', '大概', '左右', '多', '+') and a sign ('-5 samples' is kept negative, to be refused);
- the unit: a word of the lexicon's `quantities.units` (tokens, samples/条/rows, pairs, prompts, completions,
  images/张, hours of audio, documents, requests/次, epochs, characters), a Chinese measure word (个/条/张/篇/对/次)
  and up to two adjectives ('60k preference pairs') allowed before it; or a unit with its rate in one word (qps, rpm);
- the rate: after ('per minute', '/s', 'a day', '每天') or before ('每秒', '日均', 'daily') the number, with peak and
  average words ('峰值', 'at peak', '日均', 'averaging');
- each: after ('512 tokens each', 'per sample', '/query'), before ('每条约 2000 token', 'each sample is ~2k tokens'),
  an average ('averaging 800 tokens', '平均长度 1500 token'), 'of' right after an amount of items ('50k samples of 1024
  tokens'), or a hyphenated size before its noun ('1024-token samples').

Vocabulary is data (rules/lexicon.yaml `quantities`); this module only composes it. The grammar is built once and is
a pure function of the (normalised) text: `find(text)` returns every quantity, left to right, with its span, so the
slot readers blank what they took.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from bot.records.text import zh_to_number

MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "千": 1e3, "w": 1e4, "万": 1e4, "百万": 1e6, "m": 1e6, "mn": 1e6,
               "mil": 1e6, "million": 1e6, "千万": 1e7, "亿": 1e8, "b": 1e9, "bn": 1e9, "billion": 1e9,
               "t": 1e12, "trillion": 1e12, "万亿": 1e12}
SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400, "month": 30 * 86400}
_ZH_DIGIT = "零〇一二两三四五六七八九十"
_ZH_ALL = _ZH_DIGIT + "百千万亿"
MEASURE_WORDS = "个条张篇对次份段句幅组道"
SHORT_ROLES = {"in": "input", "out": "output"}      # '1k tokens in / 250 out': only right after an amount


@dataclass(frozen=True)
class Quantity:
    """One amount as the user stated it. `value` is in `unit` (a range: its upper end; `low` its lower end)."""
    value: float
    unit: str
    span: tuple[int, int]
    low: float | None = None
    rate: str | None = None        # second / minute / hour / day / week / month: an amount per that time
    each: str | None = None        # per what ('sample', 'query', 'item' when only 'each' or an average says so)
    role: str | None = None        # tokens of a prompt ('input') or generated ('output')
    hedged: bool = False
    peak: bool = False
    average: bool = False
    negative: bool = False
    k_suffix: bool = False         # written with 'k' ('8k tokens'): a length in k is 1,024 each ('8k' context: 8,192)
    unit_span: tuple[int, int] = (0, 0)      # the unit's word ('requests', '张图'), inside span
    number_start: int = 0                    # where the number (or its sign) starts, inside span
    text: str = field(default="", compare=False)

    def as_length(self) -> int:
        """The amount as a sequence length: '8k tokens' per sample is 8,192, as '8k context' is."""
        return int(round(self.value * (1.024 if self.k_suffix else 1)))

    def per_second(self) -> float | None:
        """The amount per second of a rate; None for an amount that is not a rate."""
        return self.value / SECONDS[self.rate] if self.rate else None


def _alt(words: Iterable[str]) -> str:
    """An alternation of the words, longest first, each escaped; spaces match any run of spaces."""
    uniq = sorted({str(w).lower() for w in words if str(w).strip()}, key=lambda w: (-len(w), w))
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in uniq) or "(?!)"


def _bounded(words: Iterable[str]) -> str:
    """The words, an ASCII word not run into letters either side ('s' of seconds is not the 's' of 'samples')."""
    return rf"(?:(?<![a-z])(?:{_alt(words)})(?![a-z]))"


def _is_word(w: str) -> bool:
    return w.isascii() and w[:1].isalpha()


def either_words(words: Iterable[str]) -> str:
    """A pattern for words of either language: English ones on word boundaries, Chinese ones (or symbols) anywhere."""
    return _either(words)


def _either(words: Iterable[str]) -> str:
    """Words of either language: an English one on word boundaries, a Chinese one (or a symbol) anywhere."""
    ws = [str(w).lower() for w in words]
    return rf"(?:{_bounded(w for w in ws if _is_word(w))}|{_alt(w for w in ws if not _is_word(w))})"


class QuantityGrammar:
    """Built once from the lexicon's `quantities` section and its `number_words`."""

    def __init__(self, vocab: dict[str, Any], number_words: dict[str, float] | None = None):
        self.vocab = vocab
        self.words = {str(k).lower(): float(v) for k, v in (number_words or {}).items()
                      if str(k).isascii() and str(k) not in ("a", "an", "single", "half", "dual", "quad")}
        self.unit_of = {str(w).lower(): unit for unit, ws in vocab["units"].items() for w in ws}
        self.unit_rate_of = {str(w).lower(): ur for ur, ws in vocab["unit_rates"].items() for w in ws}
        self.rate_unit_of = {str(w).lower(): r for r, ws in vocab["rate_units"].items() for w in ws}
        self.rate_before_of = {str(w).lower(): r for r, ws in vocab["rate_before"].items() for w in ws}
        self.role_of = {str(w).lower(): r for r, ws in vocab["roles"].items() for w in ws}
        self.average_words = {str(w).lower() for w in vocab["average"]}
        self.rx = self._compile()

    def _compile(self) -> re.Pattern:
        """number x unit x rate x each, as one pattern; named groups say which part of a match is which."""
        v = self.vocab
        number = (rf"(?:(?<![a-z0-9.])\d+(?:\.\d+)?|(?<![{_ZH_ALL}])[{_ZH_DIGIT}][{_ZH_ALL}]*"
                  rf"|{_either(self.words)})")
        mult = (rf"(?:\s*(?:{_alt(k for k in MULTIPLIERS if not k.isascii())}"
                rf"|(?<=[\d\s])(?:{_alt(k for k in MULTIPLIERS if k.isascii())})(?![a-z])))?")
        rng = rf"(?:\s*(?:-|–|~|to|到|至)\s*(?P<num2>{number})(?P<mult2>{mult}))?"
        hedge_pre = rf"(?:{_either(v['hedges_before'])}\s*)"
        linking = r"(?:(?:are|is|of|with|has|have|=|:|为|是|都是|都)\s*)"
        # '每天要转写 2000 小时': a few Chinese characters (a verb) may stand between the rate and the amount
        prefix = (rf"(?:(?P<rate_pre>{_either(self.rate_before_of)})\s*(?:(?<=[\u4e00-\u9fff])[\u4e00-\u9fff]{{1,4}}?\s*)?"
                  r"(?:有|约|是|:)?\s*)?"
                  rf"(?:(?P<peak>{_either(v['peak'])})\s*(?:of|is|at|是|为|:)?\s*)?"
                  rf"(?:(?P<each_pre>{_either(v['each_before'])})\s*)?"
                  # '输出（含思考）大概3000 token', 'output (incl. reasoning) ~3000 tokens': a short aside may follow
                  rf"(?:(?P<role_pre>{_either(self.role_of)})\s*(?:[（(][^（()）]{{1,16}}[)）]\s*)?)?"
                  rf"(?:(?P<avg>{_either(v['average'])})\s*)?"
                  r"(?P<length>(?:(?<![a-z])(?:length|len)(?![a-z])|长度)\s*(?:of|is|are|=|:|为|是|在)?\s*)?"
                  rf"{linking}?(?P<hedge_pre>{hedge_pre}+)?")
        units_zh = _alt(w for w in self.unit_of if not _is_word(w))
        unit = (rf"(?P<audio>{self._audio_hours()})"
                rf"|(?P<unit_rate>{_either(self.unit_rate_of)})"
                # a measure word before a unit of either language: '5万条样本', '50k 个 prompt'
                rf"|(?:\s*[{MEASURE_WORDS}](?=\s*(?:{units_zh}|{_bounded(w for w in self.unit_of if _is_word(w))})))?\s*"
                rf"(?:(?P<adj>{_either(v['adjectives'] + [w for w in self.role_of if w.isascii()])})\s+){{0,2}}"
                rf"(?P<unit>{_either(self.unit_of)})"
                # '3000 token 输出', '1k tokens in / 250 out'
                r"(?:\s*(?:的)?\s*(?P<role_post>输出|输入|(?<![a-z])(?:output|input|in|out)(?![a-z])(?!\s+(?:of|the|a|an)\b)))?"
                # a size named by its role alone: '500 input + 300 output tokens', '1k 输入 200 输出', '/ 250 out'
                r"|(?P<role_unit>(?<![a-z])(?:input|output|out(?!\s+of\b))(?![a-z])|输入|输出)"
                r"(?:\s*(?:tokens?|词元)(?![a-z]))?")
        hedge_post = rf"\s*(?:{_alt(v['hedges_after'])})"
        body = (rf"{prefix}(?P<sign>(?<![a-z0-9])-\s*)?(?P<num>{number})(?P<mult>{mult}){rng}"
                rf"(?P<hedge_post>{hedge_post})?\s*-?\s*(?:{unit})")
        rate = (rf"(?:\s*(?:/|(?<![a-z])(?:per|an?|every|each)(?![a-z])|每|一)\s*"
                rf"(?P<rate_post>{_either(self.rate_unit_of)})(?![a-z])"
                r"|\s+(?P<daily>daily|monthly|hourly)(?![a-z]))")
        nouns = _alt(v["each_nouns"])
        each = (rf"(?:\s*(?P<each_post>{_bounded(v['each_after'])}"
                rf"|(?:(?<![a-z])per|/)\s*(?P<each_noun>(?:{nouns}))(?:s)?(?![a-z])"
                rf"|每(?P<each_zh>条|个|张|篇|对|份|次))"
                rf"|(?<=token|okens)\s*-?\s*(?P<noun_after>{_bounded([w + 's' for w in v['each_nouns']] + v['each_nouns'])}))")
        peak_post = (r"\s*(?:at\s+(?:the\s+)?peak(?:\s+times?)?|during\s+peak(?:\s+hours?)?|in\s+the\s+busiest\s+hour"
                     r"|(?:在)?高峰(?:期|时)?)")
        return re.compile(rf"{body}{rate}?{each}?(?P<hedge_post2>{hedge_post})?(?P<peak_post>{peak_post})?")

    def _audio_hours(self) -> str:
        """Hours of audio with a word or two between the hours and what they are of ('3万小时的中文录音', '30,000
        hours of Mandarin call recordings'): the lexicon's audio nouns after up to two English words, or up to six
        Chinese characters after 小时(的)."""
        nouns = self.vocab.get("audio_nouns") or {}
        en, zh = nouns.get("en") or [], nouns.get("zh") or []
        parts = []
        if en:
            parts.append(rf"(?<![a-z])(?:hours|hour|hrs|hr|h)\s+of\s+(?:(?!of\b)[a-z-]+\s+){{0,2}}?{_either(en)}")
        if zh:
            parts.append(rf"(?:个)?小时(?:的)?[\u4e00-\u9fff]{{0,6}}?(?:{_alt(zh)})")
        return "|".join(parts) or r"(?!)"

    # ----- reading ----------------------------------------------------------------------------------------------
    def number(self, word: str | None) -> float | None:
        return read_number(word, self.words)

    def find(self, text: str) -> list[Quantity]:
        """Every quantity in `text` (normalised: lower case, half width), left to right."""
        out = []
        for m in self.rx.finditer(text):
            q = self._quantity(m, text)
            if q is not None:
                out.append(q)
        return _link_each(out, text)

    def _quantity(self, m: re.Match, text: str) -> Quantity | None:
        g = m.groupdict()
        n = self.number(g["num"])
        if n is None:
            return None
        mult = MULTIPLIERS.get((g["mult"] or "").strip(), 1.0)
        high = self.number(g["num2"]) if g["num2"] else None
        mult2 = MULTIPLIERS.get((g["mult2"] or "").strip(), 1.0) if g["num2"] else 1.0
        if high is not None and mult == 1.0 and mult2 != 1.0:
            mult = mult2                                     # '1-2k': both ends in thousands
        low, value = (n * mult, high * mult2) if high is not None else (None, n * mult)
        if low is not None and low > value:
            low, value = None, n * mult                      # '50-3 samples' is no range
        unit, rate = self._unit_and_rate(g)
        if unit is None:
            return None
        each = self._each(g)
        said_role = g["role_pre"] or g["role_post"] or g["role_unit"]
        said_role = SHORT_ROLES.get((said_role or "").strip(), said_role)
        role = self.role_of.get(said_role.strip()) if said_role else self._role_of_adjective(m)
        average = bool(g["avg"] and g["avg"].strip() in self.average_words) or bool(g["length"]) or \
            bool(g["rate_pre"] and g["rate_pre"].strip() in self.average_words)
        if g["rate_pre"] and g["rate_pre"].strip() in ("日均", "月均", "天均"):
            average = True
        if (g["avg"] or g["length"]) and unit in ("tokens", "chars", "words") and not each:
            each = "item"                                    # 'averaging 800 tokens': per item
        return Quantity(value=value, unit=unit, span=m.span(), low=low, rate=rate, each=each, role=role,
                        hedged=bool(g["hedge_pre"] or g["hedge_post"] or g["hedge_post2"] or g["avg"]),
                        peak=bool(g["peak"] or (g["peak_post"] and rate)), average=average, negative=bool(g["sign"]),
                        k_suffix="k" in ((g["mult"] or "") + (g["mult2"] or "")).strip(), text=m.group(),
                        unit_span=next((m.span(k) for k in ("unit", "audio", "unit_rate", "role_unit") if m.start(k) >= 0),
                                       m.span()),
                        number_start=m.start("sign") if g["sign"] else m.start("num"))

    def _unit_and_rate(self, g: dict[str, Any]) -> tuple[str | None, str | None]:
        rate = None
        if g["unit_rate"]:
            unit, rate = self.unit_rate_of[_squash(g["unit_rate"])].split("/")
        elif g["audio"]:
            unit = "audio_hours"
        elif g["role_unit"]:
            unit = "tokens"
        else:
            unit = self.unit_of.get(_squash(g["unit"] or ""))
        said = g["rate_post"] or g["rate_pre"] or g["daily"]
        if said and not rate:
            word = _squash(said)
            rate = self.rate_unit_of.get(word) or self.rate_before_of.get(word) or \
                {"daily": "day", "monthly": "month", "hourly": "hour"}.get(word)
        return unit, rate

    @staticmethod
    def _each(g: dict[str, Any]) -> str | None:
        if g["each_noun"]:
            return g["each_noun"]
        if g["noun_after"]:
            return g["noun_after"].rstrip("s") if g["noun_after"].endswith("s") and g["noun_after"] != "s" else \
                g["noun_after"]
        if g["each_post"] or g["each_zh"] or g["each_pre"]:
            return "item"
        return None

    def _role_of_adjective(self, m: re.Match) -> str | None:
        """'1500 input tokens', '1024 generation tokens': the adjective before the unit says whose tokens."""
        if m.start("adj") < 0 or m.start("unit") < 0:
            return None
        words = re.findall(r"[a-z-]+", m.string[m.start("num"):m.start("unit")])
        return next((self.role_of[w] for w in words if w in self.role_of), None)


def read_number(word: str | None, words: dict[str, float]) -> float | None:
    """A number as written: a word of the lexicon ('two'), digits ('1.5'), or Chinese numerals ('三千', '1.2万')."""
    if not word:
        return None
    w = word.strip()
    if w in words:
        return words[w]
    try:
        return float(w)
    except ValueError:
        return zh_to_number(w)


def _squash(word: str) -> str:
    return re.sub(r"\s+", " ", word.strip().lower())


_OF = re.compile(r"^\s*(?:,|，)?\s*(?:of|with|at|averaging|each\s+(?:of|with|about|around|~)?|that\s+are|which\s+are|"
                 r"x|×|\*|,|每条|每个|平均|每条约|每条大概)?\s*(?:about|around|roughly|~|约|大约|大概)?\s*$")
ITEM_UNITS = ("samples", "pairs", "prompts", "images", "documents", "requests", "completions")


def _link_each(qs: list[Quantity], text: str) -> list[Quantity]:
    """'50k samples of 1024 tokens', '200k conversations averaging 800 tokens': a size right after an amount of
    items is each item's; 'x 8 completions' after prompts is per prompt."""
    out = list(qs)
    for i in range(1, len(out)):
        prev, q = out[i - 1], out[i]
        if q.each or prev.unit not in ITEM_UNITS or q.unit == prev.unit or q.unit == "epochs" or q.rate:
            continue
        if _OF.match(text[prev.span[1]:q.span[0]]) and (q.unit in ("tokens", "chars", "words", "images", "documents")
                                                        or (q.unit == "completions" and prev.unit == "prompts")):
            out[i] = replace(q, each=prev.unit.rstrip("s"))
    return out
