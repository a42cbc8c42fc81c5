"""The parser, table-driven, over a tiny knowledge base built here (the vocabulary is the real rules/lexicon.yaml).

Each row: the text, then what the parse must hold. `slots` lists the slots that must be there with these values
(others may be there too, except those named in `absent`); `ambiguous` lists the model candidates.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import yaml

from bot.knowledge.loader import load_knowledge
from bot.conversation.nlu import Parser, load_lexicon

ROOT = Path(__file__).resolve().parent.parent

SOURCE = {"id": "s1", "title": "A source", "publisher": "Someone", "kind": "vendor-doc", "read": "2026-12-02"}


def _model(mid, name, family, params_b, *aliases, kind="llm"):
    return {"id": mid, "name": name, "family": family, "kind": kind, "params_b": params_b,
            "aliases": list(aliases), "sources": ["s1"]}


def _gpu(gid, name, memory, *aliases):
    return {"id": gid, "name": name, "vendor": "huawei" if "ascend" in gid else "nvidia", "architecture": "x",
            "memory_gib": memory, "positioning": ["training"], "aliases": list(aliases), "sources": ["s1"]}


TINY = {
    "sources": [SOURCE],
    "models": [
        _model("llama-3-8b", "Llama 3 8B", "Llama 3", 8.03, "llama3 8b", "llama 3 8b"),
        _model("llama-3.1-8b", "Llama 3.1 8B", "Llama 3.1", 8.03, "llama3.1 8b", "llama 3.1 8b"),
        _model("llama-3-70b", "Llama 3 70B", "Llama 3", 70.554, "llama3 70b", "llama 3 70b"),
        _model("llama-3.3-70b", "Llama 3.3 70B", "Llama 3.3", 70.554, "llama3.3 70b", "llama 3.3 70b"),
        _model("qwen2-7b", "Qwen2-7B", "Qwen2", 7.616, "qwen2 7b"),
        _model("qwen2.5-7b", "Qwen2.5-7B", "Qwen2.5", 7.616, "Qwen2.5-7B-Instruct", "qwen2.5 7b"),
        _model("qwen2.5-72b", "Qwen2.5-72B", "Qwen2.5", 72.706, "Qwen2.5-72B-Instruct", "qwen2.5 72b"),
        _model("mistral-7b", "Mistral 7B", "Mistral", 7.248, "mistral 7b", "Mistral-7B-Instruct-v0.3"),
        _model("deepseek-r1-distill-qwen-7b", "DeepSeek-R1-Distill-Qwen-7B", "DeepSeek-R1-Distill", 7.616,
               "deepseek r1 distill qwen 7b", "r1 distill qwen 7b"),
        _model("deepseek-r1", "DeepSeek-R1", "DeepSeek-R1", 671.0, "deepseek r1", "r1满血版"),
        _model("yolov8s", "YOLOv8s", "YOLOv8", 0.01117, kind="detector"),
    ],
    "gpus": [
        _gpu("t4", "NVIDIA T4", 16, "T4"),
        _gpu("l4", "NVIDIA L4", 24, "L4"),
        _gpu("a10g", "NVIDIA A10G", 24, "A10G"),
        _gpu("a100-40gb", "NVIDIA A100 40GB", 40, "A100 40GB", "A100 40G"),
        _gpu("a100-80gb", "NVIDIA A100 80GB", 80, "A100 80GB", "A100 80G"),
        _gpu("h100-sxm", "NVIDIA H100 SXM", 80, "H100 SXM"),
        _gpu("h100-pcie", "NVIDIA H100 PCIe", 80, "H100 PCIe"),
        _gpu("rtx-4090", "NVIDIA GeForce RTX 4090", 24, "RTX 4090", "4090"),
        _gpu("ascend-910b", "Huawei Ascend 910B", 64, "Ascend 910B", "昇腾910B", "910B"),
    ],
    "providers": [
        {"id": "huaweicloud", "name": "Huawei Cloud", "name_zh": "华为云", "aliases": ["huawei", "华为云"],
         "sources": ["s1"]},
        {"id": "aws", "name": "AWS", "aliases": ["amazon web services"], "sources": ["s1"]},
    ],
    "flavors": [{"id": "aws/g6.xlarge", "provider": "aws", "flavor": "g6.xlarge", "family": "g6", "gpu": "l4",
                 "gpu_count": 1, "gpu_memory_gib": 24, "evidence": "vendor", "sources": ["s1"]}],
}


@pytest.fixture(scope="module")
def parser(tmp_path_factory) -> Parser:
    folder = tmp_path_factory.mktemp("tiny_kb")
    (folder / "kb.yaml").write_text(yaml.safe_dump(TINY, allow_unicode=True), encoding="utf-8")
    return Parser(load_knowledge(folder), load_lexicon(ROOT / "rules"))


def check(parser: Parser, text: str, intent=..., slots=None, absent=(), ambiguous=None, **flags):
    p = parser.parse(text)
    got = p.slots.filled()
    if intent is not ...:
        assert p.intent == intent, (text, p.intent, p.intent_scores)
    for key, value in (slots or {}).items():
        assert key in got, (text, key, got)
        if isinstance(value, float):
            assert got[key] == pytest.approx(value, rel=0.01), (text, key, got)
        else:
            assert got[key] == value, (text, key, got)
    for key in absent:
        assert key not in got, (text, key, got)
    if ambiguous is not None:
        assert p.ambiguous.get("model") == ambiguous, (text, p.ambiguous)
        assert "model" not in got
    for flag, value in flags.items():
        assert getattr(p, flag) == value, (text, flag, getattr(p, flag))
    return p


# ----- numbers in every form users type --------------------------------------------------------------------------
@pytest.mark.parametrize("text, slots", [
    ("fine-tune a 7B model with lora", {"params_b": 7.0}),                 # 7B
    ("finetune a 7b model, lora", {"params_b": 7.0}),                       # 7b, lower case
    ("pretrain a 7 billion parameter model", {"params_b": 7.0}),            # 7 billion
    ("训练一个70亿参数的模型", {"params_b": 7.0}),                            # 70亿
    ("预训练千亿参数模型需要什么样的集群", {"params_b": 100.0}),               # 千亿: 1e11 parameters
    ("从头训练七十亿参数的模型", {"params_b": 7.0}),                          # 七十亿: numerals all the way
    ("train a 1.5B model from scratch", {"params_b": 1.5}),                 # a decimal size
    ("trainning a small transformer (124M params) from scratch", {"params_b": 0.124}),  # 124M
    ("从头预训练，模型规模大概 65亿", {"params_b": 6.5}),                     # 65亿
    ("pretrain a 3B model on 500B tokens", {"params_b": 3.0, "tokens": 5e11}),   # sizes and tokens apart
    ("从零预训练一个1.5B的模型，1000亿token", {"params_b": 1.5, "tokens": 1e11}),  # 1000亿 token
    ("我们要从头训13B模型，2T tokens", {"params_b": 13.0, "tokens": 2e12}),    # 2T tokens
    ("lora finetune qwen2.5-7b with 4k context", {"seq_len": 4096}),       # 4k = 4096 tokens
    ("serve qwen2.5-7b with 128k context", {"seq_len": 131072}),           # 128k
    ("Qwen2.5-7B lora，序列长度8k，batch 2", {"seq_len": 8192, "batch_size": 2}),   # 序列长度 and batch
    ("QLoRA fine-tune mistral 7b, batch 4, 4096 tokens", {"seq_len": 4096, "batch_size": 4}),  # too few to be a dataset
    ("lora qwen2.5-7b on 8k tokens per sample", {"seq_len": 8192}),        # 8k tokens: one sample's length
    ("pretrain a 1B model on 50M tokens, 2048 tokens context", {"tokens": 5e7, "seq_len": 2048}),  # both kinds
    ("微调 qwen2.5-7b，两张4090", {"gpus": 2, "gpu_model": "rtx-4090"}),      # 两张 + a GPU name
    ("十六卡训练 30B 模型", {"gpus": 16, "params_b": 30.0}),                  # 十六卡
    ("8卡训练 qwen2.5-7b", {"gpus": 8}),                                     # 8卡
    ("两机十六卡训练 30B 模型", {"nodes": 2, "gpus": 16}),                    # 两机十六卡: 16 in total
    ("两台机器每台8卡，训练 7B 模型", {"nodes": 2, "gpus": 16}),               # 每台: per machine
    ("multi-node training for a 13B model, 4 nodes x 8 GPUs", {"nodes": 4, "gpus": 32}),   # x: per node
    ("full finetune qwen2.5-72b across 2 nodes (8x H100 each)", {"nodes": 2, "gpus": 16}),  # each
    ("what instance for training a 30B model with 16 GPUs across 2 nodes", {"nodes": 2, "gpus": 16}),  # total
    ("full finetune qwen2.5-7b on 8x A100 80GB", {"gpus": 8, "gpu_model": "a100-80gb"}),    # 8x + variant
    ("qlora on llama 3.1 8b on a single H100", {"gpus": 1}),                 # single
    ("lora 微调 qwen2.5-7b，单卡", {"gpus": 1}),                              # 单卡
    ("部署 qwen2.5-7b，50个人同时用", {"concurrency": 50}),                   # 50个人同时用
    ("serve llama 3 70b for 50 concurrent users", {"concurrency": 50}),     # concurrent users
    ("serve llama 3 70b to about 2k users", {"concurrency": 2000}),         # 2k users
    ("qwen2.5-7b 推理，并发 20 左右", {"concurrency": 20}),                   # 并发 N
    ("deploy mistral 7b behind an API, ~20 QPS", {"qps": 20.0}),             # QPS
    ("qwen2.5-7b 文生图服务，每秒5个请求", {"qps": 5.0}),                      # 每秒 N 个请求
    ("need to pretrain a 1.3B model on 300B tokens within 3 weeks", {"deadline_days": 21.0}),  # within N weeks
    ("lora微调mistral 7b，一周内要出结果", {"deadline_days": 7.0}),            # 一周内
    ("finetune llama 3.1 8b asap, 3 days max", {"deadline_days": 3.0}),      # N days max
    ("whisper batch transcription, finish within a month, qwen2.5-7b", {"deadline_days": 30.0}),  # a month
])
def test_numbers(parser, text, slots):
    check(parser, text, slots=slots)


# ----- budget: level words and amounts with currency and period -------------------------------------------------
@pytest.mark.parametrize("text, slots, absent", [
    ("I have ~$2/hr to spend, want to LoRA llama-3-8b",
     {"budget_amount": 2.0, "budget_currency": "USD", "budget_period": "hour"}, ()),          # $/hr
    ("我们要对 qwen2.5-72b 做 LoRA，预算每月5万块以内",
     {"budget_amount": 50000.0, "budget_currency": "CNY", "budget_period": "month"}, ()),     # 每月 N万块
    ("我们想部署 mistral 7b，月预算8000元",
     {"budget_amount": 8000.0, "budget_currency": "CNY", "budget_period": "month"}, ()),      # 月预算 N元
    ("continued pretraining of llama-3.1-8b, budget $20k",
     {"budget_amount": 20000.0, "budget_currency": "USD", "budget_period": "total"}, ("budget",)),  # $20k, no level
    ("deploy mistral 7b, budget $3000/month",
     {"budget_amount": 3000.0, "budget_period": "month"}, ("budget",)),                     # the word budget alone
    ("预算 5k 美元一个月 部署 qwen2.5-7b",
     {"budget_amount": 5000.0, "budget_currency": "USD", "budget_period": "month"}, ()),    # 一个月 after
    ("lora finetune qwen2.5 7b, tight budget", {"budget": "low"}, ("budget_amount",)),       # tight budget
    ("inference 这块我们想 deploy qwen2.5-7b，budget 比较 tight", {"budget": "low"}, ()),      # mixed script
    ("想把 Qwen2.5-7B 调成写作助手，全参，预算不差钱", {"budget": "high"}, ()),               # 不差钱
    ("fine tune mistral 7b, lora, moderate budget", {"budget": "medium"}, ()),               # moderate
    ("上线一个 qwen2.5-7b 的服务，预算一般", {"budget": "medium"}, ("budget_amount",)),       # 一般 is not 1
    ("resnet 图片分类接口 qwen2.5-7b，每天百万级请求", {}, ("budget_amount", "qps")),          # requests, not money
])
def test_budget(parser, text, slots, absent):
    check(parser, text, slots=slots, absent=absent)


# ----- full width, case, punctuation, mixed scripts --------------------------------------------------------------
@pytest.mark.parametrize("text, intent, slots", [
    ("ＬｏＲＡ微调Ｑｗｅｎ２．５－７Ｂ，两天跑完，最便宜的方案？", "finetune",             # full-width letters/digits
     {"model": "qwen2.5-7b", "method": "lora", "duration": "short", "budget": "low"}),
    ("trainning 一个 ７Ｂ 模型 需要 几张 卡？", "train", {"params_b": 7.0}),              # full-width ７Ｂ
    ("部署llama3 70b推理 ｆｐ８ 需要几张Ｈ１００", "inference",                           # full-width fp8 / H100
     {"model": "llama-3-70b", "precision": "fp8", "gpu_model": "h100"}),
    ("Fine-tuning ＬＬａＭＡ－３－８Ｂ with LoRA, which cloud GPU?", "finetune", {"model": "llama-3-8b"}),
    ("渲染+训练一起跑的話，GPU 選 T4 好嗎？", "rendering", {"gpu_model": "t4"}),          # traditional characters
    ("有人 lora finetune 过 qwen2.5-72b 吗？what GPU did you guys use", "finetune", {"model": "qwen2.5-72b"}),
])
def test_width_case_scripts(parser, text, intent, slots):
    check(parser, text, intent, slots)


# ----- typos -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, intent, slots", [
    ("wanna finetuen lamma 3.1 8b, what gpu", "finetune", {"model": "llama-3.1-8b"}),  # finetuen, lamma
    ("cheap gpu for qlroa on llama 3.1 8b", "finetune", {"method": "qlora"}),          # qlroa (transposition)
    ("lroa", "finetune", {"method": "lora"}),                                           # a 4-letter typo
    ("infernece 部署 qwen2.5-72b 用 int8", "inference", {"precision": "int8"}),          # infernece
    ("Depolying mistral 7b behind an API", "inference", {"model": "mistral-7b"}),      # Depolying
    ("What instance for LoRA fine-tuning Mistrel 7B?", "finetune", {"model": "mistral-7b"}),  # Mistrel
    ("lora on deepsek r1 distill qwen 7b", "finetune", {"model": "deepseek-r1-distill-qwen-7b"}),  # deepsek
    ("deepseek-r1-distil-qwen-7b inference", "inference", {"model": "deepseek-r1-distill-qwen-7b"}),  # fuzzy name
    ("chatglm3-6b 布署到贵阳一，用 T4 可以吗", "inference", {"region": "cn-southwest-2"}),   # 布署 (部署)
    ("推里 qwen2.5-7b int8，北京一有没有合适的 T4", "inference", {"region": "cn-north-1"}),   # 推里 (推理)
    ("serving llama 3 8b in bf16, will a singel H100 do?", "inference", {"gpus": 1}),  # singel
])
def test_typos(parser, text, intent, slots):
    check(parser, text, intent, slots)


def test_typo_corrections_are_recorded_and_ties_are_left_alone(parser):
    p = parser.parse("finetuen qwen2.5-7b")
    assert ("typo", "finetune", "finetuen") in [(m.slot, m.value, m.text) for m in p.matches]
    # ordinary words are never 'corrected' into domain words
    for word in ("server", "reset", "retrain", "gamma"):
        assert parser._correct(word) == word


# ----- ambiguity: a weak or ambiguous match becomes candidates, never a guess -------------------------------------
@pytest.mark.parametrize("text, candidates", [
    ("llama 70b lora 微调要几张卡", ["llama-3-70b", "llama-3.3-70b"]),           # a family and a size
    ("finetune llama 8b lora which gpu", ["llama-3-8b", "llama-3.1-8b"]),
    ("微调qwen7b，qlora", ["qwen2-7b", "qwen2.5-7b"]),                           # glued, in Chinese text
    ("inference for qwen 7b chat, what card", ["qwen2-7b", "qwen2.5-7b"]),      # 'chat' suffix
    ("微调 deepseek 7b 用什么显卡", ["deepseek-r1-distill-qwen-7b"]),             # one candidate: still confirmed
    ("finetune qwen2.5", ["qwen2.5-7b", "qwen2.5-72b"]),                        # a generation without a size
])
def test_ambiguous_models(parser, text, candidates):
    p = check(parser, text, ambiguous=candidates)
    model_match = [m for m in p.matches if m.slot == "model"][-1]
    assert model_match.value is None and [c for c, _ in model_match.runners_up] == candidates
    assert set(p.candidate_params) == set(candidates)
    assert "params_b" not in p.slots.filled()     # the size belongs to the (unknown) model


@pytest.mark.parametrize("text, model, params_b", [
    ("qwen2.5-vl-7b 微调要什么卡", None, 7.0),          # another model: not a Qwen2.5 guess; its size is kept
    ("fine-tune llama 3.3 11b vision", None, 11.0),      # a size the generation does not have
    ("serve qwen 2.5 72b instruct awq", "qwen2.5-72b", None),   # spaces inside the name, instruct suffix
])
def test_names_that_are_not_the_near_model(parser, text, model, params_b):
    got = parser.parse(text).slots.filled()
    assert got.get("model") == model and "model" not in parser.parse(text).ambiguous
    if params_b:
        assert got["params_b"] == params_b


def test_exact_matches_keep_score_and_runners_up(parser):
    p = parser.parse("compare qwen2.5-7b and llama3.1 8b, actually make it the llama")
    m = [m for m in p.matches if m.slot == "model"][-1]
    assert m.value == "llama-3.1-8b" and m.score == 100.0 and ("qwen2.5-7b", 100.0) in m.runners_up


@pytest.mark.parametrize("reply, candidates, pick", [
    ("qwen2.5 的那个", ["qwen2-7b", "qwen2.5-7b"], "qwen2.5-7b"),          # a generation
    ("llama 3.3", ["llama-3-70b", "llama-3.3-70b"], "llama-3.3-70b"),     # a generation with a space
    ("the second one", ["llama-3-8b", "llama-3.1-8b"], "llama-3.1-8b"),   # a position
    ("最新的", ["qwen2-7b", "qwen2.5-7b"], "qwen2.5-7b"),                   # the newest
    ("2 nodes", ["qwen2-7b", "qwen2.5-7b"], None),                        # a count is not a version
    ("mistral 7b", ["qwen2-7b", "qwen2.5-7b"], None),                     # not among the candidates
])
def test_reply_to_which_one(parser, reply, candidates, pick):
    assert parser.pick_candidate(parser.parse(reply), candidates) == pick


# ----- intents -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, intent", [
    ("用 LoRA 微调 Qwen2.5-7B，预算有限，选什么实例？", "finetune"),
    ("用lora训练 qwen2.5-7b 需要多少显存", "finetune"),              # LoRA training is fine-tuning
    ("freeze the backbone and only train the head on yolov8s", "finetune"),
    ("从零预训练一个模型，要什么样的集群", "train"),
    ("continued pretraining of llama-3.1-8b on 100B tokens", "train"),
    ("serve llama 3 70b for 50 concurrent users", "inference"),
    ("I want to serve a fine-tuned llama 3 8b model", "inference"),   # fine-tuned describes the model
    ("autonomous driving sim plus training perception models, what instance?", "rendering"),
    ("T4 还是 L4 跑推理好", "compare"),                              # two GPUs and a choice
    ("A100 40GB vs 80GB for fine-tuning, does it actually matter?", "compare"),  # a bare variant after vs
    ("H100 PCIe 跟 SXM 版区别大吗", "compare"),
    ("bf16 和 fp16 有啥区别", "explain"),                             # concepts, not hardware
    ("qwen2.5-7b lora 在 4090 上 OOM 了，为什么", "explain"),          # why, no hardware asked for
    ("why does my training OOM even though the model is only 14GB?", "explain"),
    ("what does RDMA actually do in multi-node training", "explain"),
    ("how does spot pricing work?", "billing"),                        # how billing works is billing
    ("spot 实例适合跑线上推理服务吗", "billing"),
    ("Spot or on-demand for a 3 day training run of a 7B model?", "billing"),
    ("vit 从头训 qwen2.5-7b，想用竞价实例省钱", "train"),               # a preference inside a job question
    ("how much does a 4090 cost on aws?", "billing"),
    ("what can you do?", "help"),
    ("怎么用啊 在线等", "help"),
    ("help me fine-tune a model", "finetune"),                        # 'help me' is not the help intent
])
def test_intents(parser, text, intent):
    check(parser, text, intent)


@pytest.mark.parametrize("text, gpus", [
    # one card of the GPU named, said to be theirs: judged as theirs (one card)
    ("I have a 4090, can I lora qwen2.5 7b", 1),
    ("I have one 24GB 4090, can I full fine-tune qwen2.5 7b?", 1),
    ("my 4090 is enough for llama 3 8b lora?", 1),
    ("i own an rtx 4090, qlora 14b?", 1),
    # no count and no singular: left unsaid; to rent, or asked about: not theirs
    ("we have H100s, full finetune 8b", None),
    ("rent a 4090 for lora 7b", None),
    ("is a 4090 enough for lora 7b", None),
    ("we have 2 4090s", 2),
])
def test_one_card_of_their_own(parser, text, gpus):
    assert parser.parse(text).slots.gpus == gpus


@pytest.mark.parametrize("text, gpus, nodes", [
    # a count that is a machine's size, and how many machines is the question: neither is fixed
    ("预训炼 7B 模型，3T token，一个月能搞定吗，需要几台8卡机器", None, None),
    ("pretrain a 7B model on 3T tokens within a month, how many 8-GPU machines", None, None),
    ("how many 8 gpu nodes to pretrain 13b on 1T tokens in 30 days", None, None),
    # a machine's size without asking how many: the count stands
    ("用 8 卡机器训练 7B 模型", 8, None),
    ("两台 8 卡 H100 全参微调 llama-3.1-70b", 16, 2),
    ("2 nodes x 8 GPUs, full finetune 70b", 16, 2),
    ("train 70b on 4 gpu nodes", None, 4),
])
def test_a_machine_size_is_not_a_count_when_the_count_is_asked(parser, text, gpus, nodes):
    s = parser.parse(text).slots
    assert (s.gpus, s.nodes) == (gpus, nodes)


@pytest.mark.parametrize("text, intent, method", [
    # a model described by how it was made, then served: an inference job; the method named its history
    ("rtx-4090多卡推理（模型为qlora微调后qwen72b）是否支持？如何使用rxt-4090对其进行推理部署呢？", "inference", None),
    ("serve my lora fine-tuned llama 3 8b for 20 users", "inference", None),
    ("部署一个 LoRA 微调过的 qwen2.5 7b", "inference", None),
    ("微调好的模型怎么部署，qwen2.5 7b，50 并发", "inference", None),
    ("deploy a fine-tuned qwen2.5 7b", "inference", None),
    # the job asked about is fine-tuning: the participle does not take it away
    ("I fine-tuned llama 3 8b with lora, now I want to fine-tune it again on more data", "finetune", "lora"),
    ("lora fine-tune qwen2.5 7b", "finetune", "lora"),
    ("微调后的 qwen2.5 7b 还想再 LoRA 微调一轮", "finetune", "lora"),
])
def test_a_fine_tuned_model_being_served(parser, text, intent, method):
    p = parser.parse(text)
    assert p.intent == intent and p.slots.method == method, (p.intent, p.slots.method, p.intent_scores)


@pytest.mark.parametrize("text", [
    "今天北京天气怎么样",                 # 北京 is not a region request here
    "write me a poem about GPUs",        # mentions GPUs but asks for a poem
    "推荐个跑 wordpress 的云服务器，不需要 GPU，便宜就行",
    "玩黑神话悟空买 4070 还是 4080",
    "how do I center a div in css",
    "周末上海去哪玩比较好",
    "best gaming laptop under $1500?",
])
def test_out_of_scope(parser, text):
    p = check(parser, text, None, out_of_scope=True)
    assert p.slots.filled() == {}          # an out-of-scope message carries no job slots


# ----- method and precision --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, slots, absent", [
    ("显存不够，想用4bit量化+lora微调 qwen2.5-7b", {"method": "qlora", "precision": "int4"}, ()),  # LoRA on 4-bit
    ("QLoRA (4-bit NF4) on qwen2.5-72b", {"method": "qlora", "precision": "nf4"}, ()),           # nf4 over int4
    ("fine-tune qwen2.5-7b with lora on int8 base weights", {"method": "lora", "precision": "int8"}, ()),
    ("打算微调 qwen2.5-7b，全参还是lora还没想好", {}, ("method",)),     # two methods named: not chosen
    ("lora 还是 qlora，用 4090 微调 qwen2.5-7b", {}, ("method",)),
    ("ft qwen2.5-7b, full, 8 gpus", {"method": "full", "gpus": 8}, ()),   # a bare 'full' between commas
    ("serve llama 3.1 8b with the full 128k context", {"seq_len": 131072}, ("method",)),  # not a method
    ("baichuan 全参微调 fp16 混合精度", {"method": "full", "precision": "fp16"}, ()),
    ("serve qwen 2.5 72b, awq 4bit", {"precision": "int4"}, ("method",)),   # method only for training jobs
    ("what is fp8 and which GPUs support it", {}, ("precision",)),          # asked about, not chosen
])
def test_method_and_precision(parser, text, slots, absent):
    check(parser, text, slots=slots, absent=absent)


# ----- provider, region, duration, latency ---------------------------------------------------------------------------
@pytest.mark.parametrize("text, slots", [
    ("想在华为云北京四用昇腾910B微调 qwen2.5-7b", {"provider": "huaweicloud", "region": "cn-north-4",
                                                "gpu_model": "ascend-910b"}),
    ("Fine-tune qwen2.5-7b with LoRA on AWS us-east-1", {"provider": "aws", "region": "us-east-1"}),
    ("pre-train a 3B model on huawei cloud", {"provider": "huaweicloud"}),
    ("做虚拟数字人，要渲染+驱动模型训练，放在广州区域", {"region": "cn-south-1"}),
    ("bert 在线分类接口 qwen2.5-7b，7x24 运行", {"duration": "long"}),              # 7x24 is not 24 GPUs
    ("robotics sim in isaac sim with RL training, 24/7 for the next six months", {"duration": "long"}),
    ("lora finetune qwen2.5-7b on aws, want something on-demand for about a week", {"duration": "short"}),
    ("I have ~$2/hr to spend, want to LoRA llama-3-8b for 48 hours", {"duration": "short"}),
    ("qwen2.5-7b 做成 API 服务，并发100，延迟要低", {"latency": "low"}),
    ("serve llama 3.3 70b w/ int4 gptq, under 300ms first token", {"latency": "low"}),
    ("inference endpoint for a 30B model, latency not critical", {"latency": "normal"}),
])
def test_provider_region_duration_latency(parser, text, slots):
    check(parser, text, slots=slots, absent=("gpus",) if "7x24" in text else ())


@pytest.mark.parametrize("text", [
    "wisper 微调粤语识别 qwen2.5-7b，数据200小时",   # hours of audio data, not a run length
    "pay-as-you-go vs monthly subscription for a 3-month project?",  # three months: neither short nor long
    "gpt2-xl 复现实验，三天内要出结果",               # a deadline, and 实验室/实验 are not 'short'
])
def test_no_duration(parser, text):
    assert "duration" not in parser.parse(text).slots.filled()


# ----- deadlines (issue 16): the time the job has, in both languages; a rental period stays a duration ------------
THURSDAY = dt.date(2026, 12, 3)


@pytest.mark.parametrize("text, days", [
    ("pre-train a 70B model on 15T tokens, we have one year", 365),       # the time the team has
    ("pretrain a 1B model on 20B tokens in 24 hours", 1),                 # in N hours: a deadline, not a rental
    ("train 7b on 1T tokens within 48 hours", 2),
    ("pretrain a 3B model on 300B tokens, we've got two months", 60),
    ("pretrain 7b 1T tokens, timeline is 6 weeks", 42),
    ("pretrain 7b on 1T tokens, we need it done within 10 days", 10),
    ("预训练 70B 模型 15T tokens，一年内", 365),                              # 一年内
    ("预训练 1B 模型 20B tokens，24小时内", 1),                               # 24小时内
    ("pretrain 7b 1T tokens, 48小时内完成", 2),
    ("从头预训练一个 1B 参数的小模型，100B tokens，两周内要训完", 14),
    ("qwen2.5 7b 微调，有一年时间", 365),                                    # 有 N 时间
    ("工期三周，预训练 1B 模型 100B tokens", 21),
    # relative to today (a Thursday, 2026-12-03)
    ("pretrain 7b on 1T tokens by Friday", 1),
    ("pretrain 7b on 1T tokens, deadline is end of next week", 8),         # Friday of next week
    ("pretrain a 3B model on 300B tokens, has to finish by end of month", 28),
    ("lora qwen2.5-7b by EOW", 1),
    ("预训练 7B 模型 1T tokens 月底前", 28),                                   # 月底前
    ("预训练 7B，1T tokens，必须在下周末前完成", 8),
    ("预训练 7B 1T tokens，下周内", 8),                                       # within next week
    ("预训练 7B 1T tokens，下周之前", 3),                                     # before next week starts
    ("预训练 7B 1T tokens，下个月底前", 59),                                   # 2027-01-31
    ("预训练 7B 1T tokens，年底前", 28),
    # a clause that is only a time, once the job's size is known
    ("预训练一个 3B 的 MoE 模型，1T tokens，两个月", 60),
    ("pretrain 7b on 1T tokens, 2 months", 60),
])
def test_deadlines(parser, text, days):
    slots = parser.parse(text, today=THURSDAY).slots.filled()
    assert slots.get("deadline_days") == pytest.approx(days), (text, slots)
    assert "duration" not in slots, (text, slots)             # the deadline is not read twice


@pytest.mark.parametrize("text, duration", [
    ("I'll rent for 24 hours, finetune llama 3 8b", "short"),            # a rental period
    ("finetune llama 3 8b, 跑 3 天", "short"),
    ("LoRA微调Qwen2.5-7B，两天跑完，最便宜的方案？", "short"),
    ("serve llama 3 8b, 24 hours a day", "long"),                         # around the clock
    ("I have 3 months of chat logs, finetune llama 3 8b", None),         # data, not time
    ("数据是一年内的，微调 qwen2.5 7b", None),                                 # 一年内的: which data
    ("serve llama 3 8b with ttft under 200 ms", None),
    ("rent an H100, 2 weeks", "short"),                                   # no job size: a rental period
])
def test_durations_are_not_deadlines(parser, text, duration):
    slots = parser.parse(text, today=THURSDAY).slots.filled()
    assert "deadline_days" not in slots and slots.get("duration") == duration, (text, slots)


# ----- session words -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, reset, unsure", [
    ("reset", True, False),
    ("start over please", True, False),
    ("算了，重新开始", True, False),
    ("is it clear?", False, False),
    ("not sure yet tbh", False, True),
    ("还没想好，你看着办", False, True),
])
def test_reset_and_unsure(parser, text, reset, unsure):
    p = parser.parse(text)
    assert (p.reset, p.unsure) == (reset, unsure)


def test_language_of_the_reply(parser):
    assert parser.parse("微调用什么卡").lang == "zh"
    assert parser.parse("hi 你是谁").lang == "zh"               # any Chinese sentence
    assert parser.parse("hello 👋").lang == "en"
    p = parser.parse("qwen2.5-7b, lora")                        # names only: the session's language is kept
    assert p.lang == "en" and p.lang_sure is False
    assert parser.parse("lora please").lang_sure is True


def test_vocabulary_is_data(parser, tmp_path):
    """A word added to the lexicon is understood without touching code."""
    lexicon = load_lexicon(ROOT / "rules")
    lexicon["regions"]["cn-east-3"] = [*lexicon["regions"]["cn-east-3"], "魔都"]
    lexicon["intents"]["rendering"]["zh"]["离线渲染农场"] = 4
    fresh = Parser(parser.kb, lexicon)
    p = fresh.parse("魔都 离线渲染农场 用什么卡")
    assert p.slots.region == "cn-east-3" and p.intent == "rendering"
    assert parser.parse("魔都 用什么卡").slots.region is None


def test_parse_is_fast(parser):
    import time
    texts = ["用 LoRA 微调 Qwen2.5-7B，预算有限，选什么实例？", "serve llama 3 70b for 50 concurrent users",
             "两机十六卡全参微调 qwen2.5-72b，需要 RDMA 吗", "A100 40GB vs 80GB for fine-tuning, does it matter?"]
    for t in texts:
        parser.parse(t)                       # warm the caches
    best = float("inf")
    for _ in range(5):                        # the best of five rounds: a busy machine slows a round, not the parser
        t0 = time.perf_counter()
        for _ in range(10):
            for t in texts:
                parser.parse(t)
        best = min(best, (time.perf_counter() - t0) * 1000 / 40)
    assert best < 5, best                     # about 0.4 ms on a laptop; generous for slow CI machines


# ----- phrasings written after the lexicon, as a check that it generalises -----------------------------------------
@pytest.mark.parametrize("text, intent, slots", [
    ("what's the difference between pcie and sxm h100", "compare", {"gpu_models": ["h100-pcie", "h100-sxm"]}),
    ("推理服务要求首 token 延迟 500ms 以内，模型 qwen2.5-7b", "inference", {"latency": "low"}),  # a target in ms
    ("我们想私有化部署 qwen2.5-7b 给全公司用，大概 500 人", "inference", {"concurrency": 500}),
    ("what gpus do I need to run llama 3.3 70b locally for my team of 10", "inference", {"concurrency": 10}),
    ("SFT qwen2.5-72b with qlora, 2k seq, batch 4", "finetune", {"seq_len": 2048, "batch_size": 4}),
    ("Deploying qwen2.5-7b in fp8 for a customer service bot, latency matters", "inference",
     {"precision": "fp8", "latency": "low"}),                       # 'matters' is not an explain question here
    ("need a cheap box to qlora mistral 7b over the weekend", "finetune", {"duration": "short", "budget": "low"}),
    ("how does tensor parallel split a 70B model across 8 GPUs?", "explain", {"params_b": 70.0, "gpus": 8}),
    ("你都能回答什么问题", "help", {}),
    ("4 nodes of 8 h100 to pretrain a 70b", "train", {"nodes": 4, "gpus": 32, "params_b": 70.0}),
    ("一台机器 8 张 4090 微调 qwen2.5-72b 行吗", "finetune", {"nodes": 1, "gpus": 8, "gpu_model": "rtx-4090"}),
    ("we fine-tuned qwen2.5-7b and now need to deploy it", "inference", {"model": "qwen2.5-7b"}),
])
def test_held_out_phrasings(parser, text, intent, slots):
    check(parser, text, intent, slots)
