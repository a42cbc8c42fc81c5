"""Estimator vs published measurements (tests/data/measured_memory.yaml) vs two rules of thumb.

For each measured row: the estimate converted to what the source measured (PyTorch peak allocated, peak reserved, or
nvidia-smi totals), the rule "weights only", the rule "fixed bytes per parameter", and the error of each.
Run: python bench/memory_accuracy.py [--all] [--markdown]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.records.errors import InvalidRequest  # noqa: E402
from bot.estimate.arch import ALLOCATOR_SLACK, GIB, arch_of  # noqa: E402
from bot.estimate.memory import estimate_memory  # noqa: E402
from bot.knowledge.loader import default_knowledge  # noqa: E402
from bot.records.models import Workload  # noqa: E402
from bot.records.kb import Model  # noqa: E402
from bot.records.text import norm_key  # noqa: E402

DATA = ROOT / "tests" / "data" / "measured_memory.yaml"
UNIT = {"GB": 1e9 / GIB, "GiB": 1.0, "MB": 1e6 / GIB, "MiB": 1 / 1024}
TARGETS = {"within_15_share": 0.90, "median_abs_error": 0.10}


def load_rows(path: Path = DATA) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def model_for(row: dict[str, Any]):
    kb = default_knowledge()
    key = norm_key(row["model"])
    if key in kb.model_aliases:
        return kb.models[kb.model_aliases[key]]
    arch = row.get("arch") or {}
    if arch.get("layers") and arch.get("hidden"):
        heads = arch.get("heads") or arch["hidden"] // 128
        model = Model(id=row["model"], name=row["model"], family=row["model"].split("-")[0], kind="llm",
                      params_b=row["params_b"], layers=arch["layers"], hidden=arch["hidden"], heads=heads,
                      kv_heads=arch.get("kv_heads") or heads, ffn=arch.get("ffn"), vocab=arch.get("vocab"),
                      head_dim=arch.get("head_dim"), tied_embeddings=bool(arch.get("tied")),
                      fused_qkv=bool(arch.get("fused_qkv")), sources=["measurement"])
        if arch.get("ffn") and arch.get("vocab"):
            # a row's params_b is the model's marketing size ("phi-1.5" = 1.3B); the architecture it gives counts
            # the real parameters (1.42B), as the model cards do
            a = arch_of(model, row["params_b"])
            counted = (a.layer_params * a.layers + a.vocab * a.hidden * (1 if a.tied else 2)) / 1e9
            model = model.model_copy(update={"params_b": round(counted, 3)})
        return model
    return None


def workload_for(row: dict[str, Any], model) -> Workload | None:
    params = (model.params_b if model else None) or row.get("params_b")
    if not params:
        return None
    prec = row.get("precision") or "bf16"
    # "-true": 16-bit weights without torch.autocast (LitGPT's bf16-true); gpu_measure's rows say autocast: false
    pure = prec.endswith("-true") or (row.get("autocast") is False and prec != "fp32")
    prec = prec.replace("-true", "")
    opt = (row.get("optimizer") or "adamw").replace("paged-", "")
    targets = row.get("lora_targets") or "all"
    lt = {"q,v": "qv", "qv": "qv", "q,k,v,o": "attention", "q,k,v": "qkv", "c_attn (fused qkv)": "qkv",
          "qkv (fused query_key_value)": "qkv"}.get(targets, "all-linear")
    inference = row["method"] == "inference"
    sharding = row.get("sharding") or "none"
    gpus = row.get("gpus") or 1
    tp = gpus if sharding == "tp" or (inference and gpus > 1) else 1
    if sharding == "tp":
        sharding = "none"
    if inference:
        prec = {"nf4": "nf4", "int8": "int8", "int4": "int4"}.get(prec, prec)
    method = row["method"]
    if method == "qlora":
        prec = "bf16"
    return Workload(
        flash_attention=row.get("attention") != "eager", chunked_loss=bool(row.get("chunked_loss")),
        fsdp_mixed_frozen=bool(row.get("fsdp_mixed_frozen")), no_sync_accumulation=bool(row.get("no_sync_accumulation")),
        kbit_upcast=row.get("kbit_upcast") or "none", double_quant=row.get("double_quant", True),
        quantized_lm_head=bool(row.get("quantized_lm_head")), framework=row.get("framework") or "hf",
        grad_accumulation=row.get("grad_accumulation") or 1, zero_grad_frees=row.get("zero_grad_frees", True),
        adamw_impl=row.get("adamw_impl") or "foreach", bnb_saves_input=bool(row.get("bnb_saves_input")),
        allocator=row.get("allocator") or "caching",
        **({"lora_dropout": row["lora_dropout"]} if row.get("lora_dropout") is not None else {}),
        model=model.id if model else None, params_b=params,
        task="inference" if inference else ("train" if row["task"] == "train" else "finetune"),
        method=method, precision=prec, pure_bf16=pure, optimizer=opt if opt in ("adamw", "adamw8bit", "sgd",
                                                                                 "adafactor") else "adamw",
        batch_size=row.get("batch_size") or 1, seq_len=row.get("seq_len") or 512, gpus=gpus,
        sharding=sharding if not inference else "none", offload=row.get("offload") or "none",
        grad_checkpointing=bool(row.get("grad_checkpointing")), lora_rank=row.get("lora_rank") or 8,
        checkpointing=row.get("checkpointing") or ("full" if row.get("grad_checkpointing") else "none"),
        checkpoint_every=row.get("checkpoint_every") or 1, selective_policy=row.get("selective_policy") or "attention",
        engine=row.get("engine"), frozen_dtype=row.get("frozen_dtype"),
        input_len=row["prompt_tokens"] if isinstance(row.get("prompt_tokens"), int) else None,
        lora_targets=lt, concurrency=row.get("concurrency") or row.get("batch_size") or 1,
        context=row.get("context") or row.get("seq_len") or 512, tensor_parallel=tp)


def gpu_of(name: str | None):
    """The knowledge-base GPU a row names ('a10g-24gb', 'a100-40gb'), through the same aliases the chat uses."""
    if not name:
        return None
    kb = default_knowledge()
    for key in (name, norm_key(name), norm_key(name.rsplit("-", 1)[0])):
        if key in kb.gpus:
            return kb.gpus[key]
        if key in kb.gpu_aliases:
            return kb.gpus[kb.gpu_aliases[key]]
    return None


def as_measured(est, what: str) -> float:
    """The estimate in the terms the source measured."""
    tensors = est.allocated_gib
    if what in ("peak-allocated", "traced-peak-allocated"):
        return tensors
    if what == "peak-reserved":
        return est.reserved_gib if est.reserved_gib is not None else tensors * (1 + ALLOCATOR_SLACK)
    if what == "nvidia-smi":
        return est.per_gpu_gib
    return est.reserved_gib if est.reserved_gib is not None else tensors * (1 + ALLOCATOR_SLACK)   # unknown: the middle


def rules_of_thumb(row: dict[str, Any], w: Workload) -> tuple[float, float]:
    """(weights only, fixed bytes per parameter) in GiB per GPU."""
    p = w.params_b * 1e9
    wbytes = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "int4": 0.5, "nf4": 0.5}[w.precision]
    if w.method == "qlora":
        wbytes = 0.5
    weights = p * wbytes / GIB / (w.tensor_parallel if w.method == "inference" else 1)
    per_param = {"full": 16.0, "freeze": 16.0, "lora": 2.0 * 1.2, "qlora": 0.5 * 1.2,
                 "inference": wbytes * 1.2}[w.method]
    if w.method == "full" and w.precision == "fp32":
        per_param = 16.0
    shard = w.gpus if w.sharding in ("zero3", "fsdp") or w.method == "inference" else 1
    return weights, p * per_param / GIB / shard


UNMODELLED = {"compile": "torch.compile fuses kernels and frees intermediates early",
              "optimizer_in_backward": "optimizer step fused into backward (gradients freed per parameter)",
              "activation_offload": "activations offloaded to CPU",
              "vae_slicing": "the VAE decodes one image at a time (diffusers enable_vae_slicing)"}


def exclusion(row: dict[str, Any]) -> str | None:
    """Why a measured row cannot test the estimator (kept in the table, left out of the summary)."""
    if row.get("what") == "traced-peak-allocated":
        return "traced on a CPU by bench/trace_memory.py, not measured on a GPU"
    if row.get("basis_for"):
        return f"used to derive {row['basis_for']}'s activation basis, so it cannot test it"
    if row.get("what") in (None, "unknown"):
        return "the source does not say what it measured (allocated, reserved or device total)"
    if row["task"] != "inference" and not row.get("seq_len") and not row.get("image_size"):
        return "sequence length not stated"
    if row.get("prompt_tokens") == "not stated":
        return "prompt length not stated (the estimate grows with it)"
    if not row.get("batch_size"):
        return "batch size not stated"
    for flag, why in UNMODELLED.items():
        if row.get(flag):
            return f"not modelled: {why}"
    return None


def evaluate(rows: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    rows = rows if rows is not None else load_rows()
    out = []
    for row in rows:
        if row.get("component", "total") != "total":
            continue
        model = model_for(row)
        try:
            w = workload_for(row, model)
            if w is None:
                continue
            est = estimate_memory(w, model)
        except (InvalidRequest, ValueError) as exc:
            out.append({"id": row["id"], "skipped": str(exc)})
            continue
        thumb_w, thumb_b = rules_of_thumb(row, w)
        rec: dict[str, Any] = {"id": row["id"], "model": row["model"], "method": w.method, "what": row.get("what"),
                               "derived_arch": model is None or not model.is_transformer,
                               "excluded": exclusion(row), "source": row["source"]["url"],
                               "unseen": bool(row.get("unseen"))}
        if row.get("oom"):
            gpu = gpu_of(row.get("gpu"))
            cap = gpu.memory_gib if gpu else None
            rec.update(oom=True, gpu_gib=cap, estimate=est.per_gpu_gib,
                       correct=cap is not None and est.per_gpu_gib > cap)
            out.append(rec)
            continue
        measured = row["measured"] * UNIT[row["unit"]]
        estimate = as_measured(est, row.get("what") or "unknown")
        rec.update(measured=measured, estimate=estimate, thumb_weights=thumb_w, thumb_bytes=thumb_b,
                   err=(estimate - measured) / measured, err_weights=(thumb_w - measured) / measured,
                   err_bytes=(thumb_b - measured) / measured)
        if row.get("first_run_estimate") is not None:
            # the estimate of the code as it stood when the row was added, before any change made for it (frozen in
            # the row): how the estimator does on runs it was not tuned to
            rec.update(first_run=row["first_run_estimate"], err_first=(row["first_run_estimate"] - measured) / measured)
        out.append(rec)
    return out


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for r in results if "err" in r and not r.get("excluded")]
    left_out = [r for r in results if "err" in r and r.get("excluded")]
    ooms = [r for r in results if r.get("oom")]

    def stats(key: str, over: list[dict[str, Any]]) -> dict[str, float]:
        errs = [abs(r[key]) for r in over]
        return {"median_abs_error": statistics.median(errs), "within_15_share": sum(e <= 0.15 for e in errs) / len(errs),
                "mean_abs_error": statistics.fmean(errs)}
    reasons: dict[str, int] = {}
    for r in left_out:
        reasons[r["excluded"]] = reasons.get(r["excluded"], 0) + 1
    everything = rows + left_out
    unseen = [r for r in rows if r.get("unseen")]
    return {"rows": len(rows), "excluded": len(left_out), "excluded_by_reason": reasons,
            "unseen_rows": len(unseen),
            "unseen": {"now": stats("err", unseen), "first_run": stats("err_first", unseen)} if unseen else None,
            "oom_rows": len(ooms), "oom_correct": sum(r["correct"] for r in ooms),
            "estimator": stats("err", rows), "weights_only": stats("err_weights", rows),
            "bytes_per_param": stats("err_bytes", rows),
            # every row with a measured total, the left-out ones compared at the middle reading: not a test of the
            # estimator (their configuration is incomplete), shown so nobody has to trust the selection
            "all_rows": {"rows": len(everything), "estimator": stats("err", everything),
                         "weights_only": stats("err_weights", everything),
                         "bytes_per_param": stats("err_bytes", everything)}}


SPREAD_FILE = ROOT / "knowledge" / "estimate_spread.yaml"
SPREAD_HEADER = """# Generated by `python bench/memory_accuracy.py --write-spread` from tests/data/measured_memory.yaml: do not edit.
# For each kind of job, how the published measurements compared with the estimator (measured / estimated, over the
# comparable rows): the advisor warns when a pick's headroom is smaller than what the 90th percentile asks for.
"""


def method_group(method: str) -> str:
    return {"freeze": "full"}.get(method, method)


def spread(results: list[dict[str, Any]]) -> dict[str, Any]:
    """measured / estimated per method group, over the comparable rows."""
    groups: dict[str, list[float]] = {}
    for r in results:
        if "err" in r and not r.get("excluded"):
            groups.setdefault(method_group(r["method"]), []).append(r["measured"] / r["estimate"])
    out = []
    for gid in ("full", "lora", "qlora", "inference"):
        v = sorted(groups.get(gid, []))
        if not v:
            continue
        q = statistics.quantiles(v, n=10, method="inclusive") if len(v) > 1 else [v[0]] * 9
        out.append({"id": gid, "rows": len(v), "median_ratio": round(statistics.median(v), 3),
                    "p10_ratio": round(q[0], 3), "p90_ratio": round(q[8], 3), "max_ratio": round(v[-1], 3),
                    "sources": ["estimator-benchmark"]})
    return {"estimate_spread": out}


def spread_yaml(results: list[dict[str, Any]]) -> str:
    return SPREAD_HEADER + yaml.safe_dump(spread(results), sort_keys=False, allow_unicode=True)


def table_cells(results: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """One row of cells per result: ten for a measured total (the last: the first-run error of an unseen row), five
    for an out-of-memory report."""
    rows = []
    for r in results:
        if "err" not in r:
            if r.get("oom"):
                rows.append((r["id"], "OOM", f"> {r['gpu_gib']}", f"{r['estimate']:.1f}", "ok" if r["correct"] else "MISS"))
            continue
        rows.append((r["id"] + (" *" if r.get("excluded") else ""), r["what"], f"{r['measured']:.2f}",
                     f"{r['estimate']:.2f}", f"{r['err']:+.0%}", f"{r['thumb_weights']:.2f}", f"{r['err_weights']:+.0%}",
                     f"{r['thumb_bytes']:.2f}", f"{r['err_bytes']:+.0%}",
                     f"{r['first_run']:.2f} ({r['err_first']:+.0%})" if "err_first" in r else ""))
    return rows


def markdown_table(results: list[dict[str, Any]]) -> str:
    """The README's full table (a test keeps the README equal to it)."""
    head = ("id", "what", "measured", "estimate", "err", "weights-only", "err", "bytes/param", "err",
            "unseen: first run (err)")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cells in table_cells(results):
        lines.append("| " + " | ".join(cells) + " |" + (" | | | | |" if len(cells) == 5 else ""))
    return "\n".join(lines)


def summary_markdown(s: dict[str, Any]) -> str:
    """The README's summary table."""
    names = {"estimator": "gpu-advisor", "weights_only": "rule of thumb: weights only",
             "bytes_per_param": "rule of thumb: fixed bytes per parameter"}
    lines = ["| | median abs. error | within ±15 % | mean abs. error |", "| --- | --- | --- | --- |"]
    for key, label in names.items():
        st = s[key]
        lines.append(f"| {label} | {st['median_abs_error']:.1%} | {st['within_15_share']:.0%} | "
                     f"{st['mean_abs_error']:.1%} |")
    if s.get("unseen"):
        n = s["unseen_rows"]
        for key, label in (("first_run", f"gpu-advisor on the {n} unseen rows, first run (before any change)"),
                           ("now", f"gpu-advisor on the {n} unseen rows, now")):
            st = s["unseen"][key]
            lines.append(f"| {label} | {st['median_abs_error']:.1%} | {st['within_15_share']:.0%} | "
                         f"{st['mean_abs_error']:.1%} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--write-spread", action="store_true", help=f"write {SPREAD_FILE.relative_to(ROOT)} and stop")
    args = ap.parse_args()
    results = evaluate()
    if args.write_spread:
        SPREAD_FILE.write_text(spread_yaml(results), encoding="utf-8")
        print(f"wrote {SPREAD_FILE.relative_to(ROOT)}")
        return
    if args.markdown:
        print(markdown_table(results))
        print()
        print(summary_markdown(summary(results)))
        return
    head = ("id", "what", "measured", "estimate", "err", "weights-only", "err", "bytes/param", "err")
    print(f"{head[0]:<44} {head[1]:<15} {'GiB':>8} {'est':>8} {'err':>7} {'w-only':>8} {'err':>7} {'B/p':>8} {'err':>7}"
          "  first run (unseen)")
    for cells in table_cells(results):
        if len(cells) == 5:
            print(f"{cells[0]:<44} {cells[1]:<15} {cells[2]:>8} {cells[3]:>8} {cells[4]:>7}")
        else:
            print(f"{cells[0]:<44} {cells[1]:<15} {cells[2]:>8} {cells[3]:>8} {cells[4]:>7} {cells[5]:>8} "
                  f"{cells[6]:>7} {cells[7]:>8} {cells[8]:>7}  {cells[9]}")
    s = summary(results)
    print()
    print(f"{s['rows']} comparable measured rows (+{s['excluded']} marked * left out: configuration incomplete or a "
          f"technique the estimator does not model); {s['oom_correct']}/{s['oom_rows']} out-of-memory reports predicted")
    for name in ("estimator", "weights_only", "bytes_per_param"):
        st = s[name]
        print(f"  {name:<16} median |error| {st['median_abs_error']:.1%}   within ±15%: {st['within_15_share']:.0%}   "
              f"mean |error| {st['mean_abs_error']:.1%}")
    if s.get("unseen"):
        for key in ("first_run", "now"):
            st = s["unseen"][key]
            print(f"  unseen ({s['unseen_rows']}) {key:<9} median |error| {st['median_abs_error']:.1%}   within ±15%: "
                  f"{st['within_15_share']:.0%}   mean |error| {st['mean_abs_error']:.1%}")
    print("left out, by reason:")
    for why, n in sorted(s["excluded_by_reason"].items(), key=lambda kv: -kv[1]):
        print(f"  {n:>3}  {why}")
    print(f"all {s['all_rows']['rows']} rows with a measured total, left-out ones included (not a fair test; shown so "
          f"the selection need not be trusted):")
    for name in ("estimator", "weights_only", "bytes_per_param"):
        st = s["all_rows"][name]
        print(f"  {name:<16} median |error| {st['median_abs_error']:.1%}   within ±15%: {st['within_15_share']:.0%}   "
              f"mean |error| {st['mean_abs_error']:.1%}")


if __name__ == "__main__":
    main()
