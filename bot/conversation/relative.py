"""A load changed by a factor rather than restated: 'what if usage triples', 'traffic doubles', '3x the users',
'用户翻倍', '请求量涨到三倍'. The factor is read here; the dialogue applies it to the load the job already has
(dialogue._scaled_load), since the words name no number of users or requests of their own."""
from __future__ import annotations

import re

_WORDS = {"double": 2, "doubles": 2, "doubled": 2, "twice": 2, "triple": 3, "triples": 3, "tripled": 3,
          "quadruple": 4, "quadruples": 4, "quadrupled": 4, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10}
_ZH_DIGITS = {"两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "八": 8, "十": 10}
_LOAD = r"(?:usage|traffic|load|users?|requests?|demand|qps|rps|volume|用户|用户数|请求|请求量|访问量|流量|并发|负载|量)"
_TIMES = r"(\d+(?:\.\d+)?|two|three|four|five|ten)\s*(?:x|times)"
_EN = re.compile(rf"\b{_LOAD}\s+(?:(?:will|would|could|might|may)\s+)?(?:probably\s+)?(double[sd]?|triple[sd]?|quadruple[sd]?)\b"
                 rf"|\b(double|triple|quadruple|twice)\s+(?:the\s+|our\s+|as\s+much\s+|as\s+many\s+)?{_LOAD}\b"
                 rf"|\b{_TIMES}\s+(?:the\s+|our\s+|more\s+|as\s+much\s+|as\s+many\s+)?{_LOAD}\b"
                 rf"|\b{_LOAD}\s+(?:(?:will|would|could|might|may)\s+)?(?:be\s+)?(?:grows?|goes|go|went|increases?|rises?|"
                 rf"jumps?|is|are|be)?\s*(?:up\s+)?(?:by\s+)?{_TIMES}(?!\s*(?:cheaper|faster|slower))"
                 rf"|\b{_LOAD}\s*(?:x|×|\*)\s*(\d+(?:\.\d+)?)\b")
_ZH_N = r"([两二三四五六八十]|\d+(?:\.\d+)?)"
_ZH = re.compile(rf"{_LOAD}\s*(?:要|会|将|可能|大概)?\s*(?:翻(?:了)?(?:一)?(?:倍|番)|翻(?:了)?\s*{_ZH_N}\s*倍|"
                 rf"(?:涨|增加|增长|提高|提升|上涨|扩大|变)(?:了)?(?:到|成|为)?\s*(?:原来的|现在的|目前的)?\s*{_ZH_N}\s*倍|"
                 rf"(?:是|变成)\s*(?:原来|现在|目前)的\s*{_ZH_N}\s*倍)"
                 rf"|{_ZH_N}\s*倍(?:的)?\s*{_LOAD}")


def load_scale(text: str) -> float | None:
    """The factor a question scales the load by, or None when it names none."""
    if not _EN.search(text.lower()) and re.search(r"翻(?:了)?(?:一)?番", text):
        return 2.0
    return _scale(text, _EN, _ZH) or _hedged_scale(text)


# ----- the wider reader: a factor said in the clause of a load noun, with hedges and filler between them ('traffic is
# expected to triple next quarter', '下个季度流量预计翻 3 倍', 'load goes up 50%', '用户量涨到 5 倍', 'a 3-fold increase in
# traffic'), or said bare in a follow-up that names nothing else ('and if it doubles?', '翻倍呢', 'what about 3x?').
# A clause about something else (output length, batch size, speed, price, the data) scales no load.
_NUMWORD = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
            "twenty": 20, "hundred": 100}
_ZH_NUM = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_N = r"(\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten)"
_ZN = r"(\d+(?:\.\d+)?|[一两二三四五六七八九十])"
_LOAD_NOUN = re.compile(r"(?<![a-z])(?:usage|traffic|load|users?|user\s+base|requests?|demand|qps|rps|volume|dau|mau|"
                        r"calls?|queries|sessions?|customers?|visitors?|peak)(?![a-z])|"
                        r"用户|请求|访问|流量|并发|负载|日活|月活|调用|业务量|qps|峰值|高峰")
# what a factor in a clause with no load noun is about instead
_OTHER_NOUN = re.compile(r"(?<![a-z])(?:batch|output|input|context|length|prompt|tokens?|model|params?|parameters|gpus?|"
                         r"cards?|price|cost|budget|time|deadline|data|dataset|corpus|samples?|images?|audio|epochs?|"
                         r"faster|slower|cheaper|speed|quicker|expensive|memory|vram|throughput|latency|ttft|check)(?![a-z])|"
                         r"输出|输入|上下文|长度|模型|参数|显卡|卡|价格|成本|预算|时间|工期|数据|样本|图片|音频|快|慢|便宜|贵|"
                         r"速度|显存|吞吐|延迟|epoch|token")
_EN_FACTOR = [
    (re.compile(r"(?<![a-z])(doubl|tripl|quadrupl)(?:es|ed|e|ing)(?![a-z])"), lambda m: {"doubl": 2, "tripl": 3,
                                                                                         "quadrupl": 4}[m.group(1)]),
    (re.compile(r"(?<![a-z])twice(?![a-z])"), lambda m: 2),
    (re.compile(rf"(?<![a-z\d.]){_N}\s*-?\s*fold(?![a-z])"), lambda m: _num(m.group(1))),
    # '3x', '3 times', not '2x A100' / '8x H100' / '2 x 4090' (a count of cards)
    (re.compile(rf"(?<![a-z\d.]){_N}\s*(?:x|×|times)(?![a-z\d])(?!\s*(?:[a-z]+-?\d|\d|nvidia|rtx|tesla|gpus?|cards?|"
                r"nodes?|machines?|instances?|servers?|h\d|a\d|l\d))"), lambda m: _num(m.group(1))),
    (re.compile(r"(?<![a-z\d])(?:x|×)\s*(\d+(?:\.\d+)?)(?![\d.])"), lambda m: _num(m.group(1))),
    (re.compile(r"(?<![a-z])(?:up|grows?|grew|increases?|increased|rises?|rose|jumps?|jumped|climbs?|more|higher|"
                r"growth|increase|\+)\s*(?:by\s+|of\s+)?(?:about\s+|around\s+|~)?(\d+(?:\.\d+)?)\s*(?:%|percent)"),
     lambda m: 1 + float(m.group(1)) / 100),
    (re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:%|percent)\s+(?:more|higher|growth|increase|up)(?![a-z])"),
     lambda m: 1 + float(m.group(1)) / 100),
]
_ZH_FACTOR = [
    (re.compile(r"翻(?:了)?(?:一)?(?:倍|番)"), lambda m: 2),
    (re.compile(rf"翻(?:了)?\s*{_ZN}\s*(?:倍|番)"), lambda m: _num(m.group(1)) if "番" not in m.group(0)
     else 2 ** _num(m.group(1))),
    (re.compile(rf"(?:是|变成|到|成|为)?\s*(?:原来|现在|目前|当前|今天|之前)?的?\s*{_ZN}\s*倍"), lambda m: _num(m.group(1))),
    (re.compile(r"(?:涨|增加|增长|提高|提升|上涨|多|加|扩大|上升)(?:了)?\s*(?:约|大概)?\s*(\d+(?:\.\d+)?)\s*%"),
     lambda m: 1 + float(m.group(1)) / 100),
    (re.compile(r"(?:涨|增加|增长|提高|提升|上涨|多|加|扩大|上升)(?:了)?\s*百分之\s*(\d+(?:\.\d+)?)"),
     lambda m: 1 + float(m.group(1)) / 100),
]
_CLAUSE = re.compile(r"[，。；？！;?!\n]|[,.](?=\s|$)")


def _num(word: str) -> float:
    if word in _NUMWORD:
        return float(_NUMWORD[word])
    if word in _ZH_NUM:
        return float(_ZH_NUM[word])
    return float(word)


def _factors(clause: str) -> list[tuple[int, float]]:
    """Each factor said in a clause, with where it starts."""
    out = []
    for pat, value in _EN_FACTOR + _ZH_FACTOR:
        for m in pat.finditer(clause):
            try:
                out.append((m.start(), float(value(m))))
            except (ValueError, KeyError):
                continue
    return sorted(out)


def _hedged_scale(text: str) -> float | None:
    """A load factor said with hedges or filler between the load and its factor, or bare in a short follow-up."""
    for clause in _CLAUSE.split(text.lower()):
        found = [(at, f) for at, f in _factors(clause) if 1 < f <= 1000]
        if not found:
            continue
        at, factor = found[0]
        if _LOAD_NOUN.search(clause):
            # the load's factor, unless the factor is said of another thing nearer to it ('users double and the
            # batch size triples' reads the users' factor first, which is the one found first)
            return factor
        if not _OTHER_NOUN.search(clause) and len(clause.strip()) <= 40:
            return factor
    return None


def _scale(text: str, en: re.Pattern, zh: re.Pattern) -> float | None:
    """The factor an English or Chinese pattern of this module reads ('triples', '翻 3 倍', '涨到原来的两倍')."""
    m = en.search(text.lower())
    if m:
        word = next(g for g in m.groups() if g)
        return float(_WORDS.get(word, word)) if word in _WORDS or word.replace(".", "", 1).isdigit() else None
    m = zh.search(text)
    if m:
        n = next((g for g in m.groups() if g), None)
        return 2.0 if n is None else float(_ZH_DIGITS.get(n, n))
    return None


# the amount of work scaled rather than the load: '数据量翻倍', 'the dataset doubles', '3x the tokens'
_WORK = r"(?:data|dataset|corpus|tokens?|audio|images?|samples?|数据量?|数据集|语料|样本|音频|图片|token数?)"
_EN_WORK = re.compile(_EN.pattern.replace(_LOAD, _WORK))
_ZH_WORK = re.compile(_ZH.pattern.replace(_LOAD, _WORK))


def work_scale(text: str) -> float | None:
    """The factor a question scales the job's amount of work by ('数据量翻倍', 'dataset triples'), or None."""
    return _scale(text, _EN_WORK, _ZH_WORK)


# ----- off-peak: the load at some hours as a fraction of the peak ('晚上流量只有白天的 1/5，怎么省钱', 'nights are 20% of
# peak, how to save', 'traffic drops to a fifth overnight'): the fleet for those hours, not a new load for the job
_OFF_HOURS = re.compile(r"(?<![a-z])(?:nights?|nightly|overnight|evenings?|off[- ]?peak|off[- ]hours|quiet hours|weekends?|"
                        r"after hours|low[- ]traffic hours|non[- ]peak)(?![a-z])|"
                        r"晚上|夜间|夜里|夜晚|深夜|凌晨|半夜|低谷|闲时|非高峰|非峰值|周末|下班后|非工作时间")
_FRACTION = [
    (re.compile(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])"), lambda m: float(m.group(1)) / float(m.group(2))),
    (re.compile(r"([一二两三四五六七八九十])分之([一二两三四五六七八九])"),
     lambda m: _ZH_NUM[m.group(2)] / _ZH_NUM[m.group(1)]),
    (re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:%|percent)"), lambda m: float(m.group(1)) / 100),
    (re.compile(r"百分之\s*(\d+(?:\.\d+)?)"), lambda m: float(m.group(1)) / 100),
    (re.compile(r"(?<![a-z])(?:a|one)[ -](half|third|quarter|fifth|tenth)(?![a-z])|(?<![a-z])(half)(?![a-z])"),
     lambda m: {"half": 0.5, "third": 1 / 3, "quarter": 0.25, "fifth": 0.2, "tenth": 0.1}[m.group(1) or m.group(2)]),
    (re.compile(r"一半|减半"), lambda m: 0.5),
]


def offpeak_scale(text: str) -> float | None:
    """The share of the peak load said for some hours ('nights are 20% of peak' -> 0.2), or None."""
    t = text.lower()
    if not _OFF_HOURS.search(t):
        return None
    for pat, value in _FRACTION:
        m = pat.search(t)
        if m:
            try:
                f = float(value(m))
            except (ValueError, ZeroDivisionError, KeyError):
                continue
            if 0 < f < 1:
                return round(f, 4)
    return None


_BARE_RATE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:/|per|a|an|每)\s*(second|sec|s|minute|min|hour|hr|h|秒|分钟|小时)(?![a-z])"
                        r"|每\s*(秒|分钟|小时)\s*(?:大概|约|只有|就)?\s*(\d+(?:\.\d+)?)")
_PER_SECOND = {"second": 1, "sec": 1, "s": 1, "秒": 1, "minute": 60, "min": 60, "分钟": 60, "hour": 3600, "hr": 3600,
               "h": 3600, "小时": 3600}


def offpeak_absolute(text: str, said: dict, before: dict) -> float | None:
    """The load said for some hours as an amount, not a share ('what about at night when it's 5 per minute?',
    'at night it's more like 8 req/s', '晚上大概只有 30 个并发'): its share of the peak load planned before, or None.
    A rate with no unit ('5 per minute') is in the unit of the peak's."""
    t = text.lower()
    if not _OFF_HOURS.search(t):
        return None
    for key in ("qps", "concurrency"):
        if said.get(key) and before.get(key):
            share = float(said[key]) / float(before[key])
            return round(share, 4) if 0 < share < 1 else None
    m = _BARE_RATE.search(t)
    if m and before.get("qps"):
        n, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        share = float(n) / _PER_SECOND[unit] / float(before["qps"])
        return round(share, 4) if 0 < share < 1 else None
    return None