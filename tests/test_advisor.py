"""The decision: scenario answers in both languages, invariants of every answer, determinism."""
from __future__ import annotations

import json

import pytest

# (question, expected intent, expectations on the answer) -- one row per scenario of the seed article and the
# checklist, in the language users ask them.
SCENARIOS = [
    # small fine-tune on a budget: one GPU, cheapest fitting, spot warning
    # (the pick fits the estimate; whether published LoRA runs' 90th percentile still fits decides ok or warn)
    ("用 LoRA 微调 Qwen2.5-7B，预算有限，选什么实例？", "finetune",
     dict(lang="zh", cheapest=True, checklist={"oom": ("ok", "warn"), "billing": "warn"})),
    ("lora finetune qwen2.5 7b, tight budget", "finetune",
     dict(lang="en", cheapest=True, checklist={"oom": ("ok", "warn"), "billing": "warn"})),
    # the same job with a smaller micro-batch fits one 24 GiB card, with a warning: published LoRA runs measured up to
    # the spread in knowledge/estimate_spread.yaml above the estimate, more than the 22 % of room left
    ("lora finetune qwen2.5 7b, batch size 1, tight budget", "finetune",
     dict(lang="en", cheapest=True, gpus_total=1, checklist={"oom": "warn", "topology": "ok", "billing": "warn"})),
    # 2 nodes x 8 GPUs: two 8-GPU instances. Huawei ECS documents no RDMA, which is evidence, not a gate: the plan
    # stays on the cloud asked about and the topology check says to confirm RDMA (ok where it is documented)
    ("两机十六卡训练 30B 模型", "train", dict(lang="zh", instances=2, checklist={"topology": ("ok", "warn")})),
    # a 70B service: tensor parallel inside one instance, never across instances without RDMA
    ("serve llama 3 70b for 50 concurrent users", "inference", dict(lang="en", instances=1, min_gpus=2)),
    # full fine-tune of a 6B model: memory-heavy, one node
    ("全量微调 ChatGLM3-6B 需要多大显存", "finetune", dict(lang="zh", method="full")),
    # rendering: a graphics GPU
    ("3D rendering plus some training for autonomous driving simulation", "rendering",
     dict(lang="en", positioning="graphics")),
    # long-running service: yearly/monthly billing
    ("部署 Qwen2.5-14B 做长期在线服务，7x24", "inference", dict(lang="zh", checklist={"billing": "ok"})),
]


def ask(core, text, state=None):
    reply, state = core.turn(text, state)
    return reply.model_dump(), state


@pytest.mark.parametrize("question, intent, expect", SCENARIOS, ids=[s[0][:30] for s in SCENARIOS])
def test_scenarios(core, kb, question, intent, expect):
    r, _ = ask(core, question)
    assert r["status"] == "answer", r["text"]
    assert r["intent"] == intent and r["lang"] == expect["lang"]
    top = r["recommendations"][0]
    if expect.get("cheapest"):
        fitting = [c for c in r["recommendations"] + r["considered"] if not c["ruled_out"] and c["price_per_hour"]]
        assert top["price_per_hour"] == min(c["price_per_hour"] for c in fitting)
    if "gpus_total" in expect:
        assert top["gpus_total"] == expect["gpus_total"]
    if "instances" in expect:
        assert top["instances"] == expect["instances"]
    if "min_gpus" in expect:
        assert top["gpu_count"] >= expect["min_gpus"]
    if "rdma" in expect:
        assert top["rdma"] is True
    if "method" in expect:
        assert r["slots"]["method"] == expect["method"]
    if "positioning" in expect:
        assert expect["positioning"] in kb.gpus[top["gpu"]].positioning
    statuses = {c["item"]: c["status"] for c in r["checklist"]}
    for item, status in expect.get("checklist", {}).items():
        assert statuses[item] in (status if isinstance(status, tuple) else (status,)), r["text"]
    if expect["lang"] == "zh":
        assert "推荐" in r["text"] + r["details"] and "检查清单" in r["text"] + r["details"]


QUESTIONS = [s[0] for s in SCENARIOS] + [
    "fine-tune llama 3.1 8b with qlora on a single 24GB card", "pretrain a 7B model on 2T tokens within a month",
    "用 T4 跑 13B 推理会爆显存吗", "serve deepseek v3 on aws", "train yolov8m on my dataset, cheap",
    "inference whisper large v3 for 16 streams", "full fine-tune llama-3.1-70b on 4 nodes",
    "全量微调 qwen2.5 14b",            # fits one big card elsewhere; Huawei's multi-GPU flavors lack documented NVLink
    "部署 DeepSeek-R1 满血版，100 并发",  # fits no single instance in bf16: pipeline stages over RDMA
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_every_answer_keeps_its_invariants(core, kb, question):
    r, _ = ask(core, question)
    assert r["status"] == "answer"
    assert r["recommendations"], r["text"]
    assert "()" not in r["text"] + r["details"] and "（）" not in r["text"] + r["details"], r["text"]      # every ruling names its reason
    for rec in r["recommendations"]:
        # every recommendation fits its own estimate, with the planning headroom
        assert rec["fits"] and rec["per_gpu_gib"] <= rec["gpu_memory_gib"] * 0.95 + 1e-6
        # a price never appears without its kind and its source's date, or saying that no dated source gives it
        if rec["price_per_hour"] is not None:
            assert rec["currency"] and rec["price_kind"] in ("list", "indicative", "local")
            assert rec["price_date"] or (rec["price_date_basis"].startswith("Undated")
                                         and ("undated" in r["text"] + r["details"] or "无日期" in r["text"] + r["details"])), rec["id"]
    cited = {c["id"] for c in r["citations"]}
    items = {c["item"] for c in r["checklist"]}
    # memory, topology and billing on every answer; data loading exactly where the job trains on images
    assert items - {"data"} == {"oom", "topology", "billing"}
    assert ("data" in items) == ("yolo" in question), items
    for item in r["checklist"]:
        assert item["citations"], item
        assert all(c in kb.sources for c in item["citations"])
        assert set(item["citations"]) <= cited
    assert all(t["rule"] and isinstance(t["fired"], bool) and t["because"] for t in r["rule_trace"])
    assert r["memory"]["per_gpu_gib"] > 0 and set(r["memory"]["breakdown"]) == {
        "weights", "gradients", "optimizer", "activations", "kv_cache", "overhead"}


def test_byte_for_byte_determinism(core):
    for q in QUESTIONS[:6]:
        a, _ = ask(core, q)
        b, _ = ask(core, q)
        assert json.dumps(a, sort_keys=True, ensure_ascii=False) == json.dumps(b, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize("question, warned", [
    ("LoRA fine-tune llama 3 70b on AWS", True),        # the base is sharded over several GPUs: wrap adapters apart
    ("用 LoRA 微调 Llama 3 70B", True),                    # the same in Chinese
    ("LoRA fine-tune llama 3 8b on 2 GPUs", False),     # data parallel: every GPU holds the whole base, no FSDP units
    ("lora finetune qwen2.5 7b, batch size 1", False),  # one GPU
    ("用 LoRA 微调 Qwen2.5-7B，预算有限，选什么实例？", False),  # batch 4 as 2 x 2 micro-batches fits one 24 GiB card
])
def test_sharded_lora_warns_about_fsdp_units(core, question, warned):
    r, _ = ask(core, question)
    fired = any(t["rule"] == "sharded-lora-own-fsdp-units" and t["fired"] for t in r["rule_trace"])
    assert fired == warned
    assert ("no_sync" in r["text"] + r["details"]) == warned
    if warned:
        assert "pytorch-fsdp-docs" in [c["id"] for c in r["citations"]]


@pytest.mark.parametrize("question, status", [
    ("lora finetune qwen2.5 7b, batch size 1", "warn"),         # fits, but not at the LoRA runs' 90th percentile
    ("用 QLoRA 微调 Llama 3.1 8B，单卡 24G", "ok"),               # 39 % room: more than QLoRA's measured spread
])
def test_oom_check_weighs_the_measured_spread(core, kb, question, status):
    r, _ = ask(core, question)
    oom = next(c for c in r["checklist"] if c["item"] == "oom")
    assert oom["status"] == status
    assert "estimator-benchmark" in oom["citations"]        # the spread's source is cited either way
    if status == "warn":
        spread = kb.estimate_spread[r["slots"].get("method") or "lora"]
        assert f"{(spread.p90_ratio - 1) * 100:.0f}%" in r["text"] + r["details"]


def test_named_gpu_is_judged_before_recommending(core):
    r, _ = ask(core, "用 T4 跑 13B 推理会爆显存吗")
    first = r["text"].splitlines()[0]
    assert "T4" in first and "会爆显存" in first and "int8" in first     # 26 GB of bf16 > 16 GiB; int8/int4 fit


def test_training_time_and_deadline(core):
    r, _ = ask(core, "pretrain a 7B model on 2T tokens within a month")
    assert r["compute"] and r["compute"]["gpu_hours"] > 10_000
    # 6 x 7e9 x 2e12 = 8.4e22 model FLOPs plus the attention term (recomputation is time, not model FLOPs)
    c = r["compute"]
    assert 8.4e22 < c["flops"] < 1.0e23 and "tokens/s per GPU" in c["basis"]
    # the speed model's fields, and hours that agree with GPU-hours on the pick's GPUs
    assert c["tokens_per_s_per_gpu"] > 0 and 0 < c["mfu"] < 1
    assert abs(c["hours"] * c["gpus"] - c["gpu_hours"]) <= 0.01 * c["gpu_hours"] + 1


def test_other_provider_when_asked(core):
    r, _ = ask(core, "serve llama 3.1 8b on aws, cheapest")
    assert r["recommendations"][0]["provider"] == "aws"
    assert r["recommendations"][0]["price_kind"] == "list"


def test_follow_up_then_answer(core):
    r, state = ask(core, "I want to fine-tune a model")
    assert r["status"] == "follow_up" and r["missing"][0] == "model"
    r, state = ask(core, "qwen2.5 7b", state)
    assert r["status"] == "follow_up" and r["missing"] == ["method"] and "LoRA" in r["choices"]
    r, state = ask(core, "LoRA", state)
    assert r["status"] == "answer" and r["slots"]["model"] == "qwen2.5-7b" and r["slots"]["method"] == "lora"


@pytest.mark.parametrize("question, topic_title", [
    ("how does ZeRO-3 work?", "ZeRO and FSDP"),              # explain: a sourced topic, not the help text
    ("什么是 NVLink？", "NVLink 与 PCIe"),                     # in the question's language
    ("what is a KV cache", "KV cache"),
    ("竞价实例会被回收吗", "竞价实例"),                          # billing: the topic, then the provider's modes
])
def test_explain_and_billing_answer_the_topic_with_sources(core, question, topic_title):
    r, _ = ask(core, question)
    assert r["status"] == "info" and topic_title in r["text"] + r["details"], r["text"]
    assert r["citations"] and all(c["id"] in core.kb.sources for c in r["citations"])


@pytest.mark.parametrize("question, mem, fits", [
    ("can I finetune llama 3 8b on a 24gb gpu with qlora", 24, True),        # QLoRA 8B fits a 24 GiB card
    ("显存只有 12G，能 lora 微调 qwen2.5-7b 吗", 12, False),                  # 16-bit 7B base alone is 14 GiB
    ("qlora llama 3.1 70b on a single 48GB card?", 48, False),               # 57 GiB at batch 4 x 1024
])
def test_a_card_of_stated_memory_is_judged(core, question, mem, fits):
    r, _ = ask(core, question)
    assert r["slots"]["gpu_memory_gib"] == mem
    first = r["text"].splitlines()[0]
    assert f"{mem} GiB" in first
    assert (("fits" in first or "放得下" in first) and "does not fit" not in first) == fits, first


def test_the_fallback_line_names_the_target_missed_not_the_untimed_plans(core):
    """Captioning 10B images in a day is thousands of GPUs: no Huawei Cloud plan meets the deadline, and its Ascend
    flavors, which have no speed on file, miss no target; the first line names the deadline alone."""
    r, _ = core.turn("caption 10 billion images in 1 day with qwen2.5-vl-7b", {})
    first = r.text.split("\n")[0]
    t = core.templates
    assert first == t.say("fallback.targets", "en", provider="Huawei Cloud", requirement=t.say("breaks.deadline", "en"))


def test_no_flavor_on_the_gpus_named_says_the_memory_not_only_the_shape(core):
    """'两机十六卡全参微调 qwen2.5-72b': 72.7B x 16 B of AdamW states / 16 GPUs = 73 GB a GPU before its temporaries and
    activations: Huawei Cloud's 8-GPU NVIDIA flavors (80-94 GB cards) do not hold it on 16 GPUs. Issue 35: its Snt9B23
    node (8 Ascend 910C of 128 GB) does, on two nodes, but has no public price: the first line names it and says to
    ask Huawei for a quote before the priced plans elsewhere (was: 'no flavor holds it on your 16 cards')."""
    r, _ = core.turn("两机十六卡全参微调 qwen2.5-72b，需要 RDMA 吗，选什么实例", {})
    first = r.text.split("\n")[0]
    assert "modelarts-snt9b23-8x910c" in first and "没有公开价格" in first
