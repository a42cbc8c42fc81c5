"""Checklist assembly: the pick's facts for the check rules, the OOM/topology/billing items with their context,
the notes, the public form of a row, and the sources the answer cites."""
from __future__ import annotations

from typing import Any

from bot.estimate.fit import make_it_fit
from bot.estimate.speech import BATCHED_SOURCE, STREAMING_SOURCE, batched_transcription, live_streams
from bot.estimate.vision import DECODE_IMAGES_PER_CORE, decode_cores, vision_speed
from bot.knowledge.loader import KnowledgeBase
from bot.knowledge.prices import is_stale, price_age_days
from bot.records import config
from bot.records.kb import Flavor, Model
from bot.records.models import MemoryEstimate, Workload
from bot.render.templates import Templates

METHOD_SOURCES = {"full": ["zero-paper", "hf-memory-anatomy", "korthikanti-2022"],
                  "freeze": ["hf-memory-anatomy", "korthikanti-2022"],
                  "lora": ["lora-paper", "hf-memory-anatomy", "korthikanti-2022"],
                  "qlora": ["qlora-paper", "lora-paper", "korthikanti-2022"],
                  "inference": ["gqa-paper", "hf-memory-anatomy"]}
# notes on what a card cannot do for the job (rules/advice.yaml check rules on pick_bf16 / pick_arch): a caveat that
# decides whether the plan runs at all, so it is said with the verdict on that card, not after the fold
CARD_NOTES = ("note.bf16_needs_ampere", "note.fp8_before_ada", "note.int4_on_volta", "note.int8_on_volta")
# notes on an engine the job's speed is measured with that does not run on the card (faster-whisper's CTranslate2 has
# CUDA and CPU backends, no Ascend one): said first, with any verdict, whatever the job's kind
ENGINE_NOTES = ("note.whisper_off_cuda_ascend", "note.whisper_off_cuda_amd")
NO_PICK_FACTS = {"pick_fits": False, "pick_headroom_pct": 0, "pick_in_spread": False, "pick_gpu_count": 0,
                 "pick_instances": 0, "pick_price_kind": "none", "image_training": False}


def spread_of(kb: KnowledgeBase, w: Workload):
    """How published runs of this kind of job compared with the estimate (knowledge/estimate_spread.yaml)."""
    return kb.estimate_spread.get({"freeze": "full"}.get(w.method, w.method))


def nvlink_of(kb: KnowledgeBase, f: Flavor) -> bool | None:
    """The flavor's NVLink as documented, or False where its card has none at all (an instance of L4s or L40S is
    PCIe between its cards whatever its page says or omits)."""
    if f.nvlink is None and kb.gpus[f.gpu].nvlink_capable is False:
        return False
    return f.nvlink


ARCH_FAMILIES = ("Pascal", "Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell")


def arch_family(gpu) -> str:
    """'Volta (GV100)' -> 'Volta', 'Ada Lovelace (AD102)' -> 'Ada': the generation kernel support tables are written
    against (vLLM's quantization table: Volta SM 7.0, Turing 7.5, Ampere 8.0/8.6, Ada 8.9, Hopper 9.0)."""
    first = (gpu.architecture or "").split(" ")[0] if gpu.vendor == "nvidia" else ""
    return first if first in ARCH_FAMILIES else "other"


def pick_facts(kb: KnowledgeBase, pick: dict[str, Any], w: Workload) -> dict[str, Any]:
    """The facts about the picked plan that the check rules read."""
    f: Flavor = pick["flavor"]
    spread = spread_of(kb, w)
    in_spread = bool(spread and pick["estimate"].per_gpu_gib * spread.p90_ratio > f.gpu_memory_gib)
    return {"pick_fits": True, "pick_headroom_pct": pick["headroom"], "pick_in_spread": in_spread,
            "pick_gpu_count": f.gpu_count,
            "pick_instances": pick["instances"], "pick_nvlink": nvlink_of(kb, f), "pick_rdma": f.rdma,
            "pick_nvlink_bridged": bool(pick.get("link") and pick["link"].bridged_beyond(
                min(pick["gpus_total"], f.gpu_count))),
            "pick_spot": bool(f.price and f.price.spot), "pick_price_kind": f.price.kind if f.price else "none",
            "pick_evidence": f.evidence, "pick_bf16": kb.gpus[f.gpu].bf16,
            "pick_npu": kb.gpus[f.gpu].vendor == "huawei", "pick_arch": arch_family(kb.gpus[f.gpu]),
            "pick_vendor": kb.gpus[f.gpu].vendor,
            "pick_price_stale": bool(f.price and is_stale(f.price, config.price_max_age_days())),
            # an indicative price's own note already says it is undated
            "pick_price_undated": bool(f.price and f.price.on_demand is not None and f.price.date is None
                                       and f.price.kind != "indicative"),
            "multi_gpu": pick["gpus_total"] > 1, "multi_node": pick["instances"] > 1,
            "sharded_adapters": w.method in ("lora", "qlora") and pick["gpus_total"] > 1 and (
                w.sharding in ("zero3", "fsdp") or pick["gpus_total"] != w.gpus),
            "job_days": (pick["hours"] / 24) if pick.get("hours") else None, **_feed_facts(kb, pick, w)}


def image_feed(kb: KnowledgeBase, pick: dict[str, Any], w: Workload) -> dict[str, Any] | None:
    """What one instance of the plan must decode for an image-training job: the images per second its GPUs train
    on (the speed model's rate for the plan's GPUs, shared by its instances), the CPU cores a CPU input pipeline
    needs for that, and what the instance's vCPUs decode at the same rate per core (None where no vCPU count is
    documented). None for any other job (a language model reads tokens, already decoded)."""
    if w.kind != "vision" or w.task == "inference":
        return None
    f: Flavor = pick["flavor"]
    gpu = kb.gpus.get(f.gpu)
    model = kb.models.get(w.model) if w.model else None
    if gpu is None:
        return None
    try:
        rate = vision_speed(w.model_copy(update={"gpus": max(1, pick["gpus_total"])}), model, gpu, kb.gpus).rate
    except LookupError:          # no FLOPs on file for the model, or no peak for the card: nothing to compare
        return None
    need = rate / max(1, pick.get("instances") or 1)
    return {"need": need, "cores": decode_cores(need), "vcpus": f.vcpus,
            "can": f.vcpus * DECODE_IMAGES_PER_CORE if f.vcpus else None}


def _feed_facts(kb: KnowledgeBase, pick: dict[str, Any], w: Workload) -> dict[str, Any]:
    """The data-loading facts: an image-training job, and whether the instance's vCPUs decode too few images per
    second for its GPUs (unknown where the vCPUs are not documented)."""
    feed = image_feed(kb, pick, w)
    if feed is None:
        return {"image_training": False}
    return {"image_training": True, "pick_decode_short": None if feed["can"] is None else feed["can"] < feed["need"]}


# Notes about the pick's price: they cite the price's own sources (the catalog file, the dated reading), which say
# what the note claims (its date, or that none is known), besides the rule's fixed citation.
PRICE_NOTES = ("note.price_old", "note.price_undated", "note.indicative_price", "note.flagged_price")


def note_ctx(kb: KnowledgeBase, pick, provider: str, lang: str = "en") -> dict[str, Any]:
    ctx = {"provider": kb.providers[provider].display_name(lang)}
    if pick:
        f = pick["flavor"]
        age = price_age_days(f.price) if f.price else None
        ctx.update(flavor=f.flavor,
                   price_date=(f.price.date.isoformat() if f.price.date else "@price.undated") if f.price else "-",
                   price_age_days=age if age is not None else "-",
                   price_sources=list(f.price.sources) if f.price else [])
    return ctx


class Checklist:
    """Builds the checklist items (OOM, topology, billing) from the check rules that fired."""

    def __init__(self, kb: KnowledgeBase, templates: Templates):
        self.kb, self.t = kb, templates

    def build(self, checks, pick, w: Workload, model: Model | None, lang: str, base: MemoryEstimate):
        items = []
        seen = set()
        for chk, cite, rid in checks.checks:
            if chk.item in seen:
                continue
            seen.add(chk.item)
            cites = list(cite)
            if pick:
                ctx = self._pick_ctx(chk, pick, w, model, lang, cites)
            else:
                # no plan: against the largest card on file, never a blank ('does not fit in - GiB')
                ctx = {"need": f"{base.per_gpu_gib:.1f}", "fit_hint": "",
                       "have": f"{max(g.memory_gib for g in self.kb.gpus.values()):g}"}
            items.append({"item": chk.item, "status": chk.status, "say": chk.say, "ctx": ctx,
                          "citations": [c for c in cites if c in self.kb.sources], "rule": rid})
        order = {"oom": 0, "topology": 1, "data": 2, "billing": 3}
        return sorted(items, key=lambda i: order[i["item"]])

    def _pick_ctx(self, chk, pick, w: Workload, model: Model | None, lang: str, cites: list[str]) -> dict[str, Any]:
        """The numbers one item's sentence fills in; adds the sources they come from to `cites`."""
        f: Flavor = pick["flavor"]
        est = pick["estimate"]
        ctx: dict[str, Any] = {
            "need": f"{est.per_gpu_gib:.1f}", "have": f"{f.gpu_memory_gib:g}",
            "headroom": f"{pick['headroom']:.0f}", "flavor": f.flavor, "instances": pick["instances"],
            "gpus_per_instance": f.gpu_count, "interconnect": (f.interconnect or "?").upper(),
            "peers": self.kb.gpus[f.gpu].nvlink_peers or f.gpu_count,
            "network": f.network or "RDMA",
            # the link inside each node as its family calls it: Ascend NPU modules talk over HCCS (Atlas 800)
            "inside": "HCCS" if f.interconnect == "hccs" else "NVLink"}
        if chk.item == "oom" and chk.status != "ok":
            # from the pick's own layout (its GPU count and micro-batch), so that no step reads "tensor parallel
            # over 8 GPUs" for a plan already on 8, or sizes int4 weights on one card
            steps = make_it_fit(_as_planned(w, pick), model, f.gpu_memory_gib * 0.9, 0.0)
            ctx["fit_hint"] = self.fit_hint(steps, f.gpu_memory_gib, lang)
        spread = spread_of(self.kb, w)
        if chk.item == "oom" and spread:
            ctx.update(spread_pct=f"{(spread.p90_ratio - 1) * 100:.0f}", spread_rows=spread.rows,
                       spread_need=f"{est.per_gpu_gib * spread.p90_ratio:.1f}",
                       method=self.t.say(f"spread.{spread.id}", lang))
            cites += [c for c in spread.sources if c not in cites]
        if chk.item == "data":
            ctx.update(self._feed_ctx(pick, w))
        if chk.item == "billing":
            prov = self.kb.providers.get(f.provider)
            for mode in (prov.billing if prov else []):
                for s in mode.sources:
                    if s not in cites:
                        cites.append(s)
        return ctx

    def _feed_ctx(self, pick, w: Workload) -> dict[str, Any]:
        """The data-loading item's numbers: images per second per instance, the cores that decode them, the vCPUs."""
        feed = image_feed(self.kb, pick, w) or {}
        need, can = feed.get("need") or 0.0, feed.get("can")
        return {"need_rate": f"{need:,.0f}", "cores": f"{feed.get('cores') or 0:,}", "vcpus": feed.get("vcpus") or "-",
                "can_rate": f"{can:,.0f}" if can else "-", "per_core": f"{DECODE_IMAGES_PER_CORE:g}",
                "short_x": f"{need / can:.1f}" if can else "-"}

    def fit_hint(self, steps, have: float, lang: str) -> str:
        if not steps:
            return ""
        parts = [f"{self.t.change(s.change, lang)} -> {s.per_gpu_gib:.1f} GiB" for s in steps]
        hint = self.t.say("fit.hint", lang, have=f"{have:g}", steps="; ".join(parts))
        return hint if steps[-1].fits else f"{hint} {self.t.say('fit.still_too_big', lang)}"


ENCODER_SPEED_SOURCES = ["trt-demobert-perf", "sinequa-answer-finder-speed", "mlperf-loadgen-conf"]


MEGATRON_SOURCES = ["megatron-lm-3d-parallelism", "accelerate-megatron-lm"]
# what a data-loading sentence rests on: the per-core decode rate (tensorpack's ImageNet DataFlow), and the two ways
# around a short CPU (DALI's GPU decoding, FFCV's pre-resized shards); as the data-loading check rules cite them
FEED_SOURCES = ["wl-tensorpack-efficient-dataflow", "dali-docs", "ffcv-benchmarks"]


def _three_d(pick) -> bool:
    """A dense training plan in tensor x pipeline parallelism (plans._dense_layout_if_faster)."""
    lay = (pick or {}).get("layout") or {}
    return lay.get("tp", 1) * lay.get("pp", 1) > 1 and lay.get("ep", 1) <= 1 and lay.get("sharding") == "zero1"


def claim_sources(kb: KnowledgeBase, w: Workload, model: Model | None, pick) -> dict[str, list[str]]:
    """The sources behind each claim the answer makes apart from its checklist and notes (which carry their own):
    the memory estimate (the method's papers and the model's config), the training time (FLOPs per token and the
    GPU's peak) and a speed or throughput figure (the GPU's spec). The answer cites each where it makes the claim,
    so its sources are exactly those it refers to."""
    gpu = kb.gpus[kb.flavors[pick["id"]].gpu].sources if pick else []
    recompute = ["korthikanti-2022"] if w.grad_checkpointing else []
    hybrid = bool(pick) and (pick.get("layout") or {}).get("sharding") == "hsdp"
    # an encoder's rate rests on the published BERT engine timings and its latency bound on MLPerf's
    encoder = ENCODER_SPEED_SOURCES if model is not None and model.kind == "encoder" and w.method == "inference" else []
    # a transcription rate rests on the measured engine it scales (and, batched, on the batched benchmark)
    speech = ([model.speed_basis.source] if model is not None and model.speed_basis else []) + \
        ([BATCHED_SOURCE] if w.kind == "speech" and batched_transcription(w) else []) + \
        ([BATCHED_SOURCE, STREAMING_SOURCE] if w.kind == "speech" and live_streams(w) else [])
    out = {"memory": METHOD_SOURCES[w.method] + (list(model.sources) if model else []),
           "compute": ["kaplan-scaling", *recompute, *gpu], "speed": list(gpu) + encoder + speech,
           "layout": ["pytorch-fsdp-hybrid-shard"] if hybrid else (MEGATRON_SOURCES if _three_d(pick) else [])}
    return {claim: list(dict.fromkeys(s for s in ids if s in kb.sources)) for claim, ids in out.items()}


def public(kb: KnowledgeBase, r: dict[str, Any]) -> dict[str, Any]:
    """A ranked row as the `ask --json` recommendation/considered record (the public contract)."""
    f: Flavor = r["flavor"]
    price = f.price
    est = r.get("estimate")
    k = max(1, r.get("instances", 1)) * max(1, r.get("replicas", 1))        # what the whole plan pays per hour
    return {
        "id": f.id, "provider": f.provider, "flavor": f.flavor, "gpu": f.gpu, "gpu_name": kb.gpus[f.gpu].name,
        "gpu_count": f.gpu_count, "gpu_memory_gib": f.gpu_memory_gib,
        "interconnect": ("nvlink" if f.nvlink else f.interconnect) if f.interconnect else None,
        "interconnect_detail": f.interconnect, "rdma": f.rdma, "network": f.network,
        "instances": r.get("instances", 0), "gpus_total": r.get("gpus_total", 0),
        "price_per_hour": round(price.on_demand * k, 4) if price and price.on_demand is not None else None,
        "spot_price_per_hour": round(price.spot * k, 4) if price and price.spot is not None else None,
        "currency": price.currency if price else None, "price_kind": price.kind if price else None,
        "price_date": price.date.isoformat() if price and price.date else None,
        "price_date_basis": price.date_basis if price else None,
        "spot_price_date": price.spot_date.isoformat() if price and price.spot_date else None,
        "price_basis": price.basis if price else None,
        "fits": r["ruled_out"] != "no_fit", "headroom_pct": r.get("headroom", -1.0),
        "per_gpu_gib": est.per_gpu_gib if est else r.get("need"),
        "need_gpus": r.get("need_gpus") if not est else None, "blocked_by": r.get("blocked_by"),
        "demoted": list(r.get("demoted") or []),     # rule preferences it lacks, e.g. RDMA between its instances
        "evidence": f.evidence, "region": f.region, "job_cost": round(r["job_cost"], 2) if r.get("job_cost") else None,
        # four significant figures under an hour: a job of seconds is not '0.0 h' (set1 yolov8n on coco128)
        "job_hours": (round(r["hours"], 1) if r["hours"] >= 1 else float(f"{r['hours']:.4g}")) if r.get("hours") else None,
        "ruled_out": r["ruled_out"], "over_budget": bool(r.get("over_budget")), "sources": list(f.sources),
        "price_sources": list(price.sources) if price else [],
        "note": f.note, **_plan_fields(r),
        # the price in the currency the user wrote their budget in (knowledge/rates.yaml), when it differs
        "user_currency": r.get("user_currency"),
        "price_per_hour_user": round(r["hourly_user"], 2) if r.get("hourly_user") is not None else None,
        "budget": r.get("budget_use"),           # the plan's spend against a stated budget, in its currency
        # the critic (critic.py): the invariant that ruled the plan out and why; a plan offered for a quote
        "implausible": r.get("implausible"), "quote": bool(r.get("quote")),
        "user_rate_date": _rate_date(kb, price.currency if price else None, r.get("user_currency")),
    }


def _plan_fields(r: dict[str, Any]) -> dict[str, Any]:
    """The plan around the flavor: label, layout, replicas, targets missed, why it lost, link evidence, and for an
    always-on service its monthly cost (730 h)."""
    link = r.get("link")
    hourly = r.get("hourly")
    serving = bool(r.get("layout")) and r["layout"].get("kv_dtype") is not None
    return {
        "label": r.get("label"), "layout": r.get("layout"), "replicas": r.get("replicas", 1),
        "costs": list(r.get("costs") or []),
        "breaks": list(r.get("breaks") or []), "why": list(r.get("why") or []),
        "hourly_total": round(hourly, 4) if hourly is not None else None,
        # a serving plan with a known length is a batch job: its cost is job_cost, not a month
        "monthly_cost": round(hourly * 730, 2) if serving and hourly is not None and not r.get("hours") else None,
        "items_per_hour": round(r["sized"].items_per_s * 3600 * max(1, r.get("replicas") or 1))
        if r.get("sized") is not None and getattr(r["sized"], "items_per_s", None) and r.get("hours") else None,
        "interconnect_evidence": link.intra_how if link else None, "intra_link": link.intra if link else None,
        "inter_link": link.inter if link else None,
        "mfu": round(r["sized"].mfu, 3) if r.get("sized") and r["sized"].mfu else None,
        "replica_concurrency": r["sized"].replica_concurrency if r.get("sized") else None,
        "tpot_ms": round(r["sized"].tpot_ms, 1) if r.get("sized") and r["sized"].tpot_ms else None,
        "load_tpot_ms": round(r["sized"].load_tpot_ms, 1) if r.get("sized") and r["sized"].load_tpot_ms else None,
        "load_per_replica": r["sized"].load_per_replica if r.get("sized") else None,
        "ttft_ms": round(r["sized"].ttft_ms) if r.get("sized") and r["sized"].ttft_ms else None,
        # an encoder's request: one batch's forward pass, and what one replica completes per second
        "request_ms": round(r["sized"].request_ms, 1) if r.get("sized") and r["sized"].request_ms else None,
        "requests_per_s": round(r["sized"].items_per_s, 1)
        if r.get("sized") and r["sized"].request_ms and r["sized"].items_per_s else None,
        "encoder_batch": r["sized"].encoder_batch if r.get("sized") else None,
        # one query's fan-out on one GPU, and the GPUs each query is split over to meet the latency target
        "query_ms": round(r["sized"].query_ms, 1) if r.get("sized") and r["sized"].query_ms else None,
        "query_split": r["sized"].query_split if r.get("sized") else None,
        # the load in its own unit, what one replica carries and the replicas (capacity.py): every served kind
        "capacity": r["capacity"].record() if r.get("capacity") is not None else None,
    }


def _rate_date(kb: KnowledgeBase, from_ccy: str | None, to_ccy: str | None) -> str | None:
    """The date of the exchange rates a converted price rests on (the older one, if two)."""
    if not from_ccy or not to_ccy or from_ccy == to_ccy:
        return None
    used = kb.rates_used(from_ccy, to_ccy)
    return min(r.date for r in used).isoformat() if used else None


def _as_planned(w: Workload, pick: dict[str, Any]) -> Workload:
    """The job as the pick runs it: per replica, on its GPUs, at the micro-batch it was sized with; a serving
    replica at the sequences and tokens in flight it was sized for (a fit hint for 500 users' full windows on one
    replica had read 'int8 weights -> 279.7 GiB' for a pick that needs 75.7)."""
    sized = pick.get("sized")
    if getattr(sized, "workload", None) is not None:
        w = sized.workload
    update: dict[str, Any] = {"gpus": max(w.gpus, pick.get("gpus_total") or w.gpus)}
    sharding = (pick.get("layout") or {}).get("sharding")
    if sharding and (w.offload != "full" or sharding in ("zero3", "fsdp", "hsdp")):
        update["sharding"] = sharding      # the user's parameter offload keeps its ZeRO-3 (one card included)
    if sharding == "hsdp":
        update["nodes"] = max(1, pick.get("instances") or 1)     # sharded inside each instance
    if pick.get("micro_batch"):
        update["batch_size"] = pick["micro_batch"]
    return w.model_copy(update=update)
