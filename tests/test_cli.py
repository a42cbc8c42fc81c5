"""The `gpu-advisor` command: public JSON contracts, errors without tracebacks."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bot.surfaces.cli.main import main

ASK_FIELDS = {"advice_id", "session", "status", "lang", "intent", "slots", "missing", "follow_up", "text",
              "assumptions", "memory", "compute", "recommendations", "checklist", "citations", "rule_trace"}
FLAVOR_FIELDS = {"provider", "flavor", "gpu", "gpu_count", "gpu_memory_gib", "vcpus", "memory_gib", "interconnect",
                 "rdma", "price_per_hour", "spot_price_per_hour", "currency", "price_kind", "region", "evidence",
                 "sources"}
REC_FIELDS = {"provider", "flavor", "gpu", "gpu_count", "gpu_memory_gib", "interconnect", "rdma", "instances",
              "price_per_hour", "currency", "fits", "headroom_pct"}


def run(*args, input=None):
    res = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return res


def test_ask_json_has_every_contract_field():
    res = run("ask", "--json", "lora finetune qwen2.5 7b, tight budget")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert ASK_FIELDS <= set(out)
    assert out["status"] == "answer" and out["advice_id"].startswith("A")
    assert REC_FIELDS <= set(out["recommendations"][0])
    assert set(out["memory"]) >= {"per_gpu_gib", "total_gib", "breakdown"}
    assert all({"item", "status", "text", "citations"} <= set(c) for c in out["checklist"])
    assert all({"id", "title", "url"} <= set(c) for c in out["citations"])
    assert all({"rule", "fired", "because"} <= set(t) for t in out["rule_trace"])


def test_session_keeps_slots_between_turns():
    first = json.loads(run("ask", "--json", "--session", "s1", "fine-tune a model for me").output)
    assert first["status"] == "follow_up" and first["follow_up"]
    second = json.loads(run("ask", "--json", "--session", "s1", "qwen2.5 14b, qlora").output)
    assert second["status"] == "answer" and second["slots"]["model"] == "qwen2.5-14b"
    assert second["session"] == first["session"] == "s1"


def test_ask_batch_plain_and_json_lines(tmp_path):
    f = tmp_path / "q.txt"
    f.write_text('serve llama 3.1 8b\n{"text": "训练 7B 模型", "session": "b"}\n{not json\n\n', encoding="utf-8")
    res = run("ask", "--batch", str(f), "--json")
    lines = [json.loads(x) for x in res.output.splitlines()]
    assert len(lines) == 3
    assert lines[0]["intent"] == "inference" and lines[1]["lang"] == "zh" and lines[1]["session"] == "b"
    assert lines[2]["line"] == 3 and "not valid JSON" in lines[2]["error"]


def test_estimate_json_and_table():
    out = json.loads(run("estimate", "--model", "Llama 3.1 8B", "--method", "qlora", "--json").output)
    assert out["model"] == "llama-3.1-8b"
    assert set(out["breakdown"]) == {"weights", "gradients", "optimizer", "activations", "kv_cache", "overhead"}
    assert out["per_gpu_gib"] > 0 and out["assumptions"] is not None
    assert out["spread"]["id"] == "qlora" and out["spread"]["p90_ratio"] >= out["spread"]["median_ratio"]
    table = run("estimate", "--params", "70", "--method", "full", "--gpus", "8", "--sharding", "zero3").output
    assert "per GPU" in table and "fit:" in table


def test_estimate_lora_under_fsdp_with_shared_units():
    args = ("estimate", "--model", "llama-2-7b", "--gpus", "2", "--sharding", "fsdp", "--json")
    plain = json.loads(run(*args).output)
    trap = json.loads(run(*args, "--fsdp-mixed-frozen", "--no-sync-accumulation").output)
    assert trap["breakdown"]["gradients"] - plain["breakdown"]["gradients"] == pytest.approx(6.738e9 * 2 / 2**30, rel=0.03)
    assert any("FSDP units" in a for a in trap["assumptions"])


def test_estimate_with_tokens_gives_compute():
    out = json.loads(run("estimate", "--model", "qwen2.5-7b", "--method", "full", "--tokens", "1e10", "--gpu", "h100",
                         "--json").output)
    assert out["compute"]["gpu_hours"] > 0
    costs = {c["mode"]: c for c in out["compute"]["costs"]}
    # every billing mode with a price on file: the GPU-hours at the lowest per-GPU-hour price, with its kind and date
    assert costs["on-demand"]["cost"] == pytest.approx(out["compute"]["gpu_hours"] * costs["on-demand"]["per_gpu_hour"],
                                                       rel=0.01)
    assert all(c["price_kind"] and (c["price_date"] or c["price_date_basis"].startswith("Undated")) and c["flavor"]
               for c in costs.values())
    if "spot" in costs:
        assert costs["spot"]["per_gpu_hour"] <= costs["on-demand"]["per_gpu_hour"]


def test_estimate_serving_gives_throughput_bounds():
    out = json.loads(run("estimate", "--model", "llama-3.1-8b", "--method", "inference", "--concurrency", "32",
                         "--gpu", "l40s", "--json").output)
    t = out["throughput"]
    # decode reads every weight once per step (16 GB at 864 GB/s): a batch of 32 cannot exceed ~32 x 54 tokens/s
    assert 0 < t["output_tokens_per_s"] < 32 * 864 / 16
    # decode alone at the largest batch the KV cache holds is the replica's ceiling; prefill is compute-bound
    assert t["decode_tokens_per_s_max"] > t["output_tokens_per_s"]
    assert t["prefill_tokens_per_s_max"] > 32 * 864 / 16


@pytest.mark.parametrize("args, words, code", [
    (["estimate", "--model", "lamma-9000"], "unknown model", 3),                      # did-you-mean, not a traceback
    (["estimate", "--params", "7", "--method", "qlora", "--precision", "fp32"], "QLoRA", 2),
    (["estimate", "--params", "7", "--method", "full", "--sharding", "zero3"], "ZERO3", 2),
    (["estimate", "--params", "-3"], "out of range", 2),
    (["estimate", "--params", "7", "--gpus", "2", "--fsdp-mixed-frozen"], "FSDP", 2),   # LoRA over DDP: no FSDP units
    (["kb", "show", "p3s.large"], "no record", 3),                                      # not found: 3 (docs/cli.md)
    (["kb", "list", "flavors", "--provider", "huawei-cloud"], "unknown provider", 3),
])
def test_bad_input_gets_a_clear_message(args, words, code):
    res = CliRunner().invoke(main, args)
    assert res.exit_code == code, res.output
    assert words.lower() in res.output.lower() and "Traceback" not in res.output


def test_kb_list_flavors_json_fields():
    rows = json.loads(run("kb", "list", "flavors", "--provider", "huaweicloud", "--json").output)
    assert rows and all(FLAVOR_FIELDS <= set(r) for r in rows)
    priced = [r for r in rows if r["price_per_hour"] is not None]
    assert priced and all(r["price_kind"] == "indicative" for r in priced)


def test_kb_show_and_validate():
    assert json.loads(run("kb", "show", "huaweicloud/p2v.8xlarge.8", "--json").output)["interconnect"] == "nvlink"
    assert run("kb", "validate").exit_code == 0


def test_audit_round_trip_and_replay():
    out = json.loads(run("ask", "--json", "serve qwen2.5 7b for 20 users").output)
    assert run("audit", "verify").exit_code == 0
    shown = json.loads(run("audit", "show", out["advice_id"], "--json").output)
    assert shown["question"] == "serve qwen2.5 7b for 20 users"
    replay = run("audit", "replay", out["advice_id"])
    assert replay.exit_code == 0 and "No change" in replay.output
