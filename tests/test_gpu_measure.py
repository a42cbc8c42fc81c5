"""bench/gpu_measure.py without a GPU (and without torch): the --dry-run plan maps to valid Workloads, rows in the
script's schema pass through bench/memory_accuracy.evaluate(), and the measuring loop's bookkeeping -- time budget,
results written after every case, OOM / timeout / error handling -- behaves, driven by stand-ins for torch."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import ClassVar

import pytest
import yaml

from bot.records.models import Workload

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import gpu_measure as gm  # noqa: E402
import memory_accuracy  # noqa: E402

ALL_CASES = gm.plan("full")
TINY_CASES = gm.plan("full", tiny=True)
# keys every row of tests/data/measured_memory.yaml carries
CORE_KEYS = {"id", "model", "task", "method", "precision", "optimizer", "batch_size", "seq_len", "grad_checkpointing",
             "gpus", "sharding", "offload", "context", "concurrency", "component", "measured", "unit", "what", "gpu",
             "source", "caveats"}


def run_script(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_measure.py"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


# ----- the plan --------------------------------------------------------------------------------------------------
def test_presets_quick_is_a_subset_of_full_and_ids_are_unique():
    quick_ids = [c.id for c in gm.plan("quick")]
    full_ids = [c.id for c in ALL_CASES]
    assert set(quick_ids) <= set(full_ids)
    assert len(full_ids) == len(set(full_ids)) and len(quick_ids) == len(set(quick_ids))
    quick = gm.plan("quick")
    methods = {c.method for c in quick}
    assert methods == {"inference", "full", "lora", "qlora"}
    assert {c.precision for c in quick if c.method == "full"} >= {"bf16", "bf16-true"}
    assert {c.grad_checkpointing for c in quick if c.method == "full"} == {True, False}
    assert any(c.cnn for c in quick)


def test_quick_preset_fits_the_default_time_budget():
    """The estimated wall time of the quick preset leaves room for imports within --time-budget 480."""
    assert sum(gm.est_seconds(c) for c in gm.plan("quick")) < 300


def test_dry_run_cli_prints_plan_and_estimates_without_torch():
    probe = ("import runpy, sys\n"
             "sys.argv = ['gpu_measure.py', '--dry-run', '--preset', 'full', '--gpu', 'h100-sxm']\n"
             "try:\n    runpy.run_path('bench/gpu_measure.py', run_name='__main__')\n"
             "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
             "assert 'torch' not in sys.modules and 'transformers' not in sys.modules\n"
             "print('NO-TORCH-OK')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "NO-TORCH-OK" in out.stdout
    for case in ALL_CASES:
        assert case.id in out.stdout
    assert "capacity of h100-sxm: 80" in out.stdout
    assert "OOM" in out.stdout           # 16-18 B/param full fine-tuning of a 7-8B model cannot fit in 80 GB


@pytest.mark.parametrize("case, tiny", [(c, False) for c in ALL_CASES] + [(c, True) for c in TINY_CASES],
                         ids=lambda x: x.id if isinstance(x, gm.Case) else ("tiny" if x else "real"))
def test_planned_case_maps_to_a_valid_workload(case, tiny):
    [(c, row, w, est)] = gm.planned_workloads([case], tiny=tiny)
    assert c is case
    Workload.model_validate(w.model_dump())
    assert w.method == case.method and w.task == case.task
    assert w.gpus == 1 and w.sharding == "none" and w.offload == "none" and w.tensor_parallel == 1
    assert w.flash_attention == (case.attention != "eager")
    # no torch.autocast outside the AMP cases: QLoRA's NF4 base computes in bf16 as bf16-true does
    assert w.pure_bf16 == (case.precision in ("bf16-true", "nf4"))
    assert w.precision == ("fp32" if case.precision == "fp32" else "bf16")     # nf4 (QLoRA) -> bf16 compute
    assert w.batch_size == case.batch_size
    if case.method == "inference":
        assert (w.context, w.concurrency) == (case.context, case.batch_size)
        assert case.prompt_len > 0 and case.new_tokens > 0
    else:
        assert w.optimizer == "adamw" and w.grad_checkpointing == case.grad_checkpointing
        if not case.cnn:
            assert w.seq_len == case.seq_len
    if case.method in ("lora", "qlora"):
        assert w.lora_rank == case.lora_rank
        assert w.lora_targets == {"q,v": "qv", "q,k,v,o,mlp": "all-linear"}[case.lora_targets]
    if not tiny or case.cnn:
        model = memory_accuracy.model_for(row)
        assert model is not None and model.id == case.model and w.model == case.model
        assert w.params_b == pytest.approx(gm.spec_of(case, False)["params_b"], rel=1e-3)
    else:
        assert row["arch"]["layers"] == gm.TINY["layers"] and w.params_b < 0.001
    assert est.per_gpu_gib > est.allocated_gib > (0 if not tiny else -1)


def test_embedded_configs_match_the_knowledge_base(kb):
    for mid, spec in gm.MODELS.items():
        m = kb.models[mid]
        assert (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab, m.tied_embeddings) == (
            spec["layers"], spec["hidden"], spec["heads"], spec["kv_heads"], spec["head_dim"], spec["ffn"],
            spec["vocab"], spec["tied"]), mid
        assert spec["params_b"] == m.params_b
        assert m.sliding_window is None
        # what from_config builds from these dimensions is the model the knowledge base describes
        assert gm.param_count(spec) / 1e9 == pytest.approx(m.params_b, rel=1e-3), mid
    for mid, spec in gm.CNN_MODELS.items():
        assert kb.models[mid].params_b == spec["params_b"]


@pytest.mark.parametrize("name, total, expected", [
    ("NVIDIA H200", 139.8, "h200"), ("NVIDIA GH200 480GB", 94.5, "gh200"), ("NVIDIA H100 80GB HBM3", 79.1, "h100-sxm"),
    ("NVIDIA H100 PCIe", 79.1, "h100-pcie"), ("NVIDIA H100 NVL", 93.1, "h100-nvl"), ("NVIDIA H20", 95.0, "h20"),
    ("NVIDIA H800", 79.1, "h800"), ("NVIDIA A100-SXM4-80GB", 79.1, "a100-80gb"), ("NVIDIA A100 80GB PCIe", 79.1,
                                                                                  "a100-80gb"),
    ("NVIDIA A100-SXM4-40GB", 39.4, "a100-40gb"), ("NVIDIA A100-PCIE-40GB", 39.4, "a100-40gb"),
    ("NVIDIA A10G", 22.0, "a10g"), ("NVIDIA A10", 22.0, "a10"), ("NVIDIA L4", 22.0, "l4"), ("NVIDIA L40S", 44.4, "l40s"),
    ("NVIDIA GeForce RTX 4090", 23.6, "rtx-4090"), ("NVIDIA GeForce RTX 3090", 23.7, "rtx-3090"),
    ("NVIDIA RTX A6000", 47.5, "rtx-a6000"), ("NVIDIA RTX 6000 Ada Generation", 47.5, "rtx-6000-ada"),
    ("Tesla T4", 14.7, "t4"), ("Tesla V100-SXM2-16GB", 15.8, "v100-16gb"), ("Tesla V100-SXM2-32GB", 31.7, "v100-32gb"),
    ("NVIDIA B200", 178.4, "b200"), ("NVIDIA L40", 44.4, None), ("Some Future GPU", 64.0, None),
])
def test_gpu_names_map_to_knowledge_base_ids(kb, name, total, expected):
    gid = gm.gpu_id_for(name, total)
    assert gid == expected
    if gid is not None:
        assert gid in kb.gpus


# ----- rows ------------------------------------------------------------------------------------------------------
def synthetic_rows(case, allocated=20.0):
    common = dict(gpu="h200", device_name="NVIDIA H200", quote="peak ... command: python bench/gpu_measure.py",
                  caveats="synthetic")
    return [gm.make_row(case, what="peak-allocated", measured=allocated, **common),
            gm.make_row(case, what="peak-reserved", measured=allocated * 1.05, **common)]


def test_rows_carry_the_measured_memory_schema():
    published = yaml.safe_load((ROOT / "tests" / "data" / "measured_memory.yaml").read_text(encoding="utf-8"))
    assert all(CORE_KEYS <= set(r) for r in published)      # the schema this test holds the script to
    for case in ALL_CASES:
        for row in synthetic_rows(case):
            assert CORE_KEYS <= set(row)
            assert set(row) - CORE_KEYS <= {"lora_rank", "lora_targets", "attention", "oom", "params_b", "arch",
                                            "kbit_upcast", "framework", "lora_dropout",
                                            "autocast", "adamw_impl", "engine", "prompt_tokens", "allocator"}
            assert row["unit"] == "GiB" and row["component"] == "total" and row["gpus"] == 1
            assert row["source"]["title"] == "gpu-advisor bench/gpu_measure.py on NVIDIA H200"
            assert row["source"]["url"] is None
            assert row["id"].startswith("gpum-h200-" + case.id)
    ids = [r["id"] for c in ALL_CASES for r in synthetic_rows(c)]
    assert len(ids) == len(set(ids))
    # a YAML round trip keeps every row as written
    rows = [r for c in ALL_CASES for r in synthetic_rows(c)]
    assert yaml.safe_load(gm.dump_rows(rows)) == rows


@pytest.mark.parametrize("case", gm.plan("quick"), ids=lambda c: c.id)
def test_synthetic_measured_rows_pass_through_memory_accuracy(case):
    rows = synthetic_rows(case, allocated=20.0)
    results = memory_accuracy.evaluate(rows)
    assert [r["id"] for r in results] == [r["id"] for r in rows]
    alloc, reserved = results
    for rec, row in zip(results, rows):
        assert "skipped" not in rec
        assert rec["what"] == row["what"]
        assert rec["measured"] == pytest.approx(row["measured"])
        assert rec["err"] == pytest.approx((rec["estimate"] - rec["measured"]) / rec["measured"])
    # the reserved reading is compared with the estimate's reserved basis: allocated x (1 + allocator slack) for these
    # unsharded jobs, like any published peak-reserved row (both rounded to 0.01 GiB)
    # (a checkpointed job's slack is its own: a share of the activations besides the rest, arch.CHECKPOINTED_SLACK)
    [(_c, _row, _w, est)] = gm.planned_workloads([case])
    if case.grad_checkpointing and not case.cnn:
        assert reserved["estimate"] == pytest.approx(est.reserved_gib, abs=0.011) and est.reserved_gib > est.allocated_gib
    else:
        assert reserved["estimate"] == pytest.approx(alloc["estimate"] * (1 + memory_accuracy.ALLOCATOR_SLACK),
                                                     abs=0.011)
    if case.cnn:     # no sequence length: shown, but left out of the summary until the CNN has an activation basis
        assert alloc["excluded"] == "sequence length not stated"
    else:
        assert alloc["excluded"] is None and not alloc["derived_arch"]


def test_out_of_memory_row_is_judged_against_the_gpu_capacity():
    case = gm.plan("full", only=r"^llama-3\.1-8b-full-bf16-b1-s1024-gc$")[0]
    row = gm.make_row(case, gpu="h200", what="peak-allocated", measured=None, oom=True, device_name="NVIDIA H200")
    [rec] = memory_accuracy.evaluate([row])
    assert rec["oom"] is True and rec["gpu_gib"] == 141
    assert rec["correct"] == (rec["estimate"] > 141)
    summary = memory_accuracy.summary(memory_accuracy.evaluate(synthetic_rows(gm.plan("quick")[1]) + [row]))
    assert summary["oom_rows"] == 1 and summary["rows"] == 2


def test_compare_prints_measured_against_estimate(tmp_path, capsys):
    path = tmp_path / "measured.yaml"
    rows = [r for c in gm.plan("quick")[:3] for r in synthetic_rows(c)]
    cpu = gm.make_row(gm.plan("quick", tiny=True)[0], gpu="cpu", what="unknown", measured=None, tiny=True)
    path.write_text("# header\n" + gm.dump_rows(rows + [cpu]), encoding="utf-8")
    assert gm.main(["--compare", str(path)]) == 0
    out = capsys.readouterr().out
    for r in rows:
        assert r["id"] in out
    assert f"{cpu['id']}" in out and "no GPU measurement" in out
    assert "6 comparable rows" in out and "median |error|" in out


# ----- the measuring loop, with stand-ins for torch --------------------------------------------------------------
class FakeOOM(RuntimeError):
    pass


class FakeEnv:
    """What run_cases / measure_case / rows_for use of TorchEnv, without torch."""
    tiny = False
    cuda = True
    gpu = "h200"
    device_name = "NVIDIA H200"
    total_gib = 139.8
    adamw = "fused"
    versions: ClassVar[dict[str, str]] = {"torch": "2.x", "cuda": "12", "transformers": "5.x", "peft": "0.x", "bitsandbytes": "not installed"}

    def __init__(self):
        self.cleanups = 0
        self.peak = 0.0

    def missing_for(self, case):
        return "needs bitsandbytes (pip install bitsandbytes)" if case.method == "qlora" else None

    def cleanup(self):
        self.cleanups += 1

    def sync(self):
        pass

    def reset_peak(self):
        self.peak = 0.0

    def allocated(self):
        return 0.01

    def peaks(self):
        return self.peak, self.peak * 1.05

    def device_used(self):
        return 30.0

    def retries(self):
        return 0

    def is_oom(self, exc):
        return isinstance(exc, FakeOOM)


class Payload:
    """Stands for a model: measure_case must drop every reference to it."""


def fake_builder(step):
    def build(env, case, state):
        state["model"] = Payload()
        state["probe"] = weakref.ref(state["model"])
        FakeEnv.last_probe = state["probe"]

        def run():
            env.peak = max(env.peak, 12.5)
            step()
        state["step"] = run
    return build


@pytest.mark.parametrize("step, status", [
    (lambda: None, "ok"),
    (lambda: (_ for _ in ()).throw(FakeOOM("CUDA out of memory. Tried to allocate 2.00 GiB")), "oom"),
    (lambda: (_ for _ in ()).throw(ValueError("boom")), "error"),
    (lambda: time.sleep(5), "timeout"),
])
def test_measure_case_catches_failures_and_frees_everything(monkeypatch, step, status):
    monkeypatch.setattr(gm, "build_llm", fake_builder(step))
    env = FakeEnv()
    case = gm.plan("quick")[4]
    t0 = time.monotonic()
    res = gm.measure_case(env, case, timeout_s=0.3)
    assert time.monotonic() - t0 < 3
    assert res.status == status
    assert env.cleanups >= 2                         # before the case and after it
    assert FakeEnv.last_probe() is None              # the model is gone once measure_case returns
    if status == "ok":
        assert (res.peak_alloc, res.peak_reserved) == (12.5, pytest.approx(12.5 * 1.05))
        rows = gm.rows_for(case, res, env, "python bench/gpu_measure.py", "2026-01-01")
        assert [r["what"] for r in rows] == ["peak-allocated", "peak-reserved"]
        assert rows[0]["measured"] == 12.5 and "two measured steps (torch.cuda.reset_peak_memory_stats" in rows[0]["caveats"]
        # what the estimator needs to know about the run: the optimizer the script built, and whether it autocast
        assert rows[0]["adamw_impl"] == "fused" and rows[0]["autocast"] == (case.precision == "bf16")
    elif status == "oom":
        [row] = gm.rows_for(case, res, env, "cmd", "2026-01-01")
        assert row["oom"] is True and row["measured"] is None and row["gpu"] == "h200"
        assert "Tried to allocate" in row["caveats"]
    else:
        assert gm.rows_for(case, res, env, "cmd", "2026-01-01") == []


@pytest.mark.parametrize("conf, mode", [
    (None, "caching"), ("", "caching"),                           # unset: PyTorch's default caching allocator
    ("expandable_segments:True", "expandable_segments"),
    ("max_split_size_mb:128,expandable_segments:True", "expandable_segments"),   # one option among several
    ("expandable_segments:False", "caching"),                    # said, but off
])
def test_allocator_mode_is_read_from_the_alloc_conf(conf, mode):
    assert gm.allocator_of(conf) == mode


def test_rows_record_the_allocator_and_keep_ids_apart():
    """The same case under both allocators gives distinct rows that say which allocator ran (issue 31 item 7)."""
    case = gm.plan("allocator")[0]
    assert case.grad_checkpointing
    caching = gm.make_row(case, gpu="h200", what="peak-reserved", measured=99.0, alloc_conf="")
    expandable = gm.make_row(case, gpu="h200", what="peak-reserved", measured=76.0,
                             alloc_conf="expandable_segments:True")
    assert caching["allocator"] == "caching" and expandable["allocator"] == "expandable_segments"
    assert expandable["id"] == caching["id"].replace("-reserved", "-expseg-reserved") != caching["id"]
    legacy = gm.make_row(case, gpu="h200", what="peak-reserved", measured=99.0)      # a stand-in env, no setting read
    assert "allocator" not in legacy and legacy["id"] == caching["id"]


def test_allocator_preset_is_checkpointed_and_fits_one_run():
    cases = gm.plan("allocator")
    assert cases and all(c.grad_checkpointing and c.method != "inference" for c in cases)
    assert sum(gm.est_seconds(c) for c in cases) < 150     # twice (one per allocator) inside a 10-minute command


def test_rows_carry_the_env_allocator_setting(monkeypatch):
    monkeypatch.setattr(gm, "build_llm", fake_builder(lambda: None))
    env = FakeEnv()
    env.alloc_conf = "expandable_segments:True"
    case = gm.plan("allocator")[0]
    res = gm.measure_case(env, case, timeout_s=5)
    rows = gm.rows_for(case, res, env, "cmd", "2026-01-01")
    assert {r["allocator"] for r in rows} == {"expandable_segments"}
    assert all("-expseg-" in r["id"] for r in rows)
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in rows[0]["caveats"]


def test_skipped_case_says_why(monkeypatch):
    env = FakeEnv()
    case = gm.plan("quick", only="qlora")[0]
    res = gm.measure_case(env, case, timeout_s=5)
    assert res.status == "skipped" and "bitsandbytes" in res.note


def test_run_cases_stops_at_the_budget_and_writes_after_every_case(tmp_path):
    cases = gm.plan("quick")
    out = tmp_path / "rows.yaml"
    writer = gm.Writer(str(out), "Produced by a test\nCommand: none")
    writer.start()
    now = [0.0]
    seen_on_disk = []

    def measure(env, case, timeout):
        # whatever earlier cases measured is already on disk when the next one starts (a kill keeps it)
        seen_on_disk.append(len(yaml.safe_load(out.read_text()) or []))
        now[0] += gm.est_seconds(case)
        if "b16" in case.id:
            return gm.Result("oom", note="CUDA out of memory", peak_alloc=130.0, peak_reserved=138.0)
        if case.method == "qlora":
            return gm.Result("skipped", note="needs bitsandbytes")
        return gm.Result("ok", peak_alloc=10.0, peak_reserved=11.0, steady_alloc=9.0, steady_reserved=11.0,
                         after_build=5.0, baseline=0.0, device_used=12.0, retries=0, seconds=1.0)

    budget = 60.0
    done = gm.run_cases(cases, FakeEnv(), writer, budget_s=budget, case_timeout_s=180, measure=measure,
                        clock=lambda: now[0], start=0.0, command="cmd", date="2026-01-01")
    started = done["ok"] + done["oom"] + done["skipped"]
    assert started and done["not started"]
    assert sorted(started + done["not started"]) == sorted(c.id for c in cases)
    assert now[0] <= budget + max(gm.est_seconds(c) for c in cases)
    expected = [0]
    in_order = [c.id for c in cases if c.id in started]
    for cid in in_order[:-1]:
        expected.append(expected[-1] + {"ok": 2, "oom": 1, "skipped": 0}[
            next(k for k in ("ok", "oom", "skipped") if cid in done[k])])
    assert seen_on_disk == expected
    text = out.read_text()
    assert text.startswith("# Produced by a test\n# Command: none\n")
    assert "not started" in text or "time budget" in text
    rows = yaml.safe_load(text)
    assert len(rows) == 2 * len(done["ok"]) + len(done["oom"])
    assert all(r["oom"] for r in rows if r["id"].endswith("-oom"))


def test_alarm_interrupts_a_long_step():
    t0 = time.monotonic()
    with pytest.raises(gm.CaseTimeout):
        with gm.alarm(0.2):
            time.sleep(3)
    assert time.monotonic() - t0 < 2
    with gm.alarm(None):                 # no limit: a no-op
        pass


def test_tiny_cases_shrink_every_size():
    for case in TINY_CASES:
        assert case.batch_size <= 2
        assert (case.seq_len or 0) <= 64 and (case.context or 0) <= 52 and case.new_tokens <= 4
        assert gm.spec_of(case, True)["params_b"] < 0.001 or case.cnn


def test_cpu_without_tiny_is_refused():
    out = run_script("--device", "cpu", "--preset", "quick")
    assert out.returncode == 2 and "--tiny" in out.stderr


def test_varlen_cases_step_through_lengths_ending_at_the_longest():
    lengths = gm.varlen_lengths(2048)
    assert len(lengths) == gm.VARLEN_STEPS and lengths[-1] == 2048
    assert all(256 <= n <= 2048 for n in lengths) and len(set(lengths)) > 3     # varied, within seq_len/8 .. seq_len
    assert lengths == gm.varlen_lengths(2048)                                   # the same order on every run


def test_questions_preset_pairs_each_case_with_its_control():
    ids = [c.id for c in gm.PRESETS["questions"]]
    for cid in ids:
        if cid.endswith("-varlen"):
            assert cid.replace("-s8192", "-s2048").removesuffix("-varlen") in ids
        if cid.endswith("-kbitprep"):
            assert cid.removesuffix("-kbitprep") in ids
