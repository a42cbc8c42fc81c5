"""Serving throughput and latency of one LLM replica (w.gpus GPUs, w.tensor_parallel-way), term by term.

Prefill is compute-bound: 2 x active params per prompt token plus the causal attention term, at the share of peak
prefill reaches. A decode step reads every weight once (for a mixture of experts, the experts the batch touches) and
every sequence's KV cache, and multiplies 2 x active params per sequence: its time is the larger of the bandwidth and
the compute time, plus a fixed step cost and tensor-parallel all-reduces. With w.concurrency requests in flight,
each cycle runs every request's prefill and output_len decode steps (continuous batching, closed loop).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

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

# serving rows were fitted with the tokens of a step gathered over up to one node's GPUs for each expert
SERVING_EXPERT_GROUP = 8


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


@dataclass
class _Replica:
    """One replica's fixed quantities, and the time of its two kinds of work."""
    a: Arch
    gpu: GPU
    tp: int
    wb: float            # bytes per weight as served
    kv_token: float      # KV-cache bytes per token, all layers
    peak: float          # dense FLOP/s of the type the matrix multiplies run in
    which: str
    allreduce_bw: float  # bytes/s of a tensor-parallel all-reduce
    inp: int
    out: int

    @property
    def layers(self) -> int:
        return self.a.decoder_layers or self.a.layers

    @property
    def bw(self) -> float:
        return (self.gpu.memory_bandwidth_gbs or 1000) * 1e9

    def tp_comm(self, tokens: int) -> float:
        """Two all-reduces of the hidden states a layer (after attention and after the MLP)."""
        if self.tp == 1:
            return 0.0
        ring = 2 * (self.tp - 1) / self.tp * tokens * self.a.hidden * 2 / self.allreduce_bw
        return 2 * self.layers * (COLLECTIVE_LATENCY_S + ring)

    def moe(self, tokens: int) -> float:
        """A mixture of experts' matrix multiplies run slower than dense ones of the same FLOPs."""
        share = expert_share(self.a)
        # the fit's tokens per expert: gathered over the replica's GPUs, at most a node's 8 (SERVING_EXPERT_GROUP)
        return (1 - share) + share * expert_slowdown(self.a, tokens, min(self.tp, SERVING_EXPERT_GROUP)) if share else 1.0

    def max_concurrency(self) -> int:
        """Sequences of inp + out tokens whose KV cache fits beside the weights."""
        free = (self.gpu.memory_gib * MEMORY_UTILISATION - CUDA_CONTEXT_GIB - ACTIVATION_RESERVE_GIB) * GIB \
            * self.tp - self.a.params * self.wb
        return max(0, int(free // (self.kv_token * (self.inp + self.out)))) if self.kv_token else 0

    def prefill_flops(self) -> float:
        d_attn = self.a.heads * self.a.head_dim
        return (2 * self.a.active_params * self.moe(self.inp) + 2 * self.layers * self.inp * d_attn) * self.inp

    def prefill_s(self) -> float:
        """One prompt: compute-bound, but never faster than reading the weights once."""
        eff = PREFILL_EFFICIENCY.get(generation(self.gpu), PREFILL_EFFICIENCY_DEFAULT)
        weights = self.a.params * self.wb / self.tp / (self.bw * DECODE_BANDWIDTH_EFFICIENCY)
        return max(self.prefill_flops() / (self.peak * self.tp * eff), weights) + self.tp_comm(self.inp)

    def decode_step_s(self, batch: int) -> float:
        """One token for each of `batch` sequences at the average context: the larger of read and compute time."""
        ctx = self.inp + self.out / 2
        d_attn = self.a.heads * self.a.head_dim
        read = (read_bytes(self.a, self.wb, batch) + batch * self.kv_token * ctx) / self.tp
        flops = batch * (2 * self.a.active_params * self.moe(batch) + 4 * self.layers * ctx * d_attn) / self.tp
        return max(read / (self.bw * DECODE_BANDWIDTH_EFFICIENCY), flops / (self.peak * DECODE_COMPUTE_EFFICIENCY)) \
            + STEP_OVERHEAD_S + self.tp_comm(batch)


def _replica(w: Workload, a: Arch, gpu: GPU, link: Link | None, notes: list[str]) -> _Replica:
    inp, out = w.input_len or DEFAULT_INPUT, w.output_len or DEFAULT_OUTPUT
    if w.input_len is None or w.output_len is None:
        notes.append(Note("speed.assumed_lengths", f"request lengths not given: assumed {inp} prompt and {out} "
                          f"output tokens", input_len=inp, output_len=out))
    tp = max(1, w.tensor_parallel)
    link, link_notes = resolve_link(gpu, w.nodes, link)
    if tp > 1:
        notes.extend(link_notes)
    wb, kvb = weight_bytes(w, gpu, notes), kv_bytes(w, gpu, notes)
    peak, which = peak_flops(gpu, compute_type(w.precision, gpu, training=False))
    return _Replica(a=a, gpu=gpu, tp=tp, wb=wb, kv_token=a.kv_dim * (a.decoder_layers or a.layers) * kvb,
                    peak=peak, which=which, allreduce_bw=bus_gbs(link, False), inp=inp, out=out)


def serving_speed(w: Workload, model: Model | None, gpu: GPU, link: Link | None = None) -> ServingSpeed:
    """TTFT, TPOT and output tokens/s of one replica at w.concurrency, and the concurrency its KV cache allows."""
    notes: list[str] = []
    terms: list[SpeedTerm] = []

    def term(name: str, value: float, unit: str, formula: str) -> float:
        terms.append(SpeedTerm(name=name, value=value, unit=unit, formula=formula))
        return value

    r = _replica(w, arch_of(model, w.params_b), gpu, link, notes)
    seq = r.inp + r.out
    term("KV cache per token", r.kv_token / 1024, "KiB",
         f"{r.layers} layers x {r.a.kv_dim} elements x {r.kv_token / max(r.layers * r.a.kv_dim, 1):g} bytes")
    max_conc = int(term("largest concurrency the KV cache holds", r.max_concurrency(), "sequences",
                        f"({gpu.memory_gib:g} GiB x {MEMORY_UTILISATION} - context and activations) x {r.tp} GPUs "
                        f"- weights {r.a.params * r.wb / GIB:.1f} GiB, / {r.kv_token * seq / GIB:.3g} GiB per "
                        f"{seq}-token sequence"))
    prefill = term("prefill of one prompt", r.prefill_s() * 1e3, "ms",
                   f"{r.prefill_flops():.3g} FLOP (2 x {r.a.active_params / 1e9:.3g}B x {r.inp} + causal "
                   f"attention) on {r.tp} x {r.peak / 1e12:g} TFLOP/s {r.which}") / 1e3
    conc = w.concurrency
    if max_conc and conc > max_conc:
        notes.append(Note("speed.capped_concurrency", f"{conc} concurrent requests do not fit the KV cache: "
                          f"timed at {max_conc}", asked=conc, cap=max_conc))
        conc = max_conc
    conc = max(conc, 1)
    step = term("one decode step", r.decode_step_s(conc) * 1e3, "ms",
                f"{conc} sequences: max(weights + KV read at {DECODE_BANDWIDTH_EFFICIENCY:.0%} of "
                f"{r.bw / 1e9:g} GB/s, compute at {DECODE_COMPUTE_EFFICIENCY:.0%} of peak) + "
                f"{STEP_OVERHEAD_S * 1e3:g} ms step cost" + (f" + {r.tp}-way all-reduces" if r.tp > 1 else "")) / 1e3
    cycle = conc * prefill + r.out * step          # every request's prefill and out decode steps (closed loop)
    tokens_s = term("output tokens per second", conc * r.out / cycle, "tokens/s",
                    f"{conc} x {r.out} tokens / ({conc} prefills + {r.out} decode steps = {cycle:.3g} s)")
    best = max(max_conc, 1)
    return ServingSpeed(ttft_ms=(prefill + step) * 1e3, tpot_ms=(cycle - prefill) / r.out * 1e3,
                        output_tokens_per_s=tokens_s, requests_per_s=conc / cycle, max_concurrency=max_conc,
                        decode_tokens_per_s_max=best / r.decode_step_s(best), prefill_tokens_per_s_max=r.inp / prefill,
                        concurrency=conc, input_len=r.inp, output_len=r.out, terms=terms, assumptions=list(notes),
                        assumption_keys=note_keys(notes))


def replicas_for(tokens_per_s_needed: float, speed: ServingSpeed) -> int:
    """Replicas needed to serve a token rate at the replica's modelled throughput."""
    return max(1, math.ceil(tokens_per_s_needed / max(speed.output_tokens_per_s, 1e-9)))
