"""Expert parallelism for mixtures of experts: the memory split (experts / EP, dense / TP x PP, ZeRO over each
group's replicas), the all-to-all traffic and its link, the interleaved bubble, the planner's layout search, and the
answer's layout line. Expected values are worked by hand in each row's comment."""
from __future__ import annotations

import pytest

from bot.estimate.arch import GIB, arch_of
from bot.estimate.memory import estimate_memory
from bot.estimate.parallel import expert_params, split_of
from bot.estimate.speed import training_speed
from bot.estimate.speed_hw import all_to_all_gbs
from bot.knowledge.loader import default_knowledge
from bot.plan.layouts import expert_layouts, layout_of_workload, layout_workload
from bot.records.errors import InvalidRequest
from bot.records.models import Link, Workload
from bot.render.reply import layout_lines
from bot.render.templates import default_templates

KB = default_knowledge()
NVLINK_IB = Link(intra="nvlink", intra_gbs=450, inter="rdma", inter_gbs=400)


def moe(model_id: str, **kw) -> Workload:
    m = KB.models[model_id]
    base = dict(model=m.id, params_b=m.params_b, task="train", method="full", precision="bf16", batch_size=1,
                seq_len=4096, gpus=16, nodes=2, sharding="zero1", checkpointing="none")
    base.update(kw)
    return Workload(**base)


def term(est, name: str) -> float:
    return next(t.gib for t in est.terms if t.name == name)


def speed_term(sp, name: str) -> float:
    return next(t.value for t in sp.terms if t.name == name)


# ----- which parameters are experts ---------------------------------------------------------------------------------
@pytest.mark.parametrize("model_id, experts", [
    # 128 experts x 3 matrices x 2048 x 768 x 48 layers
    ("qwen3-30b-a3b", 128 * 3 * 2048 * 768 * 48),            # 28,991,029,248
    # 256 x 3 x 7168 x 2048 x (61 - 3 dense layers); the shared expert stays with the dense part
    ("deepseek-v3", 256 * 3 * 7168 * 2048 * 58),             # 653,908,770,816
    ("mixtral-8x7b", 8 * 3 * 4096 * 14336 * 32),              # 45,097,156,608
    ("llama-3.1-8b", 0),
])
def test_expert_params_are_the_routed_experts(model_id, experts):
    m = KB.models[model_id]
    assert expert_params(arch_of(m, m.params_b)) == experts


# ----- memory: one GPU's share --------------------------------------------------------------------------------------
@pytest.mark.parametrize("model_id, gpus, ep, pp, local", [
    # dense 30.532e9 - 28,991,029,248 = 1,540,970,752 whole; experts / 8: 3,623,878,656
    ("qwen3-30b-a3b", 16, 8, 1, 1_540_970_752 + 28_991_029_248 / 8),
    # PP 2 halves both
    ("qwen3-30b-a3b", 16, 8, 2, 1_540_970_752 / 2 + 28_991_029_248 / 16),
    # dense 671e9 - 653,908,770,816 = 17,091,229,184 / 16 stages; experts / (EP 8 x PP 16)
    ("deepseek-v3", 256, 8, 16, 17_091_229_184 / 16 + 653_908_770_816 / 128),
])
def test_weights_per_gpu_are_the_dense_share_plus_the_experts_share(model_id, gpus, ep, pp, local):
    est = estimate_memory(moe(model_id, gpus=gpus, nodes=gpus // 8, expert_parallel=ep, pipeline_parallel=pp,
                              grad_accumulation=8), KB.models[model_id])
    # fp32 weights (4 B) and fp32 gradients (4 B) of this GPU's parameters; ZeRO-1 shards only the optimizer
    assert term(est, "fp32 weights") == pytest.approx(local * 4 / GIB, abs=1e-3)
    assert term(est, "gradients") == pytest.approx(local * 4 / GIB, abs=1e-3)
    m = KB.models[model_id]
    assert term(est, "adamw state") == pytest.approx(m.params_b * 1e9 * 8 / gpus / GIB, abs=1e-3)


def test_zero3_shards_the_same_whatever_the_expert_degree():
    """ZeRO-3 leaves 1/n of the model on a GPU: EP changes which 1/n, not how much."""
    m = KB.models["qwen3-30b-a3b"]
    a = estimate_memory(moe(m.id, sharding="zero3"), m)
    b = estimate_memory(moe(m.id, sharding="zero3", expert_parallel=8), m)
    assert term(a, "fp32 weights") == term(b, "fp32 weights") == pytest.approx(30.532e9 * 4 / 16 / GIB, abs=1e-3)
    # but a gathered block is only its EP share of the experts: 2 x (623M - 604M experts + 604M / 8) x 2 B x 15/16
    assert term(b, "gathered layer parameters") < term(a, "gathered layer parameters") / 4


@pytest.mark.parametrize("model_id, kw, says", [
    ("llama-3.1-8b", dict(expert_parallel=2), "dense model"),
    ("qwen3-30b-a3b", dict(expert_parallel=3), "divides 128"),
    ("qwen3-30b-a3b", dict(expert_parallel=8, gpus=12), "multiple of 8"),
    ("qwen3-30b-a3b", dict(expert_parallel=8, method="lora"), "full and freeze"),
])
def test_bad_expert_degrees_are_refused_with_a_fix(model_id, kw, says):
    with pytest.raises(InvalidRequest) as exc:
        estimate_memory(moe(model_id, **kw), KB.models[model_id])
    assert says in f"{exc.value} {exc.value.fix}"


def test_no_split_without_model_parallelism():
    m = KB.models["qwen3-30b-a3b"]
    assert split_of(moe(m.id), arch_of(m, m.params_b)) is None


# ----- speed: the all-to-all ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("ep, per_node, gbs", [
    (8, 8, 450 * 0.8),                  # inside a node: the GPU's NVLink at 80 % collective efficiency
    (2, 8, 450 * 0.8),
    # 64 over 8 nodes: 56 / 63 of the traffic leaves the node, whose 400 GB/s the 8 GPUs share (50 each, 40 at
    # 80 %): 40 / (56 / 63) = 45 GB/s, NVLink's 7/63 share in parallel is not the bound
    (64, 8, 40 / (56 / 63)),
    # 16 over 2 nodes: half leaves at 40 GB/s -> 80
    (16, 8, 40 / (8 / 15)),
])
def test_all_to_all_bandwidth_by_where_the_group_lives(ep, per_node, gbs):
    got, _ = all_to_all_gbs(NVLINK_IB, ep, per_node)
    assert got / 1e9 == pytest.approx(gbs, rel=1e-6)


def test_all_to_all_volume_is_tokens_topk_hidden_per_moe_layer():
    m = KB.models["qwen3-30b-a3b"]
    w = moe(m.id, gpus=8, nodes=1, expert_parallel=8, grad_accumulation=1)
    sp = training_speed(w, m, KB.gpus["h100-sxm"], NVLINK_IB)
    # 4096 tokens x top-8 x 2048 x 2 B x 7/8, 4 all-to-alls (dispatch + combine, forward + backward) x 48 layers
    want = 4096 * 8 * 2048 * 2 * 7 / 8 * 4 * 48 / 1e9       # 22.55 GB
    assert speed_term(sp, "expert-parallel all-to-all traffic per GPU per step") == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("pp, ga, vp, bubble", [(4, 8, 1, 3 / 8), (4, 8, 8, 3 / 64), (16, 128, 1, 15 / 128)])
def test_interleaving_divides_the_pipeline_bubble(pp, ga, vp, bubble):
    m = KB.models["deepseek-v3"]
    w = moe(m.id, gpus=256, nodes=32, expert_parallel=8, pipeline_parallel=pp, grad_accumulation=ga,
            virtual_pipeline=vp)
    sp = training_speed(w, m, KB.gpus["h100-sxm"], NVLINK_IB)
    assert speed_term(sp, "pipeline bubble") == pytest.approx(bubble)


def test_expert_parallel_beats_zero3_on_many_gpus():
    """Without EP each GPU runs all 128 experts on its own 4,096 tokens (4096 x 8 / 128 = 256 tokens an expert);
    EP 8 gathers 8 GPUs' tokens for each of its 16 experts (2,048 an expert), so the grouped GEMMs run fuller."""
    m = KB.models["qwen3-30b-a3b"]
    zero3 = moe(m.id, gpus=64, nodes=8, sharding="zero3", grad_accumulation=8)
    ep = moe(m.id, gpus=64, nodes=8, expert_parallel=8, grad_accumulation=8)
    gpu = KB.gpus["h100-sxm"]
    slow, fast = training_speed(zero3, m, gpu, NVLINK_IB), training_speed(ep, m, gpu, NVLINK_IB)
    assert fast.tokens_per_s_per_gpu > 1.5 * slow.tokens_per_s_per_gpu
    assert speed_term(fast, "mixture-of-experts slowdown") < speed_term(slow, "mixture-of-experts slowdown") / 1.5


# ----- the planner's layouts ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("model_id, n, per_instance, want", [
    # EP divides 128 and fits 8 GPUs; EP x PP divides 16; PP <= 24 (half of 48 layers)
    ("qwen3-30b-a3b", 16, 8, {(2, 1), (4, 1), (8, 1), (2, 2), (4, 2), (8, 2), (2, 4), (4, 4), (2, 8)}),
    # 8 experts on 4-GPU instances: EP 2 or 4
    ("mixtral-8x7b", 8, 4, {(2, 1), (4, 1), (2, 2), (4, 2), (2, 4)}),
    ("llama-3.1-8b", 16, 8, set()),
])
def test_expert_layouts_enumerate_ep_within_an_instance(model_id, n, per_instance, want):
    m = KB.models[model_id]
    got = expert_layouts(moe(model_id, grad_accumulation=8), m, n, per_instance)
    assert {(w.expert_parallel, w.pipeline_parallel) for w in got} == want
    for w in got:     # the same samples a step: n / PP replicas each run PP x the micro-batches
        assert w.grad_accumulation == 8 * w.pipeline_parallel and w.sharding == "zero1" and w.gpus == n


def test_adapters_get_no_expert_layout():
    m = KB.models["qwen3-30b-a3b"]
    assert expert_layouts(moe(m.id, method="lora", sharding="ddp"), m, 16, 8) == []


def test_a_plans_layout_round_trips_to_the_workload_it_was_timed_with():
    m = KB.models["deepseek-v3"]
    w = moe(m.id, grad_accumulation=8)
    chosen = expert_layouts(w, m, 1024, 8)[-1]
    lay = layout_of_workload(chosen, 1024, 256)
    back = layout_workload(w, 1024, 8, lay)
    assert (back.expert_parallel, back.pipeline_parallel, back.sharding, back.grad_accumulation, back.nodes) == \
        (chosen.expert_parallel, chosen.pipeline_parallel, "zero1", chosen.grad_accumulation, 128)
    assert layout_workload(w, 1024, 8, None).sharding == "zero3"


@pytest.mark.parametrize("lang, has", [
    ("en", ["1024 GPUs as 64 data-parallel replicas of 16 pipeline stages", "split 8 ways",
            "32 of the 256 on each GPU", "ZeRO-1"]),
    ("zh", ["1024 张卡分成 64 路数据并行", "16 段流水线", "8 路专家并行", "256 个专家中的 32 个"]),
])
def test_the_layout_line_names_expert_parallelism_in_both_languages(lang, has):
    lay = {"dp": 64, "tp": 1, "pp": 16, "ep": 8, "experts": 256, "grad_accumulation": 128, "sharding": "zero1"}
    [line] = layout_lines(default_templates(), {"layout": lay, "gpus_total": 1024}, lang)
    for piece in has:
        assert piece in line, line
    assert layout_lines(default_templates(), {"layout": {"dp": 16, "tp": 1, "pp": 1}, "gpus_total": 16}, lang) == []


# ----- the whole answer ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("q", ["rent 16 H100 to pretrain qwen3-30b-a3b on 100B tokens, how long?",
                               "预训练一个类似 Qwen3-30B-A3B 的 MoE 模型，1T tokens，两个月"])
def test_the_compute_line_is_timed_in_the_picks_expert_layout(core, q):
    """tokens = tokens/s a GPU x GPUs x the pick's hours x 3600 x 90 % goodput, in the layout the answer names."""
    r = core.turn(q, {})[0].model_dump()
    pick, c = r["recommendations"][0], r["compute"]
    assert pick["layout"]["ep"] >= 2 and pick["layout"]["sharding"] == "zero1"
    done = c["tokens_per_s_per_gpu"] * pick["gpus_total"] * pick["job_hours"] * 3600 * 0.9
    assert done == pytest.approx(c["tokens"], rel=0.01)
    assert ("expert" in r["text"] + r["details"]) or ("专家并行" in r["text"] + r["details"])


@pytest.mark.parametrize("q, words", [
    ("we have 16 H100 SXM, can we pretrain qwen3-30b-a3b on 100B tokens? how long",
     "8-way expert parallel (16 of the 128 experts on each card) with ZeRO-1 over the 16 cards"),
    ("我们有 16 张 H100 SXM，预训练 qwen3-30b-a3b 100B tokens 要多久", "8 路专家并行（每卡放 128 个专家中的 16 个），16 张卡 ZeRO-1"),
])
def test_own_cards_run_a_mixture_of_experts_expert_parallel(core, q, words):
    """The user's 16 cards: ZeRO-3 across the two nodes took 1,261 h; EP 8 + ZeRO-1 is the layout they would run."""
    r = core.turn(q, {})[0].model_dump()
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["layout"]["ep"] == 8 and mine["layout"]["sharding"] == "zero1"
    assert 200 <= mine["job_hours"] <= 600
    assert words in "\n".join(r["text"].splitlines()[:2])     # after the "how long" verdict line
