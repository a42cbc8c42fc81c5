"""What the speed model knows about hardware: the dense peak for a precision, the share of it that jobs achieve, and
the bandwidth of the links between GPUs.

The achieved shares are not vendor figures: they are fitted to the published measurements in
tests/data/measured_speed.yaml (bench/speed_accuracy.py prints how well), one number per GPU generation, then scaled
by what those measurements show the share depends on: model width, tokens per micro-batch, precision.
"""
from __future__ import annotations

from bot.estimate.arch import Arch, Note
from bot.records.kb import GPU
from bot.records.models import Link

# Share of the dense 16-bit peak that a large dense transformer's matrix multiplies reach in training (executed
# FLOPs, recomputation included), by GPU generation. Fitted: A100 llm-foundry/torchtitan rows reach 60-77 % of
# 312 TFLOPS, H100 rows 40-57 % of 989 TFLOPS (its peak grew faster than memory bandwidth and kernel maturity).
# Blackwell is tested only by Megatron-Bridge's FP8 B200 rows (0.65-0.79 of measured at 0.50); Ada, Volta, Turing and
# Pascal training have no measured row yet: their shares are stated guesses below Ampere's.
# Da Vinci (Ascend 910B): fitted with HCCS_GBS below to MindSpeed-LLM's LLaMA2 7B/13B/70B rows (TP 8 over HCCS,
# 46-56 % MFU of the 280 TFLOPS on file; tests/data/measured_speed.yaml mindspeed-*): the guess of 0.40 with HCCS at
# the PCIe rate gave 0.30-0.33 of the measured tokens/s; 0.72 with 200 GB/s gives 0.93-1.04.
TRAIN_EFFICIENCY = {"ampere": 0.72, "hopper": 0.55, "ada": 0.50, "blackwell": 0.50, "volta": 0.50,
                    "turing": 0.45, "pascal": 0.40, "da vinci": 0.72}
DEFAULT_EFFICIENCY = 0.45
# The s^2 attention kernels reach a lower share than the large matrix multiplies (counted over the full s x s as
# Megatron-LM and llm-foundry count them): A100 rows lose 15 % of MFU from 4k to 64k tokens, H100 rows 30 %.
ATTENTION_RELATIVE = {"ampere": 0.8, "hopper": 0.55}
ATTENTION_RELATIVE_DEFAULT = 0.65
# FP8 training (Transformer Engine, torchao float8) on Hopper/Ada/Blackwell: the share of the FP8 peak an FP8 GEMM
# reaches relative to the share a BF16 GEMM reaches of the BF16 peak. MEASURED on an H200 (bench/gpu_gemm.py,
# tests/data/gpu_measure/h200-kernels-2026-12-04.yaml): ten training shapes of Llama-3.1-8B/70B (TP 8), Qwen3-30B-A3B
# and Llama-3.2-1B at 2,048-8,192 tokens, torch._scaled_mm with tensor-wise scales: median 0.93 with fast
# accumulation, 0.87 without; Transformer Engine accumulates fast in the forward GEMM and exactly in the two backward
# ones (its fp8_gemm's use_split_accumulator), so 1/3 x 0.93 + 2/3 x 0.87 = 0.89. Only the linear layers' GEMMs run in
# FP8 (attention's core stays 16-bit: DotProductAttention uses FP8 only with fp8_dpa, off by default), and every FP8
# GEMM's input is cast first (FP8_CAST_BYTES below). Was 0.72, fitted between llm-foundry's 2023 FP8 rows and
# Megatron-Bridge's 2025 ones with attention counted at the FP8 rate.
FP8_RELATIVE = 0.89
# Bytes moved per element a Transformer Engine FP8 GEMM casts under current scaling (Megatron-Bridge's FP8-CS recipes):
# "two tensor reads per quantization: one to compute amax, one to cast" (2 x 2 B), then the FP8 copy and its
# transpose for the backward GEMM are written (2 x 1 B); delayed scaling saves the first read.
FP8_CAST_BYTES = 6.0
# Mixture-of-experts: the routed experts' matrix multiplies are narrow (expert_ffn) and each sees only the tokens
# routed to it (gathered over the expert-parallel group), and routing adds permutation, all-to-all and imbalance.
# The width half-point and the further factor are fitted to Megatron-Bridge's MoE rows (Qwen3-30B-A3B with
# 768-wide experts runs at about half the rate per FLOP of DeepSeek-V3 with 2048-wide ones).
MOE_RELATIVE = 0.76
EXPERT_WIDTH_HALF = 2048    # grouped expert GEMMs lose efficiency faster with width than dense ones do
WIDTH_HALF = 400            # hidden size at which the width factor is half: narrow models waste the tensor cores
WIDTH_REFERENCE = 4096      # the width factor is 1 at this hidden size (the 7B class the shares were fitted on)
MICROBATCH_HALF = 512       # tokens per micro-batch at which the micro-batch factor is half
# Serving: share of memory bandwidth decode reaches, of the compute peak prefill reaches, and a fixed cost per
# decode step (scheduling, sampling, kernel launches) that dominates small models.
DECODE_BANDWIDTH_EFFICIENCY = 0.8   # one request's decode on an A100 runs at "roughly 77%" of bandwidth (vLLM)
PREFILL_EFFICIENCY = {"ampere": 0.65, "hopper": 0.55}
PREFILL_EFFICIENCY_DEFAULT = 0.5
DECODE_COMPUTE_EFFICIENCY = 0.5
STEP_OVERHEAD_S = 0.0005   # CUDA-graph decode steps (vLLM V1, TensorRT-LLM)
# Collective bandwidth achieved relative to the link's one-direction rate (NCCL bus bandwidth on NVLink/IB).
COLLECTIVE_EFFICIENCY = 0.8
COLLECTIVE_LATENCY_S = 20e-6        # per all-reduce of a small message (TP at decode)
# A ring all-gather or reduce-scatter over N nodes takes N - 1 network hops, each with a fixed latency: NCCL's own
# tuning model charges 9.6 us a hop on the network for its ring/Simple protocol (src/graph/tuning.cc, hwLat[NET]),
# tuned on InfiniBand; TCP sockets are slower still, so this is a floor. It is what makes ZeRO-3 over thousands of
# nodes stop scaling: 3 x layers collectives a micro-batch, each N - 1 hops long.
# https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc
RING_HOP_LATENCY_S = 9.6e-6
# Links assumed when nothing is known: PCIe by the card's PCIe generation (GB/s one direction, x16), and between
# nodes a training cluster's network, 8 x 200 Gbit/s per node (llm-foundry's A100 clusters: "1600 Gbps node-node
# interconnect (RoCE)"; Llama 2's clusters: 200 Gbps per GPU); the planner passes the flavor's real link instead.
PCIE_GBS = {"5.0": 50.0, "4.0": 25.0, "3.0": 12.0}
UNKNOWN_INTER_GBS = 200.0
# HCCS between the 8 NPU modules of an Atlas 800 server, one direction per NPU, where the knowledge base has no
# figure for the card: FITTED (with the Da Vinci share above) to MindSpeed-LLM's tensor-parallel LLaMA2 rows, not a
# vendor figure (none was found); it agrees with the 7 x 56 GB/s = 392 GB/s both ways often quoted for the 910B.
HCCS_GBS = 200.0
TCP_GBS = 3.0               # 25 Gbit/s Ethernet without RDMA
RDMA_GBS = 200.0            # RDMA of unstated speed: 8 x 200 Gbit/s per node, as above
GOODPUT = 0.9               # Llama 3 paper: "more than 90% effective training time"


def note_keys(notes: list) -> list[dict]:
    """The notes as template keys and values, so a reply in another language can say them."""
    return [{"key": n.key, "ctx": n.ctx} for n in notes if isinstance(n, Note)]


def generation(gpu: GPU) -> str:
    arch = gpu.architecture.lower()
    for gen in ("blackwell", "hopper", "ada", "ampere", "turing", "volta", "pascal", "da vinci"):
        if gen in arch:
            return gen
    return "other"


def peak_flops(gpu: GPU, compute: str) -> tuple[float, str]:
    """Dense tensor FLOP/s for the type the matrix multiplies run in ('fp8', 'int8', or 16-bit), and its name."""
    if compute == "fp8" and gpu.fp8_tflops:
        return gpu.fp8_tflops * 1e12, "FP8"
    if compute == "int8" and gpu.int8_tops:
        return gpu.int8_tops * 1e12, "INT8"
    if compute == "fp32" and gpu.fp32_tflops:
        return gpu.fp32_tflops * 1e12, "FP32"
    if gpu.bf16_tflops:
        return gpu.bf16_tflops * 1e12, "BF16"
    if gpu.fp16_tflops:
        return gpu.fp16_tflops * 1e12, "FP16"
    return (gpu.fp32_tflops or 0.0) * 1e12, "FP32"


def compute_type(precision: str, gpu: GPU, training: bool) -> str:
    """The type the matrix multiplies run in: FP8/INT8 only where the GPU has them; 4-bit weights are dequantised."""
    if precision == "fp8" and gpu.fp8_tflops:
        return "fp8"
    if precision == "int8" and not training and gpu.int8_tops:
        return "int8"
    if precision == "fp32":
        return "fp32"
    return "16-bit"


def width_factor(hidden: int) -> float:
    ref = WIDTH_REFERENCE / (WIDTH_REFERENCE + WIDTH_HALF)
    return min(1.0, hidden / (hidden + WIDTH_HALF) / ref)


def microbatch_factor(tokens: float) -> float:
    return tokens / (tokens + MICROBATCH_HALF)


def expert_share(a: Arch) -> float:
    """Share of a token's matrix-multiply FLOPs spent in routed experts (0 for a dense model)."""
    if a.experts <= 1:
        return 0.0
    routed = a.active_experts * 3 * a.hidden * a.expert_ffn * (a.layers - a.dense_layers)
    return min(0.95, routed / max(a.active_params, 1))


def expert_slowdown(a: Arch, tokens: float, ep: int) -> float:
    """How much slower a routed expert's FLOPs run than the dense ones, for `tokens` per micro-batch per GPU:
    narrower matrices, fewer tokens per expert (an expert-parallel group of `ep` GPUs gathers every member's tokens
    for its experts; without expert parallelism each GPU runs every expert on its own tokens), routing overheads."""
    if a.experts <= 1:
        return 1.0
    ep = max(1, min(ep, a.experts))
    per_expert = tokens * a.active_experts * ep / a.experts
    width = a.expert_ffn / (a.expert_ffn + EXPERT_WIDTH_HALF) / width_factor(a.hidden)
    batch = microbatch_factor(per_expert) / microbatch_factor(tokens)
    return 1 / (MOE_RELATIVE * width * batch)


def pcie_gbs(gpu: GPU) -> float:
    form = gpu.form_factor or ""
    for gen, gbs in PCIE_GBS.items():
        if f"PCIe {gen}" in form:
            return gbs
    return PCIE_GBS["4.0"]


def hccs(gpu: GPU) -> bool:
    """An Ascend NPU module (Atlas 800 servers: 8 of them over HCCS), as the knowledge base's form factor says."""
    return gpu.vendor == "huawei" and "NPU module" in (gpu.form_factor or "")


def resolve_link(gpu: GPU, nodes: int, link: Link | None) -> tuple[Link, list[Note]]:
    """The link with every bandwidth filled in, and a note for each part that was assumed rather than known."""
    link = link or Link()
    notes: list[Note] = []
    intra, intra_gbs = link.intra, link.intra_gbs
    if intra == "unknown":
        intra = "nvlink" if gpu.nvlink_gbs else "pcie"
        notes.append(Note("speed.assumed_intra", f"link inside a node not known: assumed {intra} (what a "
                          f"{gpu.name} usually has)", link=intra, gpu=gpu.name))
    if intra_gbs is None:
        intra_gbs = (gpu.nvlink_gbs / 2 if intra == "nvlink" and gpu.nvlink_gbs else
                     HCCS_GBS if intra == "nvlink" and hccs(gpu) else pcie_gbs(gpu))
    inter, inter_gbs = link.inter, link.inter_gbs
    if nodes > 1 and inter in ("unknown", "none"):
        inter = "unknown"
        notes.append(Note("speed.assumed_inter", f"network between nodes not known: assumed "
                          f"{UNKNOWN_INTER_GBS * 8:g} Gbit/s per node", gbits=UNKNOWN_INTER_GBS * 8))
    if inter_gbs is None:
        inter_gbs = {"rdma": RDMA_GBS, "tcp": TCP_GBS}.get(inter, UNKNOWN_INTER_GBS)
    return Link(intra=intra, intra_gbs=intra_gbs, inter=inter, inter_gbs=inter_gbs), notes


def all_to_all_gbs(link: Link, ep: int, per_node: int) -> tuple[float, str]:
    """Bytes/s one GPU's share of an expert-parallel all-to-all moves at, and over what. Inside a node it is the GPU's
    own link; a group spanning nodes sends (EP - GPUs a node) / (EP - 1) of its traffic through the node's network,
    which the node's GPUs share, while the rest crosses NVLink at the same time: the slower of the two sets the pace."""
    intra = (link.intra_gbs or PCIE_GBS["4.0"]) * COLLECTIVE_EFFICIENCY * 1e9
    if ep <= per_node:
        return intra, "inside a node"
    nic = (link.inter_gbs or UNKNOWN_INTER_GBS) / per_node * COLLECTIVE_EFFICIENCY * 1e9
    off = (ep - per_node) / (ep - 1)
    effective = 1 / max(off / nic, (1 - off) / intra)
    return effective, f"{off:.0%} of it across nodes at {nic / 1e9:.0f} GB/s a GPU"


def bus_gbs(link: Link, across_nodes: bool) -> float:
    """Bandwidth a ring collective achieves per GPU: the intra-node link, or the node's network when the group
    spans nodes (each of the node's rings crosses on its own NIC, so a ring gets the node's whole network)."""
    bw = link.intra_gbs or PCIE_GBS["4.0"]
    if across_nodes:
        bw = min(bw, link.inter_gbs or UNKNOWN_INTER_GBS)
    return bw * COLLECTIVE_EFFICIENCY * 1e9
