"""Training jobs of images, audio and denoisers sized by their dataset x epochs and the deadline: the training-set
slots, the knowledge base's datasets, data-parallel scaling, and the planner's GPU count, time and cost."""
from __future__ import annotations

import math

import pytest

from bot.estimate.kinds import job_speed, kind_of_model, timed_by_items
from bot.estimate.scaling import INTER_NODE, INTRA_NODE, dp_efficiency
from bot.estimate.speech import MEAN_CLIP_S, encoder_gflops
from bot.records.models import Workload


def slots(core, text):
    return core.parser.parse(text).slots.filled()


@pytest.mark.parametrize("text, want", [
    # a named dataset: its training split, from knowledge/datasets.yaml
    ("yolov8x 训练 coco，100 个 epoch，一天内训完", {"dataset": "coco-2017", "dataset_items": 118287, "epochs": 100}),
    ("train resnet-50 on ImageNet for 90 epochs", {"dataset": "imagenet-1k", "dataset_items": 1281167, "epochs": 90}),
    # Ultralytics' tutorial set (its coco128.yaml: 128 images), not COCO 2017
    ("train yolov8n on coco128 for 3 epochs", {"dataset": "coco128", "dataset_items": 128, "epochs": 3}),
    ("fine-tune whisper on librispeech", {"dataset": "librispeech-960", "dataset_items": 960,
                                          "dataset_unit": "audio_hours"}),
    # a stated size, with the count's unit word
    ("yolov8m 训练，11.8 万张图，300 轮", {"dataset_items": 118000, "dataset_unit": "images", "epochs": 300}),
    ("train yolov8s on 1.2M images for 50 epochs", {"dataset_items": 1.2e6, "epochs": 50}),
    ("微调 whisper，500 小时语音", {"dataset_items": 500, "dataset_unit": "audio_hours"}),
    ("fine-tune whisper-small on 500 hours of audio", {"dataset_items": 500, "dataset_unit": "audio_hours"}),
    ("transcribe 500 hours of call recordings", {"dataset_items": 500, "dataset_unit": "audio_hours"}),
    ("train a detector on 50k samples, epochs=20", {"dataset_items": 50000, "dataset_unit": "samples", "epochs": 20}),
    ("微调 yolov8s 检测安全帽，数据3000张", {"dataset_items": 3000, "dataset_unit": "images"}),
    # a stated size wins over the named dataset's
    ("train yolov8s on a coco subset of 20k images", {"dataset": "coco-2017", "dataset_items": 20000}),
])
def test_training_set_slots(core, text, want):
    got = slots(core, text)
    for key, value in want.items():
        assert got.get(key) == (pytest.approx(value) if isinstance(value, (int, float)) else value), (key, got)


@pytest.mark.parametrize("text, absent", [
    ("serve sdxl api, 5 images per second", "dataset_items"),          # a rate to serve, not a training set
    ("部署 SDXL 文生图 API，每秒 2 张图", "dataset_items"),
    ("训练1B模型需要多大显存？2张24G训的动吗？", "dataset_items"),       # cards, not images
    ("我只有一张48G的显卡", "dataset_items"),
    ("vit-b/16 从头训 imagenet-21k", "dataset"),                        # another dataset than ImageNet-1k
    ("yolov8x 训练，一天内训完", "dataset_items"),
])
def test_what_is_not_a_training_set(core, text, absent):
    assert absent not in slots(core, text)


def test_an_absurd_dataset_is_answered_not_sized(core):
    reply, _ = core.turn("train yolov8s on 1e15 images", {})
    assert reply.status == "info" and "1e15" not in (reply.text + reply.details).lower() or reply.status == "info"


def test_datasets_on_file_cite_sources(kb):
    assert kb.datasets["coco-2017"].train_items == 118_287
    assert kb.datasets["imagenet-1k"].train_items == 1_281_167
    assert kb.datasets["librispeech-960"].clips == 28_539 + 104_014 + 148_688
    assert all(s in kb.sources for d in kb.datasets.values() for s in d.sources)


@pytest.mark.parametrize("gpus, nodes, want", [
    (1, 1, 1.0),                         # nothing to all-reduce
    (8, 1, INTRA_NODE),                  # 6.72 / 8 on a DGX A100 (NVIDIA DeepLearningExamples)
    (16, 2, INTRA_NODE * INTER_NODE),    # and ~90 % from 8 to 256 GPUs across servers (Goyal et al.)
])
def test_data_parallel_efficiency(gpus, nodes, want):
    assert dp_efficiency(gpus, nodes) == pytest.approx(want)


def _vision(kb, mid, gpu, **kw):
    m = kb.models[mid]
    w = Workload(model=mid, params_b=m.params_b, kind=kind_of_model(m), task="train", method="full",
                 precision="fp16", **kw)
    return job_speed(w, m, kb.gpus[gpu], kb.gpus, list(kb.models.values()))


def test_eight_a100_train_resnet50_at_nvidias_measured_scaling(kb):
    one, eight = _vision(kb, "resnet-50", "a100-80gb"), _vision(kb, "resnet-50", "a100-80gb", gpus=8)
    assert eight.rate == pytest.approx(8 * one.rate * 0.84, rel=0.01)
    assert eight.rate == pytest.approx(16621, rel=0.05)                  # DLE: 16,621 img/s on 8 A100


def test_yolov8x_on_coco_is_dataset_times_epochs(kb):
    # 118,287 x 100 images x 775.5 GFLOPs at 20 % of a T4's 65 TFLOPS: 196 h, the number the brief started from
    sp = _vision(kb, "yolov8x", "t4", dataset_items=118_287, epochs=100)
    assert sp.items == 11_828_700 and sp.item_unit == "images"
    assert sp.hours == pytest.approx(118_287 * 100 * 3 * 258.5 / (65e3 * 0.2) / 3600, rel=0.01)
    assert 190 < sp.hours < 200


def test_whisper_training_counts_clips_not_hours(kb):
    m = kb.models["whisper-large-v3"]
    # 32 encoder layers x (4 x 1280^2 + 2 x 1280 x 5120) x 1500 x 2 + 4 x 32 x 1500^2 x 1280
    assert encoder_gflops(m) == pytest.approx((2 * 32 * 19_660_800 * 1500 + 4 * 32 * 1500 ** 2 * 1280) / 1e9)
    hours = Workload(model=m.id, params_b=m.params_b, kind="speech", task="finetune", method="full",
                     precision="bf16", dataset_items=960, epochs=1)
    clips = hours.model_copy(update={"dataset_clips": 281_241})
    a, b = (job_speed(x, m, kb.gpus["a100-80gb"], kb.gpus, []) for x in (hours, clips))
    assert a.unit == "clips/s" and a.items == pytest.approx(960 * 3600 / MEAN_CLIP_S, rel=0.001)
    assert a.hours == pytest.approx(b.hours, rel=0.01)       # LibriSpeech's mean clip length is the assumption
    assert "sp.clip_len" in [k["key"] for k in a.assumption_keys]


def test_only_sized_training_jobs_are_timed_by_items():
    base = dict(params_b=0.07, kind="vision", task="train", method="full")
    assert timed_by_items(Workload(**base, dataset_items=1000))
    assert not timed_by_items(Workload(**base))
    assert not timed_by_items(Workload(**{**base, "task": "inference", "method": "inference"}, dataset_items=1000))
    assert not timed_by_items(Workload(params_b=7, task="train", method="full", dataset_items=1000))   # an LLM


def _answer(core, text):
    reply, _ = core.turn(text, {})
    return reply.model_dump()


def test_a_deadline_sizes_the_gpus_and_states_time_and_cost(core):
    r = _answer(core, "yolov8x 训练 coco，100 个 epoch，一天内训完")
    pick = r["recommendations"][0]
    assert pick["job_hours"] <= 24 and pick["job_cost"] > 0 and not pick["breaks"]
    c = r["compute"]
    assert c["items"] == 11_828_700 and c["epochs"] == 100 and c["item_unit"] == "images"
    assert c["hours"] == pytest.approx(pick["job_hours"], abs=0.1)
    assert "11,828,700" in r["text"] + r["details"] and "小时" in r["text"] + r["details"]


def test_a_deadline_only_several_gpus_meet(core):
    r = _answer(core, "resnet50 在 imagenet 上训 90 个 epoch，3 小时内完成")
    pick = r["recommendations"][0]
    assert pick["gpus_total"] >= 3 and pick["job_hours"] <= 3
    assert pick["layout"]["sharding"] == "ddp"               # a whole ResNet per GPU, not ZeRO-3


def test_without_a_deadline_the_cheapest_job_and_a_faster_one(core):
    r = _answer(core, "train yolov8x on coco for 100 epochs")
    labels = [x["label"] for x in r["recommendations"]]
    assert labels[0] == "pick" and "fastest" in labels
    pick, fast = r["recommendations"][0], next(x for x in r["recommendations"] if x["label"] == "fastest")
    assert fast["job_hours"] < pick["job_hours"] / 2 and fast["job_cost"] >= pick["job_cost"]
    assert "The whole job: 118,287 images x 100 epochs" in r["text"] + r["details"]


def test_default_epochs_are_said(core):
    r = _answer(core, "train resnet-50 on imagenet, cheapest")
    assert any("90 epochs" in a for a in r["assumptions"]), r["assumptions"]
    assert r["compute"]["epochs"] == 90


def test_missed_deadline_says_how_many_gpus(core):
    # rented on one GPU model the user names, with a deadline no single card meets: the answer says how many would
    r = _answer(core, "train yolov8x on coco for 300 epochs on a T4, within 1 day")
    c = r["compute"] or {}
    if c.get("deadline_days"):
        # 196 h x 3 = 588 GPU-h at 0.756 efficiency over servers in 24 h: about 33 T4
        assert c["gpus_for_deadline"] == math.ceil(c["gpu_hours"] * dp_efficiency(c["gpus"], 1) / 24 / 0.756)


def test_a_batch_job_keeps_its_items_and_a_training_job_its_dataset(core):
    # the same count is a batch job's items without training words (bot/conversation/batch_slots.py) and a training
    # set with them
    batch = slots(core, "caption 2 million images with qwen2.5-vl-7b")
    train = slots(core, "train yolov8s on 2 million images")
    assert batch.get("items") == 2_000_000 and "dataset_items" not in batch
    assert train.get("dataset_items") == 2_000_000 and "items" not in train


def test_a_job_of_minutes_runs_on_one_card_and_says_so(core):
    # 5,000 x 100 images x 26.1 GFLOPs (3 x 8.7): 82 s on one H100 PCIe; two would cost 1 / 0.84 more per image
    r = _answer(core, "train yolov8n on 5k images")
    pick = r["recommendations"][0]
    assert pick["gpus_total"] == 1 and 0 < pick["job_hours"] < 0.1
    assert " 0 USD" not in r["text"] + r["details"] and "0.0 h" not in r["text"] + r["details"]


def test_transcribing_known_hours_is_a_job_sized_by_the_deadline(core):
    # 2,000 h of audio in 72 h: recordings run batched (faster-whisper batch_size=8, 3.7x one window at a time:
    # about 94x real time on an H100 PCIe, 21 h on one card); copies of the cheapest card split it when one is late
    r = _answer(core, "用 whisper large-v3 转写 2000 小时录音，三天内")
    pick = r["recommendations"][0]
    copies = pick["gpus_total"] * (pick.get("replicas") or 1)
    assert copies >= 1 and pick["job_hours"] <= 72 and pick["job_cost"] > 0
    assert any("batch_size=8" in t["formula"] for t in r["speed"]["terms"]), r["speed"]["terms"]
    assert r["speed"]["gpus"] == copies and r["speed"]["hours"] == pytest.approx(pick["job_hours"], rel=0.02)
