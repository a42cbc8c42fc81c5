"""Serving speed of a model that generates nothing (BERT, embedding models such as bge / e5 / MiniLM, cross-encoders):
each request is one forward pass over its tokens, requests are batched by the server (Triton's or TEI's dynamic
batching), and there is no KV cache to keep and no output token to time.

One batch's forward pass takes the larger of its compute time (2 x the matrix-multiply weights per token plus the
bidirectional attention term, at the share of the dense peak published encoder engines reach) and the time to read the
weights once, plus a fixed cost per layer (kernel launches, layer norms, softmax) that dominates a batch of one.
A request's latency is its batch's forward pass; one arriving while a batch runs waits for it, so a server keeps a
batch's forward pass within half the latency target.

The shares are read from NVIDIA's TensorRT demoBERT tables (NVIDIA/TensorRT demo/BERT/README.md, "Inference
performance", FP16, batch 128): BERT-Large at 128 and 384 tokens reaches 0.62-0.63 of the 312 TFLOPS of an A100
40GB, 0.56 of an A30's 165 and 0.32 of a T4's 65 (a 70 W card that runs well below its boost clock under load);
the release/10.7 tables add the L4 (0.39-0.41 of 121) and the L40S (0.41-0.42 of 362), so Ada cards take 0.40.
The A10 has no demoBERT table: Sinequa's answer-finder model cards (ONNX Runtime, FP16, batch 32, the same model on
each card) time it 2.2x a T4 and 1.2-1.3x an L4, which with those cards' shares puts it at 0.36-0.48 of its 125
TFLOPS: 0.42. The INT8 rows of the same tables run 2x faster than FP16 on the 2x INT8 peak: the share applies to
the peak of the type the matrix multiplies run in. Cards with no encoder measurement (Hopper, Blackwell, Volta)
take the share an LLM's prefill reaches (speed_hw.PREFILL_EFFICIENCY), said in a note.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.estimate.arch import Arch, Note, arch_of
from bot.estimate.speed_hw import (DECODE_BANDWIDTH_EFFICIENCY, PREFILL_EFFICIENCY, PREFILL_EFFICIENCY_DEFAULT,
                                   compute_type, generation, peak_flops)
from bot.estimate.speed_serve import weight_bytes
from bot.records.kb import GPU, Model
from bot.records.models import SpeedTerm, Workload

# Measured (demoBERT FP16 batch 128: T4, A30, L4, L40S) or scaled from them on the same model (A10: Sinequa).
ENCODER_EFFICIENCY = {"t4": 0.32, "a30": 0.56, "l4": 0.40, "l40s": 0.41, "a10": 0.42}
ENCODER_EFFICIENCY_GA100 = 0.62     # A100 / A800 (GA100): demoBERT's A100 40GB rows, 0.62-0.63
ENCODER_EFFICIENCY_ADA = 0.40       # other Ada cards (L20, RTX 6000 Ada, RTX 4090): the L4's and L40S's 0.40-0.42
# demoBERT's batch-1 rows sit above both the compute and the weight-read time: BERT-Large at 128 tokens takes 1.64 ms
# on an A100 against 0.49 ms to read its weights, BERT-Base 0.64 ms against 0.14 ms: about 45 us a layer more.
LAYER_OVERHEAD_S = 45e-6
MAX_BATCH = 128          # the largest batch demoBERT times, and a usual ceiling of a dynamic batcher's queue


def encoder_efficiency(gpu: GPU) -> tuple[float, bool]:
    """The share of the dense peak an encoder's forward pass reaches on `gpu`, and whether it was measured on an
    encoder (else it is the LLM prefill share of its generation)."""
    if gpu.id in ENCODER_EFFICIENCY:
        return ENCODER_EFFICIENCY[gpu.id], True
    if "GA100" in gpu.architecture:
        return ENCODER_EFFICIENCY_GA100, True
    if generation(gpu) == "ada":
        return ENCODER_EFFICIENCY_ADA, True
    return PREFILL_EFFICIENCY.get(generation(gpu), PREFILL_EFFICIENCY_DEFAULT), False


def matmul_params(a: Arch) -> float:
    """Weights a token multiplies through (every layer's linear layers); the embeddings are looked up, not
    multiplied, so they count neither in the FLOPs nor in the bytes a pass reads."""
    return a.layers * a.layer_params if a.layers and a.hidden else a.params


def forward_flops(a: Arch, seq: int) -> float:
    """FLOPs of one sequence of `seq` tokens: 2 x matrix-multiply weights per token, plus attention over all pairs
    of tokens (QK^T and attention x V: 4 x layers x seq^2 x heads x head_dim), both directions as an encoder sees."""
    return 2 * matmul_params(a) * seq + 4 * a.layers * seq * seq * a.heads * a.head_dim


@dataclass(frozen=True)
class EncoderSpeed:
    """One replica (one GPU) of an encoder at its batch: requests/s, and each request's latency."""
    batch: int
    seq_len: int
    forward_ms: float             # one batch's forward pass: a request's latency
    sequences_per_s: float
    flops_per_sequence: float
    efficiency: float
    measured: bool                # efficiency from an encoder measurement (not the LLM prefill share)
    peak_tflops: float
    which: str                    # the type the matrix multiplies run in (BF16, FP16, INT8, FP8)
    bound: str                    # "compute" or "memory"
    terms: tuple[SpeedTerm, ...] = ()
    notes: tuple[Note, ...] = ()


@dataclass(frozen=True)
class _Pass:
    """What one GPU's forward pass depends on, computed once."""
    a: Arch
    seq: int
    flops: float                  # per sequence
    weight_bytes: float
    peak: float
    which: str
    eff: float
    measured: bool
    bw: float

    def seconds(self, batch: int) -> tuple[float, str]:
        """One batch: the larger of compute and weight-read time, plus the fixed cost per layer."""
        compute = batch * self.flops / (self.peak * self.eff)
        read = self.weight_bytes / (self.bw * DECODE_BANDWIDTH_EFFICIENCY) if self.bw else 0.0
        return max(compute, read) + self.a.layers * LAYER_OVERHEAD_S, "compute" if compute >= read else "memory"


def _pass(w: Workload, model: Model | None, gpu: GPU, seq: int) -> _Pass | None:
    notes: list[str] = []
    peak, which = peak_flops(gpu, compute_type(w.precision, gpu, training=False))
    if not peak:
        return None
    a = arch_of(model, w.params_b)
    eff, measured = encoder_efficiency(gpu)
    return _Pass(a=a, seq=seq, flops=forward_flops(a, seq), weight_bytes=matmul_params(a) * weight_bytes(w, gpu, notes),
                 peak=peak, which=which, eff=eff, measured=measured, bw=(gpu.memory_bandwidth_gbs or 0) * 1e9)


def encoder_speed(w: Workload, model: Model | None, gpu: GPU, seq: int, latency_ms: float,
                  max_batch: int = MAX_BATCH) -> EncoderSpeed | None:
    """The largest batch (at most `max_batch`, what memory holds) whose forward pass stays within half of
    `latency_ms` (a request may wait for the batch in flight, then run in the next), and one GPU's rate at it.
    A batch of one that already misses it is timed as it is (the plan then says it misses the target). None where
    the card's peak is not on file."""
    p = _pass(w, model, gpu, max(1, seq))
    if p is None:
        return None
    lo, hi = 1, max(1, max_batch)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if p.seconds(mid)[0] * 2e3 <= latency_ms else (lo, mid - 1)
    return _speed(p, lo)


def encoder_speed_at(w: Workload, model: Model | None, gpu: GPU, seq: int, batch: int) -> EncoderSpeed | None:
    """One GPU's rate and latency at a given batch (a benchmark's row, or a user's stated batch)."""
    p = _pass(w, model, gpu, max(1, seq))
    return _speed(p, max(1, batch)) if p is not None else None


def _speed(p: _Pass, batch: int) -> EncoderSpeed:
    s, bound = p.seconds(batch)
    terms = (
        SpeedTerm(name="forward FLOPs per request", value=p.flops / 1e9, unit="GFLOP",
                  formula=f"2 x {matmul_params(p.a) / 1e6:,.0f}M weights x {p.seq} tokens + attention "
                          f"4 x {p.a.layers} layers x {p.seq}^2 x {p.a.heads * p.a.head_dim}"),
        SpeedTerm(name="one batch's forward pass", value=s * 1e3, unit="ms",
                  formula=f"{batch} requests at {p.eff:.0%} of {p.peak / 1e12:g} TFLOP/s {p.which}"
                          + (" (weight read bound)" if bound == "memory" else "")
                          + f" + {p.a.layers} layers x {LAYER_OVERHEAD_S * 1e6:.0f} us"),
        SpeedTerm(name="requests per second", value=batch / s, unit="requests/s", formula=f"{batch} / {s:.4g} s"),
    )
    notes = () if p.measured else (Note("speed.encoder_unmeasured", "no published encoder benchmark for this card: "
                                        "the share of peak an LLM prompt's prefill reaches is used"),)
    return EncoderSpeed(batch=batch, seq_len=p.seq, forward_ms=s * 1e3, sequences_per_s=batch / s,
                        flops_per_sequence=p.flops, efficiency=p.eff, measured=p.measured, peak_tflops=p.peak / 1e12,
                        which=p.which, bound=bound, terms=terms, notes=notes)


def generates(model: Model | None) -> bool:
    """Whether serving the model decodes tokens (keeps a KV cache): not for a text encoder or a ViT."""
    return model is None or model.kind not in ("encoder", "vision-transformer")
