"""The speed model: how training and serving speed respond to each input, and its accuracy on published
measurements (bench/speed_accuracy.py over tests/data/measured_speed.yaml)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from bot.estimate.cost import training_time
from bot.estimate.speed import serving_speed, training_hours, training_speed
from bot.knowledge.loader import default_knowledge
from bot.records.models import Link, Workload

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import speed_accuracy  # noqa: E402

KB = default_knowledge()
LLAMA8 = KB.models["llama-3.1-8b"]
LLAMA70 = KB.models["llama-3.1-70b"]


def train(**kw) -> Workload:
    base = dict(model="llama-3.1-8b", params_b=LLAMA8.params_b, task="train", method="full", batch_size=2,
                seq_len=4096, gpus=8, sharding="fsdp")
    base.update(kw)
    return Workload(**base)


def serve(**kw) -> Workload:
    base = dict(model="llama-3.1-8b", params_b=LLAMA8.params_b, task="inference", method="inference",
                input_len=1000, output_len=500, concurrency=1)
    base.update(kw)
    return Workload(**base)


def tps(w: Workload, gpu: str = "h100-sxm", model=LLAMA8, link: Link | None = None) -> float:
    return training_speed(w, model, KB.gpus[gpu], link).tokens_per_s_per_gpu


# ----- training ---------------------------------------------------------------------------------------------------
def test_every_training_term_is_named_with_its_arithmetic():
    sp = training_speed(train(), LLAMA8, KB.gpus["h100-sxm"])
    names = [t.name for t in sp.terms]
    for wanted in ("matrix-multiply FLOPs per token", "attention FLOPs per token", "achieved share of peak",
                   "data-parallel traffic per GPU per step", "training throughput per GPU"):
        assert wanted in names
    assert all(t.formula and t.unit for t in sp.terms)
    assert 0.2 < sp.mfu < 0.7 and sp.tokens_per_s == pytest.approx(sp.tokens_per_s_per_gpu * 8)


def test_recomputation_costs_time_and_selective_costs_less_than_full():
    none, full = tps(train()), tps(train(grad_checkpointing=True))
    selective = tps(train(checkpointing="selective"))
    assert full < selective < none
    assert full / none == pytest.approx(6 / 8, rel=0.1)       # one more forward: about 8 instead of 6 FLOPs a param


def test_partial_checkpointing_recomputes_less():
    full, every2 = tps(train(checkpointing="full")), tps(train(checkpointing="full", checkpoint_every=2))
    half_mm = tps(train(checkpointing="selective", selective_policy="alternate-mm"))
    attention = tps(train(checkpointing="selective"))
    assert full < every2 < tps(train()) and full < half_mm < attention


def test_attention_term_grows_with_sequence_length():
    short = training_speed(train(seq_len=2048, batch_size=4), LLAMA8, KB.gpus["h100-sxm"])
    long = training_speed(train(seq_len=65536, batch_size=1), LLAMA8, KB.gpus["h100-sxm"])
    assert long.flops_per_token > 2 * short.flops_per_token     # at 64k the s^2 term outweighs the parameters
    assert long.tokens_per_s_per_gpu < short.tokens_per_s_per_gpu / 2


def test_hopper_fp8_trains_faster_ampere_refuses_fp8_and_says_so():
    assert 1.1 < tps(train(precision="fp8")) / tps(train()) < 1.6     # measured 1.1-1.3x, not the 2x peak ratio
    a100 = training_speed(train(precision="fp8"), LLAMA8, KB.gpus["a100-80gb"])
    assert a100.tokens_per_s_per_gpu == pytest.approx(tps(train(), "a100-80gb"))
    assert any("FP8" in a for a in a100.assumptions)


def test_generations_reach_different_shares_of_peak():
    a100, h100 = (training_speed(train(), LLAMA8, KB.gpus[g]) for g in ("a100-80gb", "h100-sxm"))
    assert a100.mfu > h100.mfu and h100.tokens_per_s_per_gpu > 2 * a100.tokens_per_s_per_gpu


def test_moe_runs_at_its_active_parameters():
    mixtral = KB.models["mixtral-8x7b"]
    w = train(model=mixtral.id, params_b=mixtral.params_b, gpus=64, nodes=8)
    dense = train(model=None, params_b=mixtral.params_b, gpus=64, nodes=8)
    assert tps(w, model=mixtral) > 2 * tps(dense, model=None)


def test_adapters_skip_weight_gradients_and_qlora_pays_for_dequantisation():
    full, lora = tps(train(gpus=1, sharding="none")), tps(train(gpus=1, sharding="none", method="lora"))
    qlora = training_speed(train(gpus=1, sharding="none", method="qlora"), LLAMA8, KB.gpus["h100-sxm"])
    assert lora > 1.3 * full
    assert qlora.tokens_per_s_per_gpu < lora
    assert any(t.name == "4-bit dequantisation per micro-batch" for t in qlora.terms)


def test_the_network_between_nodes_matters_and_an_unknown_one_is_named():
    w = train(gpus=16, nodes=2)
    rdma = tps(w, link=Link(intra="nvlink", inter="rdma", inter_gbs=400))
    tcp = tps(w, link=Link(intra="nvlink", inter="tcp", inter_gbs=3))
    assert tcp < rdma / 3
    unknown = training_speed(w, LLAMA8, KB.gpus["h100-sxm"])
    assert any("network between nodes not known" in a for a in unknown.assumptions)
    assert {k["key"] for k in unknown.assumption_keys} >= {"speed.assumed_inter"}


def test_sharded_data_parallel_pays_a_hop_latency_per_node_per_layer_collective():
    """ZeRO-3 gathers and reduce-scatters every layer every micro-batch; each ring crosses (nodes - 1) network hops
    of NCCL's 9.6 us (its own tuning model): over thousands of nodes that, not bandwidth, stops the scaling."""
    from bot.estimate.speed_hw import RING_HOP_LATENCY_S
    link = Link(intra="nvlink", inter="rdma", inter_gbs=400)
    for nodes in (2, 64, 512):
        w = train(gpus=8 * nodes, nodes=nodes, sharding="zero3", grad_accumulation=4)
        sp = training_speed(w, LLAMA8, KB.gpus["h100-sxm"], link)
        term = next(t for t in sp.terms if t.name == "network hop latency per step")
        assert term.value == pytest.approx(3 * 32 * 4 * (nodes - 1) * RING_HOP_LATENCY_S)
    one = training_speed(train(gpus=8, nodes=1, sharding="zero3"), LLAMA8, KB.gpus["h100-sxm"], link)
    assert all(t.name != "network hop latency per step" for t in one.terms)


def test_pipeline_bubble_shrinks_with_more_micro_batches():
    few = tps(train(model=LLAMA70.id, params_b=LLAMA70.params_b, tensor_parallel=8, pipeline_parallel=4,
                    gpus=64, nodes=8, sharding="zero1", grad_accumulation=4, batch_size=1), model=LLAMA70)
    many = tps(train(model=LLAMA70.id, params_b=LLAMA70.params_b, tensor_parallel=8, pipeline_parallel=4,
                     gpus=64, nodes=8, sharding="zero1", grad_accumulation=32, batch_size=1), model=LLAMA70)
    assert many > 1.3 * few


def test_offload_adds_host_copies():
    on = training_speed(train(gpus=1, sharding="none", offload="optimizer"), LLAMA8, KB.gpus["l40s"])
    off = training_speed(train(gpus=1, sharding="none"), LLAMA8, KB.gpus["l40s"])
    assert on.tokens_per_s_per_gpu < off.tokens_per_s_per_gpu
    assert any(t.name == "CPU offload copies per step" for t in on.terms)


def test_hours_are_tokens_over_throughput_with_goodput_and_cost_agrees():
    w = train(tokens=1e11)
    sp = training_speed(w, LLAMA8, KB.gpus["h100-sxm"])
    hours = training_hours(w, LLAMA8, KB.gpus["h100-sxm"])
    assert hours == pytest.approx(1e11 / sp.tokens_per_s / 3600 / sp.goodput)
    ct = training_time(w, LLAMA8, KB.gpus["h100-sxm"], 8)
    assert ct.hours == pytest.approx(hours, rel=0.01) and ct.gpu_hours == pytest.approx(hours * 8, rel=0.01)
    assert ct.mfu == pytest.approx(sp.mfu, abs=0.001)


# ----- serving ----------------------------------------------------------------------------------------------------
def test_one_request_decodes_at_memory_bandwidth():
    sp = serving_speed(serve(), LLAMA8, KB.gpus["a100-80gb"])
    weights_ms = LLAMA8.params_b * 1e9 * 2 / (KB.gpus["a100-80gb"].memory_bandwidth_gbs * 1e9) * 1e3
    assert weights_ms < sp.tpot_ms < 1.5 * weights_ms
    assert sp.ttft_ms < 200 and sp.output_tokens_per_s == pytest.approx(1000 / sp.tpot_ms, rel=0.15)


def test_batching_raises_throughput_until_compute_and_the_kv_cache_stop_it():
    rates = [serving_speed(serve(concurrency=c), LLAMA8, KB.gpus["h100-sxm"]).output_tokens_per_s
             for c in (1, 8, 64, 256)]
    assert rates == sorted(rates) and rates[1] > 5 * rates[0]
    assert rates[3] < 256 / 64 * rates[2]                        # sub-linear: KV reads and compute grow with it
    capped = serving_speed(serve(concurrency=100_000), LLAMA8, KB.gpus["h100-sxm"])
    assert capped.concurrency == capped.max_concurrency and any("KV cache" in a for a in capped.assumptions)


def test_longer_prompts_take_longer_to_first_token():
    short = serving_speed(serve(input_len=128), LLAMA8, KB.gpus["h100-sxm"])
    long = serving_speed(serve(input_len=32_000), LLAMA8, KB.gpus["h100-sxm"])
    assert long.ttft_ms > 50 * short.ttft_ms / 10


def test_fp8_kv_doubles_the_cache_where_supported_only():
    h16, h8 = (serving_speed(serve(kv_dtype=k), LLAMA8, KB.gpus["h100-sxm"]).max_concurrency for k in (None, "fp8"))
    assert h8 == pytest.approx(2 * h16, rel=0.02)
    a100 = serving_speed(serve(kv_dtype="fp8"), LLAMA8, KB.gpus["a100-80gb"])
    assert any("FP8" in a for a in a100.assumptions)


def test_tensor_parallel_splits_the_weights_and_pays_all_reduces():
    one = serving_speed(serve(model=LLAMA70.id, params_b=LLAMA70.params_b, precision="fp8"), LLAMA70,
                        KB.gpus["h100-sxm"])
    two = serving_speed(serve(model=LLAMA70.id, params_b=LLAMA70.params_b, precision="fp8", gpus=2,
                              tensor_parallel=2), LLAMA70, KB.gpus["h100-sxm"])
    assert one.tpot_ms / 2 < two.tpot_ms < one.tpot_ms
    assert two.max_concurrency > 2 * one.max_concurrency


def test_every_speed_note_has_wording_in_both_languages():
    import yaml
    messages = yaml.safe_load((ROOT / "bot/render/templates/messages.yaml").read_text(encoding="utf-8"))
    keys = set()
    for name in ("speed.py", "speed_hw.py", "speed_serve.py"):
        keys |= set(re.findall(r'Note\("(speed\.[a-z_]+)"', (ROOT / "bot/estimate" / name).read_text()))
    assert keys and all(set(messages[k]) == {"en", "zh"} for k in keys)


# ----- against measurement ----------------------------------------------------------------------------------------
RESULTS = speed_accuracy.evaluate()
SUMMARY = speed_accuracy.summary(RESULTS)


def test_rows_cover_both_kinds_several_generations_and_scales():
    rows = speed_accuracy.load_rows()
    assert len(rows) >= 80 and {r["kind"] for r in rows} == {"training", "serving"}
    assert all(r["source"]["url"].startswith("http") and r["source"]["quote"] for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)
    gens = {KB.gpus[r["gpu"]].architecture.split()[0] for r in rows}
    assert len(gens) >= 3
    assert min(r.get("gpus") or 1 for r in rows) == 1 and max(r.get("gpus") or 1 for r in rows) >= 1024


@pytest.mark.parametrize("kind", ["training", "serving"])
def test_accuracy_meets_the_issue_targets_and_beats_both_peers(kind):
    s = SUMMARY[kind]
    model = s["model"]
    assert model["rows"] >= 40
    assert model["within_2x_share"] >= speed_accuracy.TARGETS["within_2x_share"]
    assert model["median_error_factor"] <= speed_accuracy.TARGETS["median_error_factor"]
    assert speed_accuracy.factor(model["worst_ratio"]) <= speed_accuracy.TARGETS["worst_error_factor"]
    for peer in ("rule", "roofline"):
        assert model["median_error_factor"] < s[peer]["median_error_factor"]
        assert model["within_2x_share"] > s[peer]["within_2x_share"]


def test_every_left_out_row_says_why():
    for r in SUMMARY["skipped"] + SUMMARY["excluded"]:
        assert r.get("skipped") or r.get("excluded")


def test_readme_speed_tables_are_what_the_benchmark_computes():
    """Regenerate with `python bench/speed_accuracy.py --markdown`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert speed_accuracy.summary_markdown(SUMMARY) in readme
    assert speed_accuracy.markdown_table(RESULTS) in readme


# ----- the CLI's contract -----------------------------------------------------------------------------------------
def test_estimate_json_carries_the_speed_fields():
    import json

    from click.testing import CliRunner

    from bot.surfaces.cli.main import main
    res = CliRunner().invoke(main, ["estimate", "--model", "llama-3.1-8b", "--method", "inference", "--gpu", "h100-sxm",
                                    "--concurrency", "16", "--input-len", "2000", "--output-len", "200",
                                    "--kv-dtype", "fp8", "--json"])
    assert res.exit_code == 0, res.output
    t = json.loads(res.output)["throughput"]
    for key in ("output_tokens_per_s", "ttft_ms", "tpot_ms", "max_concurrency", "decode_tokens_per_s_max"):
        assert t[key] > 0
    assert t["input_len"] == 2000 and t["concurrency"] == 16 and t["terms"]
    res = CliRunner().invoke(main, ["estimate", "--params", "70", "--method", "full", "--gpus", "16", "--nodes", "2",
                                    "--sharding", "zero3", "--tokens", "1e11", "--gpu", "h100-sxm", "--tp", "2",
                                    "--pp", "2", "--checkpointing", "selective", "--json"])
    assert res.exit_code == 0, res.output
    c = json.loads(res.output)["compute"]
    assert c["gpu_hours"] > 0 and c["tokens_per_s_per_gpu"] > 0 and 0 < c["mfu"] < 1 and c["hours"] > 0
    assert json.loads(res.output)["workload"]["pipeline_parallel"] == 2
