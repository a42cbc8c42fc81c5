"""Choosing among plans: the pick, the cheapest and the fastest within budget, and for every other plan the
reason it lost, computed from the same numbers the answer prints (a plan "costs more" only if it does).

Rows arrive ranked (passing, meeting every target, within budget, cheapest first). The pick is the first that
also passes its own checklist; when none meets every target, the nearest one, with what it breaks.
"""
from __future__ import annotations

import math
from typing import Any, Callable

Row = dict[str, Any]
SHOWN_CONSIDERED = 6


def job_price(r: Row) -> float:
    """What the plan costs the user: the whole job when its length is known, else per hour; in USD at the dated
    rates when the ranking converted it (a 1.24 CNY/h plan is cheaper than a 0.80 USD/h one)."""
    if r.get("price_usd") is not None:
        return r["price_usd"]
    if r.get("job_cost") is not None:
        return r["job_cost"]
    return r["hourly"] if r.get("hourly") is not None else math.inf


def choose(rows: list[Row], passes: Callable[[Row], bool]) -> tuple[list[Row], list[Row]]:
    """(labelled recommendations, considered rows each with a `why`) from ranked rows."""
    fitting = [r for r in rows if not r["ruled_out"]]
    priced = [r for r in fitting if job_price(r) < math.inf]
    meeting = [r for r in priced if not r.get("breaks") and not r.get("over_budget")]
    if not priced or (fitting and (fitting[0].get("named") or fitting[0].get("quote"))
                      and job_price(fitting[0]) == math.inf):
        # nothing has a price, or the GPU the user asked for has none ('on Ascend 910B'), or the only plans that meet
        # the job have none (critic.promote_unpriced: 'ask for a quote'): cost cannot decide between
        # it and the others, so the order stands (theirs first) and the targets still rule; a priced plan stays in
        # view as the cheapest
        meeting = [r for r in fitting if not r.get("breaks")]
    meeting = documented_fabric_first(meeting, fitting)
    pick = next((r for r in meeting[:12] if passes(r)), None) or (meeting[0] if meeting else
                                                                  _nearest(priced or fitting))
    pick = _simpler(pick, meeting, passes)
    if pick is None:
        return [], _considered(rows, [], None)
    recs = [_label(pick, "pick")]
    # the cheapest is shown as an option the user could take: one that meets their targets (a plan missing the
    # deadline is not a cheaper way to do the same job), else one within the horizon
    sensible = [r for r in fitting if not r.get("breaks") and _no_more_demoted(r, pick)
                and _no_more_demoted(r, pick, "borrowed")] or \
        [r for r in fitting if "horizon" not in r.get("breaks", [])] or fitting
    cheap = min(sensible, key=lambda r: (job_price(r), r.get("hours") or 0, r["id"]))
    # cheaper by more than the rounding of the figures shown: 3,486 against 3,486 USD is the same price (copies of a
    # one-card job cost the same on any instance size of the card), and 'the cheaper plan below' would contradict it
    if cheap is not pick and job_price(cheap) < job_price(pick) * (1 - SAME_PRICE):
        recs.append(_label(cheap, "cheapest"))
    # nor is a plan faster only by a leap the pick does not take (several instances over a network no source
    # documents as RDMA, timed over TCP): 1,024 V100s over an unknown network are no 'fastest' beside a RoCE pool
    timed = [r for r in fitting if r.get("hours") and not r.get("over_budget") and _no_more_demoted(r, pick)]
    if job_price(pick) < math.inf:
        # beside a priced pick, a faster plan must say what it costs: one with no public price is no option to weigh
        timed = [r for r in timed if job_price(r) < math.inf]
    if timed and pick.get("hours"):
        fast = min(timed, key=lambda r: (r["hours"], job_price(r), r["id"]))
        if saves_time(fast["hours"], pick["hours"]) and all(fast is not r for r in recs):
            recs.append(_label(fast, "fastest"))
    for r in meeting:
        if len(recs) >= 3:
            break
        if all(r is not x for x in recs) and not _flagged(r) and _no_more_demoted(r, pick):
            recs.append(_label(r, None))     # a catalog price flagged as a data quirk stays among the considered
    for r in recs[1:]:
        r["why"] = _why(r, pick, passes)
    return recs, _considered(rows, recs, pick, passes)


def documented_fabric_first(meeting: list[Row], fitting: list[Row]) -> list[Row]:
    """When every priced plan that meets the targets needs the leap the rules demote (several instances over a
    network no source documents as RDMA, timed over TCP) and a timed plan on a documented RDMA network meets them
    too but has no public price (a ModelArts Snt9B pool with RoCE), the documented plan comes first, offered as
    'ask for a quote' (issue 31): a price for a job timed over a network nobody documents is not a cheaper way to
    do the same job. The priced plans stay in view among the considered, with why."""
    if not meeting or not all(r.get("demoted") for r in meeting) or any(r.get("named") for r in meeting):
        return meeting         # a plan that needs no leap, or the GPU the user asked for, decides as before
    quoted = [r for r in fitting if job_price(r) == math.inf and not r.get("demoted") and not r.get("breaks")
              and r.get("hours") and all(r is not m for m in meeting)]
    return sorted(quoted, key=lambda r: (r["hours"], r["id"]))[:1] + meeting if quoted else meeting


FASTER_BY = 0.9              # policy: a faster plan is named when it takes at most 90 % of the pick's time
MIN_HOURS_SAVED = 0.25       # and saves at least a quarter of an hour: eight GPUs to finish a 3-minute job in 1
                             # minute is not an option anyone weighs


def saves_time(fast_hours: float, pick_hours: float) -> bool:
    """Is a faster plan worth naming beside the pick: faster by a share and by wall-clock time that matter?"""
    return fast_hours < pick_hours * FASTER_BY and pick_hours - fast_hours >= MIN_HOURS_SAVED


SAME_PRICE = 0.01            # policy: plans within 1 % of each other's price are shown as the same price
SIMPLER_WORTH = 0.10         # policy: each halving of the cards to run, or of a replica's split, is worth 10 %
SIMPLER_MAX = 0.30           # and a simpler plan is never worth more than 30 % extra


def _complexity(r: Row) -> float:
    """Halvings away from one whole card: every GPU the plan runs (GPUs per replica x replicas), and again the GPUs
    one replica is split over (tensor parallelism: a link in every token's path)."""
    per_replica = max(1, r.get("gpus_total") or 1)
    return math.log2(per_replica * max(1, r.get("replicas") or 1)) + math.log2(per_replica)


def _simpler(pick: Row | None, meeting: list[Row], passes: Callable[[Row], bool]) -> Row | None:
    """A simpler plan that meets every target and passes is the better pick when it costs at most 10 % more per
    halving (at most 30 %): two replicas of one L4 rather than one replica split over two T4s by tensor parallelism
    over PCIe; one 80 GB card rather than two replicas of two 24 GB cards. Fewer cards and splits mean less to run,
    no slow link in every token's path and room for longer prompts; the cheaper plan stays in view as "cheapest".
    A plan on the GPU the user asked for ('on V100 cards') is only simplified by another plan on it."""
    if pick is None or pick not in meeting or job_price(pick) == math.inf:
        return pick           # an unpriced pick (the GPU the user named) cannot be out-priced by a simpler plan
    c = _complexity(pick)

    def worth(r: Row) -> float:
        return job_price(pick) * (1 + min(SIMPLER_MAX, SIMPLER_WORTH * (c - _complexity(r))))
    simpler = [r for r in meeting[:12] if _complexity(r) < c and job_price(r) <= worth(r) and passes(r)
               and not (r.get("tight") and not pick.get("tight"))      # critic.prefer_roomy: not back to an OOM risk
               and (pick.get("frugal") or not _slower(r, pick)) and _no_more_demoted(r, pick) and _no_more_demoted(r, pick, "borrowed")
               and (r.get("named") or not pick.get("named"))]
    return min(simpler, key=lambda r: (_complexity(r), job_price(r), r["id"])) if simpler else pick


def _flagged(r: Row) -> bool:
    price = getattr(r.get("flavor"), "price", None)
    return getattr(price, "kind", None) == "flagged"


def _no_more_demoted(r: Row, pick: Row, flag: str = "demoted") -> bool:
    """A plan the rules demote (several instances with no documented RDMA between them) is not offered as the
    simpler or cheaper way to do what the pick does without that leap: three 1-GPU VMs over a network of unknown
    kind are not simpler than one 4-GPU instance, and their lower hourly price is not a cheaper job when the
    job's length is unknown."""
    return not r.get(flag) or bool(pick.get(flag))


def _nearest(fitting: list[Row]) -> Row | None:
    """No plan meets every target: the one that comes closest (a run that misses its deadline by least; else the
    first, cheapest, one)."""
    timed = [r for r in fitting if r.get("hours")]
    if not any(r.get("breaks") for r in fitting):                 # only over budget: the cheapest is nearest
        return min(fitting, key=lambda r: (job_price(r), r["id"])) if fitting else None
    if fitting and all(r.get("over_budget") for r in fitting) and \
            not any(b != "horizon" for r in fitting for b in r.get("breaks", [])):
        # over the budget whatever the plan, and nothing the user asked for is missed (the horizon is the planner's
        # own limit): the cheapest within the horizon is nearest, not a faster plan that costs half as much again (a
        # 3B pre-training over a 200k CNY budget was offered 40 cards at 80k USD beside 24 at 53k)
        within = [r for r in fitting if "horizon" not in r.get("breaks", [])] or fitting
        return min(within, key=lambda r: (job_price(r), r["id"]))
    if timed and any(b in ("deadline", "horizon") for r in timed for b in r.get("breaks", [])):
        within = [r for r in timed if not r.get("over_budget")] or timed
        return min(within, key=lambda r: (r["hours"], job_price(r), r["id"]))
    return fitting[0] if fitting else None


def _label(r: Row, label: str | None) -> Row:
    r["label"] = label
    return r


def _considered(rows: list[Row], recs: list[Row], pick: Row | None, passes: Callable[[Row], bool] | None = None
                ) -> list[Row]:
    """Like SkyPilot's considered resources: the cheaper plans that lost (and why), then the next ones."""
    rest = [r for r in rows if all(r is not x for x in recs)]
    if pick is None:
        for r in rest:
            r["why"] = [r["ruled_out"] or "breaks"]
        return rest[:SHOWN_CONSIDERED]
    cheaper = [r for r in rest if job_price(r) < job_price(pick) or r["ruled_out"] and _cheaper_hourly(r, pick)]
    later = [r for r in rest if not r["ruled_out"] and all(r is not x for x in cheaper)]
    shown = (cheaper[:3] + later[:3]) or rest[:SHOWN_CONSIDERED]
    for r in shown:
        r["why"] = _why(r, pick, passes)
    return shown


def _cheaper_hourly(r: Row, pick: Row) -> bool:
    f = r["flavor"]
    return bool(f.price and f.price.on_demand is not None and pick.get("hourly") is not None
                and f.price.on_demand < pick["hourly"])


def _why(r: Row, pick: Row, passes: Callable[[Row], bool] | None) -> list[str]:
    """Why this plan is not the pick, in the order a reader checks: ruled out, misses a target, over budget,
    fails its checklist, spans instances without documented RDMA, then the numbers: costs more, slower, same
    cost."""
    if r["ruled_out"]:
        return [r["ruled_out"]]
    why = [f"breaks.{b}" for b in r.get("breaks", [])]
    if r.get("over_budget"):
        why.append("over_budget")
    if passes is not None and not why and not passes(r):
        why.append("fails_check")
    if not why and r.get("demoted") and not pick.get("demoted"):
        # several instances over a network no source documents as RDMA: ranked after plans that need no such leap
        why.extend(f"demoted.{a}" for a in r["demoted"])
    mine, theirs = job_price(r), job_price(pick)
    if mine == math.inf:
        why.append("no_price")
    elif mine > theirs * 1.0005:
        why.append("costs_more")
    if r.get("hours") and pick.get("hours") and r["hours"] > pick["hours"] * 1.0005:
        why.append("slower")
    if not why and r.get("tight") and not pick.get("tight"):
        # under the OOM warning's headroom beside a pick with room (critic.mark_tight): that is why it lost
        why.append("tight")
    if not why:
        # below a plan on the GPU the user named, a cheaper one lost for that reason, not on the rules' preferences
        lost_to = "not_named" if pick.get("named") and not r.get("named") else "cheaper"
        why.append(lost_to if mine < theirs else "same_cost")
    return why


def _slower(r: Row, pick: Row) -> bool:
    """A timed job on fewer cards takes longer: simplicity is not worth a longer wall clock at about the same price
    (2 GPUs for 16 h at 217 USD is not simpler than 4 GPUs for 8 h at 215 USD, only slower)."""
    return bool(r.get("hours") and pick.get("hours") and r["hours"] > pick["hours"] * (1 + SIMPLER_WORTH))
