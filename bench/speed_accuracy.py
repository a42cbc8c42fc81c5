"""Speed model vs published measurements (tests/data/measured_speed.yaml) vs two peers.

For each measured row: the speed model's figure in the unit the source measured (training tokens/s per GPU or
GPU-hours; serving output tokens/s or one request's decode tokens/s), the same figure from the rule the project used
before (6 x params x tokens at a fixed 40 % of peak; decode at 70 % of memory bandwidth) and from a plain roofline
(every FLOP at 100 % of peak, every byte at 100 % of bandwidth, prefill + decode), and the ratio predicted/measured.
Run: python bench/speed_accuracy.py [--markdown]
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

from bot.estimate.adapters import trainable_params  # noqa: E402
from bot.estimate.arch import WEIGHT_BYTES, arch_of  # noqa: E402
from bot.estimate.speed import training_speed  # noqa: E402
from bot.estimate.speed_hw import compute_type, peak_flops  # noqa: E402
from bot.estimate.speed_serve import serving_speed  # noqa: E402
from bot.knowledge.loader import default_knowledge  # noqa: E402
from bot.records.kb import Model  # noqa: E402
from bot.records.models import Link, Workload  # noqa: E402
from bot.records.text import norm_key  # noqa: E402

DATA = ROOT / "tests" / "data" / "measured_speed.yaml"
TARGETS = {"within_2x_share": 0.90, "median_error_factor": 1.25, "worst_error_factor": 3.0}
PEERS = {"model": "gpu-advisor", "rule": "6ND at 40 % / decode at 70 % bandwidth", "roofline": "plain roofline"}


def load_rows(path: Path = DATA) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def model_for(row: dict[str, Any]) -> Model | None:
    """The knowledge base's model, or one built from the dimensions the row cites."""
    kb = default_knowledge()
    key = norm_key(row["model"])
    if key in kb.model_aliases:
        return kb.models[kb.model_aliases[key]]
    arch = row.get("arch")
    if not arch:
        return None
    return Model(id=row["model"], name=row["model"], family=row["model"].split("-")[0], kind="llm",
                 params_b=row["params_b"], layers=arch["layers"], hidden=arch["hidden"], heads=arch["heads"],
                 kv_heads=arch.get("kv_heads") or arch["heads"], ffn=arch.get("ffn"), vocab=arch.get("vocab"),
                 tied_embeddings=bool(arch.get("tied")), sources=["measurement"])


def gpu_for(row: dict[str, Any]):
    return default_knowledge().gpus.get(row["gpu"])


def workload_for(row: dict[str, Any], model: Model | None) -> Workload:
    params = model.params_b if model else row["params_b"]
    common = dict(model=model.id if model else None, params_b=params, precision=row.get("precision") or "bf16",
                  gpus=row.get("gpus") or 1, nodes=row.get("nodes") or 1,
                  tensor_parallel=row.get("tensor_parallel") or 1,
                  pipeline_parallel=row.get("pipeline_parallel") or 1)
    if row["kind"] == "serving":
        conc = row.get("concurrency")
        return Workload(task="inference", method="inference", input_len=row["input_len"],
                        output_len=row["output_len"], kv_dtype=row.get("kv_dtype"),
                        concurrency=conc if isinstance(conc, int) else 1, **common)
    ckpt = row.get("checkpointing") or "none"
    return Workload(task="train", method=row.get("method") or "full", batch_size=row.get("batch_size") or 1,
                    lora_rank=row.get("lora_rank") or 16,
                    seq_len=row["seq_len"], sharding=row.get("sharding") or "none",
                    grad_accumulation=row.get("grad_accumulation") or 1, grad_checkpointing=ckpt == "full",
                    checkpointing=ckpt, checkpoint_every=row.get("checkpoint_every") or 1,
                    selective_policy=row.get("selective_policy") or "attention",
                    offload=row.get("offload") or "none", tokens=row.get("tokens"),
                    virtual_pipeline=row.get("virtual_pipeline") or 1, expert_parallel=row.get("expert_parallel") or 1,
                    **common)


def link_for(row: dict[str, Any]) -> Link | None:
    return Link(**row["link"]) if row.get("link") else None


def at_max_concurrency(w: Workload, model, gpu, link) -> Workload:
    """'concurrency: max' (offline throughput runs): the largest concurrency the modelled KV cache holds."""
    cap = serving_speed(w, model, gpu, link).max_concurrency
    return w.model_copy(update={"concurrency": max(1, cap)})


def predict(row: dict[str, Any], w: Workload, model, gpu, link) -> float:
    """The speed model's figure in the row's unit."""
    if row["kind"] == "training":
        sp = training_speed(w, model, gpu, link)
        if row["unit"] == "gpu-hours":
            return row["tokens"] / sp.tokens_per_s_per_gpu / 3600 / sp.goodput
        if row["unit"] == "s/step":
            return sp.step_s
        return sp.tokens_per_s if row["unit"] == "tokens/s" else sp.tokens_per_s_per_gpu
    sp = serving_speed(w, model, gpu, link)
    if row["unit"] == "tokens/s/request":
        return 1000 / sp.tpot_ms
    if row["unit"] == "ttft-ms":
        return sp.ttft_ms
    return sp.output_tokens_per_s


def per_gpu_unit(row: dict[str, Any], w: Workload, tokens_per_s_per_gpu: float) -> float:
    """A per-GPU training rate in the row's unit: itself, all GPUs' rate, GPU-hours for the row's tokens, or seconds
    per optimizer step."""
    if row["unit"] == "gpu-hours":
        return row["tokens"] / tokens_per_s_per_gpu / 3600
    if row["unit"] == "s/step":
        return w.batch_size * w.grad_accumulation * w.seq_len / tokens_per_s_per_gpu
    return tokens_per_s_per_gpu * w.gpus if row["unit"] == "tokens/s" else tokens_per_s_per_gpu


def rule_of_thumb(row: dict[str, Any], w: Workload, model, gpu) -> float:
    """What the project computed before the speed model: 6ND (8ND with checkpointing, 4N + 2T for adapters) at 40 %
    of the dense peak; serving at 70 % of memory bandwidth with the KV cache at half the context, no prefill."""
    a = arch_of(model, w.params_b)
    if row["kind"] == "training":
        per_token = 6 * a.active_params if w.method in ("full",) else 4 * a.active_params + 2 * trainable_params(w, a)
        if w.grad_checkpointing:
            per_token += 2 * a.active_params
        peak, _ = peak_flops(gpu, "fp8" if w.precision == "fp8" else "16-bit")
        return per_gpu_unit(row, w, 0.4 * peak / per_token)
    if row["unit"] == "ttft-ms":       # the old prefill bound: 2 x params per token at 50 % of peak
        peak, _ = peak_flops(gpu, "16-bit")
        return 1000 * w.input_len * 2 * a.active_params / (0.5 * peak * w.tensor_parallel)
    wb = WEIGHT_BYTES[w.precision]
    ctx = w.input_len + w.output_len
    kv_seq = a.kv_dim * 2 * a.layers * ctx / 2
    step_bytes = min(a.params * wb, a.active_params * wb * w.concurrency) + kv_seq * w.concurrency
    bw = gpu.memory_bandwidth_gbs * 1e9 * w.tensor_parallel * 0.7
    tokens = w.concurrency * bw / step_bytes
    return tokens / w.concurrency if row["unit"] == "tokens/s/request" else tokens


def roofline(row: dict[str, Any], w: Workload, model, gpu) -> float:
    """Every FLOP at the dense peak, every byte at full bandwidth: (6N + attention) per training token; serving
    prefill plus decode steps of max(bytes, FLOPs) with a 16-bit KV cache."""
    a = arch_of(model, w.params_b)
    d_attn = a.heads * a.head_dim
    peak, _ = peak_flops(gpu, compute_type(w.precision, gpu, training=row["kind"] == "training"))
    if row["kind"] == "training":
        per_token = 6 * a.active_params + 12 * a.layers * w.seq_len * d_attn
        return per_gpu_unit(row, w, peak / per_token)
    tp, b, inp, out = w.tensor_parallel, w.concurrency, w.input_len, w.output_len
    bw = gpu.memory_bandwidth_gbs * 1e9 * tp
    prefill = (2 * a.active_params * inp + 2 * a.layers * inp * inp * d_attn) / (peak * tp)
    ctx = inp + out / 2
    step = max((a.params * WEIGHT_BYTES[w.precision] + b * a.kv_dim * 2 * a.layers * ctx) / bw,
               b * (2 * a.active_params + 4 * a.layers * ctx * d_attn) / (peak * tp))
    if row["unit"] == "tokens/s/request":
        return 1 / step
    if row["unit"] == "ttft-ms":
        return 1000 * (prefill + step)
    return b * out / (b * prefill + out * step)


def exclusion(row: dict[str, Any]) -> str | None:
    """Why a measured row cannot test the model (kept in the table, left out of the summary)."""
    return row.get("exclude")


def evaluate(rows: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    rows = rows if rows is not None else load_rows()
    out = []
    for row in rows:
        rec: dict[str, Any] = {"id": row["id"], "kind": row["kind"], "unit": row["unit"],
                               "measured": row["measured"], "source": row["source"]["url"]}
        model, gpu = model_for(row), gpu_for(row)
        if gpu is None or (model is None and not row.get("params_b")):
            rec["skipped"] = f"{'GPU ' + row['gpu'] if gpu is None else 'model ' + row['model']} not in the knowledge base"
            out.append(rec)
            continue
        link = link_for(row)
        w = workload_for(row, model)
        if row["kind"] == "serving" and row.get("concurrency") == "max":
            w = at_max_concurrency(w, model, gpu, link)
        rec["concurrency"] = w.concurrency if row["kind"] == "serving" else None
        for key, fn in (("model", lambda: predict(row, w, model, gpu, link)),
                        ("rule", lambda: rule_of_thumb(row, w, model, gpu)),
                        ("roofline", lambda: roofline(row, w, model, gpu))):
            value = fn()
            rec[key] = value
            rec[f"{key}_ratio"] = value / row["measured"]
        rec["excluded"] = exclusion(row)
        out.append(rec)
    return out


def factor(ratio: float) -> float:
    return max(ratio, 1 / ratio) if ratio > 0 else float("inf")


def stats(over: list[dict[str, Any]], key: str) -> dict[str, Any]:
    factors = [factor(r[f"{key}_ratio"]) for r in over]
    worst = max(over, key=lambda r: factor(r[f"{key}_ratio"]))
    return {"rows": len(over), "within_2x_share": sum(f <= 2 for f in factors) / len(factors),
            "within_1_5x_share": sum(f <= 1.5 for f in factors) / len(factors),
            "median_error_factor": statistics.median(factors),
            "median_ratio": statistics.median(r[f"{key}_ratio"] for r in over),
            "worst_id": worst["id"], "worst_ratio": worst[f"{key}_ratio"]}


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per kind (training, serving) and for each of the model and its two peers."""
    out: dict[str, Any] = {"skipped": [r for r in results if "skipped" in r],
                           "excluded": [r for r in results if r.get("excluded")]}
    for kind in ("training", "serving"):
        rows = [r for r in results if r["kind"] == kind and "model" in r and not r.get("excluded")]
        out[kind] = {key: stats(rows, key) for key in PEERS} if rows else {}
    return out


def table_cells(results: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    rows = []
    for r in results:
        if "skipped" in r:
            rows.append((r["id"] + " *", r["kind"], f"{r['measured']:,}", r["unit"], "-", r["skipped"], "", ""))
            continue
        rows.append((r["id"] + (" *" if r.get("excluded") else ""), r["kind"], f"{r['measured']:,}", r["unit"],
                     f"{r['model']:,.0f}", f"{r['model_ratio']:.2f}", f"{r['rule_ratio']:.2f}",
                     f"{r['roofline_ratio']:.2f}"))
    return rows


def markdown_table(results: list[dict[str, Any]]) -> str:
    """The README's full table (a test keeps the README equal to it)."""
    head = ("id", "kind", "measured", "unit", "predicted", "ratio", "6ND/70 % bw ratio", "roofline ratio")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_cells(results)]
    return "\n".join(lines)


def summary_markdown(s: dict[str, Any]) -> str:
    """The README's summary table."""
    lines = ["| kind | estimator | rows | within 2x | within 1.5x | median error factor | median ratio | worst row |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for kind in ("training", "serving"):
        for key, label in PEERS.items():
            st = s[kind].get(key)
            if st:
                lines.append(f"| {kind} | {label} | {st['rows']} | {st['within_2x_share']:.0%} | "
                             f"{st['within_1_5x_share']:.0%} | {st['median_error_factor']:.2f}x | "
                             f"{st['median_ratio']:.2f} | {st['worst_id']} ({st['worst_ratio']:.2f}) |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    results = evaluate()
    s = summary(results)
    if args.markdown:
        print(markdown_table(results))
        print()
        print(summary_markdown(s))
        return
    print(f"{'id':<52} {'measured':>12} {'unit':<18} {'model':>12} {'ratio':>6} {'rule':>6} {'roof':>6}")
    for c in table_cells(results):
        print(f"{c[0]:<52} {c[2]:>12} {c[3]:<18} {c[4]:>12} {c[5]:>6} {c[6]:>6} {c[7]:>6}")
    print()
    print(summary_markdown(s))
    for r in s["skipped"] + s["excluded"]:
        print(f"left out: {r['id']}: {r.get('skipped') or r.get('excluded')}")


if __name__ == "__main__":
    main()
