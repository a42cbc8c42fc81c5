"""The mixed-GPU fleet search (bot/plan/fleet.py) and KV sizing by tokens in flight (plans.Targets): a mix is
proposed only when it is cheaper by more than the simplicity margin, never with a part that misses its targets,
and the single type is kept (the saving mentioned) within the margin."""
from __future__ import annotations

import pytest

from bot.plan import fleet
from bot.plan.plans import Targets
from bot.render.templates import default_templates

BUCKETS = [(0.8, 500), (0.2, 30720)]


def _row(gpu: str, hourly: float, ok: bool = True, rid: str | None = None) -> dict:
    return {"id": rid or f"{gpu}-{hourly}", "gpu": gpu, "hourly": hourly, "ok": ok, "gpus_total": 1, "replicas": 1}


def _search(rows, single, margin=fleet.MIX_MARGIN):
    return fleet.search(BUCKETS, rows, single, lambda r: r["hourly"], lambda r: r["ok"], margin)


def test_a_mix_is_chosen_when_it_saves_more_than_the_margin():
    rows = [[_row("l4", 3.0), _row("h100", 7.0)], [_row("h100", 20.0), _row("l4", 40.0)]]
    choice = _search(rows, single=27.0)            # h100 for both: 7 + 20
    assert choice.chosen == "mix"
    assert [p.row["gpu"] for p in choice.mix] == ["l4", "h100"]
    assert choice.mix_usd == pytest.approx(23.0) and choice.saving == pytest.approx(1 - 23 / 27)


def test_within_the_margin_the_single_type_is_kept_and_the_saving_known():
    rows = [[_row("l4", 6.0), _row("h100", 7.0)], [_row("h100", 20.0)]]
    choice = _search(rows, single=27.0)            # mix 26: 3.7 % less
    assert choice.chosen == "single" and choice.saving == pytest.approx(1 / 27)


def test_no_mix_when_it_is_not_cheaper_or_uses_one_gpu_type():
    assert _search([[_row("l4", 8.0)], [_row("h100", 20.0)]], single=27.0) is None      # 28 > 27
    assert _search([[_row("h100", 5.0)], [_row("h100", 20.0)]], single=27.0) is None    # one type: not a mix


def test_a_part_that_misses_its_targets_is_never_used():
    rows = [[_row("l4", 1.0, ok=False), _row("a10", 2.5), _row("h100", 7.0)], [_row("h100", 20.0)]]
    choice = _search(rows, single=27.0)
    assert all(p.row["ok"] for p in choice.mix) and choice.mix[0].row["gpu"] == "a10"
    # a bucket nothing serves within its targets: no fleet at all
    assert _search([[_row("l4", 1.0, ok=False)], [_row("h100", 20.0)]], single=27.0) is None


def test_one_bucket_is_not_a_mix():
    assert fleet.search([(1.0, 500)], [[_row("l4", 1.0)]], 5.0, lambda r: r["hourly"], lambda r: True) is None


def test_ties_break_deterministically():
    rows = [[_row("l4", 3.0, rid="b"), _row("a10", 3.0, rid="a")], [_row("h100", 20.0)]]
    assert _search(rows, single=40.0).mix[0].row["id"] == "a"


# ----- KV by tokens in flight -------------------------------------------------------------------------------------
def test_stated_request_sizes_size_the_kv_by_tokens_in_flight():
    t = Targets.from_slots({"concurrency": 50, "seq_len": 32768, "request_tokens": 2048}, 32768)
    assert (t.input_len, t.kv_tokens, t.window) == (2048, 2304, 32768)
    assert t.kv_context(50) == 2304                 # 50 x 2,304 tokens, not 50 x 32,768
    assert t.kv_context(4) == 8192                  # the pool still holds one whole-window request


def test_no_stated_size_keeps_a_whole_window_per_sequence():
    t = Targets.from_slots({"concurrency": 50, "seq_len": 32768}, 32768)
    assert t.kv_tokens is None and t.kv_context(50) is None


def test_a_whole_window_document_is_sized_as_one():
    t = Targets.from_slots({"concurrency": 20, "request_tokens": 32768}, 33024)
    assert t.kv_tokens is None and t.input_len == 32768     # 20 x 33k: nothing to save, nothing understated


def test_a_mix_splits_the_load_by_share():
    t = Targets.from_slots({"qps": 40, "request_mix": [{"share": 0.8, "tokens": 500},
                                                       {"share": 0.2, "tokens": 30720}]}, 30976)
    assert t.buckets == ((0.8, 500), (0.2, 30720))
    chats, docs = (t.for_bucket(s, p) for s, p in t.buckets)
    assert chats.qps == pytest.approx(32) and docs.qps == pytest.approx(8)
    assert (chats.input_len, chats.window, docs.window) == (500, 756, 30976)


# ----- the parser and the answer ----------------------------------------------------------------------------------
@pytest.mark.parametrize("q, mix", [
    ("serve llama 3 70b: 80% of requests are short chats (~500 tokens), 20% are 30k-token documents, 40 QPS peak",
     [{"share": 0.8, "tokens": 500}, {"share": 0.2, "tokens": 30720}]),
    ("部署 llama 3.1 70b 推理，80% 是短对话，20% 是 3 万 token 长文档，峰值 40 QPS",
     [{"share": 0.8, "tokens": None}, {"share": 0.2, "tokens": 30000}]),
])
def test_a_mix_of_request_sizes_is_parsed_in_both_languages(core, q, mix):
    slots = core.parser.parse(q).slots.filled()
    assert slots["request_mix"] == mix and slots["qps"] == 40 and "seq_len" not in slots


@pytest.mark.parametrize("q, tokens", [
    ("serve qwen2.5 32b with 32k context for 50 chat users, conversations are ~1-2k tokens", 2048),
    ("32k 上下文的 qwen2.5 32b 给 50 个用户聊天，每次对话大概 2k token", 2048),
    ("serve llama 3.1 8b for 20 users with 32k-token documents", 32768),
])
def test_a_stated_request_size_is_parsed(core, q, tokens):
    slots = core.parser.parse(q).slots.filled()
    assert slots["request_tokens"] == tokens


@pytest.mark.parametrize("q, lead", [
    ("serve qwen2.5 32b on aws: 80% chats (~500 tokens), 20% 32k-token documents, 200 users", "mixed GPU types"),
    ("在 aws 上部署 qwen2.5 32b，80% 是短对话，20% 是 3 万 token 长文档，150 个并发用户", "混合 GPU 型号"),
])
def test_a_chosen_mix_leads_the_answer_with_the_single_type_beside_it(core, monkeypatch, q, lead):
    """This load's mix saves about 1 % (the documents dominate): with no simplicity margin it becomes the pick,
    its parts on two GPU types, and the single-type plan follows as `single_type` at the higher price."""
    monkeypatch.setattr(fleet, "MIX_MARGIN", 0.0)
    reply, _ = core.turn(q, {})
    pick, single = reply.recommendations[:2]
    assert pick["label"] == "pick" and pick["mixed"] and single["label"] == "single_type"
    assert len({p["gpu"] for p in pick["fleet"]}) == 2
    assert pick["hourly_total"] == pytest.approx(sum(p["price_per_hour"] for p in pick["fleet"]), rel=1e-3)
    assert pick["hourly_total"] < single["hourly_total"]
    assert pick["fleet_alternative"]["kind"] == "single"
    first = reply.text.split("\n")[0]
    assert lead in first


@pytest.mark.parametrize("q, lang", [
    ("serve qwen2.5 32b on aws: 80% chats (~500 tokens), 20% 32k-token documents, 200 users", "en"),
    ("在 aws 上部署 qwen2.5 32b，80% 是短对话，20% 是 3 万 token 长文档，150 个并发用户", "zh"),
])
def test_a_chosen_mix_states_the_memory_and_checks_of_each_pool(core, monkeypatch, q, lang):
    """The mix (with no simplicity margin, as above) is the answer, so its 'why' and checklist are about its pools:
    each pool's memory per GPU against its own card with its terms, and the OOM item per pool (the short-chat pool
    and the document pool hold different KV caches on different cards), never the single-type plan's one figure
    on a card the mix does not use. The pools' speeds are on their fleet lines: no single-GPU speed line."""
    monkeypatch.setattr(fleet, "MIX_MARGIN", 0.0)
    reply, _ = core.turn(q, {})
    r = reply.model_dump()
    pick, single = r["recommendations"][:2]
    assert pick["mixed"] and single["label"] == "single_type"
    t = default_templates()
    for part in pick["fleet"]:
        assert part["memory_terms"] and part["per_gpu_gib"] <= part["gpu_memory_gib"] * 0.95
        assert t.say("fleet.pool_memory", lang, prompt=f"{part['prompt_tokens']:,}", gpu=part["gpu_name"],
                     need=f"{part['per_gpu_gib']:.1f}", have=f"{part['gpu_memory_gib']:g}",
                     headroom=f"{part['headroom_pct']:.0f}", terms="")[:30] in r["text"] + r["details"]
    oom = next(c for c in r["checklist"] if c["item"] == "oom")
    for part in pick["fleet"]:
        assert t.say("fleet.pool_check", lang, prompt=f"{part['prompt_tokens']:,}", gpu=part["gpu_name"], text="") \
            in oom["text"]
        assert f"{part['per_gpu_gib']:.1f}" in oom["text"] and f"{part['gpu_memory_gib']:g}" in oom["text"]
    assert r["memory"]["per_gpu_gib"] == pytest.approx(pick["per_gpu_gib"])
    speed = max(t.say("throughput.line", lang, gpu="@", tps="@", n="@").split("@"), key=len)
    assert speed not in r["text"] + r["details"]
