"""Training throughput of an LLM job, term by term: FLOPs per token (matrix multiplies, the s^2 attention term,
recomputation, LoRA's skipped weight gradients, MoE's active parameters), the time the GPU needs for them at the
share of peak such jobs achieve, memory-bound work (QLoRA's dequantisation, the optimizer step, reading the weights
of a small micro-batch), and communication (data-parallel all-reduce, ZeRO/FSDP gathers, tensor and pipeline
parallelism, CPU offload) minus the part frameworks overlap with compute.

FLOP counts: Kaplan et al. 2020 and Narayanan et al. 2021 (Megatron-LM: 6 x params per token plus the attention
term, counted over the full s x s); Korthikanti et al. 2022 (full and selective recomputation).
Serving lives in speed_serve.py; it is re-exported here so callers import one module.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bot.estimate.adapters import trainable_params
from bot.estimate.arch import WEIGHT_BYTES, Arch, Note, arch_of
from bot.estimate.parallel import Split, split_of
from bot.estimate.speed_hw import (ATTENTION_RELATIVE, ATTENTION_RELATIVE_DEFAULT, DEFAULT_EFFICIENCY,
                                   FP8_CAST_BYTES, FP8_RELATIVE, GOODPUT, RING_HOP_LATENCY_S, TRAIN_EFFICIENCY, all_to_all_gbs,
                                   bus_gbs, compute_type, expert_share,
                                   expert_slowdown, generation, microbatch_factor, note_keys, peak_flops,
                                   resolve_link, width_factor)
from bot.estimate.speed_serve import serving_speed  # noqa: F401  (re-exported: the contract's one module)
from bot.records.kb import GPU, Model
from bot.records.models import PARAM_SHARDED, Link, SpeedTerm, TrainingSpeed, Workload

OVERLAP = 0.8               # share of the step's compute that gradient/parameter collectives can hide behind
# Share of the step's compute that expert-parallel all-to-alls can hide behind: frameworks run one micro-batch's (or
# model chunk's) dispatch while another computes (DeepSeek-V3's DualPipe, DeepEP, Megatron-Core's EP overlap). Fitted
# to the four rows whose all-to-alls cross nodes (tests/data/measured_speed.yaml): with none hidden the model gave
# 0.64 (Qwen3-235B-A22B, 256 H100, EP 32), 0.65 and 0.77 (DeepSeek-V3, 256 and 1,024 H100, EP 64) of the measured
# tokens/s and 2.36x the DeepSeek-V3 report's GPU-hours; with 0.6 of compute: 0.93, 1.04, 1.22 and 1.54x.
A2A_OVERLAP = 0.6
OPTIMIZER_BYTES_PER_PARAM = 32  # AdamW step: read and write fp32 master, two moments, gradient (~16 B each way)
# QLoRA's dequantisation kernels: ms-swift's quantisation table (A100, Qwen-7B, LoRA, 1-sample micro-batches with
# checkpointing) shows bitsandbytes int4 adding 0.18 s a micro-batch over bf16 (GPTQ 0.26 s): 3 passes x 7.7B x 4.5 B
# in 0.18 s is 28 % of the A100's bandwidth.
# https://github.com/modelscope/ms-swift/blob/46922151e06cdfc110882e182757674f12352f2c/docs/source_en/LLM/Benchmark.md
DEQUANT_BANDWIDTH_SHARE = 0.28
OFFLOAD_PCIE_GBS = 20.0     # host<->GPU copies of gradients and parameters under CPU offload (PCIe 4.0 x16, achieved)


@dataclass
class _Acc:
    """Terms collected while computing, in the order they are computed."""
    terms: list[SpeedTerm] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, value: float, unit: str, formula: str) -> float:
        self.terms.append(SpeedTerm(name=name, value=value, unit=unit, formula=formula))
        return value


def checkpointing(w: Workload) -> str:
    """'none', 'full' or 'selective': the memory model's field once it exists, else the older boolean."""
    mode = getattr(w, "checkpointing", None)
    if mode in ("full", "selective"):
        return mode
    return "full" if w.grad_checkpointing else "none"


def compute_params(a: Arch) -> float:
    """Parameters a token multiplies through: active parameters minus the input embedding (a lookup, no FLOPs)."""
    lookup = a.vocab * a.hidden if not a.tied else 0
    return max(a.active_params - lookup, a.active_params * 0.5)


def flops_per_token(w: Workload, a: Arch, acc: _Acc) -> tuple[float, float, float]:
    """(model FLOPs, executed matrix-multiply FLOPs, executed attention FLOPs) per token."""
    n = compute_params(a)
    s = w.seq_len
    d_attn = a.heads * a.head_dim
    layers = a.layers
    attn_fwd = 4 * layers * s * d_attn       # QK^T and AV over the full s x s, per token (Megatron-LM convention)
    trainable = trainable_params(w, a)
    if w.method == "full":
        mm, attn = 6 * n, 3 * attn_fwd
        how = "6 x compute params (forward, input and weight gradients)"
    elif w.method == "freeze":
        share = min(1.0, trainable / max(a.layer_params * layers, 1))
        mm, attn = 2 * n + 4 * trainable, attn_fwd * (1 + 2 * share)
        how = "2 x compute params forward + 4 x trainable (backward through the unfrozen blocks only)"
    else:
        mm, attn = 4 * n + 2 * trainable, 3 * attn_fwd
        how = "4 x compute params (forward, input gradients) + 2 x trainable (adapter weight gradients)"
    acc.add("parameters multiplied per token", n, "params",
            f"{a.active_params / 1e9:.3g}B active" + (" minus the input embedding" if not a.tied else ""))
    acc.add("matrix-multiply FLOPs per token", mm, "FLOP", how)
    acc.add("attention FLOPs per token", attn, "FLOP",
            f"{attn / attn_fwd:.3g} x 4 x {layers} layers x {s} tokens x {d_attn} (QK^T and AV, full s x s)")
    model = mm + attn
    rec_mm, rec_attn, how = recomputed(w, n, attn_fwd)
    if rec_mm or rec_attn:
        acc.add("recomputed FLOPs per token", rec_mm + rec_attn, "FLOP", how)
    return model, mm + rec_mm, attn + rec_attn


def recomputed(w: Workload, n: float, attn_fwd: float) -> tuple[float, float, str]:
    """(matrix-multiply, attention) FLOPs per token that activation checkpointing runs again in backward."""
    mode = checkpointing(w)
    every = max(1, getattr(w, "checkpoint_every", 1))
    if mode == "full":
        return 2 * n / every, attn_fwd / every, (f"full checkpointing of {'every layer' if every == 1 else f'1 layer in {every}'}"
                                                 " repeats its forward: 2 x params + attention")
    if mode == "selective" and getattr(w, "selective_policy", "attention") == "alternate-mm":
        return n, 0.0, "selective checkpointing keeps every other matmul's output: half the matmuls run again"
    if mode == "selective":
        return 0.0, attn_fwd, "selective checkpointing recomputes only the attention core (Korthikanti et al.)"
    return 0.0, 0.0, ""


def train_compute(w: Workload, gpu: GPU) -> str:
    """The type a training job's matrix multiplies run in: FP8 when asked for (FP8 weights, or FP8 compute over
    16-bit mixed precision) and the GPU has FP8 tensor cores, else the precision's own."""
    return compute_type("fp8" if w.fp8_compute else w.precision, gpu, training=True)


def efficiency(w: Workload, a: Arch, gpu: GPU, acc: _Acc) -> tuple[float, float, str]:
    """(achieved FLOP/s on matrix multiplies, on attention, the peak's name)."""
    ctype = train_compute(w, gpu)
    if (w.precision == "fp8" or w.fp8_compute) and ctype != "fp8":
        acc.notes.append(Note("speed.no_fp8", f"{gpu.name} has no FP8 tensor cores: timed in 16-bit",
                              gpu=gpu.name))
    peak, which = peak_flops(gpu, ctype)
    gen = generation(gpu)
    base = TRAIN_EFFICIENCY.get(gen, DEFAULT_EFFICIENCY) * (FP8_RELATIVE if ctype == "fp8" else 1.0)
    tokens = w.batch_size * w.seq_len
    share = base * width_factor(a.hidden) * microbatch_factor(tokens)
    acc.add("dense peak", peak / 1e12, "TFLOP/s", f"{gpu.name} dense {which}")
    acc.add("achieved share of peak", share, "fraction",
            f"{base:.2f} ({gen}{', FP8' if ctype == 'fp8' else ''}) x width {width_factor(a.hidden):.2f} "
            f"(hidden {a.hidden}) x micro-batch {microbatch_factor(tokens):.2f} ({tokens} tokens)")
    rel = ATTENTION_RELATIVE.get(gen, ATTENTION_RELATIVE_DEFAULT)
    if ctype == "fp8":
        # attention's core stays 16-bit under FP8 recipes: its rate is the 16-bit one
        peak16, _ = peak_flops(gpu, "16-bit")
        return peak * share, peak16 * share / FP8_RELATIVE * rel, which
    return peak * share, peak * share * rel, which


def moe_factor(w: Workload, a: Arch, tokens_mb: int, acc: _Acc) -> float:
    """Time of a mixture of experts' matrix multiplies relative to a dense model's with the same FLOPs."""
    share = expert_share(a)
    if not share:
        return 1.0
    slow = expert_slowdown(a, tokens_mb, w.expert_parallel)
    return acc.add("mixture-of-experts slowdown", (1 - share) + share * slow, "x",
                   f"{share:.0%} of the FLOPs in routed experts (width {a.expert_ffn}, {a.active_experts} of "
                   f"{a.experts}) at 1/{slow:.2f} of the dense rate")


def memory_bound_s(w: Workload, a: Arch, gpu: GPU, shards: int, acc: _Acc) -> tuple[float, float]:
    """(seconds per micro-batch that only memory bandwidth bounds, seconds per optimizer step)."""
    bw = (gpu.memory_bandwidth_gbs or 1000) * 1e9 * 0.8
    passes = 3 if checkpointing(w) == "full" else 2
    per_mb = 0.0
    if w.method == "qlora" or (w.precision in ("nf4", "int4") and w.method != "full"):
        # every pass dequantises each 4-bit weight to 16-bit: read 0.5 B, write 2 B, the matmul reads the 2 B again;
        # the dequantisation kernels reach only a share of the bandwidth
        gbs = gpu.memory_bandwidth_gbs or 1000       # a card whose bandwidth is not on file: 1 TB/s, as above
        deq_bw = gbs * 1e9 * DEQUANT_BANDWIDTH_SHARE
        per_mb = acc.add("4-bit dequantisation per micro-batch", passes * a.params * 4.5 / deq_bw, "s",
                         f"{passes} passes x {a.params / 1e9:.3g}B weights x 4.5 bytes at "
                         f"{DEQUANT_BANDWIDTH_SHARE:.0%} of {gbs:g} GB/s"
                         + ("" if gpu.memory_bandwidth_gbs else " (bandwidth not on file: assumed)"))
    per_mb += fp8_cast_s(w, a, gpu, bw, acc)
    step = 0.0
    trainable = trainable_params(w, a)
    if w.offload == "none":
        step = acc.add("optimizer step", trainable / shards * OPTIMIZER_BYTES_PER_PARAM / bw, "s",
                       f"{trainable / shards / 1e9:.3g}B trainable params on this GPU x "
                       f"{OPTIMIZER_BYTES_PER_PARAM} bytes / {bw / 1e9:.0f} GB/s")
    return per_mb, step


def fp8_cast_s(w: Workload, a: Arch, gpu: GPU, bw: float, acc: _Acc) -> float:
    """Seconds per micro-batch casting FP8 GEMMs' inputs (Transformer Engine casts each linear layer's input in
    forward and each output gradient in backward, with a transposed copy): memory-bound, and what keeps a narrow
    model from FP8's full speed-up (the cast grows with the width, the GEMM with its square)."""
    if train_compute(w, gpu) != "fp8":
        return 0.0
    d_attn, d_kv = a.heads * a.head_dim, 2 * a.kv_heads * a.head_dim
    ffn = a.active_experts * a.expert_ffn + a.shared_experts * a.expert_ffn if a.experts > 1 else a.ffn
    up = 2 * ffn if a.gated_mlp else ffn
    fwd = 2 * a.hidden + d_attn + ffn                  # inputs of q/k/v, out-projection, up/gate and down
    bwd = d_attn + d_kv + 2 * a.hidden + up            # gradients of their outputs
    passes = fwd * (2 if checkpointing(w) == "full" else 1) + bwd
    elements = passes * a.layers * w.batch_size * w.seq_len / (w.tensor_parallel * w.pipeline_parallel)
    return acc.add("FP8 casts per micro-batch", elements * FP8_CAST_BYTES / bw, "s",
                   f"{passes:,} elements a token and layer (inputs forward, output gradients backward) x "
                   f"{a.layers} layers x {FP8_CAST_BYTES:g} B (cast and transpose) at {bw / 1e9:.0f} GB/s")


def local_params(a: Arch, split: Split | None) -> float:
    """Parameters one GPU computes with: its tensor/pipeline share of the dense part and its experts."""
    return split.local if split is not None else a.params


def weights_floor_s(w: Workload, a: Arch, gpu: GPU, split: Split | None) -> float:
    """A micro-batch reads every weight once per pass: the floor under very small micro-batches."""
    bw = (gpu.memory_bandwidth_gbs or 1000) * 1e9 * 0.8
    passes = 3 if checkpointing(w) == "full" else 2
    wbytes = 0.5 if w.method == "qlora" else WEIGHT_BYTES.get(w.precision, 2.0)
    return passes * local_params(a, split) * wbytes / bw


def data_parallel_groups(w: Workload, a: Arch, split: Split | None) -> list[tuple[float, int, str]]:
    """(parameters per GPU, replicas, what) of each data-parallel group: the whole model's share over GPUs / (TP x
    PP); with expert parallelism the dense part over GPUs / (TP x PP) and the experts over GPUs / (EP x PP)."""
    if split is None or not split.experts or split.ep == 1:
        tp_pp = w.tensor_parallel * w.pipeline_parallel
        return [(a.params / tp_pp, max(1, w.gpus // tp_pp), "the model")]
    return [(split.dense / (split.tp * split.pp), split.dp, "the dense part"),
            (split.experts / (split.ep * split.pp), split.edp, "the experts")]


# Bytes of one routed token's hidden state in the all-to-all: 16-bit (Megatron-Core's dispatcher sends the layer's
# activations as they are; DeepSeek-V3 dispatches in FP8 and combines in BF16, which this does not count)
DISPATCH_BYTES = 2.0


def expert_all_to_all_s(w: Workload, a: Arch, link: Link, acc: _Acc) -> float:
    """Seconds per optimizer step in expert parallelism's all-to-alls, before any overlap: each MoE layer sends every
    token's hidden state to the GPUs of its top-k experts and brings it back (dispatch + combine) in forward, again
    in backward, and once more when the layer is recomputed. A GPU keeps 1/EP of what it sends."""
    ep = w.expert_parallel
    if ep <= 1 or a.experts <= 1:
        return 0.0
    tokens = w.batch_size * w.seq_len / w.tensor_parallel      # sequence parallel: each TP rank routes its share
    per_a2a = tokens * a.active_experts * a.hidden * DISPATCH_BYTES * (ep - 1) / ep
    count = 2 * (3 if checkpointing(w) == "full" else 2)
    layers = (a.layers - a.dense_layers) / w.pipeline_parallel
    vol = per_a2a * count * layers * w.grad_accumulation
    per_node = max(1, w.gpus // max(1, w.nodes))
    bw, where = all_to_all_gbs(link, ep, per_node)
    acc.add("expert-parallel all-to-all traffic per GPU per step", vol / 1e9, "GB",
            f"{tokens:.0f} tokens x top-{a.active_experts} x {a.hidden} x {DISPATCH_BYTES:g} B x (EP {ep} - 1) / {ep}, "
            f"{count} all-to-alls x {layers:g} MoE layers x {w.grad_accumulation} micro-batches")
    return acc.add("expert-parallel all-to-all per step", vol / bw, "s",
                   f"at {bw / 1e9:.0f} GB/s per GPU ({where})")


def comm_s(w: Workload, a: Arch, link: Link, compute_s: float, acc: _Acc) -> float:
    """Exposed seconds per optimizer step spent in collectives, after overlap with compute."""
    tp, pp = w.tensor_parallel, w.pipeline_parallel
    per_node = max(1, w.gpus // max(1, w.nodes))
    trainable_share = trainable_params(w, a) / a.params
    exposed = 0.0
    groups = [g for g in data_parallel_groups(w, a, split_of(w, a)) if g[1] > 1]
    if groups:
        t, vol, how, bw = _data_parallel(w, a, link, groups, per_node, trainable_share, acc)
        acc.add("data-parallel traffic per GPU per step", vol / 1e9, "GB", how)
        hidden = min(t, compute_s * OVERLAP)
        exposed += acc.add("exposed data-parallel communication per step", t - hidden, "s",
                           f"{t:.3g} s at {bw / 1e9:.0f} GB/s, {hidden:.3g} s hidden behind compute")
    a2a = expert_all_to_all_s(w, a, link, acc)
    if a2a:
        hidden = min(a2a, compute_s * A2A_OVERLAP)
        exposed += acc.add("exposed expert-parallel all-to-all per step", a2a - hidden, "s",
                           f"{a2a:.3g} s, {hidden:.3g} s hidden behind other micro-batches' compute "
                           f"(up to {A2A_OVERLAP:.0%} of it)")
    if tp > 1:
        bw = bus_gbs(link, tp > per_node)
        ckpt = 3 if checkpointing(w) == "full" else 2
        act = w.batch_size * w.seq_len * a.hidden * 2
        vol = 2 * ckpt * a.layers / pp * 2 * (tp - 1) / tp * act * w.grad_accumulation
        exposed += acc.add("tensor-parallel all-reduces per step", vol / bw, "s",
                           f"{2 * ckpt} all-reduces a layer of {act / 1e6:.3g} MB, {w.grad_accumulation} "
                           f"micro-batches, at {bw / 1e9:.0f} GB/s, not overlapped")
    if pp > 1:
        # each stage boundary passes one micro-batch's activations forward and their gradients back (Megatron's
        # scatter-gather: 1/TP of them a GPU), over the network once the stages span instances; not overlapped here
        bw = bus_gbs(link, tp * pp > per_node)
        act = w.batch_size * w.seq_len * a.hidden * 2 / tp
        vol = 2 * act * w.grad_accumulation
        exposed += acc.add("pipeline sends per step", vol / bw, "s",
                           f"activations and their gradients of {w.grad_accumulation} micro-batches "
                           f"({act / 1e6:.3g} MB each way) at {bw / 1e9:.0f} GB/s")
    if w.offload != "none":
        dp = max(1, w.gpus // (tp * pp))
        moved = trainable_params(w, a) / dp * (2 + 2) * (2 if w.offload == "full" else 1)
        exposed += acc.add("CPU offload copies per step", moved / (OFFLOAD_PCIE_GBS * 1e9), "s",
                           f"gradients to the host and parameters back over PCIe at {OFFLOAD_PCIE_GBS:g} GB/s")
    return exposed


def _data_parallel(w: Workload, a: Arch, link: Link, groups: list, per_node: int, trainable_share: float,
                   acc: _Acc) -> tuple[float, float, str, float]:
    """(seconds, bytes per GPU, what moves over how many replicas, the slowest bandwidth it moves at) of one step's
    data-parallel traffic, over each group of parameters and its replicas (dense and expert parameters of a mixture
    of experts are replicated over different groups). Collectives over the network also pay a latency per ring hop
    between nodes."""
    grad_bytes = 2.0
    layers = a.layers / w.pipeline_parallel
    nodes = max(1, w.nodes)
    hybrid = w.sharding == "hsdp" and nodes > 1
    bw = bus_gbs(link, nodes > 1)     # data parallelism is the outermost dimension: it spans the nodes
    bw_in, bw_out = bus_gbs(link, False), bw / per_node
    t = vol = 0.0
    parts = []
    for shard_params, dp, what in groups:
        ring = 2 * (dp - 1) / dp
        trainable = shard_params * trainable_share
        if hybrid:
            # ZeRO-3 inside the node over its own link every micro-batch; across nodes each GPU all-reduces its
            # 1/per_node share of the gradients once a step with its peers on the other nodes, the node's GPUs
            # sharing its network (PyTorch FSDP HYBRID_SHARD; DeepSpeed ZeRO++ hpZ)
            local = 2 * (per_node - 1) / per_node
            vol_in = 1.5 * local * shard_params * grad_bytes * w.grad_accumulation
            vol_out = 2 * (nodes - 1) / nodes * trainable / per_node * grad_bytes
            t, vol = t + vol_in / bw_in + vol_out / bw_out, vol + vol_in + vol_out
            how = ("gathers and reduce-scatters inside each node every micro-batch + one gradient all-reduce a step "
                   "across nodes")
            part = f"{what} over {nodes} nodes of {per_node}"
        else:
            if w.sharding in PARAM_SHARDED:
                moved = 1.5 * ring * shard_params * grad_bytes * w.grad_accumulation
                how = "gather forward + gather backward + reduce-scatter, every micro-batch"
            elif w.sharding == "zero2":
                # partitioned gradients cannot accumulate unsharded: a reduce-scatter every micro-batch, then one
                # all-gather of the updated parameters (DeepSpeed ZeRO stage 2)
                moved = ring / 2 * trainable * grad_bytes * (w.grad_accumulation + 1)
                how = "reduce-scatter every micro-batch + one parameter all-gather a step"
            else:
                moved = ring * trainable * grad_bytes
                how = "all-reduce of the gradients once a step"
            t, vol = t + moved / bw, vol + moved
            part = f"{what} over {dp} replicas"
        parts.append(part)
    # ZeRO-3 gathers and reduce-scatters layer by layer: a ring per layer and pass, (nodes - 1) network hops each;
    # hybrid sharding sends one all-reduce a layer across nodes, 2 (nodes - 1) hops
    hops = (2 * layers * (nodes - 1) if hybrid else
            3 * layers * w.grad_accumulation * (nodes - 1) if w.sharding in PARAM_SHARDED else 0)
    if hops:
        t += hops * RING_HOP_LATENCY_S
        acc.add("network hop latency per step", hops * RING_HOP_LATENCY_S, "s",
                f"{hops:,.0f} ring hops between nodes at {RING_HOP_LATENCY_S * 1e6:g} us each")
    return t, vol, f"{how}: {', '.join(parts)}", (bw_out if hybrid else bw)


def training_speed(w: Workload, model: Model | None, gpu: GPU, link: Link | None = None) -> TrainingSpeed:
    """Tokens per second per GPU and in all for one training job on w.gpus GPUs of one kind."""
    a = arch_of(model, w.params_b)
    acc = _Acc()
    link, notes = resolve_link(gpu, w.nodes, link)
    if w.gpus > 1:
        acc.notes.extend(notes)
    model_f, mm_f, attn_f = flops_per_token(w, a, acc)
    mm_rate, attn_rate, which = efficiency(w, a, gpu, acc)
    tp, pp = w.tensor_parallel, w.pipeline_parallel
    tokens_mb = w.batch_size * w.seq_len           # one micro-batch of one model replica
    moe = moe_factor(w, a, tokens_mb, acc)
    compute_mb = tokens_mb * (mm_f * moe / mm_rate + attn_f / attn_rate) / (tp * pp)
    split = split_of(w, a)
    floor = weights_floor_s(w, a, gpu, split)
    shards = (max(1, w.gpus // max(1, w.nodes)) if w.sharding == "hsdp" else
              w.gpus if w.sharding in ("zero1", "zero2", "zero3", "fsdp") else a.params / local_params(a, split))
    dequant, opt = memory_bound_s(w, a, gpu, shards, acc)
    mb_s = max(compute_mb, floor) + dequant
    acc.add("one micro-batch", mb_s, "s", f"{tokens_mb} tokens: compute {compute_mb:.3g} s "
            f"(weights-read floor {floor:.3g} s) + memory-bound {dequant:.3g} s (4-bit dequantisation, FP8 casts)")
    vp = w.virtual_pipeline
    bubble = (pp - 1) / (w.grad_accumulation * vp) if pp > 1 else 0.0
    if pp > 1:
        acc.add("pipeline bubble", bubble, "fraction of compute",
                f"({pp} stages - 1) / {w.grad_accumulation} micro-batches"
                + (f" / {vp} model chunks a stage (interleaved 1F1B)" if vp > 1 else " (1F1B)"))
    compute_step = mb_s * w.grad_accumulation * (1 + bubble)
    step = compute_step + opt + comm_s(w, a, link, compute_step, acc)
    replica_tokens = tokens_mb * w.grad_accumulation
    per_gpu = replica_tokens / step / (tp * pp)
    peak, _ = peak_flops(gpu, train_compute(w, gpu))
    if w.mfu_stated and peak and model_f:
        # the user's MFU ('assume 40% MFU'): throughput is that share of the peak, the step as long as it takes
        per_gpu = w.mfu_stated * peak / model_f
        step = replica_tokens / per_gpu / (tp * pp)
    mfu = per_gpu * model_f / peak if peak else 0.0
    acc.add("training throughput per GPU", per_gpu, "tokens/s",
            f"{replica_tokens} tokens a step per replica / {step:.3g} s / {tp * pp} GPUs per replica")
    acc.add("model FLOPs utilisation", mfu, "fraction", f"{per_gpu:.0f} x {model_f:.3g} FLOP / {which} peak")
    return TrainingSpeed(tokens_per_s_per_gpu=per_gpu, tokens_per_s=per_gpu * w.gpus, mfu=mfu,
                         flops_per_token=model_f, step_s=step, goodput=GOODPUT, terms=acc.terms,
                         assumptions=list(acc.notes), assumption_keys=note_keys(acc.notes))


def training_hours(w: Workload, model: Model | None, gpu: GPU, link: Link | None = None) -> float | None:
    """Wall-clock hours for w.tokens on w.gpus GPUs, with the goodput factor (restarts, checkpoints) included."""
    if not w.tokens:
        return None
    sp = training_speed(w, model, gpu, link)
    if sp.tokens_per_s <= 0:
        return None
    return w.tokens / sp.tokens_per_s / 3600 / sp.goodput
