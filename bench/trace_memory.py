"""Trace the peak tensor memory of gpu_measure's training cases at full size on a CPU: no GPU, no weights, no downloads.

Each case runs the real code -- transformers' model built from the config, peft's LoRA and prepare_model_for_kbit_
training, bitsandbytes' NF4 matmul, torch.utils.checkpoint, AdamW -- under torch's FakeTensorMode, where tensors have
shapes and dtypes but no storage, while torch.distributed._tools.mem_tracker.MemTracker adds up every storage alive
at each operator (rounded to the CUDA caching allocator's 512-byte blocks). Its peak is what
torch.cuda.max_memory_allocated would report for the same operators, minus what no trace can see: CUDA-only kernels
(flash-attention, fused AdamW, bitsandbytes' CUDA paths: the CPU/meta versions run instead, SDPA picks the CPU
backend), cuBLAS workspaces, the CUDA context and the allocator's fragmentation. So a traced figure checks the
estimator's formulas on the real operator sequence; it is not a measurement, and its rows never go into
tests/data/measured_memory.yaml.

  python bench/trace_memory.py --preset quick --out traced.yaml     # every traceable case (minutes per 7B case)
  python bench/trace_memory.py --cases 'qlora' --preset questions    # a subset, rows to stdout
  python bench/trace_memory.py --compare traced.yaml                 # traced vs the estimator

Checked against the GPU (`--preset published`): fms-acceleration's Mistral-7B QLoRA runs (batch 4 x 4096,
checkpointing) measured 21.26 GiB (TRL's prepare_model_for_kbit_training) and 14.77 GiB (without its fp32 upcast) of
peak allocated memory; the traces give 20.73 and 14.72 GiB, -2.5 % and -0.3 % (docs/measuring.md).
Generation is not traced (it branches on token values), nor are the CNN cases. Needs torch (with
torch.distributed._tools.mem_tracker), transformers, peft, and for QLoRA a bitsandbytes whose operators are
torch.library ops with fake implementations; tested with torch 2.13 (CPU), transformers 5.24, peft 0.21.2 and
bitsandbytes 0.50.2.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_measure as gm  # noqa: E402

GIB = gm.GIB
SCRIPT = "bench/trace_memory.py"
WHAT = "traced-peak-allocated"


def why_not_traced(case: gm.Case) -> str | None:
    if case.method == "inference":
        return "generation branches on token values, which fake tensors do not have"
    if case.cnn:
        return "CNN cases are measured on a GPU only"
    return None


class _Tracing:
    """The three places where the libraries assume real tensors, patched for the duration of a trace."""

    def __init__(self, torch):
        self.torch = torch
        self.saved: list[tuple[Any, str, Any]] = []

    def __enter__(self):
        torch = self.torch
        from torch._guards import active_fake_mode
        orig_to = torch.nn.Module.to

        def module_to(mod, *args, **kwargs):
            # Module.to swaps fake parameters, which fails on their weakrefs; one device here, so only dtype matters
            if active_fake_mode() is None:
                return orig_to(mod, *args, **kwargs)
            _, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
            if dtype is not None:
                for t in list(mod.parameters()) + list(mod.buffers()):
                    if t.is_floating_point() and t.dtype != dtype:
                        t.data = t.data.to(dtype)
            return mod
        self._patch(torch.nn.Module, "to", module_to)
        with contextlib.suppress(ImportError):
            import bitsandbytes.functional as bf
            # the 8-bit map for double quantisation is built from Python floats (.tolist()): build it for real first
            if "dynamic" not in bf.name2qmap:
                bf.name2qmap["dynamic"] = bf.create_dynamic_map()
        return self

    def _patch(self, owner, name, value):
        self.saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def __exit__(self, *exc):
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)


def _tracker_class(torch):
    from torch.distributed._tools import mem_tracker as mtm

    class Tracker(mtm.MemTracker):
        """MemTracker hooks every parameter's gradient; frozen ones (LoRA, QLoRA bases) cannot take a hook."""

        def _track_module_params_and_buffers(self, module, install_grad_hooks=True):
            pmem = bmem = 0
            for param in module.parameters():
                pmem += sum(w.mem_consumed for w in self._update_and_maybe_create_winfos(param, mtm._MemRefType.PARAM))
                if param.grad is not None:
                    self._update_and_maybe_create_winfos(param.grad, mtm._MemRefType.GRAD)
                if param.requires_grad and install_grad_hooks and self._param_to_grad_hook_handles.get(param) is None:
                    def on_grad(g, self=self):
                        self._update_and_maybe_create_winfos(g, mtm._MemRefType.GRAD)
                    self._param_to_grad_hook_handles[param] = (
                        param.register_hook(on_grad), param.register_post_accumulate_grad_hook(lambda p: on_grad(p.grad)))
            for buf in module.buffers():
                bmem += sum(w.mem_consumed for w in self._update_and_maybe_create_winfos(buf, mtm._MemRefType.BUFFER))
            return pmem, bmem
    return Tracker


def _nf4_linear_class(torch, bnb):
    class PackedNF4Linear(torch.nn.Linear):
        """bitsandbytes Linear4bit's forward over a plain uint8 parameter (Params4bit cannot wrap a fake tensor):
        NF4 with double-quantised constants, compute in the given dtype, output cast back to the input's dtype."""

        def __init__(self, linear, compute_dtype):
            torch.nn.Module.__init__(self)
            self.in_features, self.out_features, self.compute_dtype = linear.in_features, linear.out_features, compute_dtype
            packed, self.quant_state = bnb.functional.quantize_4bit(linear.weight.data, blocksize=64,
                                                                    compress_statistics=True, quant_type="nf4")
            self.weight = torch.nn.Parameter(packed, requires_grad=False)
            self.bias = linear.bias

        def forward(self, x):
            inp_dtype = x.dtype
            x = x.to(self.compute_dtype)
            bias = None if self.bias is None else self.bias.to(self.compute_dtype)
            return bnb.matmul_4bit(x, self.weight.t(), bias=bias, quant_state=self.quant_state).to(inp_dtype)
    return PackedNF4Linear


def quantize_nf4(torch, model, compute_dtype):
    """Every linear layer but the LM head to NF4, as transformers' bitsandbytes quantizer does."""
    import bitsandbytes as bnb
    cls = _nf4_linear_class(torch, bnb)
    for mod in list(model.modules()):
        for name, child in list(mod.named_children()):
            if type(child) is torch.nn.Linear and name != "lm_head":
                setattr(mod, name, cls(child, compute_dtype))
    for p in model.parameters():
        p.requires_grad_(False)
    model.is_loaded_in_4bit = True      # what peft and transformers test for a k-bit model
    return model


def trace_case(case: gm.Case, steps: int = 3) -> dict[str, Any]:
    """Peak traced bytes (GiB) by kind over `steps` training steps (the first creates the optimizer state)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from transformers import AutoModelForCausalLM
    spec = gm.spec_of(case, False)
    cfg = gm.hf_config(spec, case)
    cfg._attn_implementation = case.attention
    amp = case.precision == "bf16"      # as gpu_measure runs it: AMP over fp32 weights; bf16-true and NF4 without
    weights_dtype = torch.float32 if case.precision in ("bf16", "fp32") else torch.bfloat16
    Tracker = _tracker_class(torch)
    with _Tracing(torch), FakeTensorMode(allow_non_fake_inputs=True):
        model = AutoModelForCausalLM.from_config(cfg, **gm._dtype_kw(weights_dtype))
        model.config.use_cache = False
        if case.method == "qlora":
            model = quantize_nf4(torch, model, torch.bfloat16)
        if case.grad_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if case.kbit_prep:
            from peft import prepare_model_for_kbit_training
            model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=case.grad_checkpointing,
                                                    gradient_checkpointing_kwargs={"use_reentrant": False})
        if case.method in ("lora", "qlora"):
            from peft import LoraConfig, get_peft_model
            model = get_peft_model(model, LoraConfig(r=case.lora_rank, lora_alpha=2 * case.lora_rank, lora_dropout=0.0,
                                                     target_modules=gm.peft_targets(case), bias="none",
                                                     task_type="CAUSAL_LM"))
        model.train()
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5, foreach=False)
        ids = torch.randint(3, spec["vocab"], (case.batch_size, case.seq_len))
        lengths = gm.varlen_lengths(case.seq_len) if case.varlen else [case.seq_len] * steps
        tracker = Tracker()
        tracker.track_external(model, opt, ids)
        with tracker:
            for n in lengths:
                tracker.reset_mod_stats()
                x = ids[:, :n]
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
                    loss = model(input_ids=x, labels=x).loss
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                del loss
        peak = tracker.get_tracker_snapshot("peak")
    by_kind = next(iter(peak.values()))
    return {k: v / GIB for k, v in by_kind.items()}


def row_for(case: gm.Case, peak: dict[str, float], seconds: float, versions: dict[str, str]) -> dict[str, Any]:
    kinds = ", ".join(f"{k.lower()} {v:.2f}" for k, v in peak.items() if k != "Total" and v >= 0.005)
    row = gm.make_row(case, gpu="none (traced on the CPU)", what=WHAT, measured=peak["Total"],
                      device_name="FakeTensorMode + MemTracker", adamw_impl="for-loop",   # AdamW(foreach=False)
                      quote=f"traced peak {peak['Total']:.3f} GiB ({kinds}) in {seconds:.0f} s",
                      caveats="traced, not measured: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    row["id"] = "trace-" + case.id
    row["source"]["title"] = f"gpu-advisor {SCRIPT} (FakeTensorMode trace, no GPU)"
    return row


def compare(path: Path) -> int:
    ma = gm._accuracy()
    from bot.estimate.memory import estimate_memory
    rows = gm.load_rows(path)
    print(f"{'id':<56} {'traced':>8} {'estimate':>9} {'err':>7}")
    errs = []
    for r in rows:
        model = ma.model_for(r)
        w = ma.workload_for(r, model)
        est = estimate_memory(w, model).allocated_gib
        err = est / r["measured"] - 1
        errs.append(abs(err))
        print(f"{r['id']:<56} {r['measured']:>8.2f} {est:>9.2f} {err:>+7.0%}")
    if errs:
        errs.sort()
        print(f"\n{len(errs)} traced rows: median |estimate - traced| {errs[len(errs) // 2]:.1%}, "
              f"within ±15%: {sum(e <= 0.15 for e in errs) / len(errs):.0%}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(gm.PRESETS), default="quick")
    ap.add_argument("--cases", metavar="REGEX", help="only the cases whose id matches")
    ap.add_argument("--out", metavar="FILE", help="YAML file for the rows (default: stdout); rewritten after each case")
    ap.add_argument("--list", action="store_true", help="the cases and whether each can be traced; no torch")
    ap.add_argument("--compare", metavar="FILE", type=Path, help="traced vs estimate for a file this script wrote")
    a = ap.parse_args(argv)
    if a.compare:
        if not a.compare.exists():
            raise SystemExit(f"{a.compare}: no such file (write one with --out first)")
        return compare(a.compare)
    cases = gm.plan(a.preset, only=a.cases)
    if not cases:
        raise SystemExit(f"no case of preset {a.preset!r} matches {a.cases!r}; --list shows the ids")
    if a.list:
        for c in cases:
            why = why_not_traced(c)
            print(f"{c.id:<56} {'not traced: ' + why if why else 'traced'}")
        return 0
    try:
        import torch  # noqa: F401
    except ImportError:
        raise SystemExit("tracing needs torch, transformers and peft (bitsandbytes for QLoRA): "
                         "pip install torch transformers peft bitsandbytes")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import warnings
    warnings.filterwarnings("ignore")
    versions = {n: gm._version(n) for n in ("torch", "transformers", "peft", "bitsandbytes")}
    rows: list[dict[str, Any]] = []
    for c in cases:
        why = why_not_traced(c)
        if why or (c.method == "qlora" and not gm._importable("bitsandbytes")):
            gm.log(f"{c.id}: skipped, {why or 'needs bitsandbytes'}")
            continue
        t0 = time.monotonic()
        try:
            peak = trace_case(c)
        except Exception as exc:  # noqa: BLE001 -- one case failing must not lose the others
            gm.log(f"{c.id}: error {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            continue
        rows.append(row_for(c, peak, time.monotonic() - t0, versions))
        gm.log(f"{c.id}: traced peak {peak['Total']:.2f} GiB in {time.monotonic() - t0:.0f} s")
        if a.out:
            Path(a.out).write_text(gm.dump_rows(rows), encoding="utf-8")
    if not a.out:
        sys.stdout.write(gm.dump_rows(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
