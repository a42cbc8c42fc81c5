"""The figures said with the pick: the job's compute (FLOPs, tokens/s, MFU, hours) timed as the plan was,
the speed of an image, audio or encoder job, a batch job's numbers, and a service's throughput."""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from bot.estimate import cost
from bot.estimate.kinds import job_speed
from bot.estimate.speed_encoder import encoder_efficiency
from bot.estimate.scaling import INTER_NODE, INTRA_NODE, dp_efficiency
from bot.plan.batch import batch_spec, summary
from bot.plan import perf
from bot.plan.layouts import zero3_workload
from bot.plan.plans import timed_workload
from bot.records.models import Link
from bot.plan.advice import NO_BF16_SOURCES, Advice, _Job

# policy: a batch fleet above this many GPUs (eight 8-GPU machines) gets a note to secure quota and capacity first;
# clouds grant GPU quota per region on request, and a fleet that size is a capacity question, not a click
BATCH_QUOTA_GPUS = 64
SAID_SPEED_NOTES = ("sp.clip_len", "dif.train_share")     # speed notes an item-timed answer states as assumptions


class FiguresStage:
    """The Advisor's figures stage (a mixin: its methods read the advisor's knowledge base, rules,
    templates, ranker and critic)."""

    def _extras(self, job: _Job, pick, advice: Advice) -> None:
        """Training time (and GPUs for a deadline), serving throughput, and the verdict on a named GPU or card."""
        w, model = job.w, job.model
        if pick:
            gpu = self.kb.gpus[pick["gpu"]]
            if w.precision == "bf16" and not gpu.bf16 and gpu.vendor == "nvidia":
                # Volta and Turing have no bf16: the job runs in fp16 there (same bytes, so the same memory)
                advice.notes.append(("note.no_bf16", {"gpu": gpu.name}, NO_BF16_SOURCES))
            if w.tokens:
                advice.compute = self._compute(job, pick, gpu)
            # a transcription job's copies share the audio: its speed is theirs together
            copies = (pick.get("replicas") or 1) if w.kind == "speech" and w.dataset_items else 1
            speed = job_speed(w.model_copy(update={"gpus": pick["gpus_total"] * copies}), model, gpu, self.kb.gpus,
                              list(self.kb.models.values()), self._pick_link(pick))
            if job.targets.items and pick.get("sized") and pick["sized"].items_per_s:
                spec = batch_spec(job.slots, model if w.kind in ("llm", "multimodal") else None)
                advice.batch = summary(spec, pick["sized"], pick["gpus_total"],
                                       tokens=w.kind in ("llm", "multimodal"))
                fleet_gpus = pick["gpus_total"] * max(1, pick.get("replicas") or 1)
                if fleet_gpus > BATCH_QUOTA_GPUS:
                    advice.notes.append(("note.batch_fleet", {"gpus": f"{fleet_gpus:,}"}, []))
            elif speed is not None:      # images/s, x real time, samples/s: the job's own unit, never tokens
                advice.speed = speed.model_dump()
                if speed.items and pick.get("hours"):
                    advice.compute = self._compute_items(job, pick, gpu, speed)
                    # what the job's time rests on and the user may know better: the clips' length, the training
                    # share of a denoiser's rate
                    advice.assumptions += [(k["key"], k["ctx"]) for k in speed.assumption_keys
                                           if k["key"] in SAID_SPEED_NOTES]
            elif w.method == "inference" and pick.get("sized") and pick["sized"].request_ms:
                advice.throughput = encoder_throughput(gpu, pick)
                eff, measured = encoder_efficiency(gpu)
                if not measured:     # the rate rests on an LLM prefill share, not on a BERT measurement: say so
                    advice.notes.append(("note.encoder_unmeasured", {"gpu": gpu.name, "share": f"{eff:.0%}"}, []))
            elif w.method == "inference" and w.kind in ("llm", "multimodal"):
                sized = pick.get("sized")
                conc = sized.replica_concurrency if sized and sized.replica_concurrency else w.concurrency
                sw = w.model_copy(update={"concurrency": conc})
                tps = cost.decode_tokens_per_second(sw, model, gpu, pick["gpus_total"])
                if tps:
                    advice.throughput = {"gpu": gpu.name, "tokens_per_s": round(tps), "concurrency": conc}
        if (pick and pick.get("named") and job.slots.get("gpu_model") and not job.slots.get("gpus")
                and pick["gpus_total"] > 1):
            # 'on Ascend 910B' with no count, and the pick runs it on several of those cards: judge the cards the
            # pick uses, not one card (which would say 'out of memory' above a plan that fits)
            job = replace(job, w=w.model_copy(update={"gpus": pick["gpus_total"]}))
        self._judge(job, advice)

    def _pick_link(self, pick) -> Link | None:
        """The speed model's link for the pick as planned (its cards per instance; bridged pairs at PCIe speed), so
        a speed shown is the one the plan was ranked on, not the GPU's usual link."""
        if not pick.get("link"):
            return None
        return perf.speed_link(pick["link"], min(pick["gpus_total"], self.kb.flavors[pick["id"]].gpu_count))

    def _compute(self, job: _Job, pick, gpu) -> dict[str, Any] | None:
        """The pick's compute: FLOPs and basis from cost.py, timed as the plan was (its layout over its GPUs and its
        link), so the tokens/s per GPU shown agree with the wall clock."""
        n, f = pick["gpus_total"], self.kb.flavors[pick["id"]]
        link = self._pick_link(pick)
        planned = (pick.get("layout") or {}).get("sharding")
        wn = timed_workload(job.w, n, f.gpu_count, pick.get("layout")).model_copy(
            update={"nodes": max(1, math.ceil(n / f.gpu_count))})
        ct = cost.training_time(wn, job.model, gpu, n, link)
        if not ct:
            return None
        out = ct.model_dump()
        if planned == "hsdp":
            out.update(sharding="hsdp", nodes=wn.nodes, gpus_per_node=f.gpu_count)
        lay = pick.get("layout") or {}
        if lay.get("tp", 1) * lay.get("pp", 1) > 1 and lay.get("ep", 1) <= 1 and wn.nodes > 1 and pick.get("link"):
            # tensor parallelism inside each instance, pipeline stages across them: said with what ZeRO-3 would take
            zero3 = perf.train_time(zero3_workload(job.w, n, f.gpu_count), job.model, gpu, n, f.gpu_count,
                                    pick["link"])
            out.update(layout_3d={"tp": lay["tp"], "pp": lay["pp"], "dp": lay["dp"], "gpus_per_node": f.gpu_count,
                                  "zero3_days": round(zero3.hours / 24, 1) if zero3 else None})
        if pick.get("hours"):
            out.update(days=round(pick["hours"] / 24, 2), hours=round(pick["hours"], 1),
                       gpu_hours=round(pick["hours"] * pick["gpus_total"], 1))
        deadline = job.slots.get("deadline_days")
        if deadline and out["days"] > deadline:
            out["deadline_days"] = deadline
            out["gpus_for_deadline"] = math.ceil(ct.gpu_hours / 24 / deadline)
        return out

    def _compute_items(self, job: _Job, pick, gpu, speed) -> dict[str, Any]:
        """The compute of an image, audio or denoiser training job (ask --json `compute`): its items (dataset x
        epochs), the pick's rate and wall clock, GPU-hours; past a deadline, about how many GPUs of the pick's kind
        would meet it (linear in GPUs at the data-parallel efficiency of several servers: a lower bound)."""
        hours = pick["hours"]
        out = {"gpu": gpu.id, "gpus": pick["gpus_total"], "hours": round(hours, 1), "days": round(hours / 24, 2),
               "gpu_hours": round(hours * pick["gpus_total"], 1), "items": speed.items,
               "items_per_epoch": speed.items_per_epoch, "epochs": speed.epochs, "item_unit": speed.item_unit,
               "rate": speed.rate, "rate_unit": speed.unit, "utilization": None, "flops": None,
               "basis": "; ".join(f"{t.name}: {t.formula}" for t in speed.terms)}
        deadline = job.slots.get("deadline_days")
        if deadline and hours > deadline * 24:
            one = hours * pick["gpus_total"] * dp_efficiency(pick["gpus_total"], pick["instances"])
            out.update(deadline_days=deadline,
                       gpus_for_deadline=math.ceil(one / (deadline * 24) / (INTRA_NODE * INTER_NODE)))
        return out


def encoder_throughput(gpu, pick: dict[str, Any]) -> dict[str, Any]:
    """An encoder's speed as the answer says it (ask --json `throughput`): requests/s of one replica, the batch one
    forward pass runs, a request's latency (that forward pass), and the fleet's requests/s; no tokens are output."""
    s = pick["sized"]
    replicas = max(1, pick.get("replicas") or 1)
    return {"gpu": gpu.name, "encoder": True, "requests_per_s": round(s.items_per_s, 1), "batch": s.encoder_batch,
            "request_ms": round(s.request_ms, 1), "gpus": s.gpus_total, "replicas": replicas,
            "total_requests_per_s": round(s.items_per_s * replicas, 1)}


def split_batch(assumption: tuple[str, dict[str, Any]], pick: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The assumed batch, as the pick runs it: in micro-batches with gradient accumulation to fit one card."""
    key, ctx = assumption[0], assumption[1]
    if key != "assume.batch":
        return assumption
    return ("assume.micro_batch", {**ctx, "micro": pick["micro_batch"], "steps": pick["layout"]["grad_accumulation"]},
            *assumption[2:])
