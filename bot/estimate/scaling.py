"""Data-parallel scaling of image, audio and denoiser training: n GPUs do not train n times as fast as one.

Each GPU holds a whole replica and the gradients are all-reduced every step, so what is lost is the all-reduce that
does not overlap the backward pass, stragglers, and the input pipeline. The shares below are measured, not modelled:
- inside one 8-GPU server: NVIDIA's ResNet-50 v1.5 PyTorch runs (DeepLearningExamples, pytorch-21.03, mixed
  precision) reach 16,621 img/s on 8 A100 against 2,470 on one: 6.72 / 8 = 0.84 (V100 16 GB 6.93 / 8 = 0.87,
  V100 32 GB 0.87). The lowest, the A100's, is taken: faster GPUs leave less time to hide the all-reduce in.
- across servers: Goyal et al. (2017) measured ~90 % scaling efficiency from 8 to 256 GPUs over commodity
  Ethernet, so a job over several servers keeps 0.84 x 0.90 = 0.756 of linear.
"""
from __future__ import annotations

INTRA_NODE = 0.84    # 6.72 / 8, DeepLearningExamples ResNet-50 on a DGX A100 (knowledge source wl-nvidia-rn50-dle)
INTER_NODE = 0.90    # ~90 % from 8 to 256 GPUs, Goyal et al. 2017 (wl-goyal-imagenet-1h)
SCALING_SOURCES = ["wl-nvidia-rn50-dle", "wl-goyal-imagenet-1h"]


def dp_efficiency(gpus: int, nodes: int) -> float:
    """Share of linear speed-up kept by data parallelism on `gpus` GPUs over `nodes` servers (1.0 on one GPU)."""
    if gpus <= 1:
        return 1.0
    return INTRA_NODE * (INTER_NODE if nodes > 1 else 1.0)


def scaling_formula(gpus: int, nodes: int) -> str:
    """How the efficiency was reached, for the answer's arithmetic."""
    if gpus <= 1:
        return ""
    if nodes > 1:
        return f" x {INTRA_NODE:.2f} x {INTER_NODE:.2f} (data parallel over {nodes} servers)"
    return f" x {INTRA_NODE:.2f} (data parallel in one server)"
