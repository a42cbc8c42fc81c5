"""The faster option beside the pick: its flavor scaled out to a quarter of the time (training), or more
replicas of it (a batch job), offered only when it saves time that matters and the critic signs it."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.plan.choose import saves_time
from bot.plan.batch import job_hours, replicas_for
from bot.plan.links import link_of
from bot.plan.plans import (Targets, size_training)
from bot.plan.ranking import budget_fields
from bot.plan.advice import _Job


class FasterStage:
    """The Advisor's faster stage (a mixin: its methods read the advisor's knowledge base, rules,
    templates, ranker and critic)."""

    def _faster(self, job: _Job, pick, recs: list[dict[str, Any]]) -> None:
        """No deadline and no faster plan shown: the pick's flavor at a quarter of its time, with its cost."""
        if job.targets.items:
            self._faster_batch(job, pick, recs)
            return
        if not pick or not pick.get("hours") or job.targets.deadline_h or job.sizer.user_fixed:
            return
        if any(r.get("label") == "fastest" for r in recs):
            return
        f = pick["flavor"]
        quick = size_training(f, self.kb.gpus[f.gpu], pick["instances"], pick["gpus_total"], pick["estimate"],
                              job.sizer, Targets(deadline_h=pick["hours"] / 4), link_of(self.kb, f))
        if quick.hours is None or not saves_time(quick.hours, pick["hours"]) or pick.get("hourly") is None:
            return
        hourly = pick["hourly"] / pick["instances"] * quick.instances
        row = {**pick, "instances": quick.instances, "gpus_total": quick.gpus_total, "estimate": quick.estimate,
               "layout": quick.layout, "hours": quick.hours, "hourly": hourly, "job_cost": hourly * quick.hours,
               "headroom": round(100 * (1 - quick.estimate.per_gpu_gib / f.gpu_memory_gib), 1),
               "label": "fastest", "breaks": [], "sized": quick}
        if self._faster_breaks(job, row, recs):
            return
        row.update(budget_fields(self.kb, hourly, row["job_cost"], f, job.slots))
        row["why"] = ["costs_more"] if row["job_cost"] > pick["job_cost"] * 1.0005 else ["same_cost"]
        recs.insert(1, row)
        del recs[3:]

    def _faster_breaks(self, job: _Job, row: dict[str, Any], recs: list[dict[str, Any]]) -> bool:
        """The pick scaled out to finish sooner is offered only if it is a sane plan (the critic: its MFU against
        the pick's on the same card, the floor); if not, the trace says why it is not shown."""
        broken = self._critic.breaks_row(row, job.view(), job.lang, recs)
        if broken:
            job.critic[f"critic.{broken[0]}"] = {"rule": f"critic.{broken[0]}", "fired": True, "because": broken[1]}
        return broken is not None

    def _faster_batch(self, job: _Job, pick, recs: list[dict[str, Any]]) -> None:
        """A batch job goes faster on more replicas of the same plan at about the same cost (the same GPU-hours,
        plus a start-up each), so the faster option is the pick scaled out, not another flavor's single replica
        (which choose() would call 'fastest' while the pick could outrun it for less): with no deadline, the
        pick's replicas for a quarter of its time."""
        for r in recs:
            if r.get("label") == "fastest":
                r["label"] = None
        sized = pick.get("sized") if pick else None
        if not sized or not sized.items_per_s or not pick.get("hours") or job.targets.deadline_h \
                or pick.get("hourly") is None or pick["hours"] < 1:
            return
        items, rate = job.targets.items, sized.items_per_s
        replicas, meets = replicas_for(items, rate, pick["hours"] / 4, pick["gpus_total"])
        if not meets or replicas <= pick["replicas"]:
            return
        hours = job_hours(items, rate, replicas)
        if not saves_time(hours, pick["hours"]):
            return
        hourly = pick["hourly"] / max(1, pick["replicas"]) * replicas
        quick = replace(sized, replicas=replicas, hours=hours, breaks=[],
                        layout={**sized.layout, "dp": sized.layout["dp"] // max(1, pick["replicas"]) * replicas})
        row = {**pick, "replicas": replicas, "sized": quick, "layout": quick.layout, "hours": hours,
               "hourly": hourly, "job_cost": hourly * hours, "label": "fastest", "breaks": []}
        if self._faster_breaks(job, row, recs):
            return
        row.update(budget_fields(self.kb, hourly, row["job_cost"], pick["flavor"], job.slots))
        row["why"] = ["costs_more"] if row["job_cost"] > pick["job_cost"] * 1.0005 else ["same_cost"]
        recs.insert(1, row)
        del recs[3:]
