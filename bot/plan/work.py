"""The amount of work of a language model's training or post-training job, from what the user said, as a typed
Work record: its factors (each said or assumed), their product, and what the planner times.

- Supervised training: samples x tokens per sample x epochs = tokens ('50,000 samples x 1,024 tokens x 3 epochs =
  153.6M tokens'); stated tokens x stated epochs. Each sample's length is its stated average; packed sequences
  (TRL SFTConfig packing, LLaMA-Factory packing, Axolotl sample_packing) train on the tokens there are, so the
  average is what counts; without packing each batch is padded to its longest sample, so the amount is a lower
  bound (said). With only a maximum length (cutoff_len) the samples are taken at it: an upper bound (said).
- Preference pairs (DPO, ORPO, SimPO, reward models): pairs x 2 sequences (chosen and rejected, one concatenated
  forward in TRL's DPOTrainer) x tokens per sequence x epochs; KTO's samples are unpaired.
- Online RL (GRPO, PPO): prompts x completions per prompt x tokens generated per completion (the rollout's
  work), its training on prompt + completion; epochs multiply the prompts.
Nothing the user gave is replaced: an assumed factor is marked and said as an assumption.
"""
from __future__ import annotations

from typing import Any

from bot.estimate.posttrain import DEFAULT_ROLLOUT_LEN, ONLINE, PAIRED, ROLLOUT_MEAN_SHARE
from bot.records.models import Work, WorkFactor, Workload

Notes = list[tuple[str, dict[str, Any]]]
LANGUAGE_KINDS = ("llm", "multimodal")
ITEM_KINDS = ("vision", "diffusion", "speech")          # counted in images or hours of audio, timed by their own speed
ITEM_UNIT = {"images": "images", "samples": "samples", "audio_hours": "hours of audio"}
DEFAULT_GENERATIONS = 8          # TRL GRPOConfig num_generations default (the Workload's rl_group default)


def training_work(slots: dict[str, Any], w: Workload) -> Work | None:
    """The work of a language model's training job as the user stated it, or None when no amount was said (or the
    job is not a language model's training). The same job run for each of N customers is N times one run's work."""
    work = _one_run_work(slots, w)
    runs = slots.get("runs")
    if work is None or not runs or runs < 2:
        return work
    k = float(runs)
    return work.model_copy(update={
        "amount": work.amount * k, "factors": [*work.factors, WorkFactor(value=k, unit="runs")],
        "tokens": work.tokens * k if work.tokens is not None else None,
        "generated_tokens": work.generated_tokens * k if work.generated_tokens is not None else None})


def runs_of(w: Workload, slots: dict[str, Any]) -> Workload:
    """The workload of all the runs ('a LoRA for each of 50 customers'): one run's images, samples or tokens x N, so
    that the time and the cost the planner gives are of all of them (the answer says one run's share)."""
    runs = slots.get("runs")
    if not runs or runs < 2 or w.task == "inference":
        return w
    if w.runs > 1:
        return w      # already all the runs'
    if w.kind in ITEM_KINDS or w.algorithm != "sft":
        update = {"runs": int(runs), **({"dataset_items": w.dataset_items * runs} if w.dataset_items else {})}
        return w.model_copy(update=update)
    return w.model_copy(update={"runs": int(runs)})   # SFT tokens: with_work took them from the Work, runs counted


def _one_run_work(slots: dict[str, Any], w: Workload) -> Work | None:
    if w.task == "inference":
        return None
    if w.kind in ITEM_KINDS and w.algorithm == "sft":
        return _item_work(slots, w)
    if w.kind not in LANGUAGE_KINDS:
        return None
    if w.algorithm in ONLINE:
        return _online_work(slots, w)
    if w.algorithm != "sft":
        return _pair_work(slots, w)
    return _sft_work(slots, w)


def _item_work(slots: dict[str, Any], w: Workload) -> Work | None:
    """An image, audio or denoiser job: steps x batch when steps are said (or the trainer's default steps), else the
    dataset x epochs, as the workload is timed (workload._with_dataset)."""
    if not w.dataset_items or not w.epochs:
        return None
    items = w.dataset_items / w.runs                      # one run's (runs_of counted all of them in the workload)
    amount = items * w.epochs
    unit = ITEM_UNIT.get(slots.get("dataset_unit") or "", "images")
    steps = slots.get("train_steps") or (round(amount / w.batch_size) if w.kind == "diffusion" and not slots.get("epochs")
                                         else None)
    if steps:
        factors = [WorkFactor(value=float(steps), unit="steps", said=bool(slots.get("train_steps"))),
                   WorkFactor(value=float(w.batch_size), unit="batch", said=bool(slots.get("batch_size")))]
    else:
        factors = [WorkFactor(value=float(items), unit=unit), WorkFactor(value=float(w.epochs), unit="epochs",
                                                                                said=bool(slots.get("epochs")))]
    return Work(kind="training", amount=amount, unit=unit, factors=factors, timed_as="items",
                assumed=[f.unit for f in factors if not f.said])


def _epochs(slots: dict[str, Any]) -> WorkFactor:
    epochs = slots.get("epochs")
    return WorkFactor(value=float(epochs), unit="epochs") if epochs else WorkFactor(value=1.0, unit="epochs", said=False)


def _sample_length(slots: dict[str, Any], w: Workload) -> WorkFactor:
    """Tokens per sample: the stated average; else the stated maximum length (an upper bound); else the sequence
    length the memory estimate assumes."""
    if slots.get("sample_tokens"):
        return WorkFactor(value=float(slots["sample_tokens"]), unit="tokens")
    if slots.get("seq_len"):
        return WorkFactor(value=float(slots["seq_len"]), unit="tokens", bound="at_most")
    return WorkFactor(value=float(w.seq_len), unit="tokens", said=False)


def _product(factors: list[WorkFactor]) -> float:
    out = 1.0
    for f in factors:
        out *= f.value
    return out


def _sft_work(slots: dict[str, Any], w: Workload) -> Work | None:
    items = slots.get("dataset_items")
    if slots.get("tokens"):
        factors = [WorkFactor(value=float(slots["tokens"]), unit="tokens")]
        if slots.get("epochs") and slots["epochs"] != 1:
            factors.append(_epochs(slots))          # '1B tokens, 3 epochs': three passes over them
    elif items and slots.get("dataset_unit") in ("samples", "pairs", "prompts"):
        factors = [WorkFactor(value=float(items), unit="samples"), _sample_length(slots, w), _epochs(slots)]
    else:
        return None
    amount = _product(factors)
    return Work(kind="training", amount=amount, unit="tokens", factors=factors, tokens=amount,
                packing=slots.get("packing"), assumed=[f.unit for f in factors if not f.said])


def _pair_work(slots: dict[str, Any], w: Workload) -> Work | None:
    """DPO-style: pairs (or KTO's samples) x sequences each x tokens per sequence x epochs, timed in pairs."""
    items = slots.get("dataset_items")
    if not items:
        return None
    unit = "pairs" if w.algorithm in PAIRED else "samples"
    seqs = 2 if w.algorithm in PAIRED else 1
    factors = [WorkFactor(value=float(items), unit=unit)]
    if seqs > 1:
        factors.append(WorkFactor(value=float(seqs), unit="sequences"))
    factors += [_sample_length(slots, w), _epochs(slots)]
    tokens = _product(factors)
    return Work(kind="posttraining", amount=float(items) * factors[-1].value, unit=unit, factors=factors,
                tokens=tokens, timed_as="items", packing=slots.get("packing"),
                assumed=[f.unit for f in factors if not f.said])


def _online_work(slots: dict[str, Any], w: Workload) -> Work | None:
    """GRPO/PPO: prompts x completions x generated tokens per completion (x epochs), timed in prompts."""
    items = slots.get("dataset_items")
    if not items:
        return None
    gens = slots.get("generations")
    group = WorkFactor(value=float(gens), unit="completions") if gens else \
        WorkFactor(value=float(w.rl_group if w.algorithm == "grpo" else 1), unit="completions", said=False)
    if w.algorithm == "ppo" and not gens:
        group = WorkFactor(value=1.0, unit="completions", said=False)
    length = _completion_length(slots, w)
    factors = [WorkFactor(value=float(items), unit="prompts"), group, length, _epochs(slots)]
    generated = _product(factors)
    prompts = float(items) * factors[-1].value
    trained = prompts * group.value * (w.seq_len + length.value)
    return Work(kind="posttraining", amount=prompts, unit="prompts", factors=factors, tokens=trained,
                generated_tokens=generated, timed_as="items", assumed=[f.unit for f in factors if not f.said])


def _completion_length(slots: dict[str, Any], w: Workload) -> WorkFactor:
    """Tokens each completion generates: the stated length; under a stated limit ('回复最长4k'), an assumed mean of
    ROLLOUT_MEAN_SHARE of it (the rollout is timed on the mean, its longest completion on the limit); else TRL's
    default limit, every completion at it."""
    gen_len = slots.get("generation_tokens")
    if gen_len and slots.get("generation_max"):
        return WorkFactor(value=float(max(1, round(gen_len * ROLLOUT_MEAN_SHARE))), unit="tokens", said=False,
                          bound="mean", limit=float(gen_len))
    if gen_len:
        return WorkFactor(value=float(gen_len), unit="tokens")
    return WorkFactor(value=float(w.rollout_len or DEFAULT_ROLLOUT_LEN), unit="tokens", said=False)


def with_work(w: Workload, work: Work | None, slots: dict[str, Any], notes: Notes) -> Workload:
    """The workload timed on the work: an SFT job's tokens; a post-training job's pairs or prompts (its dataset),
    epochs, completions per prompt and their length. Assumed factors are said back."""
    if work is None or w.kind in ITEM_KINDS:
        return w             # an image or audio job's dataset and epochs are set by workload._with_dataset
    notes.extend(_assumption_notes(work))
    if w.algorithm in ONLINE and not (slots.get("sample_tokens") or slots.get("seq_len")):
        notes.append(("assume.work_prompt_tokens", {"tokens": f"{w.seq_len:,}"}))
    if work.timed_as == "tokens":
        return w.model_copy(update={"tokens": work.amount})
    update: dict[str, Any] = {"dataset_items": float(work.factors[0].value), "epochs": _epochs_factor(work).value}
    if w.algorithm in ONLINE:
        group, length = work.factors[1], work.factors[2]
        if w.algorithm == "grpo":
            update["rl_group"] = max(1, int(group.value))
        update["rollout_len"] = max(1, int(length.limit or length.value))
        if length.limit:
            update["rollout_mean"] = max(1, int(length.value))
    return w.model_copy(update=update)


def _epochs_factor(work: Work) -> WorkFactor:
    return next(f for f in reversed(work.factors) if f.unit == "epochs")


def _assumption_notes(work: Work) -> Notes:
    notes: Notes = []
    for f in work.factors:
        if f.said and f.bound == "exact":
            continue
        if f.unit == "epochs":
            notes.append(("assume.epochs_one", {"epochs": f"{f.value:g}"}))
        elif f.unit == "tokens" and f.bound == "at_most":
            notes.append(("assume.work_max_length", {"tokens": f"{f.value:,.0f}"}))
        elif f.unit == "tokens" and f.bound == "mean":
            notes.append(("assume.work_generation_mean", {"mean": f"{f.value:,.0f}", "limit": f"{f.limit:,.0f}",
                                                          "share": f"{ROLLOUT_MEAN_SHARE:.0%}"}))
        elif f.unit == "tokens" and work.generated_tokens is not None:
            notes.append(("assume.work_generation_tokens", {"tokens": f"{f.value:,.0f}"}))
        elif f.unit == "tokens":
            notes.append(("assume.work_sample_tokens", {"tokens": f"{f.value:,.0f}"}))
        elif f.unit == "completions":
            notes.append(("assume.work_generations", {"n": f"{f.value:g}"}))
    if work.kind == "training" and work.packing is None and any(f.unit == "samples" for f in work.factors):
        notes.append(("assume.work_packing", {}))
    elif work.packing is False:
        notes.append(("assume.work_no_packing", {}))
    return notes
