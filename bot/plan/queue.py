"""Queued work with a per-order deadline ('200 orders a day, each LoRA ready within 1 hour of ordering; how many
resident cards?'): sized as a queue, not as one job. Each order runs on one replica (the cards one job was planned on)
for `hours`; orders arrive at the peak-hour rate; the replicas kept resident are the fewest with which an order,
queued at that rate, still finishes within its deadline with probability >= 95% (M/M/c, Erlang C), never fewer than
the day's work over the busy window, and each order alone must fit its deadline (else a faster card or more cards
per order)."""
from __future__ import annotations

import math
from typing import Any

BUSY_HOURS = 12.0        # the day's orders are taken as falling in 12 busy hours (2x the 24-hour average rate)
PEAK_OVER_BUSY = 1.5     # and the peak hour as 1.5x the busy-hour average: 3x the 24-hour average in all
ON_TIME = 0.95           # share of orders that must finish within the deadline at the peak rate


def erlang_c(c: int, a: float) -> float:
    """Probability an arrival waits, M/M/c with offered load a = lambda/mu Erlangs (c > a)."""
    # Erlang B by its recurrence (B(k) = a B(k-1) / (k + a B(k-1))), then C from B: stable for thousands of
    # Erlangs, where the power series overflowed to inf/inf = NaN and the sizing loop never ended
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return c * b / (c - a * (1 - b))


def size_queue(orders_per_day: float, hours_per_order: float, deadline_h: float, cards_per_order: int = 1,
               price_per_card_hour: float | None = None, utilisation: float = 1.0) -> dict[str, Any]:
    """The resident replicas for `orders_per_day` orders of `hours_per_order` each, each due `deadline_h` after it
    is placed, busy at most `utilisation` of the time in the peak hour (rules/critic.yaml headroom: Erlang C assumes
    the order time exact; one 20 % longer than estimated at 95 % busy queues without bound). Returns the figures
    said and the assumptions they rest on."""
    peak_rate = orders_per_day / BUSY_HOURS * PEAK_OVER_BUSY          # orders per hour in the peak hour
    work = orders_per_day * hours_per_order                          # replica-hours a day
    floor = max(1, math.ceil(work / BUSY_HOURS))
    fits = hours_per_order <= deadline_h
    replicas = None
    wait_p = None
    if fits:
        a = peak_rate * hours_per_order
        slack = deadline_h - hours_per_order
        c = max(floor, math.floor(a) + 1, math.ceil(a / utilisation - 1e-9))
        limit = c + 10 * max(1, math.ceil(a)) + 100        # far past any answer: a loop that always ends
        while True:
            p = erlang_c(c, a) * math.exp(-(c / hours_per_order - peak_rate) * slack)
            if p <= 1 - ON_TIME or c >= limit:
                break
            c += 1
        replicas, wait_p = c, p
    out = {"orders_per_day": orders_per_day, "hours_per_order": hours_per_order, "deadline_h": deadline_h,
           "cards_per_order": cards_per_order, "peak_rate": peak_rate, "work_replica_hours": work,
           "card_hours_per_day": work * cards_per_order, "floor_replicas": floor, "fits_deadline": fits,
           "replicas": replicas, "cards": replicas * cards_per_order if replicas else None, "late_share": wait_p,
           "busy_hours": BUSY_HOURS, "peak_factor": BUSY_HOURS and 24 / BUSY_HOURS * PEAK_OVER_BUSY,
           "on_time": ON_TIME, "utilisation": (peak_rate * hours_per_order / replicas) if replicas else None,
           "cards_per_order_needed": None if fits else math.ceil(cards_per_order * hours_per_order / deadline_h)}
    if replicas and price_per_card_hour:
        out["cost_per_day"] = replicas * cards_per_order * price_per_card_hour * 24
    return out
