"""Compare the estimates for non-LLM jobs (bot/estimate/kinds.py) with published measurements.

python bench/kinds_accuracy.py            # the table and the summary
python bench/kinds_accuracy.py --markdown # the README's table

Rows live in tests/data/measured_kinds.yaml. A `basis` row is the one a rate was derived from (it is shown, not
scored); an `exclude` row says why it is not comparable. GPUs not in the knowledge base (the V100S) are the nearest
record with the published memory bandwidth of the card. Post-training rows (`kind: posttrain`) give the published
run's settings under `workload` and are timed per optimizer step: prompts_per_step / the estimated samples per second.
"""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.estimate.kinds import job_memory, job_speed, kind_of_model  # noqa: E402
from bot.estimate.posttrain import posttrain_speed  # noqa: E402
from bot.knowledge.loader import default_knowledge  # noqa: E402
from bot.records.models import Workload  # noqa: E402

ROWS = ROOT / "tests" / "data" / "measured_kinds.yaml"
# cards the knowledge base does not list: the record they are a variant of, and their own published bandwidth
VARIANTS = {"v100s": ("v100-32gb", 1134.0, "Tesla V100S")}


def gpu_of(kb, gid: str):
    if gid in VARIANTS:
        base, bw, name = VARIANTS[gid]
        return kb.gpus[base].model_copy(update={"id": gid, "memory_bandwidth_gbs": bw, "name": name})
    return kb.gpus[gid]


def posttrain_step_s(kb, row: dict) -> float:
    """Seconds per optimizer step of a published RL run (its prompts over the estimated prompts per second), or a
    preference run's pairs per second, with
    full fine-tuning sharded over all its GPUs (ZeRO-3/FSDP-style) and activation checkpointing, as the runs do."""
    model = kb.models[row["model"]]
    spec = {"precision": "bf16", **row["workload"]}
    w = Workload(model=model.id, params_b=model.params_b, method="full", gpus=row["gpus"], nodes=-(-row["gpus"] // 8),
                 sharding="zero3", grad_checkpointing=True, **spec)
    rate = posttrain_speed(w, model, kb.gpus[row["gpu"]]).rate
    return rate if row["metric"] == "pairs/s" else row["prompts_per_step"] / rate


def estimate(kb, row: dict) -> float:
    """The estimate in the row's unit."""
    if row["kind"] == "posttrain":
        return posttrain_step_s(kb, row)
    model = kb.models[row["model"]]
    gpus = dict(kb.gpus)
    gpu = gpu_of(kb, row["gpu"])
    gpus[gpu.id] = gpu
    inference = row["task"] == "inference"
    w = Workload(model=model.id, params_b=model.params_b, kind=kind_of_model(model), task=row["task"],
                 method="inference" if inference else row.get("method", "full"), precision=row.get("precision", "fp16"),
                 gpus=row["gpus"], concurrency=row.get("concurrency", 1), context=448 if row["kind"] == "speech" else 4096,
                 steps=1 if row["kind"] == "diffusion" else None)
    if row["metric"] == "GiB":
        return job_memory(w, model).per_gpu_gib
    speed = job_speed(w, model, gpu, gpus, list(kb.models.values()))
    if row["metric"] == "passes/s":     # images/s at one step x the denoiser passes per step
        return speed.rate * (model.guidance_passes or 2)
    return speed.rate


def evaluate() -> list[dict]:
    kb = default_knowledge()
    out = []
    for row in yaml.safe_load(ROWS.read_text())["rows"]:
        est = estimate(kb, row)
        out.append({**row, "estimate": round(est, 2), "error": est / row["measured"] - 1})
    return out


def scored(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("role") != "basis" and not r.get("exclude")]


def markdown(rows: list[dict]) -> str:
    lines = ["| id | kind | measured | estimate | unit | err |", "|---|---|---|---|---|---|"]
    for r in rows:
        mark = " (basis)" if r.get("role") == "basis" else " *" if r.get("exclude") else ""
        lines.append(f"| {r['id']}{mark} | {r['kind']} | {r['measured']:g} | {r['estimate']:g} | {r['metric']} | "
                     f"{r['error']:+.0%} |")
    return "\n".join(lines)


def summary(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Median absolute error and share within ±15 % / ±30 % per kind, over the scored rows; the post-training rows
    added after the estimator was corrected on the first five (`unseen`) apart."""
    out = {}
    groups = {"vision": "vision", "diffusion": "diffusion", "speech": "speech", "posttrain": "posttrain",
              "posttrain, unseen": "posttrain"}
    for label, kind in groups.items():
        unseen = label.endswith("unseen")
        errs = [abs(r["error"]) for r in scored(rows) if r["kind"] == kind and bool(r.get("unseen")) == unseen]
        if errs:
            out[label] = {"rows": len(errs), "median": statistics.median(errs),
                         "within15": sum(e <= 0.15 for e in errs) / len(errs),
                         "within30": sum(e <= 0.30 for e in errs) / len(errs)}
    return out


def summary_markdown(rows: list[dict]) -> str:
    lines = ["| kind | rows | median abs. error | within ±15 % | within ±30 % |", "|---|---|---|---|---|"]
    for kind, s in summary(rows).items():
        lines.append(f"| {kind} | {s['rows']} | {s['median']:.0%} | {s['within15']:.0%} | {s['within30']:.0%} |")
    return "\n".join(lines)


def posttrain_markdown(rows: list[dict]) -> str:
    """The post-training rows with the estimate of the code before any change made for them (first run)."""
    lines = ["| id | measured | unit | first run | err | now | err | factor now |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["kind"] != "posttrain":
            continue
        first = r["first_run_estimate"]
        factor = max(r["estimate"], r["measured"]) / min(r["estimate"], r["measured"])
        mark = " *" if r.get("exclude") else ""
        lines.append(f"| {r['id']}{mark} | {r['measured']:g} | {r['metric']} | {first:g} | {first / r['measured'] - 1:+.0%} | "
                     f"{r['estimate']:g} | {r['error']:+.0%} | {factor:.2f}x |")
    return "\n".join(lines)


if __name__ == "__main__":
    rows = evaluate()
    print(summary_markdown(rows))
    print()
    print(markdown(rows))
    print()
    print(posttrain_markdown(rows))
    if "--markdown" not in sys.argv:
        for r in rows:
            if r.get("exclude"):
                print(f"* {r['id']}: {r['exclude']}")
