"""Throughput of the kernels a training step is made of, on one GPU: dense matrix multiplies in BF16 and FP8 at
training shapes, the FP8 cast Transformer Engine runs before each FP8 GEMM, causal attention forward + backward, and
the batched expert GEMMs of a mixture of experts.

What it sharpens in the speed model (bot/estimate/speed_hw.py): FP8_RELATIVE (share of the FP8 peak an FP8 GEMM
reaches relative to the BF16 share), ATTENTION_RELATIVE (attention's rate, counted over the full s x s as Megatron-LM
counts it, relative to the GEMMs'), and the expert GEMMs' rate against dense ones of the same model. Rows go to
tests/data/gpu_measure/ as YAML; nothing is downloaded, every tensor is random.

  python bench/gpu_gemm.py --out kernels.yaml              # on the GPU (about a minute on an H100/H200)
  python bench/gpu_gemm.py --device cpu --tiny             # smoke test of the code paths (torch >= 2.5 on the CPU)
Needs only torch (and PyYAML to write the rows; JSON lines otherwise).
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time

import torch
import torch.nn.functional as F

# (id, M tokens, K in, N out): one micro-batch of 8,192 tokens through real models' layers (dimensions as in
# knowledge/models.yaml); gate and up projections fused as Megatron-Core fuses them; 70B with tensor parallel 8.
DENSE = [("llama-3.1-8b-qkv", 8192, 4096, 6144), ("llama-3.1-8b-o", 8192, 4096, 4096),
         ("llama-3.1-8b-gate-up", 8192, 4096, 28672), ("llama-3.1-8b-down", 8192, 14336, 4096),
         ("llama-3.1-70b-tp8-gate-up", 8192, 8192, 7168), ("llama-3.1-70b-tp8-down", 8192, 3584, 8192),
         ("llama-3.1-70b-tp8-qkv", 8192, 8192, 1280), ("qwen3-30b-a3b-qkv", 8192, 2048, 5120),
         ("llama-3.2-1b-gate-up", 8192, 2048, 16384), ("llama-3.1-8b-gate-up-m2048", 2048, 4096, 28672)]
# (id, local experts, tokens per expert, K, N): Qwen3-30B-A3B (hidden 2048, expert ffn 768, 128 experts, top-8) with
# EP 8 and 8,192 tokens a GPU gathers 4,096 tokens an expert; DeepSeek-V3 (7168, 2048, 256 experts, top-8) with
# EP 64 and 4,096 tokens a GPU, 8,192; and the same with few tokens an expert.
EXPERTS = [("qwen3-30b-a3b-ep8-gate-up", 16, 4096, 2048, 1536), ("qwen3-30b-a3b-ep8-down", 16, 4096, 768, 2048),
           ("qwen3-30b-a3b-ep8-gate-up-t512", 16, 512, 2048, 1536),
           ("deepseek-v3-ep64-gate-up", 4, 8192, 7168, 4096), ("deepseek-v3-ep64-down", 4, 8192, 2048, 7168),
           ("deepseek-v3-ep64-gate-up-t1024", 4, 1024, 7168, 4096)]
# (id, batch, heads, seq, head_dim): 16,384 tokens each, Llama-3.1-8B's 32 query heads of 128 (GQA's K/V expanded)
ATTENTION = [("attn-s2048", 8, 32, 2048, 128), ("attn-s8192", 2, 32, 8192, 128), ("attn-s32768", 1, 32, 32768, 128)]
TINY = 64
FP8_MAX = 448.0     # float8_e4m3fn


def timed(fn, device: str, iters: int) -> float:
    """Seconds per call: CUDA events around `iters` calls after warm-up (wall clock on the CPU)."""
    for _ in range(3):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1000 / iters
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - t0) / iters


def fp8_cast(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Current scaling, as Transformer Engine's Float8CurrentScaling: amax, scale to the format's range, cast."""
    amax = x.abs().amax().float().clamp(min=1e-12)
    scale = FP8_MAX / amax
    return (x * scale.to(x.dtype)).to(torch.float8_e4m3fn), scale.reciprocal()


def dense_rows(device: str, tiny: bool, iters: int) -> list[dict]:
    """Each dense shape in BF16, in FP8 (torch._scaled_mm, fast and exact accumulation) and the two casts."""
    rows = []
    for name, m, k, n in DENSE:
        m, k, n = (TINY, TINY, TINY) if tiny else (m, k, n)
        x = torch.randn(m, k, device=device, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=device, dtype=torch.bfloat16) / k ** 0.5
        flops = 2 * m * k * n
        rows.append(row(name, "gemm", "bf16", flops, timed(lambda: x @ w.t(), device, iters), (m, k, n)))
        xq, sx = fp8_cast(x)
        wq, sw = fp8_cast(w)
        for fast in (True, False):
            t = timed(lambda: torch._scaled_mm(xq, wq.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16,
                                               use_fast_accum=fast), device, iters)
            rows.append(row(name, "gemm", "fp8-fast-accum" if fast else "fp8", flops, t, (m, k, n)))
        cast = timed(lambda: (fp8_cast(x), fp8_cast(w)), device, iters)
        rows.append(row(name, "cast", "bf16->fp8 (input and weight, unfused)", 0, cast, (m, k, n),
                        bytes_moved=3 * (m * k + n * k) + 2 * (m * k + n * k)))
    return rows


def expert_rows(device: str, tiny: bool, iters: int) -> list[dict]:
    """Equal-sized expert GEMMs as one batched multiply (the best a grouped GEMM does) in BF16."""
    rows = []
    for name, e, t, k, n in EXPERTS:
        e, t, k, n = (2, TINY, TINY, TINY) if tiny else (e, t, k, n)
        x = torch.randn(e, t, k, device=device, dtype=torch.bfloat16)
        w = torch.randn(e, k, n, device=device, dtype=torch.bfloat16) / k ** 0.5
        rows.append(row(name, "expert-bmm", "bf16", 2 * e * t * k * n, timed(lambda: torch.bmm(x, w), device, iters),
                        (e, t, k, n)))
    return rows


def attention_rows(device: str, tiny: bool, iters: int) -> list[dict]:
    """Causal SDPA forward + backward in BF16; FLOPs counted over the full s x s (4 s^2 d a head forward, x 3 with
    backward), the convention of Megatron-LM's MFU and of the speed model."""
    rows = []
    for name, b, h, s, d in ATTENTION:
        b, h, s, d = (1, 2, TINY, 16) if tiny else (b, h, s, d)
        q, k, v = (torch.randn(b, h, s, d, device=device, dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        grad = torch.randn(b, h, s, d, device=device, dtype=torch.bfloat16)

        def step():
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            out.backward(grad)
        rows.append(row(name, "attention-fwd-bwd", "bf16", 3 * 4 * b * h * s * s * d, timed(step, device, iters),
                        (b, h, s, d)))
    return rows


def row(name: str, kind: str, dtype: str, flops: float, seconds: float, shape: tuple, bytes_moved: int = 0) -> dict:
    out = {"id": f"{name}-{dtype.split(' ')[0]}", "kind": kind, "dtype": dtype, "shape": list(shape),
           "ms": round(seconds * 1000, 4)}
    if flops:
        out["tflops"] = round(flops / seconds / 1e12, 1)
    if bytes_moved:
        out["gbs"] = round(bytes_moved / seconds / 1e9, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = []
    for part in (dense_rows, expert_rows, attention_rows):
        got = part(args.device, args.tiny, args.iters if not args.tiny else 2)
        for r in got:
            print(json.dumps(r), flush=True)
        rows += got
    name = torch.cuda.get_device_name() if args.device == "cuda" else platform.processor() or "cpu"
    meta = {"device": name, "date": datetime.date.today().isoformat(), "torch": str(torch.__version__),
            "cuda": torch.version.cuda, "command": "python " + " ".join(sys.argv), "rows": rows}
    if args.out:
        try:
            import yaml
            text = yaml.safe_dump(meta, sort_keys=False, width=120)
        except ImportError:
            text = json.dumps(meta, indent=1)
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
