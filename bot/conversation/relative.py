"""A load changed by a factor rather than restated: 'what if usage triples', 'traffic doubles', '3x the users',
'用户翻倍', '请求量涨到三倍'. The factor is read here; the dialogue applies it to the load the job already has
(dialogue._scaled_load), since the words name no number of users or requests of their own."""
from __future__ import annotations

import re

_WORDS = {"double": 2, "doubles": 2, "doubled": 2, "twice": 2, "triple": 3, "triples": 3, "tripled": 3,
          "quadruple": 4, "quadruples": 4, "quadrupled": 4}
_ZH_DIGITS = {"两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "十": 10}
_LOAD = r"(?:usage|traffic|load|users?|requests?|demand|qps|volume|用户|用户数|请求|请求量|访问量|流量|并发|负载|量)"
_EN = re.compile(rf"\b{_LOAD}\s+(?:(?:will|would|could|might)\s+)?(double[sd]?|triple[sd]?|quadruple[sd]?)\b"
                 rf"|\b(double|triple|quadruple|twice)\s+(?:the\s+)?{_LOAD}\b"
                 rf"|\b(\d+(?:\.\d+)?)\s*x\s+(?:the\s+|more\s+)?{_LOAD}\b"
                 rf"|\b{_LOAD}\s+(?:grows?|goes|went|increases?)\s+(?:up\s+)?(?:by\s+)?(\d+(?:\.\d+)?)\s*x\b")
_ZH = re.compile(rf"{_LOAD}\s*(?:翻(?:了)?(?:一)?倍|(?:涨|增加|增长|提高|变)(?:到|成|为)?\s*([两二三四五十]|\d+(?:\.\d+)?)\s*倍)")


def load_scale(text: str) -> float | None:
    """The factor a question scales the load by, or None when it names none."""
    low = text.lower()
    m = _EN.search(low)
    if m:
        word = next(g for g in m.groups() if g)
        return float(_WORDS.get(word, word)) if word in _WORDS or word.replace(".", "", 1).isdigit() else None
    m = _ZH.search(text)
    if m:
        n = m.group(1)
        return 2.0 if n is None else float(_ZH_DIGITS.get(n, n))
    return None
