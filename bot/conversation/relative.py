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
    return _scale(text, _EN, _ZH)


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
