"""'高峰一天 200 单，要求下单后 1 小时内出 LoRA，要常驻多少卡？', '200 orders a day, each ready within 1 hour, how many
resident GPUs?': a job run per order is a queue. The order rate is read here; the job's plan gives one order's time
and cards; bot/plan/queue.py sizes the resident fleet, and its verdict leads the reply on every surface."""
from __future__ import annotations

import re
from typing import Any

from bot.plan.queue import size_queue
from bot.records.models import Reply, ViewSection
from bot.render.text import short_text

_NUM = r"(\d[\d,]*(?:\.\d+)?)\s*(k|千|万)?"
_RATE = re.compile(r"(?:一天|每天|每日|日均|一日|天)\s*(?:高峰)?\s*(?:约|大概|大约|有|来|接)?\s*" + _NUM +
                   r"\s*(?:单|个?订单|个?任务|个?请求|次|个|份)"
                   r"|" + _NUM + r"\s*(?:单|个?订单|个?任务|份)\s*(?:/|每)\s*(?:天|日)"
                   r"|" + _NUM + r"\s*(?:orders?|jobs?|requests?|tasks?|runs?|trainings?|loras?|submissions?)"
                   r"\s*(?:(?:per|a|each|/)\s*day|daily|/\s*d\b)", re.I)
_MULT = {"k": 1e3, "千": 1e3, "万": 1e4}
# the time an order is due in: 'within 1 hour of ordering', 'ready in 30 minutes', '下单后 1 小时内', '2 小时之内出'
_DUE = re.compile(r"(?:within|in|under|less than|no more than)\s+(?:an?\s+|one\s+)?(\d+(?:\.\d+)?)?\s*"
                  r"(hours?|hrs?|h|minutes?|mins?)\b"
                  r"|(\d+(?:\.\d+)?|半|一|两|二|三)\s*(?:个)?\s*(小时|钟头|分钟)\s*(?:之内|以内|内)", re.I)
_ZH_NUM = {"半": 0.5, "一": 1, "两": 2, "二": 2, "三": 3}


def due_hours(text: str) -> float | None:
    m = _DUE.search(text)
    if not m:
        return None
    if m.group(2):
        n = float(m.group(1) or 1)
        return n / 60 if m.group(2).lower().startswith("m") else n
    n = _ZH_NUM.get(m.group(3)) or float(m.group(3))
    return n / 60 if m.group(4) == "分钟" else n


def orders_per_day(text: str) -> float | None:
    m = _RATE.search(text)
    if not m:
        return None
    g = m.groups()
    for i in range(0, len(g), 2):
        if g[i]:
            return float(g[i].replace(",", "")) * _MULT.get((g[i + 1] or "").lower(), 1)
    return None


def queue_verdict(templates, text: str, reply: Reply, slots: dict[str, Any], lang: str,
                  utilisation: float = 1.0) -> dict[str, Any] | None:
    """The queue sizing of the plan in `reply` for the order rate in `text` and the per-order deadline in `slots`,
    put first in the reply; None when the turn has no order rate and deadline, or the plan no per-order time."""
    n = orders_per_day(text)
    due = due_hours(text)
    deadline_days = due / 24 if due else slots.get("deadline_days")
    comp = reply.compute
    if not n or not deadline_days or comp is None or reply.status != "answer" or not reply.recommendations:
        return None
    comp = comp if isinstance(comp, dict) else comp.model_dump()
    hours, gpus = comp.get("hours"), int(comp.get("gpus") or 1)
    if not hours:
        return None
    rec = reply.recommendations[0]
    rec = rec if isinstance(rec, dict) else rec.model_dump()
    per_card = (rec.get("price_per_hour") or 0) / max(1, int(rec.get("gpu_count") or 1)) or None
    q = size_queue(n, float(hours), float(deadline_days) * 24, gpus, per_card, utilisation)
    name = rec.get("gpu_name") or comp.get("gpu")
    cur = rec.get("currency") or "USD"
    ctx = {"gpus": gpus, "name": name, "hours": f"{hours:.2f}", "n": f"{n:,.0f}", "cur": cur,
           "card_hours": f"{q['card_hours_per_day']:,.0f}", "cards": q["cards"], "replicas": q["replicas"],
           "on_time": f"{q['on_time']:.0%}", "deadline": f"{q['deadline_h']:.3g}", "busy": f"{q['busy_hours']:g}",
           "peak": f"{q['peak_factor']:g}", "rate": f"{q['peak_rate']:.0f}", "floor": q["floor_replicas"],
           "need": q["cards_per_order_needed"], "cost": f"{q.get('cost_per_day') or 0:,.0f}"}
    fits = "fits" if q["fits_deadline"] else "misses"
    line = templates.say(f"queue.{fits}.line", lang, **ctx)
    why = templates.say(f"queue.{fits}.why", lang, **ctx)
    if q["fits_deadline"] and q.get("cost_per_day"):
        why += templates.say("queue.fits.cost", lang, **ctx)
    if reply.view is not None:
        reply.view.sections.insert(0, ViewSection(key="verdict", lines=[line, why]))
        reply.text = short_text(reply.view, templates, lang)
    return {**q, "kind": "queue", "line": line}
