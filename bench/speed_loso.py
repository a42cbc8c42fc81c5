"""Leave-one-source-out error of the speed model (issue 31 item 8): each source's rows predicted with the fitted
constants refitted WITHOUT that source's rows, beside the in-sample figure bench/speed_accuracy.py reports.

The constants the speed model fitted to measured rows (bot/estimate/speed_hw.py and speed.py: the training share by
GPU generation, attention's relative rate, the mixture-of-experts factors, the all-to-all overlap, the HCCS rate, the
micro-batch half-point; serving's decode bandwidth share, prefill share, step overhead) are each refitted in turn
(coordinate descent over a grid of multiples of the shipped value, minimising the mean |log(predicted/measured)|
over the other sources' rows of the same kind). A constant that no other source's row moves cannot be fitted
without the held-out source: it falls back to its prior, the value stated before any row was fitted.
Run: python bench/speed_loso.py [--markdown]   (a few minutes: about 300 evaluations of the bench)
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import speed_accuracy as sa  # noqa: E402
from bot.estimate import speed, speed_encoder, speed_hw, speed_serve  # noqa: E402

MODULES = (speed_hw, speed, speed_serve, speed_encoder)
GRID = (0.6, 0.75, 0.9, 1.0, 1.1, 1.3, 1.6)


@dataclass
class Knob:
    """One fitted constant: a module-level name, or one key of a module-level dict; its prior is the value stated
    before the rows were fitted (a guess or a default), used when no other source constrains it."""
    name: str
    key: str | None
    kind: str                 # the rows it was fitted to: training or serving
    prior: float

    def get(self) -> float:
        value = getattr(speed_hw, self.name, None)
        if value is None:
            value = getattr(speed, self.name)
        return value[self.key] if self.key else value

    def set(self, value: float) -> None:
        for mod in MODULES:
            if not hasattr(mod, self.name):
                continue
            if self.key:
                getattr(mod, self.name)[self.key] = value     # the dict is shared: one write reaches every module
                return
            setattr(mod, self.name, value)

    @property
    def label(self) -> str:
        return f"{self.name}[{self.key}]" if self.key else self.name


# Priors: the values the code stated before the fit, as its comments and the README's first-run paragraphs say
# (Da Vinci 0.40 and HCCS at the PCIe 4.0 rate; otherwise the generation default, no attention penalty, no hidden
# all-to-all, MoE at the dense rate and width, vLLM's "roughly 77%" decode and no step overhead).
KNOBS = [Knob("TRAIN_EFFICIENCY", "ampere", "training", 0.45), Knob("TRAIN_EFFICIENCY", "hopper", "training", 0.45),
         Knob("TRAIN_EFFICIENCY", "blackwell", "training", 0.45),
         Knob("TRAIN_EFFICIENCY", "da vinci", "training", 0.40),
         Knob("ATTENTION_RELATIVE", "ampere", "training", 0.65), Knob("ATTENTION_RELATIVE", "hopper", "training", 0.65),
         Knob("MOE_RELATIVE", None, "training", 1.0), Knob("EXPERT_WIDTH_HALF", None, "training", 400.0),
         Knob("A2A_OVERLAP", None, "training", 0.0), Knob("HCCS_GBS", None, "training", 25.0),
         Knob("MICROBATCH_HALF", None, "training", 512.0),
         Knob("DECODE_BANDWIDTH_EFFICIENCY", None, "serving", 0.77),
         Knob("PREFILL_EFFICIENCY", "ampere", "serving", 0.5), Knob("PREFILL_EFFICIENCY", "hopper", "serving", 0.5),
         Knob("STEP_OVERHEAD_S", None, "serving", 0.0)]


def source_of(row: dict[str, Any]) -> str:
    """The publisher a row comes from: a GitHub or Hugging Face owner (meta-llama's cards on both are one), else
    the site."""
    url = urllib.parse.urlparse(row["source"].get("url") or "")
    parts = url.path.strip("/").split("/")
    if url.netloc in ("github.com", "huggingface.co", "raw.githubusercontent.com") and parts and parts[0]:
        return parts[0]
    return url.netloc or "unknown"


def prepared(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Callable[[], float]]]:
    """(row, a function giving the model's prediction in the row's unit) for every row the bench can test."""
    out = []
    for row in rows:
        if row.get("exclude"):
            continue
        model, gpu = sa.model_for(row), sa.gpu_for(row)
        if gpu is None or (model is None and not row.get("params_b")):
            continue
        link = sa.link_for(row)

        def fn(row=row, model=model, gpu=gpu, link=link) -> float:
            w = sa.workload_for(row, model)
            if row["kind"] == "serving" and row.get("concurrency") == "max":
                w = sa.at_max_concurrency(w, model, gpu, link)
            return sa.predict(row, w, model, gpu, link)
        out.append((row, fn))
    return out


def log_errors(items) -> list[float]:
    return [abs(math.log(fn() / row["measured"])) for row, fn in items]


def fit(knob: Knob, items) -> float:
    """The grid value (a multiple of the shipped one) with the smallest mean |log ratio| over `items`."""
    base = knob.get()
    best, best_err = base, math.inf
    for m in GRID:
        knob.set(base * m)
        err = statistics.fmean(log_errors(items))
        if err < best_err - 1e-9:
            best, best_err = base * m, err
    knob.set(best)
    return best


def moved_by(knob: Knob, items) -> set[str]:
    """The ids of the rows whose prediction the knob changes (each knob touches only some generations or kinds)."""
    base = knob.get()
    before = {row["id"]: fn() for row, fn in items}
    knob.set(base * 1.2)
    after = {row["id"]: fn() for row, fn in items}
    knob.set(base)
    return {i for i in before if abs(after[i] / before[i] - 1) > 1e-6}


def loso(rows: list[dict[str, Any]] | None = None, log: Callable[[str], None] = lambda s: None) -> list[dict]:
    """Every row's prediction with the constants refitted without its source; the shipped values are restored."""
    items = prepared(rows if rows is not None else sa.load_rows())
    shipped = {k.label: k.get() for k in KNOBS}
    moves = {k.label: moved_by(k, items) for k in KNOBS}
    out = []
    try:
        for source in sorted({source_of(r) for r, _ in items}):
            held = [(r, f) for r, f in items if source_of(r) == source]
            kinds = {r["kind"] for r, _ in held}
            for kind in kinds:
                rest = [(r, f) for r, f in items if source_of(r) != source and r["kind"] == kind]
                for k in KNOBS:
                    if k.kind != kind:
                        continue
                    touched = [(r, f) for r, f in rest if r["id"] in moves[k.label]]
                    if touched:
                        fit(k, touched)
                    else:
                        k.set(k.prior)        # nothing else constrains it: the value stated before any fit
                for r, f in held:
                    if r["kind"] == kind:
                        out.append({"id": r["id"], "kind": kind, "source": source, "loso_ratio": f() / r["measured"]})
                for k in KNOBS:
                    k.set(shipped[k.label])
            log(f"{source}: {len(held)} rows")
    finally:
        for k in KNOBS:
            k.set(shipped[k.label])
    return out


def summary(results: list[dict]) -> dict[str, dict[str, Any]]:
    """Per kind: rows, share within 2x, median error factor, and the worst row, left-one-source-out."""
    out = {}
    for kind in ("training", "serving"):
        rs = [r for r in results if r["kind"] == kind]
        if not rs:
            continue
        f = [sa.factor(r["loso_ratio"]) for r in rs]
        worst = max(rs, key=lambda r: sa.factor(r["loso_ratio"]))
        out[kind] = {"rows": len(rs), "within_2x_share": sum(x <= 2 for x in f) / len(f),
                     "median_error_factor": statistics.median(f), "worst_id": worst["id"],
                     "worst_ratio": worst["loso_ratio"]}
    return out


def per_source(results: list[dict]) -> list[tuple[str, str, int, float, float]]:
    """(source, kind, rows, median ratio, within-2x share) for each held-out source."""
    groups: dict[tuple[str, str], list[float]] = {}
    for r in results:
        groups.setdefault((r["source"], r["kind"]), []).append(r["loso_ratio"])
    return [(s, k, len(v), statistics.median(v), sum(sa.factor(x) <= 2 for x in v) / len(v))
            for (s, k), v in sorted(groups.items())]


def markdown(results: list[dict], in_sample: dict[str, Any]) -> str:
    """The README's table: in-sample beside leave-one-source-out, then each source held out."""
    s = summary(results)
    lines = ["| kind | rows | in-sample within 2x | in-sample median error | left-one-source-out within 2x | "
             "left-one-source-out median error | worst row left out |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for kind, st in s.items():
        ins = in_sample[kind]["model"]
        lines.append(f"| {kind} | {st['rows']} | {ins['within_2x_share']:.0%} | {ins['median_error_factor']:.2f}x | "
                     f"{st['within_2x_share']:.0%} | {st['median_error_factor']:.2f}x | "
                     f"{st['worst_id']} ({st['worst_ratio']:.2f}) |")
    lines += ["", "| source held out | kind | rows | median ratio | within 2x |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {src} | {kind} | {n} | {med:.2f} | {w2:.0%} |" for src, kind, n, med, w2 in per_source(results)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    results = loso(log=lambda s: print(s, file=sys.stderr, flush=True))
    in_sample = sa.summary(sa.evaluate())
    if args.markdown:
        print(markdown(results, in_sample))
        return
    for r in results:
        print(f"{r['id']:<60} {r['source']:<24} {r['loso_ratio']:.2f}")
    print()
    print(markdown(results, in_sample))


if __name__ == "__main__":
    main()
