"""How many hours a month the user rents for, from a billing question: '3 weeks', 'a few days a month', '8 hours a
day, 5 days a week', '每月用 10 天', '跑一周'. The billing verdict (bot/plan/verdicts.py) needs the hours used in a
month, not a job's deadline: a month's package is paid whole, so 3 weeks of use is 504 of its 730 hours.
"""
from __future__ import annotations

import re
from typing import Any, Callable

HOURS_MONTH, DAYS_MONTH, WEEKS_MONTH = 730, 30.4, 4.35
_N = r"(?<![a-z0-9.])(\d+(?:\.\d+)?|a few|few|a couple of|a|one|two|three|four|five|six|seven|eight|ten|twelve|几|两|[一二三四五六七八九十半]+)"
_EVERY = r"(?:a|an|per|each|every|/)"
_PATTERNS = {
    "hours_day": [rf"{_N}\s*(?:hours?|hrs?|h)\s*{_EVERY}\s*day", rf"(?:每天|一天|每日)\s*(?:用|跑|开)?\s*{_N}\s*(?:个)?\s*小时"],
    "days_week": [rf"{_N}\s*days?\s*{_EVERY}\s*week", rf"(?:每周|一周|每星期)\s*(?:用|跑|开)?\s*{_N}\s*天"],
    "days_month": [rf"{_N}\s*days?\s*{_EVERY}\s*month", rf"(?:每月|一个月|每个月)\s*(?:只)?\s*(?:用|跑|开)?\s*{_N}\s*天"],
    "hours_month": [rf"{_N}\s*(?:hours?|hrs?|h)\s*{_EVERY}\s*month", rf"(?:每月|一个月|每个月)\s*(?:用|跑|开)?\s*{_N}\s*(?:个)?\s*小时"],
    "span": [rf"(?:for|over|about|around|~)?\s*{_N}\s*-?\s*(weeks?|days?|months?)(?![a-z])(?!\s*{_EVERY})",
             rf"{_N}\s*(?:个)?\s*(周|星期|天|月)"],
    # a job's own length in hours ('a 72-hour job', '72小时的LoRA任务'): its hours, not a rate
    "span_hours": [rf"{_N}\s*-?\s*(?:hours?|hrs?)(?!\s*{_EVERY})(?![a-z])", rf"{_N}\s*(?:个)?\s*小时(?!\s*(?:每|/))"],
}
_WORDS = {"a few": 3, "few": 3, "a couple of": 2, "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
          "six": 6, "seven": 7, "eight": 8, "ten": 10, "twelve": 12, "几": 3, "两": 2, "半": 0.5}


_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")}
_ALWAYS = re.compile(r"24\s*/\s*7|24x7|always[ -]on|around the clock|全天候|7\s*[x×*]\s*24|一直开着|常驻")


def _zh(word: str) -> float | None:
    """一 .. 九十九 as people write a count of days or weeks."""
    if word in _ZH_DIGITS:
        return float(_ZH_DIGITS[word])
    if "十" in word and len(word) <= 3:
        tens, _, ones = word.partition("十")
        return float(_ZH_DIGITS.get(tens, 1) * 10 + _ZH_DIGITS.get(ones, 0))
    return None


def _number(word: str, zh_number: Callable[[str], float | None] | None) -> float | None:
    if word in _WORDS:
        return float(_WORDS[word])
    try:
        return float(word)
    except ValueError:
        return (zh_number(word) if zh_number else None) or _zh(word)


def _find(text: str, key: str, zh_number) -> tuple[float, str] | None:
    for rx in _PATTERNS[key]:
        for m in re.finditer(rx, text):
            n = _number(m.group(1), zh_number)
            if n and n > 0:
                return n, (m.group(2) if m.lastindex and m.lastindex >= 2 else "")
    return None


def usage_hours(text: str, zh_number: Callable[[str], float | None] | None = None) -> dict[str, Any] | None:
    """{hours_month, span_days, months, said} or None when the text says no time of use."""
    hours_day = _find(text, "hours_day", zh_number)
    days_week = _find(text, "days_week", zh_number)
    days_month = _find(text, "days_month", zh_number)
    hours_month = _find(text, "hours_month", zh_number)
    span = _find(text, "span", zh_number)
    per_day = min(24.0, hours_day[0]) if hours_day else 24.0
    always = _ALWAYS.search(text)
    if hours_month:
        return {"hours_month": min(HOURS_MONTH, hours_month[0]), "span_days": None, "months": None}
    if days_month or days_week:
        days = min(DAYS_MONTH, days_month[0] if days_month else days_week[0] * WEEKS_MONTH)
        return {"hours_month": min(HOURS_MONTH, days * per_day), "span_days": None, "months": None}
    if span:
        n, unit = span
        days = n * (7 if unit[:1] in ("w", "周", "星") else DAYS_MONTH if unit[:1] in ("m", "月") else 1)
        used = min(days, DAYS_MONTH) * per_day
        return {"hours_month": min(HOURS_MONTH, used), "span_days": round(days, 1),
                "months": round(days / DAYS_MONTH, 1)}
    span_h = _find(text, "span_hours", zh_number) if not hours_day else None
    if span_h and not always:
        h = span_h[0]
        return {"hours_month": min(HOURS_MONTH, h), "span_days": round(h / 24, 2), "months": round(h / HOURS_MONTH, 2)}
    if hours_day or always:
        return {"hours_month": min(HOURS_MONTH, per_day * DAYS_MONTH), "span_days": None, "months": None}
    return None
