"""Inverse sizing: the biggest model (or the most tokens) a budget or a fleet x time can train.

"$50k to pretrain from scratch: the biggest model, Chinchilla-optimal, on H100s?" is the forward question run
backwards. The forward planner already times and prices a pre-training of N parameters on D tokens on any GPU and
cloud (its MFU, layout and price included), so the inverse is a fixed point over it rather than a second model of
speed: cost and time grow as N x D, and Chinchilla-optimal training sets D = 20 N (Hoffmann et al., 2022, source
`chinchilla-hoffmann`), so cost grows as N^2 and the next guess is N x sqrt(limit / what the plan at N needs).
Three or four plans settle it within 3 % (MFU moves a little with N). A model named with "how many tokens can" is the
linear case: D x limit / need.

The limit is the budget (in its own currency, as the plan's budget target reads it), or the time on a fixed number
of cards (cards or nodes said, with a deadline); with both, the tighter one. With neither there is nothing to size
against, and the verdict says what it needs.
"""
from __future__ import annotations

import math
from typing import Any, Callable

# policy: Chinchilla's compute-optimal ratio, tokens per parameter (Hoffmann et al. 2022, Table 3: ~20 for 1B-10B)
TOKENS_PER_PARAM = 20.0
SETTLED = 0.03          # stop when the next guess moves less than 3 %
MAX_PLANS = 6
START_B = 7.0           # first guess, billions of parameters; any start converges (cost is monotone in N)


def _limits(rec: dict[str, Any], slots: dict[str, Any], fixed_cards: bool) -> tuple[float | None, str | None]:
    """How far the plan at this size is from the limit, as a ratio of the limit to what it needs (< 1: too big),
    and which limit binds: 'budget' or 'time'."""
    ratios = []
    use = rec.get("budget")
    if use and use.get("spend"):
        ratios.append((use["amount"] / use["spend"], "budget"))
    if fixed_cards and slots.get("deadline_days") and rec.get("job_hours"):
        ratios.append((slots["deadline_days"] * 24 / rec["job_hours"], "time"))
    if not ratios:
        return None, None
    return min(ratios)


def _round_b(n: float) -> float:
    """Two significant figures, rounded down (a size said must fit the limit): '9.8B', '15B', '0.47B'."""
    if n <= 0:
        return n
    step = 10 ** (math.floor(math.log10(n)) - 1)
    return round(math.floor(n / step + 1e-9) * step, 6)


def _settle(seen: dict, probe: Callable[[float], float | None]) -> float | None:
    """The largest size tried that fits the limit, pushed up by bisection toward the smallest one above it that does
    not: the planner's picks jump (another cloud, another card) as the job grows, so its cost is not smooth in N
    and the fixed point alone can end on a size over the limit."""
    fits = [x for x, (r, _, _) in seen.items() if r is not None and r >= 1 - SETTLED]
    if not fits:
        lows = [x for x, (r, _, _) in seen.items() if r is not None]
        if not lows:
            return None
        x = min(lows)
        for _ in range(MAX_PLANS):              # everything tried is over: halve until one fits
            x /= 2
            r = probe(x)
            if r is not None and r >= 1 - SETTLED:
                fits = [x]
                break
        if not fits:
            return None
    good = max(fits)
    over = [x for x, (r, _, _) in seen.items() if x > good and r is not None and r < 1 - SETTLED]
    bad = min(over) if over else None
    for _ in range(4 if bad else 0):
        if bad / good < 1 + SETTLED:
            break
        mid = math.sqrt(good * bad)
        r = probe(mid)
        if r is not None and r >= 1 - SETTLED:
            good = mid
        else:
            bad = mid
    return good


def size_to_limit(plan: Callable[[dict[str, Any]], dict[str, Any] | None], slots: dict[str, Any],
                  what: str = "model", share: float | None = None, tight: float | None = None) -> dict[str, Any]:
    """The biggest model (`what` = 'model': N and D = 20 N) or the most tokens (`what` = 'tokens', the model
    fixed) that the budget or the fixed fleet's time allows; `plan(slots)` is the forward planner's pick for a job.
    Returns the verdict's numbers and the slots of the sized job (for the answer below the verdict).

    Sized to the limit, the job spends 97-100 % of the budget or the time: `used` says the share, and over `tight`
    (rules/critic.yaml headroom tight_share) the verdict says it is tight and gives `margin`, the size that takes at
    most `share` of the limit (deadline_share_target: a restart or an estimate 20 % off still fits)."""
    fixed_cards = bool(slots.get("gpus") or slots.get("nodes"))
    v: dict[str, Any] = {"kind": "biggest_model" if what == "model" else "most_tokens", "ratio": TOKENS_PER_PARAM,
                         "budget": slots.get("budget_amount"), "budget_currency": slots.get("budget_currency"),
                         "deadline_days": slots.get("deadline_days") if fixed_cards else None}
    if slots.get("budget_amount") is None and not (fixed_cards and slots.get("deadline_days")):
        v.update(answer="unknown", missing="limit")
        return v
    size = slots.get("params_b") if what == "tokens" else START_B

    def job(x: float) -> dict[str, Any]:
        """The job at guess x: N = x billions with D = 20 N, or D = x billion tokens of the fixed model."""
        if what == "model":
            return {**slots, "params_b": x, "tokens": TOKENS_PER_PARAM * x * 1e9}
        return {**slots, "params_b": size, "tokens": x * 1e9}
    planned: dict[float, tuple[float | None, str | None, dict[str, Any] | None]] = {}

    def planned_at(x: float) -> tuple[float | None, str | None, dict[str, Any] | None]:
        if x not in planned:
            rec = plan(job(x))
            planned[x] = (*_limits(rec or {}, slots, fixed_cards), rec)
        return planned[x]
    start = START_B if what == "model" else (slots.get("tokens") or TOKENS_PER_PARAM * size * 1e9) / 1e9
    x = _fit(planned_at, start, what, 1.0)
    if x is None:
        rec = next((r for _, _, r in planned.values() if r), None)
        v.update(answer="unknown", missing="price" if rec else "plan")
        return v
    v.update(_said(x, planned_at(x), what, size))
    ratio = planned_at(x)[0]
    v["used"] = round(1 / ratio, 3) if ratio else None
    if share and tight and v["used"] and v["used"] > tight:
        # sized to the edge: the size that keeps the declared margin, from the edge's size (cost ~ N^2 or ~ D)
        m = _fit(planned_at, x * (math.sqrt(share * ratio) if what == "model" else share * ratio), what, share)
        if m is not None and m < x:
            r = planned_at(m)[0]
            v["margin"] = {**_said(m, planned_at(m), what, size), "used": round(1 / r, 3) if r else None,
                           "share": share}
    return v


def _fit(planned_at: Callable[[float], tuple], x: float, what: str, share: float) -> float | None:
    """The size whose plan needs at most `share` of the limit (to within SETTLED), rounded down to two figures:
    the fixed point over the forward planner, then bisection between the sizes tried."""
    seen: dict[float, tuple[float | None, str | None, dict[str, Any] | None]] = {}

    def probe(y: float) -> float | None:
        ratio, bound, rec = planned_at(y)
        seen[y] = (ratio * share if ratio is not None else None, bound, rec)
        return seen[y][0]
    for _ in range(MAX_PLANS):          # the fixed point: cost ~ N^2 (model) or ~ D (tokens)
        ratio = probe(x)
        if ratio is None or abs(ratio - 1) < SETTLED:
            break
        x = x * (math.sqrt(ratio) if what == "model" else ratio)
    x = _settle(seen, probe)
    if x is None:
        return None
    x = _round_b(x)
    ratio = probe(x)
    if ratio is not None and ratio < 1 - SETTLED:        # rounding crossed the limit: one step down
        x = _round_b(x * 0.97)
        probe(x)
    return x


def _said(x: float, at: tuple, what: str, size: float | None) -> dict[str, Any]:
    """The verdict's numbers for the job at size x: its size, work, bound and the plan that trains it."""
    _, bound, rec = at
    rec = rec or {}
    n, d = (x, TOKENS_PER_PARAM * x * 1e9) if what == "model" else (size, x * 1e9)
    return dict(answer="estimate", params_b=n, tokens=d, bound=bound, flops=6 * n * 1e9 * d,
                hours=rec.get("job_hours"), gpus=rec.get("gpus_total"), gpu_name=rec.get("gpu_name"),
                flavor=rec.get("flavor"), provider=rec.get("provider"), mfu=rec.get("mfu"),
                spend=(rec.get("budget") or {}).get("spend"), currency=(rec.get("budget") or {}).get("currency")
                or rec.get("currency"), job_cost=rec.get("job_cost"), plan_currency=rec.get("currency"),
                job={"params_b": n, "tokens": d})


class InverseStage:
    """The Advisor's inverse-sizing stage (a mixin over the forward planner)."""

    def inverse(self, slots: dict[str, Any], assumed: dict[str, Any], lang: str, what: str = "model",
                margin: bool = True) -> dict[str, Any]:
        """The biggest model (or most tokens) the user's budget or fleet x time trains, on the GPU they named
        (any cloud) or the planner's pick; pre-training from scratch unless a method was said."""
        ids = [g for g in self._gpu_ids(slots["gpu_model"]) if g in self.kb.gpus] if slots.get("gpu_model") else None
        base = {k: x for k, x in slots.items() if k not in ("gpu_model", "gpu_models", "model", "arch", "model_name")
                or (what == "tokens" and k in ("model", "arch"))}

        def plan(job: dict[str, Any]) -> dict[str, Any] | None:
            advice = self._advise("train", job, assumed, lang, gpu_ids=ids or None)
            return next((r for r in advice.recommendations if r.get("label") != "yours"), None)
        room = self._critic.headroom()["deadline_share"] if margin else None
        return size_to_limit(plan, base, what, share=room, tight=self._critic.tight_share() if margin else None)
