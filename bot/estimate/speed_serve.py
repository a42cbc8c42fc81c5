"""Serving throughput and latency of one LLM replica (w.gpus GPUs, w.tensor_parallel-way), term by term.

Prefill is compute-bound: 2 x active params per prompt token plus the causal attention term, at the share of peak
prefill reaches. A decode step reads every weight once (for a mixture of experts, the experts the batch touches) and
every sequence's KV cache, and multiplies 2 x active params per sequence: its time is the larger of the bandwidth and
the compute time, plus a fixed step cost and tensor-parallel all-reduces. With w.concurrency requests in flight,
each cycle runs every request's prefill and output_len decode steps (continuous batching, closed loop).
"""
from __future__ import annotations

import math

from bot.estimate.arch import CUDA_CONTEXT_GIB, GIB, WEIGHT_BYTES, Arch, Note, arch_of
from bot.estimate.speed_hw import (COLLECTIVE_LATENCY_S, DECODE_BANDWIDTH_EFFICIENCY, DECODE_COMPUTE_EFFICIENCY,
                                   PREFILL_EFFICIENCY, PREFILL_EFFICIENCY_DEFAULT, STEP_OVERHEAD_S, bus_gbs,
                                   compute_type, expert_share, expert_slowdown, generation, note_keys, peak_flops,
                                   resolve_link)
from bot.records.kb import GPU, Model
from bot.records.models import Link, ServingSpeed, SpeedTerm, Workload

MEMORY_UTILISATION = 0.9     # vLLM's gpu_memory_utilization default: the share of memory the engine may use
ACTIVATION_RESERVE_GIB = 1.0  # activations and sampling buffers of the largest batch, kept out of the KV cache
DEFAULT_INPUT, DEFAULT_OUTPUT = 1024, 256


def kv_bytes(w: Workload, gpu: GPU, notes: list[str]) -> float:
    """Bytes per cached element: FP8/INT8 KV where asked and supported, else 16-bit."""
    kv = w.kv_dtype
    if kv in ("fp8", "int8"):
        if kv == "fp8" and not gpu.fp8_tflops:
            notes.append(Note("speed.no_fp8_kv", f"{gpu.name} has no FP8 support: KV cache kept in 16-bit",
                              gpu=gpu.name))
            return 2.0
        return 1.0
    if kv in ("int4", "nf4"):
        return 0.5
    return 4.0 if kv == "fp32" else 2.0


def weight_bytes(w: Workload, gpu: GPU, notes: list[str]) -> float:
    """Bytes per weight as served: FP8 weights need FP8 support (else 16-bit); INT8/INT4 are weight-only formats."""
    if w.precision == "fp8" and not gpu.fp8_tflops:
        notes.append(Note("speed.no_fp8", f"{gpu.name} has no FP8 tensor cores: weights served in 16-bit",
                          gpu=gpu.name))
        return 2.0
    return WEIGHT_BYTES.get(w.precision, 2.0)


def experts_touched(a: Arch, batch: int) -> float:
    """Share of a mixture of experts' routed weights a decode step of `batch` tokens reads (uniform routing)."""
    if a.experts <= 1:
        return 1.0
    return 1 - (1 - a.active_experts / a.experts) ** max(batch, 1)


def read_bytes(a: Arch, wb: float, batch: int) -> float:
    """Weight bytes one decode step reads: all of a dense model; of a MoE, the shared part and touched experts."""
    if a.experts <= 1:
        return a.params * wb
    routed = a.params - a.active_params
    routed_all = routed * a.experts / max(a.experts - a.active_experts, 1)
    shared = a.params - routed_all
    return (shared + routed_all * experts_touched(a, batch)) * wb


def serving_speed(w: Workload, model: Model | None, gpu: GPU, link: Link | None = None) -> ServingSpeed:
    """TTFT, TPOT and output tokens/s of one replica at w.concurrency, and the concurrency its KV cache allows."""
    a = arch_of(model, w.params_b)
    notes: list[str] = []
    terms: list[SpeedTerm] = []

    def term(name: str, value: float, unit: str, formula: str) -> float:
        terms.append(SpeedTerm(name=name, value=value, unit=unit, formula=formula))
        return value

    inp, out = w.input_len or DEFAULT_INPUT, w.output_len or DEFAULT_OUTPUT
    if w.input_len is None or w.output_len is None:
        notes.append(Note("speed.assumed_lengths", f"request lengths not given: assumed {inp} prompt and {out} "
                          f"output tokens", input_len=inp, output_len=out))
    tp = max(1, w.tensor_parallel)
    link, link_notes = resolve_link(gpu, w.nodes, link)
    if tp > 1:
        notes.extend(link_notes)
    wb, kvb = weight_bytes(w, gpu, notes), kv_bytes(w, gpu, notes)
    layers = a.decoder_layers or a.layers
    kv_token = a.kv_dim * layers * kvb
    term("KV cache per token", kv_token / 1024, "KiB",
         f"{layers} layers x {a.kv_dim} elements x {kvb:g} bytes")
    free = (gpu.memory_gib * MEMORY_UTILISATION - CUDA_CONTEXT_GIB - ACTIVATION_RESERVE_GIB) * GIB * tp \
        - a.params * wb
    max_conc = max(0, int(free // (kv_token * (inp + out)))) if kv_token else 0
    term("largest concurrency the KV cache holds", max_conc, "sequences",
         f"({gpu.memory_gib:g} GiB x {MEMORY_UTILISATION} - context and activations) x {tp} GPUs - weights "
         f"{a.params * wb / GIB:.1f} GiB, / {kv_token * (inp + out) / GIB:.3g} GiB per {inp + out}-token sequence")
    ctype = compute_type(w.precision, gpu, training=False)
    peak, which = peak_flops(gpu, ctype)
    bw = (gpu.memory_bandwidth_gbs or 1000) * 1e9
    d_attn = a.heads * a.head_dim
    allreduce_bw = bus_gbs(link, False)

    def tp_comm(tokens: int) -> float:
        if tp == 1:
            return 0.0
        return 2 * layers * (COLLECTIVE_LATENCY_S + 2 * (tp - 1) / tp * tokens * a.hidden * 2 / allreduce_bw)

    pf_eff = PREFILL_EFFICIENCY.get(generation(gpu), PREFILL_EFFICIENCY_DEFAULT)
    def moe(tokens: int) -> float:
        """A mixture of experts' matrix multiplies run slower than dense ones of the same FLOPs."""
        share = expert_share(a)
        return (1 - share) + share * expert_slowdown(a, tokens, tp) if share else 1.0

    pf_flops = (2 * a.active_params * moe(inp) + 2 * layers * inp * d_attn) * inp
    prefill = max(pf_flops / (peak * tp * pf_eff), a.params * wb / tp / (bw * DECODE_BANDWIDTH_EFFICIENCY)) \
        + tp_comm(inp)
    term("prefill of one prompt", prefill * 1e3, "ms",
         f"{pf_flops:.3g} FLOP (2 x {a.active_params / 1e9:.3g}B x {inp} + causal attention) at {pf_eff:.0%} of "
         f"{tp} x {peak / 1e12:g} TFLOP/s {which}")

    def decode_step(batch: int) -> float:
        ctx = inp + out / 2
        byts = (read_bytes(a, wb, batch) + batch * kv_token * ctx) / tp
        flops = batch * (2 * a.active_params * moe(batch) + 4 * layers * ctx * d_attn) / tp
        return max(byts / (bw * DECODE_BANDWIDTH_EFFICIENCY), flops / (peak * DECODE_COMPUTE_EFFICIENCY)) \
            + STEP_OVERHEAD_S + tp_comm(batch)

    conc = w.concurrency
    if max_conc and conc > max_conc:
        notes.append(Note("speed.capped_concurrency", f"{conc} concurrent requests do not fit the KV cache: "
                          f"timed at {max_conc}", asked=conc, cap=max_conc))
        conc = max_conc
    conc = max(conc, 1)
    step = decode_step(conc)
    term("one decode step", step * 1e3, "ms",
         f"{conc} sequences: max(weights + KV read at {DECODE_BANDWIDTH_EFFICIENCY:.0%} of {bw / 1e9:g} GB/s, "
         f"compute at {DECODE_COMPUTE_EFFICIENCY:.0%} of peak) + {STEP_OVERHEAD_S * 1e3:g} ms step cost"
         + (f" + {tp}-way all-reduces" if tp > 1 else ""))
    cycle = conc * prefill + out * step
    tokens_s = conc * out / cycle
    ttft = prefill + step
    tpot = (cycle - prefill) / out
    term("output tokens per second", tokens_s, "tokens/s",
         f"{conc} x {out} tokens / ({conc} prefills + {out} decode steps = {cycle:.3g} s)")
    best = max(max_conc, 1)
    decode_max = best / decode_step(best)
    prefill_max = inp / prefill
    return ServingSpeed(ttft_ms=ttft * 1e3, tpot_ms=tpot * 1e3, output_tokens_per_s=tokens_s,
                        requests_per_s=conc / cycle, max_concurrency=max_conc, decode_tokens_per_s_max=decode_max,
                        prefill_tokens_per_s_max=prefill_max, concurrency=conc, input_len=inp, output_len=out,
                        terms=terms, assumptions=list(notes), assumption_keys=note_keys(notes))


def replicas_for(tokens_per_s_needed: float, speed: ServingSpeed) -> int:
    """Replicas needed to serve a token rate at the replica's modelled throughput."""
    return max(1, math.ceil(tokens_per_s_needed / max(speed.output_tokens_per_s, 1e-9)))
