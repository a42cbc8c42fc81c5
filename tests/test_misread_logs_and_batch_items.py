"""Two misreadings, as tables of phrasings in both languages.

1. Units and log words read as a model's name: 'busbw shows ~40 GB/s. is that normal?' was answered 'I don't have
   GB/s. on file', 'NCCL_DEBUG=INFO says NET/Socket.' with 'paste NET/Socket.'s config.json'. A unit (GB/s, Gbps,
   tok/s, TFLOPS/GPU), an env var or log word (NCCL_*, NET/Socket, NET/IB) or a word closing a sentence is never a
   model card; an NCCL / network troubleshooting question is answered with the knowledge base's NCCL topics
   (knowledge/topics.yaml nccl_socket, nccl_busbw: the TCP fallback inside docker and its fix, cited).
2. A batch job of pairs / pages asked 'fine-tune, train or serve?': an amount of items (pairs, pages, documents)
   with a processing verb (rerank, extract, OCR, classify, embed) and no training words is a batch inference job;
   a volume per month or week is due within that period. A count said per query stays a service's fan-out.
"""
from __future__ import annotations

import pytest

from bot.conversation.pasted import model_card

NCCL_SOCKET = [
    "NCCL_DEBUG=INFO says NET/Socket. we're running inside docker",
    "NCCL says NET/Socket inside docker",
    "nccl log shows NET/Socket : Using [0]eth0. running in a container on 2 nodes",
    "our NCCL falls back to socket in kubernetes pods, how do we get IB?",
    "NCCL_DEBUG=INFO 显示 NET/Socket，我们在 docker 里跑",
    "nccl 日志里是 NET/Socket，容器里跑的，怎么办",
    "多机训练 NCCL 走 socket 了，是在 docker 里",
]
NCCL_BUSBW = [
    "nccl-tests all_reduce busbw shows ~40 GB/s. is that normal?",
    "nccl-tests all_reduce busbw shows ~40 GB/s on 2x8 H100. is that normal?",
    "all_reduce_perf gives busbw 12 GB/s across 2 nodes, expected?",
    "our allreduce bus bandwidth tops out at 90 GB/s on 8x A100, why?",
    "nccl-tests 的 all_reduce busbw 只有 40 GB/s，正常吗？",
    "两台 8 卡 H100 跑 nccl-tests，busbw 才 40 GB/s，是不是有问题",
]

NOT_CARDS = ["GB/s.", "NET/Socket.", "NET/IB", "NET/IB.", "tok/s", "Gbit/s", "Gb/s.", "TFLOPS/GPU", "tokens/s.",
             "MB/s", "images/s", "NCCL_DEBUG=INFO/x"]
CARDS = [("BAAI/bge-m3", "BAAI/bge-m3"), ("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
         ("Qwen/Qwen2.5-7B-Instruct.", "Qwen/Qwen2.5-7B-Instruct"), ("mistralai/Mistral-7B-v0.1", "mistralai/Mistral-7B-v0.1"),
         ("deepseek-ai/DeepSeek-V3.", "deepseek-ai/DeepSeek-V3")]

BATCH_ITEMS = [
    # (question, items, deadline_days or None)
    ("need to rerank 30M (query, doc) pairs with bge-reranker-v2-m3, ~400 tokens per pair, cheapest way on AWS, "
     "deadline friday (4 days)", 30_000_000, 4.0),
    ("rerank 30M query-doc pairs with bge-reranker-v2-m3 on AWS, cheapest", 30_000_000, None),
    ("we have to score 5 million (query, passage) pairs with bge-reranker-v2-m3 by next week", 5_000_000, None),
    ("OCR-ish extraction on scanned pages with Qwen2.5-VL-7B, ~1M pages per month, output ~600 tokens per page",
     1_000_000, 30.0),
    ("extract fields from 200k scanned invoices with Qwen2.5-VL-7B, cheapest", 200_000, None),
    ("classify 2M support tickets with qwen2.5-7b, about 300 tokens each", 2_000_000, None),
    ("summarise 500k documents per week with Qwen2.5-7B-Instruct, ~2k tokens each", 500_000, 7.0),
    ("用 bge-reranker-v2-m3 重排 3000万对 query-doc，每对约 400 token，四天内跑完", 30_000_000, 4.0),
    ("用 Qwen2.5-VL-7B 做扫描件文字识别，每月 100 万页，每页输出约 600 token", 1_000_000, 30.0),
    ("用 qwen2.5-7b 给 200 万条评论打标签，最便宜的方案", 2_000_000, None),
]
FANOUT = [
    "serve bge-reranker-v2-m3 for search: 50 qps, each query reranks 20 docs",
    "bge-reranker-v2-m3 online, 30 QPS, each query reranks 200 docs of ~300 tokens",
    "线上部署 bge-reranker-v2-m3，50 QPS，每个 query 重排 200 篇文档",
]


@pytest.mark.parametrize("word", NOT_CARDS)
def test_units_and_log_words_are_no_model_card(word):
    assert model_card(f"we see {word} here") is None


@pytest.mark.parametrize("word,card", CARDS)
def test_model_cards_still_read(word, card):
    assert model_card(f"size {word} for me") == card


@pytest.mark.parametrize("q", NCCL_SOCKET)
def test_net_socket_gets_the_container_fix(core, q):
    r, _ = core.turn(q, None)
    text = r.text
    assert r.status == "info" and r.intent == "explain", text
    assert "config.json" not in text and "on file" not in text
    for needle in ("--network host", "/dev/infiniband", "memlock", "NCCL_IB_HCA", "ibv_devinfo"):
        assert needle in text, (needle, text)
    assert "docs.nvidia.com/deeplearning/nccl" in str(r.citations) or any(
        "nccl" in str(c).lower() for c in r.citations)


@pytest.mark.parametrize("q", NCCL_BUSBW)
def test_busbw_question_is_read_as_nccl_troubleshooting(core, q):
    r, _ = core.turn(q, None)
    assert r.status == "info" and r.intent == "explain", r.text
    assert "config.json" not in r.text and "on file" not in r.text
    assert "busbw" in r.text and "NET/Socket" in r.text and "NCCL_DEBUG=INFO" in r.text


def test_nccl_follow_up_after_a_busbw_question(core):
    _, state = core.turn("nccl-tests all_reduce busbw shows ~40 GB/s on 2x8 H100. is that normal?", None)
    r, _ = core.turn("NCCL says NET/Socket inside docker", state)
    assert r.text.startswith("NCCL says NET/Socket") and "--device /dev/infiniband" in r.text


def test_a_job_that_names_nccl_is_still_sized(core):
    r, _ = core.turn("NCCL timeouts training llama 3 70b on 4 nodes, which instance should we rent?", None)
    assert r.status == "answer" and r.recommendations, r.text


@pytest.mark.parametrize("q", ["NCCL all-reduce across 4 nodes for training, which instance should we rent?",
                               "allreduce 在多机训练里慢，租哪种实例"])
def test_a_job_that_names_allreduce_is_still_a_job(core, q):
    r, _ = core.turn(q, None)
    assert r.intent != "explain" and "busbw" not in r.text and "NET/Socket" not in r.text, r.text


@pytest.mark.parametrize("q,items,days", BATCH_ITEMS)
def test_items_with_a_processing_verb_are_a_batch_job(core, q, items, days):
    p = core.parser.parse(q)
    s = p.slots.filled()
    assert s.get("offline") is True, s
    assert s.get("items") == items, s
    if days is not None:
        assert s.get("deadline_days") == days, s
    r, _ = core.turn(q, None)
    assert "fine-tune it, train it" not in r.text and "微调、从头训练" not in r.text, r.text
    assert r.status == "answer", r.text


@pytest.mark.parametrize("q", FANOUT)
def test_a_count_per_query_stays_a_fanout(core, q):
    s = core.parser.parse(q).slots.filled()
    assert not s.get("offline"), s
    assert not s.get("items"), s
