"""`gpu-advisor estimate`: option handling and the readable table (the arithmetic lives in estimate.py)."""
from __future__ import annotations

import json
from typing import Any

import click
from pydantic import ValidationError

from bot.records.errors import InvalidRequest, NotFound
from bot.estimate.memory import estimate_memory
from bot.estimate.fit import make_it_fit
from bot.records.models import Workload

COMMON_GPUS = ["t4", "a10", "l4", "v100-32gb", "a100-40gb", "l40s", "a100-80gb", "h100-sxm", "h200"]


def resolve_model(name: str):
    """Fuzzy model lookup through the same parser the chat uses, with 'did you mean' on failure."""
    from bot.knowledge.loader import default_knowledge, did_you_mean
    from bot.records.text import norm_key
    kb = default_knowledge()
    key = norm_key(name)
    if key in kb.model_aliases:
        return kb.models[kb.model_aliases[key]]
    from bot.surfaces.service import shared_core
    parse = shared_core().parser.parse(name)
    if parse.slots.model:
        return kb.models[parse.slots.model]
    if parse.ambiguous.get("model"):
        raise NotFound(f"'{name}' matches several models", fix="name one of them exactly",
                       did_you_mean=parse.ambiguous["model"])
    raise NotFound(f"unknown model '{name}'", fix="use --params N (billions) or a name from `gpu-advisor kb list models`",
                   did_you_mean=did_you_mean(name, list(kb.models)))


def training_compute(w: Workload, model, gpu, kb) -> dict[str, Any] | None:
    """The contract's `compute`: GPU-hours, wall clock, tokens/s per GPU, MFU, priced per billing mode, and the
    speed model's terms."""
    from bot.estimate.cost import job_costs, on_gpus, training_time
    from bot.estimate.speed import training_speed
    ct = training_time(w, model, gpu, w.gpus)
    if ct is None:
        return None
    # price the instance shape the job runs on (8 GPUs per node at most), not a cheaper single-GPU slice
    shape = min(w.gpus, 8)
    offers = kb.flavors_with_gpu(gpu.id)
    ct.costs = job_costs(ct.gpu_hours, [f for f in offers if f.gpu_count == shape] or offers)
    sp = training_speed(on_gpus(w, w.gpus), model, gpu)
    return {**ct.model_dump(), "terms": [t.model_dump() for t in sp.terms], "speed_assumptions": sp.assumptions}


def serving_throughput(w: Workload, model, gpu) -> dict[str, Any]:
    """The contract's `throughput`: one replica of w.gpus GPUs at w.concurrency. An encoder (BERT, an embedding
    model) outputs no tokens: its throughput is requests/s of w.gpus copies at a batch of w.concurrency, each request
    of --input-len tokens (else the context, within the model's positions), and a request's latency."""
    from bot.estimate.cost import serving
    from bot.estimate.speed_encoder import encoder_speed_at, generates
    if not generates(model):
        seq = min(w.input_len or w.context, model.max_context or w.context)
        sp = encoder_speed_at(w, model, gpu, seq, w.concurrency)
        return {"gpu": gpu.id, "gpus": w.gpus, "encoder": True, "batch": sp.batch, "input_len": seq,
                "requests_per_s": round(sp.sequences_per_s * w.gpus, 1), "request_ms": round(sp.forward_ms, 2),
                "share_of_peak": sp.efficiency, "share_measured": sp.measured, "bound": sp.bound,
                "terms": [t.model_dump() for t in sp.terms], "assumptions": [str(n) for n in sp.notes]}
    sp = serving(w, model, gpu, w.gpus)
    return {"gpu": gpu.id, "gpus": w.gpus, "tensor_parallel": w.tensor_parallel, "concurrency": sp.concurrency,
            "input_len": sp.input_len, "output_len": sp.output_len,
            "output_tokens_per_s": round(sp.output_tokens_per_s), "requests_per_s": round(sp.requests_per_s, 3),
            "ttft_ms": round(sp.ttft_ms, 1), "tpot_ms": round(sp.tpot_ms, 2), "max_concurrency": sp.max_concurrency,
            "decode_tokens_per_s_max": round(sp.decode_tokens_per_s_max),
            "prefill_tokens_per_s_max": round(sp.prefill_tokens_per_s_max),
            "terms": [t.model_dump() for t in sp.terms], "assumptions": sp.assumptions}


def echo_terms(title: str, terms: list[dict[str, Any]], notes: list[str]) -> None:
    """The speed model's terms, one a line, and what it assumed."""
    click.echo(f"{title}:")
    for t in terms:
        value = f"{t['value']:,.4g}"
        click.echo(f"  {t['name']:<44}{value:>12} {t['unit']:<18} {t['formula']}")
    for n in notes:
        click.echo(f"  note: {n}")


def model_from_file(path: str):
    """The model a config.json describes (bot/estimate/hfconfig.py), with what was computed or assumed."""
    from bot.estimate.hfconfig import model_from_config
    try:
        with open(path, encoding="utf-8") as fh:
            cfg = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InvalidRequest(f"cannot read {path} as JSON: {exc}", fix="pass the model's config.json") from None
    return model_from_config(cfg, name=path)


def run_estimate(o: dict[str, Any]) -> None:
    """Build the workload from the options, estimate it, and print a table (or JSON with --json)."""
    from bot.knowledge.loader import default_knowledge
    model, config_notes = _model(o)
    w = _workload(o, model)
    est = estimate_memory(w, model)
    if config_notes:
        est = est.model_copy(update={"assumptions": config_notes + est.assumptions})
    kb = default_knowledge()
    gpu = _named_gpu(o, kb)
    compute = training_compute(w, model, gpu or kb.gpus["a100-80gb"], kb) if w.tokens else None
    # a GPU with no bandwidth or compute peak on file (Ascend 910B4) gets no speed, not a made-up one
    throughput = serving_throughput(w, model, gpu) if (w.method == "inference" and gpu and gpu.memory_bandwidth_gbs
                                                       and (gpu.bf16_tflops or gpu.fp16_tflops)) else None
    fit = _fit_table(w, model, est, gpu, kb)
    spread = kb.estimate_spread.get({"freeze": "full"}.get(w.method, w.method))
    out = {"model": model.id if model else None, "params_b": w.params_b, "workload": w.model_dump(),
           "per_gpu_gib": est.per_gpu_gib, "total_gib": est.total_gib, "allocated_gib": est.allocated_gib,
           "reserved_gib": est.reserved_gib, "bases": [b.model_dump() for b in est.bases],
           "breakdown": est.breakdown, "terms": [t.model_dump() for t in est.terms],
           "assumptions": est.assumptions, "compute": compute, "throughput": throughput, "fit": fit,
           "spread": spread.model_dump() if spread else None}
    if o["as_json"]:
        click.echo(json.dumps(out, ensure_ascii=False))
        return
    _echo_memory(w, model, est, spread)
    _echo_speed(compute, throughput, gpu)
    _echo_fit(fit, est)


def _model(o: dict[str, Any]):
    """The model from --config or --model and the notes a config file adds; neither and no --params is a usage
    error."""
    model, config_notes = model_from_file(o.get("config_path")) if o.get("config_path") else (None, [])
    model = model or (resolve_model(o["model"]) if o["model"] else None)
    if model is None and not o["params"]:
        raise click.UsageError("give --model NAME, --config config.json or --params N (billions of parameters)")
    if o["params"] is not None and not (0 < o["params"] <= 100_000):
        raise InvalidRequest(f"--params {o['params']:g} is out of range", fix="give billions of parameters, e.g. 7 or 0.125")
    return model, config_notes


def _workload(o: dict[str, Any], model) -> Workload:
    """The options as a Workload; a validation error becomes one line naming the option."""
    method = o["method"]
    shipped = model.release_precision if model is not None and method == "inference" else None
    precision = o["precision"] or shipped or "bf16"     # served as released (DeepSeek-V3: FP8) unless told
    inference = method == "inference"
    sharding = o["sharding"] or ("zero3" if o["gpus"] > 1 and method in ("full", "freeze") else
                                 ("ddp" if o["gpus"] > 1 and not inference else "none"))
    try:
        w = Workload(
            model=model.id if model else None, params_b=o["params"] or model.params_b,
            task="inference" if inference else "finetune", method=method, precision=precision,
            pure_bf16=o["pure_bf16"], optimizer=o["optimizer"],
            batch_size=o["batch_size"] or (1 if inference else 4), seq_len=o["seq_len"] or 1024,
            gpus=o["gpus"], nodes=o["nodes"], sharding=sharding, offload=o["offload"],
            grad_checkpointing=o["grad_checkpointing"], flash_attention=not o["eager_attention"],
            checkpointing=o["checkpointing"] or ("full" if o["grad_checkpointing"] else "none"),
            checkpoint_every=o["checkpoint_every"], selective_policy=o["selective_policy"],
            frozen_dtype=o["frozen_dtype"], engine=o["engine"],
            fsdp_mixed_frozen=o["fsdp_mixed_frozen"], no_sync_accumulation=o["no_sync_accumulation"],
            kbit_upcast=o["kbit_upcast"], grad_accumulation=o["grad_accumulation"], adamw_impl=o["adamw_impl"],
            bnb_saves_input=o["bnb_saves_input"], double_quant=o["double_quant"], quantized_lm_head=o["quantize_lm_head"],
            lora_rank=o["lora_rank"], lora_targets=o["lora_targets"], framework=o["framework"],
            lora_dropout=o["lora_dropout"], concurrency=o["concurrency"],
            context=o["context"] or o["seq_len"] or 4096, tokens=o["tokens"],
            tensor_parallel=o["tp"] or (o["gpus"] if inference else 1), pipeline_parallel=o["pp"],
            virtual_pipeline=o.get("vp") or 1, expert_parallel=o.get("ep") or 1,
            input_len=o["input_len"], output_len=o["output_len"], kv_dtype=o["kv_dtype"])
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InvalidRequest(f"--{'-'.join(str(p) for p in err['loc'])}: {err['msg']}",
                             fix="see `gpu-advisor estimate --help`") from None
    return w


def _named_gpu(o: dict[str, Any], kb):
    """The GPU --gpu names; a family such as 'a100' is taken as its member with the most memory, and said so."""
    gpu = None
    if o["gpu_name"]:
        from bot.surfaces.service import shared_core
        parse = shared_core().parser.parse(o["gpu_name"])
        gid = parse.slots.gpu_model or (o["gpu_name"] if o["gpu_name"] in kb.gpus else None)
        from bot.knowledge.loader import GPU_FAMILIES
        family = GPU_FAMILIES.get(gid) if gid else None
        gid = family[-1] if family else gid
        gpu = kb.gpu(gid or o["gpu_name"])
        if family and not o["as_json"]:
            click.echo(f"note: '{o['gpu_name']}' names a family; taken as {gpu.name} (the most memory). Name one of "
                       f"{', '.join(family)} for another.")
    return gpu


def _fit_table(w: Workload, model, est, gpu, kb) -> dict[str, Any]:
    """For the named GPU (or the common ones): does the job fit, and the changes that would make it fit."""
    fit = {}
    for gid in ([gpu.id] if gpu else COMMON_GPUS):
        g = kb.gpus.get(gid)
        if not g:
            continue
        steps = make_it_fit(w, model, g.memory_gib)
        fit[gid] = {"gpu": g.name, "memory_gib": g.memory_gib, "fits": est.per_gpu_gib <= g.memory_gib * 0.95,
                    "steps": [s.model_dump() for s in steps]}
    return fit


def _echo_memory(w: Workload, model, est, spread) -> None:
    title = model.name if model else f"{w.params_b:g}B model"
    fixed = model.encoder_tokens if model is not None and not model.decoder_layers else None
    sequence = model is None or model.is_transformer
    shape = (f"{w.concurrency} sequences x {w.context} tokens" if w.method == "inference" and sequence
             else f"{w.concurrency} samples at once" if w.method == "inference"
             else f"batch {w.batch_size} x {fixed or w.seq_len}" if sequence else f"batch {w.batch_size}")
    click.echo(f"{title}: {w.method}, {w.precision}, {shape}, {w.gpus} GPU(s)"
               + (f", {w.sharding}" if w.sharding not in ("none",) else ""))
    click.echo(f"{'term':<40}{'GiB':>9}  how")
    for t in est.terms:
        click.echo(f"{t.name:<40}{t.gib:>9.2f}  {t.formula}")
    click.echo(f"{'per GPU':<40}{est.per_gpu_gib:>9.2f}  (tensors {est.allocated_gib:.2f}; all GPUs {est.total_gib:.2f})")
    seen: list[str] = []
    for b in est.bases:     # like for like with a measurement: which counter reads which terms
        added = [n for n in b.includes if n not in seen] if seen else ["the tensors"]
        seen = b.includes
        click.echo(f"  read as {b.name.replace('_', ' '):<13}{b.gib:>9.2f}  {b.reads}: " + " + ".join(added))
    for a in est.assumptions:
        click.echo(f"note: {a}")
    if spread:
        click.echo(f"measured: {spread.rows} published {w.method if w.method != 'freeze' else 'full'} runs came out at "
                   f"{spread.p10_ratio:.0%}-{spread.p90_ratio:.0%} of the estimate (10th-90th percentile, median "
                   f"{spread.median_ratio:.0%}): plan for about {est.per_gpu_gib * spread.p90_ratio:.1f} GiB to be safe")


def _echo_speed(compute, throughput, gpu) -> None:
    if compute:
        echo_terms("training speed", compute["terms"], compute["speed_assumptions"])
        click.echo(f"compute: {compute['gpu_hours']:,} GPU-hours, {compute['hours']:,} hours ({compute['days']} days) "
                   f"on {compute['gpus']} GPU(s), {compute['tokens_per_s_per_gpu']:,} tokens/s per GPU, MFU "
                   f"{compute['mfu']:.0%} ({compute['basis']})")
        for c in compute["costs"]:
            click.echo(f"  {c['mode']:<10} {c['cost']:>12,.2f} {c['currency']}  at {c['per_gpu_hour']:g} per GPU-hour "
                       f"({c['flavor']}, {c['price_kind']} price of {c['price_date']})"
                       + ("; spot capacity can be reclaimed: checkpoint often" if c["mode"] == "spot" else ""))
        if compute["costs"]:
            click.echo("  yearly/monthly: no comparable hourly price on file; it pays off for jobs running for months")
    if throughput and throughput.get("encoder"):
        t = throughput
        echo_terms("serving speed", t["terms"], t["assumptions"])
        click.echo(f"throughput on {t['gpus']} x {gpu.name}, each its own copy, batches of {t['batch']} requests of "
                   f"{t['input_len']} tokens: {t['requests_per_s']:,} requests/s, {t['request_ms']} ms a request (one "
                   f"forward pass; an encoder outputs no tokens and keeps no KV cache)")
    elif throughput:
        t = throughput
        echo_terms("serving speed", t["terms"], t["assumptions"])
        click.echo(f"throughput on {t['gpus']} x {gpu.name} (tensor parallel {t['tensor_parallel']}), {t['concurrency']} "
                   f"requests of {t['input_len']} + {t['output_len']} tokens: {t['output_tokens_per_s']:,} output "
                   f"tokens/s, TTFT {t['ttft_ms']:,} ms, TPOT {t['tpot_ms']} ms; the KV cache holds "
                   f"{t['max_concurrency']:,} such requests; decode alone <= {t['decode_tokens_per_s_max']:,} tokens/s, "
                   f"prefill <= {t['prefill_tokens_per_s_max']:,} tokens/s")


def _echo_fit(fit: dict[str, Any], est) -> None:
    click.echo("fit:")
    for f in fit.values():
        if f["fits"]:
            click.echo(f"  {f['gpu']:<24} fits ({est.per_gpu_gib:.1f} of {f['memory_gib']:g} GiB)")
        elif f["steps"]:
            path = "; ".join(f"{s['change']} -> {s['per_gpu_gib']:.1f}" for s in f["steps"])
            click.echo(f"  {f['gpu']:<24} no; {path}" + ("" if f["steps"][-1]["fits"] else " (still too big)"))
        else:
            click.echo(f"  {f['gpu']:<24} no; no common change makes it fit")
