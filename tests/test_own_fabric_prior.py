"""The network between the user's own machines when they do not name it (issue 31, item 1): servers built around SXM
modules (HGX/DGX) or Ascend NPU modules (Atlas 800) ship with an RDMA fabric for cluster training, so that is the
prior, said as an assumption with its source, and the time over plain TCP is said beside it as the risk. Cards that
go into any PCIe server carry no such prior: their unknown network is still timed over TCP."""
from __future__ import annotations

import pytest

from bot.knowledge.loader import default_knowledge
from bot.plan.own import FABRIC_SOURCES, server_fabric


def _mine(core, q):
    r = core.turn(q, {})[0].model_dump()
    mine = r["recommendations"][0]
    assert mine["label"] == "yours", r["text"]
    return r, mine


@pytest.mark.parametrize("gpu, fabric", [
    ("h100-sxm", "nvlink"), ("h800", "nvlink"), ("h200", "nvlink"), ("a100-80gb", "nvlink"), ("b200", "nvlink"),
    ("ascend-910b", "hccs"),                          # Atlas 800T A2: 8 NPU modules over HCCS
    ("h100-pcie", None), ("l40s", None), ("rtx-4090", None), ("l4", None), ("a10", None),
])
def test_the_server_class_a_card_is_built_into(gpu, fabric):
    kb = default_knowledge()
    assert server_fabric(kb.gpus[gpu]) == fabric


def test_every_fabric_source_is_on_file():
    kb = default_knowledge()
    assert all(sid in kb.sources for sid in FABRIC_SOURCES.values())


# 64 H800 (8 HGX servers), continued pre-training of Qwen2.5-32B on 200B tokens. Before: TP x PP over an assumed TCP
# link, 31.8 days, and "ZeRO-3 ... about 1,587 days" beside it. Expected now, by hand: 6 x 32.8B x 2e11 tokens =
# 3.9e22 FLOPs (+ attention) at ~28 % of 989 TFLOP/s x 64 = 1.77e16 FLOP/s -> 25-26 days, / 0.9 goodput -> ~28-30
# days over the fabric; nothing near a thousand days on either network.
def test_64_h800_are_timed_over_their_fabric_not_a_1587_day_cliff(core):
    r, mine = _mine(core, "we have 64 H800 GPUs, continue pre-training Qwen2.5-32B on 200B tokens")
    assert mine["network_assumed"] == "rdma" and mine["inter_link"] == "rdma" and not mine["network_said"]
    assert 25 * 24 <= mine["job_hours"] <= 33 * 24
    assert mine["mfu"] >= 0.2
    assert mine["job_hours_tcp"] >= mine["job_hours"] * 0.99 and mine["job_hours_tcp"] < 60 * 24
    assert "nvidia-dgx-basepod-core" in mine["sources"]
    assert "1,587" not in r["text"] + r["details"] and "RDMA fabric" in r["text"] + r["details"]
    assert any(c["id"] == "nvidia-dgx-basepod-core" for c in r["citations"])


@pytest.mark.parametrize("q, gpu", [
    ("we have 4 nodes of 8x H100, full finetune llama 3.1 8b on 5B tokens, how long?", "h100-sxm"),
    ("we have 16 A100 80GB SXM in 2 servers, pre-train a 7B model on 50B tokens", "a100-80gb"),
    ("we have 4 Atlas 800T A2 servers (32 Ascend 910B), pre-train a 7B model on 100B tokens", "ascend-910b"),
])
def test_unsaid_network_on_fabric_servers_is_the_rdma_time(core, q, gpu):
    """The prior is exactly the RDMA time: the same job with InfiniBand said gives the same hours."""
    _, unsaid = _mine(core, q)
    _, said = _mine(core, q.replace(", ", " over InfiniBand, ", 1))
    assert unsaid["gpu"] == said["gpu"] == gpu
    assert unsaid["network_assumed"] == "rdma" and said["network_assumed"] is None and said["inter_link"] == "rdma"
    assert unsaid["job_hours"] == pytest.approx(said["job_hours"], rel=0.01)
    assert unsaid["job_hours_tcp"] >= unsaid["job_hours"] * 0.99
    assert FABRIC_SOURCES[server_fabric(default_knowledge().gpus[gpu])] in unsaid["sources"]


@pytest.mark.parametrize("q", [
    "we have 4 servers with 8 L40S each, full finetune llama 3.1 8b on 5B tokens",       # PCIe cards: no prior
    "we have 8 H100 SXM in one server, full finetune llama 3.1 8b on 5B tokens",         # one machine: no network
    "we have 4 nodes of 8x H100 over 25GbE ethernet, no RDMA, full finetune llama 3.1 8b on 5B tokens",  # said
])
def test_no_fabric_is_assumed_where_the_class_or_the_user_says_otherwise(core, q):
    r, mine = _mine(core, q)
    assert mine["network_assumed"] is None and mine["job_hours_tcp"] is None
    assert "RDMA fabric" not in r["text"] + r["details"]


def test_the_assumption_and_the_risk_are_said_in_chinese(core):
    r, mine = _mine(core, "我们有 32 张 A100 80G SXM，4 台服务器，全参微调 llama 3.1 8b，50 亿 token 要多久")
    assert mine["network_assumed"] == "rdma"
    assert "没说 4 台机器之间用什么网络" in r["text"] + r["details"] and "RDMA" in r["text"] + r["details"]


def test_atlas_servers_say_hccs_not_sxm(core):
    r, mine = _mine(core, "we have 4 Atlas 800T A2 servers (32 Ascend 910B), pre-train a 7B model on 100B tokens")
    assert mine["intra_link"] == "nvlink" and "HCCS between them" in r["text"] + r["details"] and "SXM modules" not in r["text"] + r["details"]
    assert "daocloud-atlas800t-a2" in mine["sources"]
