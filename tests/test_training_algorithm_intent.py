"""A post-training algorithm that trains a policy (GRPO, DPO, PPO, ...) named beside its rollouts' generation words
('rollout 8 条, 最长生成 4k', '8 generations per prompt') is a training job, never an inference job that the post-training
estimator then refuses (set8 s8-12: a traceback, 'GRPO trains a model')."""
from hypothesis import HealthCheck, given, settings, strategies as st

TEMPLATES = {
    "zh": ["用 verl 跑 {a} 训 {m} 做数学推理，每个 prompt rollout {g} 条，最长生成 {n}，需要几张卡？",
           "{m} 上做 {a}，每个 prompt 采样 {g} 条，生成长度最长 {n}，要多少卡",
           "想用 {a} 对齐 {m}，每条 prompt 生成 {g} 个回答，最长 {n} token"],
    "en": ["run {a} on {m} with {g} generations per prompt, up to {n} tokens generated, how many GPUs?",
           "{a} training of {m}: sample {g} completions per prompt, max generation length {n}",
           "we want to do {a} with verl on {m}, rollout n={g}, response length {n}"],
}


@st.composite
def questions(draw):
    lang = draw(st.sampled_from(["zh", "en"]))
    return draw(st.sampled_from(TEMPLATES[lang])).format(
        a=draw(st.sampled_from(["GRPO", "grpo", "PPO", "DAPO", "RLHF"])),
        m=draw(st.sampled_from(["Qwen2.5-7B", "qwen2.5-1.5b", "llama 3.1 8b"])),
        g=draw(st.sampled_from([4, 8, 16])), n=draw(st.sampled_from(["4k", "2048", "8k"])))


@given(q=questions())
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          derandomize=True)
def test_a_training_algorithm_with_rollouts_is_a_training_job(core, q):
    parse = core.parser.parse(q)
    assert parse.intent in ("finetune", "train"), (q, parse.intent)
    reply, _ = core.turn(q, None)             # never a traceback
    assert reply.status in ("answer", "follow_up"), (q, reply.status, reply.text[:300])
    assert "trains a model" not in reply.text


def test_a_reward_model_that_only_scores_is_not_forced_to_training(core):
    assert core.parser.parse("score 2M pairs with a reward model, qwen2.5-7b, offline batch").intent != "finetune"
