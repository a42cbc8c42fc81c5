"""Condition operators. Each carries its own phrase in English and Chinese, so the rule trace is made from the
same declaration as the evaluation (like datasette's TemplatedFilter)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Operator:
    name: str
    test: Callable[[Any, Any], bool]
    en: str
    zh: str
    takes_value: bool = True

    def phrase(self, lang: str, fact: str, value: Any) -> str:
        template = self.zh if lang == "zh" else self.en
        return template.format(fact=fact, value=_show(value, lang))


def _show(value: Any, lang: str) -> str:
    if isinstance(value, (list, tuple)):
        sep = "、" if lang == "zh" else ", "
        return sep.join(_show(v, lang) for v in value)
    if isinstance(value, bool):
        return ("是" if value else "否") if lang == "zh" else ("yes" if value else "no")
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _num(fn: Callable[[float, float], bool]) -> Callable[[Any, Any], bool]:
    def test(actual: Any, expected: Any) -> bool:
        if actual is None or isinstance(actual, bool):
            return False
        try:
            return fn(float(actual), float(expected))
        except (TypeError, ValueError):
            return False
    return test


OPERATORS: dict[str, Operator] = {op.name: op for op in [
    Operator("eq", lambda a, v: a == v, "{fact} is {value}", "{fact}为{value}"),
    Operator("ne", lambda a, v: a != v, "{fact} is not {value}", "{fact}不是{value}"),
    Operator("in", lambda a, v: a in v, "{fact} is one of {value}", "{fact}属于{value}"),
    Operator("not_in", lambda a, v: a not in v, "{fact} is none of {value}", "{fact}不属于{value}"),
    Operator("gt", _num(lambda a, v: a > v), "{fact} is above {value}", "{fact}大于{value}"),
    Operator("gte", _num(lambda a, v: a >= v), "{fact} is at least {value}", "{fact}不小于{value}"),
    Operator("lt", _num(lambda a, v: a < v), "{fact} is below {value}", "{fact}小于{value}"),
    Operator("lte", _num(lambda a, v: a <= v), "{fact} is at most {value}", "{fact}不大于{value}"),
    Operator("is_set", lambda a, v: a is not None, "{fact} is known", "已知{fact}", takes_value=False),
    Operator("is_unset", lambda a, v: a is None, "{fact} is not stated", "未说明{fact}", takes_value=False),
    Operator("is_true", lambda a, v: a is True, "{fact}", "{fact}", takes_value=False),
    Operator("is_false", lambda a, v: a is False, "not {fact}", "并非{fact}", takes_value=False),
    Operator("is_unknown", lambda a, v: a is None, "{fact} is not documented", "{fact}未见文档说明",
             takes_value=False),
]}
