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
# a few words may stand between the hours and their period ('6 hours of offline inference per day', '每天要跑 6 个小时',
# '一天大概用 6 小时'), none with a digit or a clause break, so that another amount's period is not taken
_GAP_EN = r"(?:\s+(?!(?:for|and|or)\s)[^\d,.;:!?()]{0,40}?)?"
_GAP_ZH = r"[^\d，。,;；:：！？!?()（）]{0,8}?"
_DAILY = r"(?:\s*(?:(?:a|an|per|each|every|/)\s*day|daily|a\s+night|per\s+night|每天|每日|/天|一天))(?![a-z])"
_HOURS = r"\s*(?:hours?|hrs?|h)(?![a-z])"
_ZH_HOURS = r"\s*(?:个)?\s*(?:多)?\s*小时"
# the period first: 'every week for 10 hours', 'each month, about 40 hours', 'weekly we need 10 hours'
_PERIOD_FIRST = r"(?:(?<![a-z])(?:every|each|per|a)\s+{p}|(?<![a-z]){p}ly)(?![a-z])[^\d.;:!?]{{0,30}}?"
_WEEK, _MONTH = r"(?:week|wk)", r"month"
_PATTERNS = {
    "hours_day": [rf"{_N}{_HOURS}{_GAP_EN}{_DAILY}",
                  rf"(?:(?<![a-z])(?:every|each|per)\s+day|(?<![a-z])daily)(?![a-z])[^\d.;:!?]{{0,30}}?{_N}{_HOURS}",
                  rf"(?:每天|一天|每日|天天|日均){_GAP_ZH}{_N}{_ZH_HOURS}", rf"{_N}{_ZH_HOURS}\s*(?:每天|每日|/天|一天)"],
    "days_week": [rf"{_N}\s*days?{_GAP_EN}\s*{_EVERY}\s*(?:week|wk)", rf"(?:每周|一周|每星期|每个星期){_GAP_ZH}{_N}\s*天",
                  rf"{_PERIOD_FIRST.format(p=_WEEK)}{_N}\s*days?(?![a-z])", rf"{_N}\s*天\s*(?:每周|/周|一周)"],
    "days_month": [rf"{_N}\s*days?{_GAP_EN}\s*{_EVERY}\s*month", rf"(?:每月|一个月|每个月){_GAP_ZH}{_N}\s*天",
                   rf"{_PERIOD_FIRST.format(p=_MONTH)}{_N}\s*days?(?![a-z])", rf"{_N}\s*天\s*(?:每月|/月|一个月)"],
    # the period said first or after ('every week for 10 hours', 'weekly, 10 hours', '10 小时每周', '10h/wk')
    "hours_week": [rf"{_N}{_HOURS}{_GAP_EN}\s*(?:{_EVERY}\s*(?:week|wk)|weekly)(?![a-z])",
                   rf"(?:每周|一周|每星期|每个星期){_GAP_ZH}{_N}{_ZH_HOURS}",
                   rf"{_PERIOD_FIRST.format(p=_WEEK)}{_N}{_HOURS}", rf"{_N}{_ZH_HOURS}\s*(?:每周|/周|一周)"],
    "hours_month": [rf"{_N}{_HOURS}{_GAP_EN}\s*(?:{_EVERY}\s*month|monthly)(?![a-z])",
                    rf"(?:每月|一个月|每个月){_GAP_ZH}{_N}{_ZH_HOURS}",
                    rf"{_PERIOD_FIRST.format(p=_MONTH)}{_N}{_HOURS}", rf"{_N}{_ZH_HOURS}\s*(?:每月|/月|每个月)"],
    "span": [rf"(?:for|over|about|around|~)?\s*{_N}\s*-?\s*(weeks?|days?|months?)(?![a-z])(?!\s*{_EVERY})",
             rf"{_N}\s*(?:个)?\s*(周|星期|天|月)"],
    # a job's own length in hours ('a 72-hour job', '72小时的LoRA任务'): its hours, not a rate
    "span_hours": [rf"{_N}\s*-?\s*(?:hours?|hrs?)(?!\s*{_EVERY})(?![a-z])", rf"{_N}\s*(?:个)?\s*小时(?!\s*(?:每|/))"],
}
_NOT_USE = re.compile(r"audio|speech|recordings?|video|footage|podcasts?|calls|音频|录音|语音|视频|数据")
# the most hours in one period: more than a day's 24 is an amount of something else ('每天转写 2000 小时录音')
_MAX_HOURS = {"hours_day": 24.0, "hours_week": 168.0, "hours_month": float(HOURS_MONTH), "days_week": 7.0,
              "days_month": 31.0}
_WORDS = {"a few": 3, "few": 3, "a couple of": 2, "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
          "six": 6, "seven": 7, "eight": 8, "ten": 10, "twelve": 12, "几": 3, "两": 2, "半": 0.5}


# the working week and the working day said in words: 5 days a week; office hours with no figure are 9 to 6 (9 h)
WEEKDAYS = re.compile(r"(?<![a-z])(?:on\s+)?(?:weekdays|working days|business days|work days|workdays|mon(?:day)?\s*(?:-|to|through)\s*fri(?:day)?)"
                      r"(?![a-z])|工作日|周一到周五|周一至周五|星期一到星期五")
OFFICE_HOURS = re.compile(r"(?<![a-z])(?:office|working|business|work)\s+hours(?![a-z])|工作时间|上班时间|办公时间|"
                          # '白天高峰每分钟 120 张', '晚上流量只有白天的 1/5': the busy time of day, not a schedule
                          r"白天(?!\s*(?:高峰|峰值|流量|的|最忙|忙时|请求|访问|用户))")
OFFICE_DAY_H = 9.0
# a clock range ('9-6', '9am-6pm', '9:00-18:00', '9点到18点', '早9晚6'): its hours (6 after 9 is 18)
CLOCK_RANGE = re.compile(r"(?<![\d:.])(\d{1,2})(?::00)?\s*(?:am|点)?\s*(?:-|–|to|until|到|至)\s*(\d{1,2})(?::00)?\s*(?:pm|点)?(?![\d%.:])"
                         r"|早\s*(\d{1,2})\s*晚\s*(\d{1,2})")
_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")}
_ALWAYS = re.compile(r"24\s*/\s*7|24x7|always[ -]on|around the clock|round the clock|nonstop|non-stop|全天候|7\s*[x×*]\s*24|"
                     r"一直开着|常驻|24\s*小时不停|24\s*小时运行|不间断|全年无休")
ALWAYS_ON = _ALWAYS          # said of the hours of use: all of them


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
            if key != "span" and _NOT_USE.search(m.group(0)):
                continue                  # '20 hours of audio a day': an amount of data, not hours of use
            n = _number(m.group(1), zh_number)
            if n and 0 < n <= _MAX_HOURS.get(key, float("inf")):
                return n, (m.group(2) if m.lastindex and m.lastindex >= 2 else "")
    return None


def _without_rates(text: str) -> str:
    """The text with its hours-per-period phrases blanked: '一天大概用6个小时' says no span of one day."""
    for key in ("hours_day", "hours_week", "hours_month", "days_week", "days_month"):
        for rx in _PATTERNS[key]:
            text = re.sub(rx, lambda m: " " * len(m.group(0)), text)
    return text


def _per_week(text: str, zh_number) -> tuple[float, str] | None:
    """Hours a week ('30 hours a week', '每周跑 40 小时') as hours a month: x 4.35 weeks."""
    week = _find(text, "hours_week", zh_number)
    return (round(week[0] * WEEKS_MONTH, 1), "") if week else None


def _clock_hours(text: str, schedule_said: bool) -> float | None:
    """The hours of a working day said as a clock range ('9am-6pm', '9点到18点', '早9晚6', or '9-6' beside office
    hours or weekdays: a bare '8-12' is a range of something else)."""
    for m in CLOCK_RANGE.finditer(text):
        if not schedule_said and not re.search(r"am|pm|点|:|早", m.group(0)):
            continue
        a, b = (int(m.group(1)), int(m.group(2))) if m.group(1) else (int(m.group(3)), int(m.group(4)))
        if not (0 <= a <= 23 and 0 <= b <= 24):
            continue
        if b <= a and b <= 12:
            b += 12           # '9-6': six in the evening
        if 2 <= b - a <= 16 and a >= 5:
            return float(b - a)
    return None


def schedule_hours(text: str, zh_number: Callable[[str], float | None] | None = None) -> dict[str, Any] | None:
    """The hours a month a service is used when the text says a working schedule ('8 hours a day on weekdays',
    '只在工作日白天用', 'office hours 9-6'), with its parts: {hours_month, hours_day, days_week, assumed_day}; None
    without one (a span of days or a job's length is not a schedule)."""
    t = text.lower()
    hours_day = _find(t, "hours_day", zh_number)
    days_week = _find(t, "days_week", zh_number)
    days_month = _find(t, "days_month", zh_number)
    hours_month = _find(t, "hours_month", zh_number) or _per_week(t, zh_number)
    weekdays, office = WEEKDAYS.search(t), OFFICE_HOURS.search(t)
    clock = _clock_hours(t, bool(weekdays or office))
    if not (hours_day or days_week or days_month or hours_month or weekdays or office or clock) or _ALWAYS.search(t):
        return None
    if hours_month:
        return {"hours_month": min(HOURS_MONTH, hours_month[0]), "hours_day": None, "days_week": None,
                "assumed_day": False}
    per_day = min(24.0, hours_day[0]) if hours_day else clock or (OFFICE_DAY_H if office else None)
    assumed_day = per_day is None or (not hours_day and not clock)
    per_day = per_day or (OFFICE_DAY_H if weekdays else 24.0)
    if days_month:
        days = min(DAYS_MONTH, days_month[0])
        per_week = None
    else:
        per_week = days_week[0] if days_week else 5.0 if weekdays or office else 7.0
        days = min(DAYS_MONTH, per_week * WEEKS_MONTH)
    used = min(HOURS_MONTH, days * per_day)
    if used >= HOURS_MONTH * 0.99:
        return None
    return {"hours_month": round(used, 1), "hours_day": per_day, "days_week": per_week, "assumed_day": assumed_day}


def usage_hours(text: str, zh_number: Callable[[str], float | None] | None = None) -> dict[str, Any] | None:
    """{hours_month, span_days, months, said} or None when the text says no time of use."""
    hours_day = _find(text, "hours_day", zh_number)
    days_week = _find(text, "days_week", zh_number)
    low = text.lower()
    if not days_week and WEEKDAYS.search(low):          # 'on weekdays', '工作日': five days a week
        days_week = (5.0, "")
    if not hours_day and (days_week or OFFICE_HOURS.search(low)) and (
            clock := _clock_hours(low, True) or (OFFICE_DAY_H if OFFICE_HOURS.search(low) else None)):
        hours_day = (clock, "")                          # office hours, '9-6': the working day's hours
    days_month = _find(text, "days_month", zh_number)
    hours_month = _find(text, "hours_month", zh_number) or _per_week(text, zh_number)
    span = _find(_without_rates(text), "span", zh_number)
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
