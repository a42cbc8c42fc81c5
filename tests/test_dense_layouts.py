"""Tensor x pipeline x data parallelism for a dense model trained in full across instances without RDMA
(bot/plan/layouts.dense_layouts, plans._dense_layout_if_faster, own._dense_layout_if_faster): Megatron-LM's layout,
TP inside each instance, PP across them, ZeRO-1 over the data-parallel replicas."""
from __future__ import annotations

import pytest

from bot.plan import layouts
from bot.plan.links import LinkEvidence
from bot.plan.layouts import dense_layouts, fastest_dense_layout, zero3_workload
from bot.plan import perf
from bot.records.models import Workload

TCP_100G = LinkEvidence("nvlink", "derived", 300.0, "tcp", 12.5)


def _full(params_b: float, **kw) -> Workload:
    return Workload(params_b=params_b, method="full", precision="bf16", batch_size=1, seq_len=1024,
                    grad_accumulation=8, grad_checkpointing=True, checkpointing="full", tokens=1e9, **kw)


def test_the_layouts_tried_for_a_70b_on_four_8_gpu_machines(core):
    """Llama 3 70B: 64 attention heads, 80 layers. On 32 GPUs in instances of 8: TP 8 and 4 (the two largest that
    divide 8 and 64), PP 2..16 where TP x PP divides 32: (8, 2), (8, 4), (4, 2), (4, 4), (4, 8). Each replica runs
    TP x PP times the micro-batches, so the samples a step stay 32 x 8."""
    model = core.kb.models["llama-3-70b"]
    got = [(w.tensor_parallel, w.pipeline_parallel, w.grad_accumulation, w.sharding, w.nodes)
           for w in dense_layouts(_full(model.params_b), model, 32, 8)]
    assert got == [(8, 2, 128, "zero1", 4), (8, 4, 256, "zero1", 4), (4, 2, 64, "zero1", 4),
                   (4, 4, 128, "zero1", 4), (4, 8, 256, "zero1", 4)]
    for w in dense_layouts(_full(model.params_b), model, 32, 8):
        dp = 32 // (w.tensor_parallel * w.pipeline_parallel)
        assert dp * w.grad_accumulation == 32 * 8


@pytest.mark.parametrize("why, kwargs, n, per_instance", [
    ("one instance: nothing crosses a network", {}, 8, 8),
    ("LoRA: the frozen base is not trained in TP x PP here", {"method": "lora"}, 32, 8),
    ("not whole instances", {}, 12, 8),
])
def test_no_layout_where_it_does_not_apply(core, why, kwargs, n, per_instance):
    model = core.kb.models["llama-3-70b"]
    w = _full(model.params_b).model_copy(update=kwargs)
    assert dense_layouts(w, model, n, per_instance) == [], why


def test_a_mixture_of_experts_is_left_to_expert_parallelism(core):
    model = core.kb.models["mixtral-8x7b"]
    assert dense_layouts(_full(model.params_b), model, 32, 8) == []


def test_over_100gbe_tp_x_pp_is_several_times_faster_than_zero3(core):
    """70B full fine-tune, 1B tokens, 32 A100 SXM in 4 machines over 100 Gbit/s Ethernet. Compute: 6 x 70.6e9 x 1e9
    x 4/3 (recomputation) = 5.6e20 FLOP at ~40 % of 312 TFLOPS on 32 GPUs = ~35 h, /0.9 goodput ~39 h: the layout
    that keeps TP inside a machine lands near that (25-80 h). ZeRO-3 gathers ~141 GB of parameters 3 times every
    micro-batch over 12.5 GB/s shared by 8 GPUs: hundreds of hours."""
    model, gpu = core.kb.models["llama-3-70b"], core.kb.gpus["a100-80gb"]
    w = _full(model.params_b)
    best = fastest_dense_layout(w, model, gpu, 32, 8, 80 * 0.95, TCP_100G, {})
    zero3 = perf.train_time(zero3_workload(w, 32, 8), model, gpu, 32, 8, TCP_100G)
    assert best is not None and 25 <= best.hours <= 80, best.hours
    assert zero3.hours > 5 * best.hours
    assert best.estimate.per_gpu_gib <= 80 * 0.95
    assert layouts.layout_of_workload(best.w, 32, 0)["tp"] == best.w.tensor_parallel


def test_their_machines_over_ethernet_get_the_layout_and_the_sharded_time_beside_it(core):
    r = core.turn("we have 4 nodes of 8 A100 80GB connected by 100GbE, no infiniband; full fine-tune llama 3 70b on "
                  "1B tokens, how long?", {})[0].model_dump()
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["fits"]
    assert mine["layout"]["tp"] > 1 and mine["layout"]["pp"] > 1 and mine["layout"]["sharding"] == "zero1"
    assert 25 <= mine["job_hours"] <= 80 and mine["zero3_hours"] > 5 * mine["job_hours"]
    assert "pipeline stages across the machines" in r["text"] + r["details"]
    assert "megatron-lm-3d-parallelism" in [c["id"] for c in r["citations"]]


def test_the_pipeline_sends_are_a_term_of_the_speed_model(core):
    from bot.estimate.speed import training_speed
    from bot.estimate.speed_hw import bus_gbs, resolve_link
    model, gpu = core.kb.models["llama-3-70b"], core.kb.gpus["a100-80gb"]
    w = dense_layouts(_full(model.params_b), model, 32, 8)[0]
    sp = training_speed(w, model, gpu, perf.speed_link(TCP_100G, 8))
    sends = next(t for t in sp.terms if t.name == "pipeline sends per step")
    # 2 directions x 128 micro-batches x 1 x 1024 tokens x 8192 hidden x 2 bytes / TP 8 = 0.54 GB, at the bus
    # bandwidth between machines (TP 8 x PP 2 spans two of them)
    link, _ = resolve_link(gpu, w.nodes, perf.speed_link(TCP_100G, 8))
    vol = 2 * 128 * 1024 * 8192 * 2 / 8
    assert sends.value == pytest.approx(vol / bus_gbs(link, True), rel=1e-6)
    assert 0 < sends.value < 0.1 * sp.step_s


def test_their_rdma_at_a_stated_rate_is_searched_too(core):
    """'4 nodes of 8 H100 over 200G RoCE': RDMA, but one 200 Gbit/s link a machine is 25 GB/s shared by 8 cards, not
    a cluster fabric. ZeRO-3 gathers ~65 GB of Qwen2.5-32B parameters 3 times a micro-batch over it: hundreds of
    hours. Compute: 6 x 32.8e9 x 5e9 x 4/3 = 1.3e21 FLOP at ~30 % of 32 x 989 TFLOPS = ~38 h: TP inside each
    machine, PP across, lands near that (25-80 h), and the sharded layout's time is said beside it."""
    r = core.turn("we have 4 nodes of 8 H100 over 200G RoCE, full fine-tune qwen2.5 32b on 5B tokens, how long?",
                  {})[0].model_dump()
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["inter_link"] == "rdma" and mine["network_gbps"] == 200
    assert mine["layout"]["tp"] > 1 and mine["layout"]["pp"] > 1
    assert 25 <= mine["job_hours"] <= 80 and mine["zero3_hours"] > 5 * mine["job_hours"]
