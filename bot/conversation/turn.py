"""One conversation turn, a pure function: (text, session state) -> (reply, new state).

Surfaces (cli.py, slack_app.py) load the session, call `Core.turn`, then save the state and write the audit record.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.records import config
from bot.conversation import info
from bot.plan.advisor import Advisor
from bot.conversation.dialogue import Decision, changed_slots, load_forms, step
from bot.estimate.kinds import kind_of_model
from bot.plan.engine import RuleSet, load_rules
from bot.plan.workload import KIND_DEFAULT_MODEL, own_cards
from bot.knowledge.loader import KnowledgeBase, default_knowledge
from bot.records.errors import AdvisorError
from bot.records.models import Reply, ViewSection
from bot.conversation.nlu import Parser, load_lexicon
from bot.plan.cheaper import cheaper_options
from bot.conversation.pasted import find_config, model_card
from bot.estimate.hfconfig import essentials, missing_dimensions, model_from_config
from bot.records.errors import InvalidRequest
from bot.records.text import has_cjk, norm_key
from bot.knowledge.problems import did_you_mean
from bot.render.reply import Citer, compare_lines, sources_line
from bot.render.text import details_text, short_text
from bot.render.view import answer_view
from bot.render import consistency
from bot.render import verdicts as say_verdict
from bot.render import why as say_why
from bot.conversation.usage import ALWAYS_ON, usage_hours
from bot.conversation.workloads import NIGHT_HOURS, two_workloads
from bot.conversation.queue_turn import queue_verdict
from bot.conversation import sub_questions
from bot.plan.critic import verdict_problems
from bot.conversation.diagnose_turn import (DiagnoseReader, NcclReader, answer_diagnosis, answer_nccl,
                                            answer_platform_only, asks_platform_move, platform_before_question, platform_section)
from bot.conversation.why_turn import answer_why, asks_can_run, asks_why, can_run_first, replan_verdict, side_counts
from bot.conversation.versus import providers_said, read_versus, said_in_order, versus_follow_up
from bot.conversation.intents import JOB_INTENTS
from bot.plan.checklist import CARD_NOTES, ENGINE_NOTES
from bot.plan.billing import batch_spot_overhead, checkpoint_gb, spot_overhead
from bot.plan.load import serving_load
from bot.plan.candidates import MIN_HEADROOM
from bot.plan.capability import capability
from bot.conversation.sizing import INVERSE_ASKS, as_training_job, inverse_ask, sized_slots
from bot.plan import verdicts as verdict_math
from bot.render.templates import Templates, default_templates
from bot.render.work import work_text
from bot.render.own import money_text
from bot.render.changes import changed_line, changes_as_data
from bot.conversation.fleet_delta import HOURS_MONTH, fleet_delta, plan_cards, plan_summary
from bot.conversation.dialogue import _has_load
from bot.conversation.relative import offpeak_absolute, offpeak_scale


def _label_said(line: str, view) -> bool:
    """A line of the view already starts with `line`'s label ('Cost:', '费用：'): the same question answered twice."""
    label = re.match(r"[^:：]{1,12}[:：]", line)
    return bool(label) and any(x.startswith(label.group(0)) for sec in view.sections for x in sec.lines)


def _drop_label(line: str, view) -> str:
    """The first line of the view with `line`'s label (the same question's other answer), taken out and returned."""
    label = re.match(r"[^:：]{1,12}[:：]", line).group(0)
    found = next(x for sec in view.sections for x in sec.lines if x.startswith(label))
    for sec in view.sections:
        sec.lines = [x for x in sec.lines if x != found]
    view.sections = [sec for sec in view.sections if sec.lines or sec.more]
    return found


# 'how long' asked of a latency ('首 token 大概多久', 'how long until the first token', '每个 token 要多久'): answered by the
# serving estimate's TTFT / TPOT, never as a job's duration needing an amount of work
LATENCY_ASK = re.compile(r"(?:首\s*(?:个\s*)?token|首字|first[- ]token|ttft|time to first|每个\s*token|per[- ]token|tpot|延迟|"
                         r"latency|响应时间)[^,，。.?？;；]{0,10}(?:多久|多长时间|多少毫秒|how long|how many ms)|"
                         r"(?:how long|多久)[^,，。.?？;；]{0,16}(?:first[- ]token|首\s*token|ttft)")


@dataclass
class Core:
    kb: KnowledgeBase
    rules: RuleSet
    parser: Parser
    forms: dict[str, Any]
    templates: Templates
    advisor: Advisor

    @classmethod
    def load(cls, knowledge_dir: Path | None = None, rules_dir: Path | None = None,
             default_provider: str | None = None) -> "Core":
        from bot.knowledge.loader import load_knowledge
        kb = load_knowledge(knowledge_dir, config.local_prices_file()) if knowledge_dir else default_knowledge()
        rdir = Path(rules_dir) if rules_dir else config.rules_dir()
        t = default_templates()
        rules = load_rules(rdir, set(kb.sources), t.keys)
        parser = Parser(kb, load_lexicon(rdir))
        forms = {**load_forms(rdir), "model_kinds": {m.id: kind_of_model(m) for m in kb.models.values()}}
        return cls(kb, rules, parser, forms, t, Advisor(kb, rules, t, default_provider or config.default_provider()))

    @property
    def version(self) -> str:
        return f"{self.kb.version}+{self.rules.version}"

    # ----- the turn ----------------------------------------------------------------------------------------------
    def turn(self, text: str, state: dict[str, Any] | None = None, today: Any = None) -> tuple[Reply, dict[str, Any]]:
        if not (state or {}).get("slots") and text and (split := two_workloads(self.parser, text)) is not None:
            return self._two_workloads(split, today)
        return self._one_turn(text, state, today)

    def _two_workloads(self, split: Any, today: Any) -> tuple[Reply, dict[str, Any]]:
        """A service and a batch job in one message (workloads.py): each sized on its own, in the order said, under
        a line that says so; the conversation goes on about the service."""
        serving, s_state = self._one_turn(split.serving, None, today)
        batch, _ = self._one_turn(split.batch, None, today)
        lang = serving.lang
        say = self.templates.say
        parts = [(say("workloads.serving", lang), serving), (say("workloads.batch", lang), batch)]
        if not split.serving_first:
            parts.reverse()
        lines = [say("workloads.two", lang)]
        for i, (head, r) in enumerate(parts, 1):
            lines += ["", f"{i}) {head}", r.text]
        if split.night_assumed:
            lines += ["", say("workloads.night_assumed", lang, hours=NIGHT_HOURS)]
        notes = [*serving.notes, *batch.notes]
        if split.night_assumed:
            notes.append(say("workloads.night_assumed", lang, hours=NIGHT_HOURS))
        reply = serving.model_copy(update={
            "text": "\n".join(lines), "notes": notes,
            "recommendations": [*serving.recommendations, *batch.recommendations],
            "targets": [*serving.targets, *batch.targets],
            "assumptions": [*serving.assumptions, *batch.assumptions],
            "citations": serving.citations or batch.citations})
        return reply, s_state

    def _one_turn(self, text: str, state: dict[str, Any] | None = None, today: Any = None
                  ) -> tuple[Reply, dict[str, Any]]:
        pasted = find_config(text or "")
        parse = self.parser.parse(pasted.text, today=today)
        if pasted.error or pasted.config is not None:
            named = model_card(pasted.text) or (state or {}).get("card")      # 'org/name' asked about before
            problem = self._use_config(parse, pasted, named)
            if problem:
                lang = parse.lang if parse.text.strip() else (dict(state or {}).get("lang") or parse.lang)
                return Reply(status="info", lang=lang, intent=parse.intent, slots={}, kb_version=self.version,
                             text=self.templates.say(problem[0], lang, **problem[1])), dict(state or {})
        # a card named in answer to 'which card is it?' is that answer, not a question about the card
        if parse.intent is None and (state or {}).get("pending") != "gpu_model" and self._names_a_claim(parse.text):
            parse.intent, parse.out_of_scope = "explain", False     # "is p3s.large real?"
        bad = self._bad_comparison(parse)
        if bad:
            lang = parse.lang if parse.lang_sure else (dict(state or {}).get("lang") or parse.lang)
            text = self.templates.say(bad[0], lang, **bad[1])
            return Reply(status="info", lang=lang, intent="compare", slots={}, kb_version=self.version, text=text,
                         verdict={"kind": "bad_input", **bad[1], "line": text}), dict(state or {})
        found = self.diagnose.measured(parse.text, parse.slots)
        if found and not pasted.config:
            # 'we get 300 tok/s on an A10G, is that normal?', '为什么 MFU 只有 15%': the measured number against this
            # advisor's estimate for that hardware, a verdict and the causes; never sized as a new job
            return answer_diagnosis(self, parse, dict(state or {}), found)
        nccl = self.nccl.topics(parse.text, bool(parse.slots.model or parse.slots.params_b or parse.intent in JOB_INTENTS)
                                ) if not pasted.config else []
        if nccl:
            # 'busbw shows ~40 GB/s, is that normal?', 'NCCL says NET/Socket inside docker': NCCL's notes, never a
            # job to size nor 'NET/Socket.' as a model not on file
            return answer_nccl(self, parse, dict(state or {}), nccl)
        moved = asks_platform_move(self, parse)
        if moved:
            # 'what breaks if we move this to Ascend 910B': that platform's notes, and the job planned there
            if not (parse.slots.model or parse.slots.params_b or parse.ambiguous.get("model")
                    or (state or {}).get("answered") or parse.intent in JOB_INTENTS):
                return answer_platform_only(self, parse, dict(state or {}), moved)
            parse.platform, parse.out_of_scope = moved, False
            parse.slots.gpu_model, parse.slots.gpu_models = moved, None
            if parse.intent not in JOB_INTENTS:
                parse.intent = None
        cap = self._capability_ask(parse)
        if cap and not (parse.slots.model or parse.slots.params_b or parse.ambiguous.get("model")):
            # 'V100 能用 bf16 训练吗', 'does the T4 support bf16?': yes or no about the card, no job to size
            lang = parse.lang if parse.lang_sure else (dict(state or {}).get("lang") or parse.lang)
            cite = Citer(self.kb)
            line = cite.after(self._capability_line(cap, lang), cap["sources"])
            text = line + "\n" + sources_line(cite.citations(), lang, self.templates)
            return Reply(status="info", lang=lang, intent="explain", slots={}, kb_version=self.version, text=text,
                         citations=cite.citations(), verdict={**cap, "line": line}), dict(state or {})
        parse.capability = cap
        self._series_card(parse)
        quant = self._quant_speed(parse, state or {})
        why = None if quant else asks_why(parse, state or {})
        if why == "why_count" and self._about_the_plan(parse, state or {}, self._asks(parse.text)):
            # 'why so many cards?', 'why 6 GPUs?': the plan's own account of its whole fleet (replicas x cards for the
            # load, memory, time), not one replica's cards against memory
            why = None
        if why:
            # 'why not just 4x4090?', '为什么会爆显存' after a plan: this job's numbers first, never a primer
            found = answer_why(self, parse, dict(state or {}), why)
            if found:
                return found
        if self._asks_about_a_flavor(parse):
            parse.intent, parse.out_of_scope = "explain", False     # "which card is p2s?", "pi2 是什么卡"
        parse.versus = read_versus(self.parser, self.kb, parse, self.advisor.default_provider) or \
            versus_follow_up(self.kb, parse, (state or {}).get("versus"), self.advisor.default_provider)
        if not parse.versus:        # two flavors compared are two kinds of hardware, not the job's one
            self._flavor_as_hardware(parse)
        if parse.versus:
            self._versus_job(parse, state or {})
        self._cloud_of_flavors(parse)
        asks = self._asks(parse.text)
        inverse = inverse_ask(parse, asks, state)
        if inverse:          # 'the biggest model $50k trains?': a pre-training job whose size is what is asked
            as_training_job(parse, inverse, state, (usage_hours(parse.text, self.parser._num) or {}).get("span_days"))
        if asks and (parse.intent is None or parse.intent in JOB_INTENTS) and (state or {}).get("answered"):
            # '要多久？', 'is 1000 USD enough?' after a job, and with a job verb in it ('那要训多久', 'how long to
            # train it?'): a question about the job just answered, not a new one and not out of scope
            parse.job_words, parse.out_of_scope = True, False
        sub_asked = self._sub_questions.asked(parse.text)
        if (state or {}).get("answered") and (state or {}).get("intent") in JOB_INTENTS and not parse.versus \
                and (parse.intent is None or parse.out_of_scope or (parse.intent == "billing" and sub_asked == ["cost"]))\
                and not parse.reset and not (parse.slots.filled().keys() - {"topic", "deadline_days", "provider"}) \
                and sub_asked:
            # 'how much per month?', '要花多少钱？', 'can it finish within 1 day?' after a plan: a sub-question about the
            # job just answered, answered first from its plan (bot/conversation/sub_questions.py), never out of scope
            # and never a billing primer
            parse.intent, parse.job_words, parse.out_of_scope = None, True, False
            parse.slots.topic = None
        about = None if quant else self._about_the_plan(parse, state or {}, asks)
        state = dict(state or {})
        if not about and self._asks_past_the_question(parse, state, asks):
            # 'how long then?', '多少钱？' instead of answering 'full, LoRA or QLoRA?': the job answered now with what
            # it assumes for what is still open (no further question), and the question the turn asks answered
            parse.unsure, parse.out_of_scope, parse.intent, parse.job_words = True, False, None, True
            parse.slots.topic = None
            state["follow_ups"] = int(self.forms.get("max_follow_ups", 2))
            if "cost" in self._plan_asks(parse.text) or ALWAYS_ON.search(parse.text.lower()):
                about = {"ask": "cost"}
        card = model_card(pasted.text) if pasted.config is None else None
        if card and not (parse.slots.model or parse.slots.params_b or parse.ambiguous.get("model")):
            # a model card not on file is another model: the one discussed so far is not carried over to it
            state["slots"] = {k: v for k, v in (state.get("slots") or {}).items()
                              if k not in ("model", "params_b", "arch")}
        same_arch = self._resolve_against_state(parse, state)
        off = self._off_peak(parse, state)
        new_state, decision = step(state, parse, self.forms)
        was = (state.get("slots") or {}).get("modality")
        if was and not parse.reset and not parse.slots.model and not parse.ambiguous.get("model") \
                and not (new_state.get("slots") or {}).get("model"):
            # 'it's about 0.5B' after a TTS job not on file: still that job, never a language model of that size
            new_state["slots"] = {**(new_state.get("slots") or {}), "modality": was}
        if off:      # the card was pinned so the hours off peak are the same fleet scaled down: not a change said
            decision.changed = [c for c in (decision.changed or []) if c[0] not in ("gpu_model", "gpu_allowed")]
        if same_arch:
            new_state["same_arch"] = same_arch          # said in the answer, whenever it comes
        elif parse.slots.model or parse.ambiguous.get("model"):
            new_state.pop("same_arch", None)
        lang = new_state.get("lang") or parse.lang
        kind_of_job = self._unknown_non_llm(new_state, decision)
        if kind_of_job == "not_on_file" and decision.kind in ("answer", "ask", "out_of_scope"):
            return self._uncovered_modality(new_state, lang), new_state
        if (new_state.get("slots") or {}).get("modality") and not (new_state.get("slots") or {}).get("model") \
                and decision.kind in ("answer", "ask", "out_of_scope"):
            # 'XTTS-v2 for 200 TTS streams', 'Wan2.1-T2V-14B, 100 clips a day': a modality with no estimator is never
            # planned as a language model; said plainly, with what its name tells and how to size it
            return self._uncovered_modality(new_state, lang), new_state
        decision, new_state = self._worth_asking(decision, new_state, lang)
        if parse.invalid or parse.absurd:
            reply, new_state = self._bad_number(parse, lang, state, new_state)
        elif inverse and decision.kind == "answer":
            reply = self._inverse_reply(decision, lang, inverse)
            new_state.update(inverse=inverse, slots=sized_slots(new_state.get("slots") or {}, reply.verdict or {}))
        else:
            new_state.pop("inverse", None)
            reply = self._reply(decision, parse, lang, new_state)
            if reply.status == "answer":
                reply, new_state = self._which_card(reply, new_state, lang)
            if reply.status == "answer" and not about and any(c[0] == "usage_hours_month" for c in decision.changed):
                about = {"ask": "cost"}         # 'only 8 hours a day': what the hours said cost a month
            if reply.status == "answer" and about:
                self._said_about_the_plan(reply, about, lang)
            if not about and decision.kind == "answer" and not (reply.verdict or {}).get("line"):
                replan_verdict(self, parse, state, decision, reply, lang)   # 'wouldn't 8x A10 be cheaper?'
            if decision.kind == "answer" and not (reply.verdict or {}).get("line"):
                # '一天 200 单，下单后 1 小时内出，要常驻多少卡': the job per order sized as a queue
                q = queue_verdict(self.templates, parse.text, reply, new_state.get("slots") or {}, lang,
                                  self.advisor.headroom()["utilisation"])    # rules/critic.yaml headroom
                if q:
                    reply.verdict = q
            if not about and decision.kind == "answer" and state.get("answered") and parse.intent is None \
                    and parse.job_words and not decision.changed \
                    and not asks and not (parse.slots.filled().keys() - {"topic"}) \
                    and not self._sub_questions.asked(parse.text):
                # 'use unsloth', 'the dataset is 50k samples': heard, and said plainly that the sizing stays; a
                # figure that was not read is never said to change nothing: the plan is the one before, said so
                unread = re.search(r"\d|[一二两三四五六七八九十百千万]", parse.text)
                self._said_first(reply, self.templates.say("refine.unread" if unread else "refine.same", lang), lang)
        if parse.platform and reply.status == "follow_up":
            platform_before_question(self, reply, lang, parse.platform)     # the notes, then what the job is
        if decision.kind == "ask" and asks_can_run(parse):
            new_state["can_run_asked"] = True      # 'can a 910B serve llama 70b?' -> 'which llama?': still asked
        elif decision.kind == "answer":
            new_state.pop("can_run_asked", None)
        if parse.versus and decision.kind == "answer" and (reply.verdict or {}).get("chosen"):
            # the job was answered on the side the comparison preferred: its follow-ups ('cheaper?') stay there
            new_state["slots"] = {**(new_state.get("slots") or {}), **reply.verdict["chosen"]}
        if parse.versus and (reply.verdict or {}).get("kind") == "compare":
            # kept for a follow-up that adds a side ('what about just lambda on-demand?')
            new_state["versus"] = {**{k: parse.versus[k] for k in ("axis", "values", "labels")},
                                   "slots": {**(parse.versus.get("slots") or {}),
                                             **{k: v for k, v in (decision.slots or {}).items() if k != "topic"}},
                                   "rental_hours": (reply.verdict.get("rental") or {}).get("hours"),
                                   "chosen": reply.verdict.get("chosen") or {},
                                   "job_intent": reply.verdict.get("job_intent")}
        elif parse.slots.model or parse.slots.params_b or parse.reset:
            new_state.pop("versus", None)
        self._compared_again(reply, state, new_state, lang)
        if reply.status == "answer" and state.get("compared") and (state.get("aside") or {}).get("intent") == "compare":
            self._against_compared(reply, state["compared"], lang)     # 'use the A10 instead' after 'A100 or H100?'
        if card and decision.kind == "ask" and decision.missing == ["model"] and not parse.slots.model:
            # 'org/name' not on file: ask for its config.json or its size, naming it
            reply.text = reply.follow_up = self.templates.say("ask.model_card", lang, name=card)
            reply.choices = []
            new_state["card"] = card
        if quant and reply.status == "answer":
            self._quant_speed_lines(reply, (state.get("plan") or {}).get("fleet"), quant, lang)
        if off and reply.status == "answer" and reply.changed:
            self._off_peak_line(reply, off, lang)
            # the hours off peak were sized for this answer; the job is still its peak load and its plan
            new_state["slots"], new_state["plan"] = dict(state.get("slots") or {}), state.get("plan")
        elif reply.status == "answer":
            new_state["plan"] = _plan_of(reply)       # what 'faster?' and 'why so many cards?' are about next
        reply.kb_version = self.version
        self._verdicts_agree(reply)
        return reply, new_state

    def _verdicts_agree(self, reply: Reply) -> None:
        """The critic's verdict-agreement invariant (bot/plan/critic.verdict_problems): a verdict line that its own
        plan numbers contradict is left out (the answer says less rather than something false) and rule_trace says
        what; in tests that trace is a failure (tests/conftest.py)."""
        found = verdict_problems(reply.model_dump(include={"status", "verdict", "recommendations", "rule_trace"}),
                                 verdict_math.COST_TIE)
        if not found:
            return
        bad = {p["line"] for p in found if p["line"]}
        if reply.view is not None and bad:
            for sec in reply.view.sections:
                sec.lines = [x for x in sec.lines if x not in bad]
            reply.view.sections = [sec for sec in reply.view.sections if sec.lines or sec.more]
        if bad:
            reply.text = "\n".join(x for x in reply.text.split("\n") if x not in bad)
        reply.rule_trace.append({"rule": "critic.verdict-agreement", "fired": True,
                                 "because": "; ".join(p["what"] for p in found[:4]), "problems": found})

    @property
    def nccl(self) -> NcclReader:
        if not hasattr(self, "_nccl"):
            self._nccl = NcclReader(self.parser.lex)
        return self._nccl

    @property
    def diagnose(self) -> DiagnoseReader:
        if not hasattr(self, "_diagnose"):
            self._diagnose = DiagnoseReader(self.parser.lex)
        return self._diagnose

    def _unknown_non_llm(self, state: dict[str, Any], decision: Decision) -> str | None:
        """A model named that is not on file ('canary-1b', 'HiDream-I1-17B') for a job of an image, audio or vision
        kind said in words: never a Llama-like language model. Sized as the kind's model on file when its size is
        within 2x of that model's ('sized_as_kind', said first in the answer); else 'not_on_file' (no plan)."""
        slots = state.get("slots") or {}
        kind, name, params = slots.get("kind"), slots.get("model_name"), slots.get("params_b")
        if not (kind in KIND_DEFAULT_MODEL and name and params) or kind == "multimodal":
            return None
        if slots.get("model") and slots.get("model") != slots.get("sized_as_kind"):
            slots.pop("sized_as_kind", None)         # a model on file named since: that one
            return None
        same = [m for m in self.kb.models.values() if kind_of_model(m) == kind]
        ref = min(same, key=lambda m: (abs(math.log(params / m.params_b)), m.id), default=None)
        if ref is None or not 0.5 <= params / ref.params_b <= 2:
            return "not_on_file"
        slots["sized_as_kind"] = ref.id
        for s in (slots, decision.slots):
            if s is not None:
                s["model"], s["params_b"], s["sized_as_kind"] = ref.id, ref.params_b, ref.id
        state["slots"] = slots
        return "sized_as_kind"

    def _uncovered_modality(self, state: dict[str, Any], lang: str) -> Reply:
        """A text-to-speech, video or music job whose model is not on file: what is not on file, what its name
        tells (the weights of the size it states), and how to size it, never a token-serving plan."""
        t, slots = self.templates, dict(state.get("slots") or {})
        mod = slots.get("modality") or slots["kind"]
        what = t.say(f"modality.{mod}.what", lang)
        unit = t.say(f"modality.{mod}.unit", lang)
        same = [m for m in self.kb.models.values() if kind_of_model(m) == mod] if not slots.get("modality") else []
        if same and slots.get("params_b"):
            # an image or audio kind with models on file, none of a like size: not sized as the nearest either
            near = min(same, key=lambda m: (abs(math.log(slots["params_b"] / m.params_b)), m.id))
            lines = [t.say("modality.none_close", lang, name=slots.get("model_name") or what, what=what,
                           params=f"{slots['params_b']:g}", model=near.name, ref_params=f"{near.params_b:.3g}", unit=unit)]
        elif slots.get("model_name"):
            lines = [t.say("modality.not_on_file", lang, name=slots["model_name"], what=what, unit=unit)]
        else:
            lines = [t.say("modality.not_on_file_unnamed", lang, what=what, unit=unit)]
        if slots.get("params_b"):
            gib = slots["params_b"] * 2e9 / 2 ** 30
            lines.append(t.say("modality.weights", lang, params=f"{slots['params_b']:g}", gib=f"{gib:.1f}"))
        else:
            lines.append(t.say("modality.no_size", lang))
        lines.append(t.say("modality.what_to_do", lang, measure=t.say(f"modality.{mod}.measure", lang)))
        return Reply(status="info", lang=lang, intent=state.get("intent"), slots=slots, kb_version=self.version,
                     text="\n".join(lines), verdict={"kind": "modality_not_on_file", "modality": mod,
                                                     "line": lines[0]})

    # ----- a follow-up about the plan just answered: 'faster?', 'why so many cards?', 'spot?' ------------------------
    def _plan_asks(self, text: str) -> list[str]:
        if not hasattr(self, "_plan_cues"):
            from bot.conversation.cues import CueSet, _both
            self._plan_cues = {k: CueSet(_both(v)) for k, v in (self.parser.lex.get("plan_asks") or {}).items()}
        return [k for k, cues in self._plan_cues.items() if cues.any(text)]

    def _about_the_plan(self, parse, state: dict[str, Any], asks: list[str]) -> dict[str, Any] | None:
        """A follow-up that asks about the plan the last answer led with, naming no job of its own: 'faster?' / '能更快吗'
        re-plans the same job for a quarter of its time (a service: half its time per token), 'why so many cards?' /
        '为什么要这么多卡' answers the same job with why its fleet is that size first, 'spot?' / '用抢占式行吗' after a
        training job answers it with the spot verdict first. The parse is turned into a refinement of the job."""
        if not state.get("answered") or state.get("intent") not in JOB_INTENTS or parse.reset:
            return None
        s = parse.slots
        if s.model or s.params_b or parse.ambiguous.get("model") or s.gpu_models or parse.versus:
            return None
        said = self._plan_asks(parse.text)
        plan = state.get("plan") or {}
        self._bare_hours_of_audio(parse, state)
        if "why" in said and parse.intent in (None, "explain", "compare"):
            parse.intent, parse.out_of_scope, parse.job_words = None, False, True
            s.gpus = s.nodes = None         # 'why do we need 16 GPUs?' asks about the plan's count, it sets none
            return {"ask": "why"}
        if "smaller" in said and parse.intent in (None, "explain", "inference", "finetune", "train"):
            smaller = self._smaller_model((state.get("slots") or {}).get("model"))
            parse.intent, parse.out_of_scope, parse.job_words = None, False, True
            if smaller:
                s.model, s.params_b = smaller, self.kb.models[smaller].params_b
                return None          # the model changed: the change line says it
            return {"ask": "smaller_none"}
        done = state.get("slots") or {}
        batch = state["intent"] == "inference" and any(done.get(k) for k in ("offline", "items", "dataset_items"))
        if "spot" in asks and parse.intent in (None, "billing") and (state["intent"] in ("train", "finetune") or batch) \
                and not usage_hours(parse.text, self.parser._num):
            parse.intent, parse.out_of_scope, parse.job_words = None, False, True
            s.topic = None
            return {"ask": "spot"}
        if ALWAYS_ON.search(parse.text.lower()) and parse.intent in (None, "explain", "billing", state["intent"]) \
                and not _BILLING_MODE.search(parse.text.lower()):
            # 'what if it's 24/7', '全天候运行呢': the hours of use are all of them (a schedule said before goes), and
            # what that costs is the answer; never a model's name or the help text
            parse.intent, parse.out_of_scope, parse.job_words = None, False, True
            s.topic = None
            if (state.get("slots") or {}).get("usage_hours_month"):
                s.usage_hours_month, s.usage_hours_day, s.usage_days_week = float(HOURS_MONTH), 24.0, 7.0
            return {"ask": "cost"}
        if "cost" in said and parse.intent in (None, "explain", "billing", state["intent"]) and not s.budget_amount \
                and not ({"enough", "memory", "spot"} & set(asks)) and not _BILLING_MODE.search(parse.text.lower()):
            # 'and per month?', '一个月多少钱', 'how much then?': the plan's cost, said first; the job is kept (with what
            # else the turn changes: 'how much for 100 users?')
            parse.intent, parse.out_of_scope, parse.job_words = None, False, True
            s.topic = None
            return {"ask": "cost"}
        if "faster" not in said or parse.intent not in (None, "explain") or s.deadline_days or s.tpot_ms:
            return None
        parse.intent, parse.out_of_scope, parse.job_words = None, False, True
        if plan.get("hours"):
            s.deadline_days = round(plan["hours"] / 4 / 24, 4)
            return {"ask": "faster", "was_hours": plan["hours"], "target_hours": plan["hours"] / 4}
        if plan.get("tpot_ms"):
            s.tpot_ms = max(5.0, round(plan["tpot_ms"] / 2, 1))
            return {"ask": "faster", "was_tpot": plan["tpot_ms"], "target_tpot": s.tpot_ms}
        return {"ask": "faster"}

    _HOURS = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(k|w|万|千)?\s*(?:hours?|hrs?|h|小时)(?![a-z])")

    def _asks_past_the_question(self, parse, state: dict[str, Any], asks: list[str]) -> bool:
        """A job's question pending ('full, LoRA or QLoRA?') and the turn, instead of answering it, asks about the
        plan (how long, what it costs) and names nothing new: never the help text."""
        if state.get("answered") or state.get("intent") not in JOB_INTENTS or state.get("pending") in (None, "intent"):
            return False
        s = parse.slots
        if s.model or s.params_b or parse.ambiguous.get("model") or parse.reset or parse.versus \
                or (s.filled().keys() - {"topic"}):
            return False
        if parse.intent not in (None, "explain", "billing", state["intent"]) or _BILLING_MODE.search(parse.text.lower()):
            return False
        return bool({"how_long", "enough"} & set(asks)) or "cost" in self._plan_asks(parse.text) \
            or bool(ALWAYS_ON.search(parse.text.lower()))

    def _bare_hours_of_audio(self, parse, state: dict[str, Any]) -> None:
        """'actually it's 40k hours, not 12k' after a transcription of 12k hours of audio: hours with no word of audio
        are the job's amount when its amount is hours of audio (a deadline said in hours is read as one before)."""
        old = state.get("slots") or {}
        s = parse.slots
        if old.get("dataset_unit") != "audio_hours" or s.dataset_items or s.deadline_days or parse.intent:
            return
        m = self._HOURS.search(parse.text)
        if not m:
            return
        hours = float(m.group(1)) * {"k": 1e3, "千": 1e3, "w": 1e4, "万": 1e4}.get(m.group(2) or "", 1)
        if hours >= 24:           # less than a day of audio is more likely a time than the amount
            s.dataset_items, s.dataset_unit = hours, "audio_hours"
            parse.out_of_scope, parse.job_words = False, True

    def _smaller_model(self, mid: str | None) -> str | None:
        """The next size down of the model planned, in its own line (same family and kind, the same name before the
        size: Qwen2.5-72B -> Qwen2.5-32B, Llama 3.1 70B -> Llama 3.1 8B); None when it is the smallest on file."""
        m = self.kb.models.get(mid or "")
        if m is None or not m.family:
            return None
        stem = re.sub(r"[-_.]?\d+(?:\.\d+)?[bm](?:[-_].*)?$", "", m.id)
        same = [x for x in self.kb.models.values() if x.family == m.family and x.id != m.id and x.params_b < m.params_b
                and kind_of_model(x) == kind_of_model(m)
                and re.sub(r"[-_.]?\d+(?:\.\d+)?[bm](?:[-_].*)?$", "", x.id) == stem]
        return max(same, key=lambda x: (x.params_b, x.id)).id if same else None

    def _said_about_the_plan(self, reply: Reply, about: dict[str, Any], lang: str) -> None:
        """The line that answers a follow-up about the plan, said first (after what changed, which it replaces for
        'faster?': the target it set is the change)."""
        t = self.templates
        rental = next((r for r in reply.recommendations if r.get("label") != "yours"), None)
        # 'why so many cards?' is about the plan the answer led with: the user's own cards when it did
        rec = next(iter(reply.recommendations), None) if about["ask"] == "why" else rental
        line = None
        if about["ask"] == "faster" and about.get("was_hours"):
            now = rec.get("job_hours") if rec else None
            line = t.say("plan_ask.faster_hours", lang, was=_hours_text(about["was_hours"]),
                         target=_hours_text(about["target_hours"]),
                         now=_hours_text(now) if now else "-", cost=_money(rec, "job_cost"))
        elif about["ask"] == "faster" and about.get("was_tpot"):
            line = t.say("plan_ask.faster_tpot", lang, was=f"{about['was_tpot']:g}", target=f"{about['target_tpot']:g}")
        elif about["ask"] == "faster":
            line = t.say("plan_ask.faster_none", lang)
        elif about["ask"] == "smaller_none":
            name = self.kb.models[reply.slots["model"]].name if reply.slots.get("model") in self.kb.models else ""
            line = t.say("plan_ask.smaller_none", lang, model=name)
        elif about["ask"] == "why" and rec:
            line = self._why_line(rec, reply, lang)
        elif about["ask"] == "cost" and rental:
            line = self._cost_line(rental, reply.slots or {}, lang)
        if not line or reply.view is None:
            return
        if about["ask"] == "cost" and _label_said(line, reply.view):
            # the sub-question's cost verdict (checked by the critic) already answers it: that one, said once, here
            line = _drop_label(line, reply.view)
        if about["ask"] == "faster":
            reply.view.sections = [x for x in reply.view.sections if x.key != "changed"]
        # the answer to the question comes right after what the turn changed ('how much for 100 users?')
        at = 1 if reply.view.sections and reply.view.sections[0].key == "changed" and about["ask"] == "cost" else 0
        reply.view.sections.insert(at, ViewSection(key="plan_ask", lines=[line]))
        reply.text, reply.details = short_text(reply.view, self.templates, lang), details_text(reply.view,
                                                                                                self.templates, lang)

    def _cost_line(self, rec: dict[str, Any], slots: dict[str, Any], lang: str) -> str:
        """What the plan costs: a job's whole cost (its hours on its cards), else a service's hour, always-on month and
        year, and the month at the hours of use said ('8 hours a day')."""
        t = self.templates
        hourly = rec.get("hourly_total") or rec.get("price_per_hour")
        ccy = rec.get("currency") or ""
        cards = plan_cards(rec)
        gpu = self.kb.gpus[rec["gpu"]].name if rec.get("gpu") in self.kb.gpus else str(rec.get("gpu") or "")
        if rec.get("job_cost") is not None and rec.get("job_hours"):
            return t.say("plan_ask.cost_job", lang, cost=_money(rec, "job_cost"), hours=_hours_text(rec["job_hours"]),
                         cards=cards, gpu=gpu, hourly=f"{money_text(float(hourly or 0))} {ccy}".strip())
        if not hourly:
            return t.say("plan_ask.cost_none", lang)
        h = float(hourly)
        line = t.say("plan_ask.cost_service", lang, hourly=f"{money_text(h)} {ccy}".strip(), cards=cards,
                     gpu=gpu, month=f"{money_text(h * HOURS_MONTH)} {ccy}".strip(),
                     year=f"{money_text(h * HOURS_MONTH * 12)} {ccy}".strip())
        used = slots.get("usage_hours_month")
        if used and 0 < float(used) < HOURS_MONTH:
            line += t.say("plan_ask.cost_used", lang, hours=f"{float(used):,.0f}",
                          month=f"{money_text(h * float(used))} {ccy}".strip())
        return line

    def _why_line(self, rec: dict[str, Any], reply: Reply, lang: str) -> str:
        """Why the plan is that many cards: a service's copies x cards a copy against its load; a job's cards against
        the memory each holds and the time (or the deadline) they meet."""
        t = self.templates
        total = rec.get("gpus_total") or 1
        per = rec.get("per_gpu_gib")
        mem = rec.get("gpu_memory_gib")
        cap = rec.get("capacity") or {}
        base = dict(total=total, gpu=rec.get("gpu_name") or rec.get("gpu"), gib=f"{per:,.1f}" if per else "-",
                    mem=f"{mem:g}" if mem else "-")
        if cap.get("replicas") and cap.get("per_replica"):
            unit = t.say(f"plan_ask.unit.{cap.get('unit')}", lang) if f"plan_ask.unit.{cap.get('unit')}" in t.table \
                else str(cap.get("unit") or "")
            per_copy = cap.get("gpus_per_replica") or max(1, total // max(1, cap["replicas"]))
            base["total"] = per_copy * cap["replicas"]
            return t.say("plan_ask.why_service", lang, **base, copies=cap["replicas"], per_copy=per_copy,
                         rate=f"{cap['per_replica']:,.3g}", load=f"{cap.get('load') or 0:,.4g}", unit=unit)
        hours = rec.get("job_hours")
        deadline = (reply.slots or {}).get("deadline_days")
        if hours and total > 1:
            half = max(1, total // 2)
            try:          # does half the cards hold the job at all? (the estimate's layout for that count)
                need = self.advisor.need_on(reply.intent or "finetune", reply.slots or {}, {}, lang, half)
            except (AdvisorError, KeyError, TypeError, ValueError, ZeroDivisionError):
                need = None
            if need is not None and mem and need > 0.95 * mem:
                return t.say("plan_ask.why_half_oom", lang, **base, hours=_hours_text(hours), half=half,
                             need=f"{need:,.1f}")
            key = "plan_ask.why_deadline" if deadline else "plan_ask.why_job"
            return t.say(key, lang, **base, hours=_hours_text(hours), half=half,
                         half_hours=_hours_text(hours * 2), days=f"{deadline:g}" if deadline else "")
        return t.say("plan_ask.why_memory", lang, **base)

    def _said_first(self, reply: Reply, line: str, lang: str) -> None:
        """A line said before the reply, on every surface: into an answer's view (the text re-rendered from it)."""
        if reply.view is None:
            reply.text = line + "\n" + reply.text
            return
        reply.view.sections.insert(0, ViewSection(key="said", lines=[line]))
        reply.text = short_text(reply.view, self.templates, lang)

    def _use_config(self, parse, pasted, named: str | None) -> tuple[str, dict[str, Any]] | None:
        """A pasted config.json becomes the question's model: its architecture in the slots (the keys the
        estimator reads) and the parameter count computed from it, replacing whatever model the words named; it
        is called by the model card the question (or the one before) named, when the config names none.
        What was wrong with it, as a template key and its values, when it cannot be used."""
        if pasted.error:
            return "config.bad_json", pasted.error
        missing = missing_dimensions(pasted.config)
        if missing:
            return "config.no_dims", {"missing": ", ".join(missing)}
        arch = essentials(pasted.config)
        if named and not arch.get("_name_or_path"):
            arch["_name_or_path"] = named
        try:
            model, _ = model_from_config(arch, name=str(arch.get("_name_or_path") or "config.json"))
        except (InvalidRequest, TypeError, ValueError, ZeroDivisionError):
            return "config.no_dims", {"missing": "numeric dimensions (intermediate_size, vocab_size, head_dim ...)"}
        parse.slots.model, parse.slots.params_b, parse.slots.arch = None, model.params_b, arch
        parse.ambiguous.pop("model", None)
        parse.candidate_params.clear()
        parse.unknown_model = None
        return None

    # ----- ask only what changes the answer -------------------------------------------------------------------
    def _plausible(self, d: Decision, state: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The values a question would offer, each as the slots it would set: the methods for 'full, LoRA or QLoRA?',
        the candidates for 'which one do you mean?'. None for an open question (which model at all)."""
        slot = d.missing[0] if d.missing else None
        if slot == "method":
            return [(v, {"method": v}) for v in ("lora", "qlora", "full")]
        cands = [c for c in state.get("candidates") or {} if c in self.kb.models]
        sizes = [self.kb.models[c].params_b for c in cands]
        # 'which size?' (yolov8 n..x) is worth checking; 'which generation?' of one size (Llama 2 / 3 / 3.1 70B) is
        # a different model, never guessed
        if slot == "model" and len(cands) > 1 and max(sizes) > 1.5 * min(sizes):
            return [(c, {"model": c, "params_b": self.kb.models[c].params_b}) for c in cands]
        return []

    ARCH_FIELDS = ("kind", "params_b", "active_params_b", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn",
                   "vocab", "max_context", "attention", "moe", "mla", "release_precision", "vision_params_b",
                   "image_tokens")

    def _one_architecture(self, cands: list[str]) -> bool:
        """Generations that share one architecture (DeepSeek-V3, R1, V3.1: 671B, 61 layers, MLA, FP8) size the same
        job the same way: which one the user means changes no number, so the planner answers for them all."""
        sigs = {tuple(repr(getattr(self.kb.models[c], f, None)) for f in self.ARCH_FIELDS) for c in cands}
        return len(sigs) == 1

    def _pick(self, intent: str, slots: dict[str, Any], lang: str) -> tuple | None:
        """What the answer would recommend: the first pick (cloud, flavor, count) and whether the named GPU fits."""
        try:
            advice = self.advisor.advise(intent, slots, {}, lang)
        except AdvisorError:
            return None
        top = next((r for r in advice.recommendations if r.get("label") != "yours"), {})     # the rental
        verdict = (advice.gpu_verdict or {}).get("fits") if isinstance(advice.gpu_verdict, dict) else None
        if verdict and _offloaded(advice.gpu_verdict):
            verdict = "offload"       # fits only with state in host RAM: a slower, costlier kind of "yes"
        return top.get("provider"), top.get("flavor"), top.get("instances"), verdict

    def _worth_asking(self, d: Decision, state: dict[str, Any], lang: str) -> tuple[Decision, dict[str, Any]]:
        """A question is asked only when its answer changes the pick: the plan is evaluated for each value the
        question offers, and when the pick and the verdict are the same for all of them the bot answers at once,
        assuming the first (stated in the answer) and offering the others as buttons."""
        values = self._plausible(d, state) if d.kind == "ask" and d.intent else []
        if len(values) < 2:
            return d, state
        evaluated = [(v, extra, self._pick(d.intent, {**d.slots, **extra}, lang)) for v, extra in values]
        picks = {pick for _, _, pick in evaluated}
        slot = d.missing[0]
        if slot == "method" and own_cards(d.slots) and None not in picks:
            return self._method_for_their_cards(d, state, evaluated)
        if len(picks) != 1 or None in picks:
            return d, state
        first = values[-1]            # the largest candidate, or full fine-tuning: the safe side when all pick alike
        answer = Decision("answer", d.intent, {**d.slots, **first[1]}, same_for=(slot, first[0], [v for v, _ in values]))
        return answer, self._answered(state, first[1])

    @staticmethod
    def _answered(state: dict[str, Any], chosen: dict[str, Any]) -> dict[str, Any]:
        """The session after a question the bot answered itself instead of asking."""
        return {**state, "slots": {**state.get("slots", {}), **chosen}, "pending": None, "answered": True,
                "candidates": {}, "follow_ups": max(0, int(state.get("follow_ups", 1)) - 1)}

    METHODS_BY_REACH = ("full", "lora", "qlora")     # what a fine-tune can change, most first

    def _method_for_their_cards(self, d: Decision, state: dict[str, Any], evaluated: list[tuple]
                                ) -> tuple[Decision, dict[str, Any]]:
        """'我的显卡是 16G，能微调 7B 吗': on cards the user has, which method fits is the answer, not a question back.
        The answer is for the method that changes most of the model among those that fit their cards (full, then
        LoRA, then QLoRA; QLoRA when none does, with what would make it fit); the line before it says which methods
        fit and which do not, and the others are buttons."""
        fits = {v: pick[3] for v, _, pick in evaluated}
        order = [m for m in self.METHODS_BY_REACH if m in fits]
        # fitting as they are beats fitting with state offloaded to host RAM (a 70B full fine-tune on 8 x A100 80GB
        # with 771 GiB of optimizer state on the CPU is a yes of another kind than LoRA on the cards alone)
        chosen = next((m for m in order if fits[m] is True), next((m for m in order if fits[m]), order[-1]))
        extra = dict(next(e for v, e, _ in evaluated if v == chosen))
        answer = Decision("answer", d.intent, {**d.slots, **extra},
                          fits_for=("method", chosen, [m for m in order if fits[m] is True],
                                    [m for m in order if not fits[m]], [m for m in order if fits[m] == "offload"]))
        return answer, self._answered(state, extra)

    def _which_card(self, reply: Reply, state: dict[str, Any], lang: str) -> tuple[Reply, dict[str, Any]]:
        """A card known only by its memory, and a deadline some cards of that memory meet and others miss: which card
        it is changes the answer, so that is asked (once a job, within the follow-up cap), the cards on file as
        buttons. Otherwise the answer stands, its time bracketed by those cards (render/own.py)."""
        mine = next((r for r in reply.recommendations if r.get("label") == "yours"), None)
        cap = int(self.forms.get("max_follow_ups", 2))
        if not mine or not mine.get("card_decides") or "gpu_model" in state.get("asked", []) \
                or int(state.get("follow_ups", 0)) >= cap:
            return reply, state
        fast, slow = mine["bracket"][0], mine["bracket"][-1]
        question = self.templates.say("ask.which_card", lang, mem=f"{mine['gpu_memory_gib']:g}",
                                      days=f"{mine['card_decides']:g}", fast=fast["gpu_name"], slow=slow["gpu_name"],
                                      fast_hours=f"{fast['hours']:,.0f}", slow_hours=f"{slow['hours']:,.0f}")
        state = {**state, "pending": "gpu_model", "answered": False, "asked": [*state.get("asked", []), "gpu_model"],
                 "follow_ups": int(state.get("follow_ups", 0)) + 1}
        return Reply(status="follow_up", lang=lang, intent=reply.intent, slots=reply.slots, missing=["gpu_model"],
                     follow_up=question, text=question, choices=[_card_choice(b["gpu_name"]) for b in
                                                              [fast, slow, *mine["bracket"][1:-1]]]
                     ), state

    def _bad_number(self, parse, lang: str, old: dict[str, Any], new: dict[str, Any]) -> tuple[Reply, dict[str, Any]]:
        """'-8 gpus', '0 users': asked back (the rest of the turn is kept); '1e12 users', 'a budget of 1e308':
        answered with the fact that no cloud takes such a job (the session is left as it was)."""
        from bot.conversation.dataset_slots import MAX_ITEMS
        from bot.conversation.slots import MAX_BUDGET, MAX_CONCURRENCY, MAX_GPUS, MAX_NODES
        from bot.conversation.load_slots import MAX_RATE_PER_S
        limits = {"gpus": MAX_GPUS, "nodes": MAX_NODES, "concurrency": MAX_CONCURRENCY, "budget_amount": MAX_BUDGET,
                  "dataset_items": MAX_ITEMS, "qps": MAX_RATE_PER_S}
        slots = {k: v for k, v in new.get("slots", {}).items() if k != "topic"}
        base = dict(lang=lang, intent=new.get("intent") or parse.intent, slots=slots)
        if parse.invalid:
            slot, value = next(iter(parse.invalid.items()))
            question = self.templates.say(f"bad.{slot}", lang, value=_count_text(value))
            new = {**new, "pending": slot, "answered": False}
            return Reply(status="follow_up", missing=[slot], follow_up=question, text=question, **base), new
        slot, value = next(iter(parse.absurd.items()))
        text = self.templates.say(f"absurd.{slot}", lang, value=_count_text(value), limit=_count_text(limits[slot]))
        return Reply(status="info", text=text, **{**base, "slots": dict(old.get("slots") or {})}), \
            {**old, "lang": lang}

    # ----- verdicts: compare, explain a flavor, billing ----------------------------------------------------------
    _CONNECTOR = re.compile(r"(?<![a-z0-9])([a-z]*\d+[a-z0-9-]*|[a-z]+\d*)\s*(?:vs\.?|versus|or|and|还是|和|与|跟|或者?|对比|比)"
                            r"\s*(?:the\s+)?([a-z]*\d+[a-z0-9-]*|[a-z]+\d+[a-z0-9-]*)(?![a-z0-9])")

    _CLOUDS_VS = re.compile(r"(?<![a-z0-9.])([a-z][a-z0-9-]{1,30})\s*(?:vs\.?|versus|还是|对比)\s*([a-z][a-z0-9-]{1,30})"
                            r"(?![a-z0-9.])")

    def _bad_comparison(self, parse) -> tuple[str, dict[str, Any]] | None:
        """'H100 vs H100', 'A100 or Z900': a comparison of a GPU with itself, or with a name not on file, is answered
        with what was wrong and the nearest names, never an empty comparison or a question about something else."""
        if not parse.intent_scores.get("compare") or len(parse.slots.gpu_models or []) >= 2:
            return None
        same = _SAME_TWICE.search(parse.text)
        if same and not self._gpu_of(same.group(1)) and (self._cloud_of(same.group(1)) or any(
                c.any(same.group(1)) for cues in (self.parser.precisions, self.parser.methods) for c in cues.values())
                or info.flavors_named(self.kb, same.group(1))["groups"]):
            # 'fp8 vs fp8', 'p5.48xlarge or p5.48xlarge', 'full vs full': one thing compared with itself
            return "verdict.compare.same_thing", {"name": same.group(1)}
        named_clouds = providers_said(self.kb, parse.text)
        for m in self._CLOUDS_VS.finditer(parse.text) if len(named_clouds) < 2 else ():
            clouds = [self._cloud_of(w) for w in m.groups()]
            for known, word in ((clouds[0], m.group(2)), (clouds[1], m.group(1))):
                if known and not self._cloud_of(word) and not self._gpu_of(word) and word.isalpha() \
                        and len(word) >= 3 and word not in _PLAIN_WORDS:
                    # 'lambda vs foocloud': a cloud not on file, with the nearest names
                    near = did_you_mean(word, list(self.kb.provider_aliases), limit=3, cutoff=60)
                    names = list(dict.fromkeys(self.kb.providers[self.kb.provider_aliases[n]].display_name(parse.lang)
                                               for n in near))
                    hint = self.templates.say("verdict.did_you_mean", parse.lang, names=", ".join(names)) \
                        if names else ""
                    return "verdict.compare.unknown_cloud", {"name": word, "did_you_mean": hint, "names": names,
                                                             "clouds": ", ".join(sorted(
                                                                 p.display_name(parse.lang)
                                                                 for p in self.kb.providers.values()))}
            if clouds[0] and clouds[0] == clouds[1]:
                name = self.kb.providers[clouds[0]].display_name(parse.lang)
                return "verdict.compare.same_cloud", {"name": name}
        for m in self._CONNECTOR.finditer(parse.text):
            a, b = (self._gpu_of(w) for w in m.groups())
            if a and a == b:
                other = next((g for g in ("l4", "a10", "h100", "a100") if g != a), "l4")
                return "verdict.compare.same", {"name": self.kb.gpus[a].name if a in self.kb.gpus else m.group(1),
                                                 "suggest": other.upper()}
            for known, word in ((a, m.group(2)), (b, m.group(1))):
                if known and not self._gpu_of(word) and _looks_like_a_gpu(word) and word not in self.kb.model_aliases:
                    near = did_you_mean(word, list(self.kb.gpu_aliases), limit=3, cutoff=60)
                    names = list(dict.fromkeys(self.kb.gpus[self.kb.gpu_aliases[n]].name for n in near))
                    hint = self.templates.say("verdict.did_you_mean", parse.lang, names=", ".join(names)) if names else ""
                    return "verdict.compare.unknown", {"name": word, "did_you_mean": hint, "names": names}
        return None

    def _cloud_of(self, word: str) -> str | None:
        return self.kb.provider_aliases.get(word.lower()) or self.kb.provider_aliases.get(norm_key(word))

    def _gpu_of(self, word: str) -> str | None:
        from bot.knowledge.loader import GPU_FAMILIES
        key = norm_key(word)
        if key in self.kb.gpu_aliases:
            return self.kb.gpu_aliases[key]
        ids = GPU_FAMILIES.get(key)
        return ids[0] if ids else None

    def _asks_about_a_flavor(self, parse) -> bool:
        """A question naming a flavor or a flavor family and no job ('which card is p2s?', 'what is
        p2s.2xlarge.8?', 'pi2 是什么卡') is a question about the flavor."""
        s = parse.slots
        if s.model or s.params_b or s.tokens or parse.ambiguous or parse.intent in ("compare", "billing", "help"):
            return False
        named = info.flavors_named(self.kb, parse.text, s.provider or self.advisor.default_provider)
        return bool(named["groups"] or named["unknown"])

    def _flavor_as_hardware(self, parse) -> None:
        """A job on a flavor the user names ('our fine-tune on AWS spot p4d', 'serve it on g6.xlarge'): its card
        and cloud are the job's, as if named, so the answer and any verdict are about that hardware."""
        s = parse.slots
        if parse.intent not in ("train", "finetune", "inference") or s.gpu_model or s.gpu_models:
            return
        named = info.flavors_named(self.kb, parse.text, s.provider)
        # a size not on file of a family that is ('g5.12xlarge', 'ecs.gn7i-c8g1.2xlarge'): that family's card and
        # cloud, not the default cloud's cheapest (set4 'named cloud swapped')
        groups = named["groups"] or named["of_family"]
        if groups:
            f = self.kb.flavors[groups[0][0]]
            s.gpu_model, s.provider = f.gpu, s.provider or f.provider
            if not s.nodes and not s.gpus and named["groups"]:
                s.nodes = _count_of_flavor(parse.text, f.flavor)
            if s.nodes and not s.gpus and named["groups"]:
                # '40 台 g6.xlarge', 'run 40 p4d instances': that size's cards on each machine, not a guessed 8
                s.gpus = s.nodes * f.gpu_count
                s.renting = True          # a flavor is a cloud's: the count is to rent, priced, not cards owned
            elif not s.gpus and named["groups"] and len(named["groups"]) == 1 and len(groups[0]) == 1 \
                    and f.gpu_count > 1:
                # 'serve llama 3 8b on a g5.12xlarge': one instance of that size is the hardware, so its cards are the
                # plan's (4 x A10G, g5.12xlarge), not the card's cheapest one-GPU size
                s.gpus = f.gpu_count
                s.renting = True          # a flavor is a cloud's: rented and priced, not cards owned

    def _cloud_of_flavors(self, parse) -> None:
        """Flavors named that are all one cloud's ('g6e.xlarge vs g6.xlarge'): that cloud is named, so a follow-up
        ('is spot ok for that?') is answered on it, not on the default one."""
        s = parse.slots
        if s.provider or s.provider_uncovered:
            return
        named = info.flavors_named(self.kb, parse.text)
        groups = named["groups"] or named["of_family"]
        clouds = {self.kb.flavors[i].provider for ids in groups for i in ids}
        if len(clouds) == 1:
            s.provider = clouds.pop()

    def _flavor_lines(self, parse, d: Decision, lang: str, cite: Citer, lines: list[str]) -> dict[str, Any] | None:
        """Each flavor (or family) named: the card first, then every size's card, count, memory, CPUs and RAM,
        interconnect, network, price and use, cited; a flavor-shaped name not on file: the nearest names."""
        t = self.templates
        named = info.flavors_named(self.kb, parse.text, d.slots.get("provider") or self.advisor.default_provider)
        for u in named["unknown"]:
            hint = t.say("verdict.did_you_mean", lang, names=", ".join(u["did_you_mean"])) if u["did_you_mean"] else ""
            lines.append(t.say("explain.unknown_flavor", lang, name=u["name"], did_you_mean=hint))
        for g in named.get("guessed") or []:
            f = self.kb.flavors[g["ids"][0]]
            lines.append(t.say("explain.guessed_flavor", lang, name=g["name"], count=f.gpu_count,
                               gpu=self.kb.gpus[f.gpu].name if f.gpu in self.kb.gpus else f.gpu,
                               flavors=", ".join(self.kb.flavors[i].flavor for i in g["ids"])))
        groups = []
        for ids in named["groups"][:3]:
            facts = [info.flavor_facts(self.kb, i) for i in ids[:8]]
            prov = self.kb.providers[facts[0]["provider"]].display_name(lang)
            lines.append(say_verdict.flavor_first_line(t, facts, prov, lang))
            lines += [cite.after(say_verdict.flavor_line(t, f, lang), f["sources"]) for f in facts]
            groups.append({"flavors": ids, "gpu": facts[0]["gpu"], "gpu_name": facts[0]["gpu_name"],
                           "gpu_counts": sorted({f["gpu_count"] for f in facts}), "provider": facts[0]["provider"]})
        if not groups and not named["unknown"]:
            return None
        return {"kind": "explain", "subject": "flavor", "groups": groups,
                "unknown": [u["name"] for u in named["unknown"]]}

    def _billing_verdict(self, parse, d: Decision, provider: str, lang: str, job_intent: str | None = None
                         ) -> dict[str, Any]:
        """Pay-per-use, monthly or spot at the user's hours, priced on the flavor of the GPUs they named, else on
        the pick for the job of the conversation (its cloud, its hours: a service runs 730 h a month, a training
        job its planned time), with the provider's published discounts."""
        slots = d.slots
        usage = usage_hours(parse.text, self.parser._num)
        flavor, instances, hourly, ccy, spot_h = None, 1, None, None, None
        ids = [g for g in self.advisor._gpu_ids(slots["gpu_model"]) if g in self.kb.gpus] if slots.get("gpu_model") \
            else []
        job = self._job_pick(d, job_intent, lang)          # the conversation's job, on the card it names
        if ids and not job:
            found = info.priced_flavor(self.kb, provider, ids, slots.get("gpus"))
            if found:
                f, instances = found
                flavor, hourly, ccy = f.flavor, f.price.on_demand * instances, f.price.currency
                spot_h = f.price.spot * instances if f.price.spot else None
        if job:
            rec = job
            instances = max(1, rec.get("instances") or 1) * max(1, rec.get("replicas") or 1)
            flavor, hourly, ccy = rec["flavor"], rec["price_per_hour"], rec["currency"]
            spot_h, provider = rec.get("spot_price_per_hour"), rec["provider"]
            if usage is None and rec.get("job_hours"):          # the job's own planned time
                h = rec["job_hours"]
                usage = {"hours_month": min(730.0, h), "span_days": round(h / 24, 1), "months": round(h / 730, 1),
                         "from": "job"}
            elif usage is None and job_intent == "inference":      # a service is on around the clock
                usage = {"hours_month": 730.0, "span_days": None, "months": None, "from": "service"}
        gpus = slots.get("gpus") or 0
        params = slots.get("params_b") or 7.0
        # a billing question's slots keep no method: its words do
        method = slots.get("method") or next(iter(said_in_order(self.parser.methods, parse.text,
                                                                ("qlora", "lora", "full"))), None)
        full = method not in ("lora", "qlora")
        spot = None
        service = bool(job) and job_intent == "inference" and not (job or {}).get("job_hours")
        if spot_h and hourly and service:
            pass          # a service on spot: said by spot_service below, no checkpoints
        elif spot_h and hourly:
            terms = verdict_math.spot_terms(params * (14 if full else 0.08), 1.0, instances)
            saving = 1 - spot_h / hourly
            spot = {**terms, "saving": round(100 * saving), "net": round(100 * (1 - (1 - saving) *
                                                                               (1 + terms["overhead_pct"] / 100)))}
            span_h = (usage or {}).get("span_days")
            if span_h:             # the job's own hours: what each mode costs for it
                h = span_h * 24
                spot.update(hours=round(h), od_cost=round(hourly * h, 2),
                            spot_cost=round(spot_h * h * (1 + terms["overhead_pct"] / 100), 2),
                            asked="spot" in self._asks(parse.text))
        v = verdict_math.billing_verdict(usage, hourly, ccy, spot_h, info.published_discounts(self.kb, provider), spot)
        v.update(flavor=f"{instances} x {flavor}" if flavor and instances > 1 else flavor, provider=provider,
                 hours_from=(usage or {}).get("from"))
        if usage and _YEAR.search(parse.text):
            v["year"] = verdict_math.year_terms(usage, hourly)
        if service and hourly:
            v["spot_service"] = {"saving": round(100 * (1 - spot_h / hourly)) if spot_h else None,
                                 "spot_h": spot_h, "od_h": hourly, "asked": "spot" in self._asks(parse.text)}
        load = serving_load(slots) if job_intent == "inference" else None
        scale = load.peak_factor if load else 0.0
        replicas = max(1, (job or {}).get("replicas") or 1)
        if service and usage and usage.get("hours_month", 0) >= 0.95 * 730 and scale > 1 and replicas > 1:
            # sized for a peak: the average load's replicas are on all month, the rest only in busy hours
            v.update(verdict_math.peak_split(replicas, scale, hourly))
        if gpus >= 16 and usage and (usage.get("span_days") or 0) >= 14:
            v["reserve"] = {"gpus": gpus, "days": f"{usage['span_days']:g}"}
        return v

    def _capability_ask(self, parse) -> dict[str, Any] | None:
        """'does the T4 support bf16?', '昇腾910B能跑vLLM吗', 'can I train in fp8 on A100?': one card, one number format
        or runtime, asked as can / support: the card's yes or no (bot/plan/capability.py)."""
        s = parse.slots
        names = s.gpu_models or ([s.gpu_model] if s.gpu_model else [])
        if len(names) != 1 or not _CAP_ASK.search(parse.text):
            return None
        ids = [g for g in self.advisor._gpu_ids(names[0]) if g in self.kb.gpus]
        said = said_in_order(self.parser.precisions, parse.text, ("nf4", "int4", "int8", "fp8", "bf16"))
        what = "vllm" if re.search(r"(?<![a-z])vllm(?![a-z])", parse.text) else \
            next((p if p != "nf4" else "int4" for p in said if p in ("bf16", "fp8", "int4", "nf4")), None)
        if not ids or not what:
            return None
        training = bool(parse.intent in ("train", "finetune") or parse.intent_scores.get("train") or
                        parse.intent_scores.get("finetune"))
        cap = capability(self.kb, ids[0], what, training)
        if cap["why"] == "int4_volta" and ("awq" in parse.text) != ("gptq" in parse.text):
            cap["answer"] = "no" if "awq" in parse.text else "yes"      # Volta: GPTQ yes, AWQ no
        return cap

    def _capability_line(self, cap: dict[str, Any], lang: str) -> str:
        t = self.templates
        why = t.say(f"verdict.capability.{cap['why']}", lang, gpu=cap["gpu_name"],
                    tflops=f"{cap.get('tflops') or 0:g}", fp16=f"{cap.get('fp16') or 0:g}")
        return t.say(f"verdict.capability.{cap['answer']}", lang, why=why)

    def _versus_job(self, parse, state: dict[str, Any]) -> None:
        """A comparison of precisions, methods, clouds or flavors: the method compared is the job's for now (the
        dialogue does not ask 'full, LoRA or QLoRA?' when the question sets them against each other), and a job
        question with no model on file or in the session compares a typical job (an info reply, said)."""
        vs, s = parse.versus, parse.slots
        if vs["axis"] == "method" and not s.method:
            s.method = vs["values"][0]
        known = s.model or s.params_b or s.arch or (state.get("slots") or {}).get("model") or \
            (state.get("slots") or {}).get("params_b")
        asks_plan = self.parser.recommend.any(parse.text) or bool(self._asks(parse.text))
        if vs.get("follow_up"):
            parse.intent, parse.out_of_scope = "compare", False     # the comparison just made, with one more side
        elif parse.intent in JOB_INTENTS and (not known or not asks_plan):
            # the question is the comparison ('FP8 还是 INT4，哪个吞吐高'): an info reply about it; a job question
            # that also compares ('how many H100s? and lambda vs aws cost') is answered with the comparison first
            parse.intent, parse.out_of_scope = "compare", False
        elif parse.intent is None and not (state or {}).get("answered"):
            parse.intent, parse.out_of_scope = "compare", False
        elif parse.intent is None and parse.out_of_scope:
            # 'Alibaba or Tencent for this?' after a plan (no slot heard, the clouds by their companies' names): the
            # comparison of the job just planned, never out of scope
            parse.intent, parse.out_of_scope = "compare", False

    def _versus(self, parse, d: Decision, lang: str, job_intent: str | None, cite: Citer | None = None
                ) -> tuple[list[str], dict[str, Any], list[str], dict[str, Any]] | None:
        """The comparison along the axis the question names: its lines (verdict first, then each side's plan),
        the verdict data, the sources of uncited lines, and the slots of the side it prefers."""
        vs = parse.versus
        span = (usage_hours(parse.text, self.parser._num) or {}).get("span_days")
        hours = span * 24 if span else vs.get("rental_hours")
        slots = {**(vs.get("slots") or {}), **d.slots}
        plans = self.advisor.compare_on(vs["axis"], vs["values"], slots, d.assumed, lang, job_intent,
                                        vs.get("labels"), rental_hours=hours)
        if not plans:
            return None
        t = self.templates
        quiet = cite is None
        cite = cite or _Collect(self.kb)
        verdict = plans["verdict"]
        lines = say_verdict.compare_lines(t, verdict, lang, verdict.get("figures"), cite)
        if plans.get("rental"):
            r = plans["rental"]
            lines.append(t.say("verdict.rental", lang, gpus=r["gpus"], gpu=plans["side"][0]["gpu_name"],
                               hours=f"{r['hours']:,.0f}", days=f"{r['hours'] / 24:g}"))
            year = verdict_math.year_terms({"span_days": r["hours"] / 24}, None) if _YEAR.search(parse.text) and \
                not vs.get("follow_up") else None
            if year:
                lines.append(t.say(f"verdict.billing.year_{year['answer']}", lang, hours=f"{year['hours']:,}",
                                   pct=year["pct"], need=year["need_pct"], ppu="-", full="-", ccy="").split(" (")[0]
                             + ("." if lang == "en" else "。"))
        if plans.get("typical"):
            lines.append(t.say("verdict.typical_job", lang, job=t.say(f"verdict.typical.{plans['typical']}", lang)))
        if plans.get("work_assumed"):
            lines.append(t.say(f"verdict.assume.tokens_{plans['work_assumed']}", lang))
        lines += compare_lines(self.kb, t, plans, lang, cite)[1:]
        side = next((x for x in plans["side"] if x["name"] == verdict.get("preferred")), plans["side"][0])
        value = side.get("value")
        chosen: dict[str, Any] = {}
        if vs["axis"] in ("precision", "method"):
            chosen[vs["axis"]] = value
        elif vs["axis"] == "provider":
            chosen["provider"] = value
        elif side.get("pick"):
            chosen.update(gpu_model=side["gpu"], provider=side["pick"]["provider"])
        return lines, {**verdict, "line": lines[0], "chosen": chosen, "job_intent": plans["intent"]}, \
            (cite.ids if quiet else []), chosen

    def _flavor_verdict(self, parse, d: Decision, lang: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """'modelarts...8snt9b3 是啥配置？能跑 Qwen2.5-72B 全参微调吗': a job asked about one flavor named gets first what
        the flavor is (card, count, memory, interconnect, price) and whether one instance of it holds the job, with
        the number; the plan below says how many it takes."""
        t = self.templates
        if self._asks(parse.text) or not (parse.intent_scores.get("explain") or _CAN_RUN.search(parse.text)):
            return None          # a spot / budget / time question about it gets that verdict instead
        named = info.flavors_named(self.kb, parse.text, d.slots.get("provider") or self.advisor.default_provider)
        if len(named["groups"]) != 1 or not (d.slots.get("model") or d.slots.get("params_b")):
            return None
        ids = named["groups"][0]
        f = self.kb.flavors[max(ids, key=lambda i: (self.kb.flavors[i].gpu_count, i))]
        try:
            need = self.advisor.need_on(d.intent, d.slots, d.assumed, lang, f.gpu_count)
        except AdvisorError:
            return None
        usable = f.gpu_memory_gib * 0.95
        gpu = self.kb.gpus[f.gpu].name if f.gpu in self.kb.gpus else f.gpu
        key = "verdict.flavor_job.yes" if need <= usable else "verdict.flavor_job.no"
        line = t.say(key, lang, flavor=f.flavor, count=f.gpu_count, gpu=gpu, mem=f"{f.gpu_memory_gib:g}",
                     need=f"{need:,.1f}", usable=f"{usable:,.1f}")
        lines = [line]
        for g in named.get("guessed") or []:
            lines.append(t.say("explain.guessed_flavor", lang, name=g["name"], count=f.gpu_count, gpu=gpu,
                               flavors=f.flavor))
        facts = info.flavor_facts(self.kb, f.id)
        lines.append(say_verdict.flavor_line(t, facts, lang))
        verdict = {"kind": "explain", "subject": "flavor_job", "flavor": f.id, "gpu": f.gpu, "need_gib": round(need, 1),
                   "fits_one": need <= usable, "line": line}
        return {"key": "verdict", "lines": lines, "sources": facts["sources"]}, verdict

    def _job_pick(self, d: Decision, job_intent: str | None, lang: str) -> dict[str, Any] | None:
        """The priced rental the conversation's job was (or would be) answered with, for a billing question about
        it ('包月和按量付费哪个划算？' after the service was sized)."""
        s = d.slots
        if job_intent not in JOB_INTENTS or not (s.get("model") or s.get("params_b") or s.get("arch")):
            return None
        try:
            advice = self.advisor.advise(job_intent, {k: v for k, v in s.items() if k != "topic"}, d.assumed, lang)
        except AdvisorError:
            return None
        return next((r for r in advice.recommendations if r.get("label") != "yours"
                     and r.get("price_per_hour") is not None), None)

    def _names_a_claim(self, text: str) -> bool:
        return any(self.kb.claims_naming(w.strip("?？。.!,，")) for w in re.split(r"[\s,，]+|(?<=[a-z0-9])(?=[\u4e00-\u9fff])",
                                                                              text) if w)

    def _resolve_against_state(self, parse, state: dict[str, Any]) -> list[str] | None:
        """Read a turn against the session: a reply to 'which one do you mean?' may name only part of a candidate
        ('llama 3.3', 'qwen2.5 的那个', 'the second one'); a bare size or family after a model ('the 72b one',
        '换成 32b 的', 'qwen 72b') means that model's sibling in the same family. Returns the candidates when they
        share one architecture and the newest was taken for them all."""
        slots = parse.slots
        models = self.kb.models

        def resolve(mid: str) -> None:
            slots.model, slots.params_b = mid, models[mid].params_b
            parse.ambiguous.pop("model", None)
            parse.candidate_params.clear()

        cands = [c for c in parse.ambiguous.get("model") or [] if c in models]
        if not slots.model and len(cands) > 1 and self._one_architecture(cands):
            # generations of one architecture size the job identically: answer for the newest, and say so
            resolve(cands[-1])
            return cands
        pending = [c for c in (state.get("candidates") or {}) if c in models]
        if pending and not slots.model and parse.intent not in ("compare", "explain", "billing", "help"):
            pick = self.parser.pick_candidate(parse, pending)
            if pick:
                resolve(pick)
        prev = (state.get("slots") or {}).get("model")
        if slots.model or prev not in models:
            return
        family = models[prev].family
        if parse.ambiguous.get("model"):
            same = [c for c in parse.ambiguous["model"] if models[c].family == family]
            if len(same) == 1:
                resolve(same[0])
        elif slots.params_b:
            sib = [m.id for m in models.values() if m.family == family
                   and abs(m.params_b - slots.params_b) / slots.params_b < 0.15]
            if len(sib) == 1:
                resolve(sib[0])

    def _reply(self, d: Decision, parse, lang: str, state: dict[str, Any]) -> Reply:
        t = self.templates
        base = dict(lang=lang, intent=d.intent, slots={k: v for k, v in d.slots.items() if k != "topic"})
        if d.kind == "reset":
            return Reply(status="info", text=t.say("reply.reset", lang), **{**base, "intent": None, "slots": {}})
        if d.kind == "out_of_scope":
            if parse.unknown_model and not parse.out_of_scope:
                return Reply(status="out_of_scope", text=t.say("reply.unknown_model", lang, name=parse.unknown_model),
                             **base)
            return Reply(status="out_of_scope", text=t.say("reply.out_of_scope", lang), **base)
        if d.kind == "ask":
            return Reply(status="follow_up", missing=d.missing, follow_up=d.question, text=d.question,
                         choices=d.choices, **base)
        if d.kind == "info":
            return self._info(d, parse, lang, state.get("intent"), state.get("versus"))
        first, verdict = None, None
        one = self._flavor_verdict(parse, d, lang) if not parse.versus and d.intent in JOB_INTENTS else None
        if one:
            first, verdict = [one[0]], one[1]
        cap = getattr(parse, "capability", None)
        if cap and not one and not parse.versus and d.intent in JOB_INTENTS:
            # 'can I serve Qwen2.5-32B in FP8 on an A100?': the card's answer first, then the job sized
            line = self._capability_line(cap, lang)
            first, verdict = [{"key": "verdict", "lines": [line], "sources": cap["sources"]}], {**cap, "line": line}
        can = can_run_first(self, parse, d, lang, state.get("can_run_asked")) if not (one or cap or parse.versus) \
            else None
        if can:
            # '910B 能跑 Qwen2.5-72B 推理吗': yes or no with the cards and the stack, then the plan
            first, verdict = [can[0]], can[1]
        if parse.versus and d.intent in JOB_INTENTS:
            # 'how many H100s, and lambda vs aws cost?': the comparison first, then the job on the side it prefers
            found = self._versus(parse, d, lang, d.intent)
            if found:
                lines, verdict, sources, chosen = found
                first = [{"key": "verdict", "lines": lines, "sources": sources}]
                d.slots = {**d.slots, **chosen}
        if parse.platform:
            # 'what breaks if we move this to Ascend 910B': the platform's notes before the job planned on it
            first = [platform_section(self, lang, parse.platform), *(first or [])]
        reply = self._answer(d, lang, state.get("same_arch"), self._asks(parse.text), _days_said(parse.text),
                             first=first, span_days=(usage_hours(parse.text, self.parser._num) or {}).get("span_days"),
                             plan_before=(state.get("plan") or {}).get("fleet"),
                             sub_asks=self._sub_questions.asked(parse.text), asked_text=parse.text)
        if can and reply.view is not None:
            verdict = self._can_run_on_pick(reply, verdict, lang)
        if verdict is not None and (reply.verdict or {}).get("kind") != "spot":
            reply.verdict = verdict
        return reply

    def _can_run_on_pick(self, reply: Reply, v: dict[str, Any], lang: str) -> dict[str, Any]:
        """'Can a 910B fine-tune Qwen2.5-72B?' answered 'yes: 8 cards' over a pick of 32 of them: the verdict line
        read again with the plan's count and memory a card (the fewest said as the other option), so the answer's
        first line and its pick never disagree (critic verdict-agreement checks it)."""
        pick = next((r for r in reply.recommendations if r.get("label") != "yours"), None)
        n = (pick or {}).get("gpus_total")
        if v.get("answer") not in ("yes", "port") or not pick or pick.get("mixed") or not pick.get("fits") \
                or not n or pick.get("gpu") not in set(v.get("family") or [v["gpu"]]) or n == v.get("cards") \
                or pick.get("per_gpu_gib") is None:
            return v
        v = {**v, "pick_cards": int(n), "pick_need_gib": round(pick["per_gpu_gib"], 1)}
        line = say_why.can_run_line(self.templates, v, lang)
        for sec in reply.view.sections:
            sec.lines = [line + x[len(v["line"]):] if x.startswith(v["line"]) else x for x in sec.lines]  # its [n]
        reply.text, reply.details = short_text(reply.view, self.templates, lang), details_text(reply.view,
                                                                                               self.templates, lang)
        return {**v, "line": line}

    def _card_caveats(self, advice, lang: str) -> list[tuple[str, list[str]]]:
        """What the card the answer leads with can't do for the job (bf16 on a V100, FP8 compute on an A100), as
        (line, sources): the user's or named card's when there is a verdict on it, else the pick's."""
        verdict = advice.gpu_verdict or {}
        # an engine the speed is measured with that does not run on the card (faster-whisper on an Ascend NPU):
        # said first whatever the job's kind, never a bare 'fits'
        engine = [(self.templates.say(key, lang, **ctx), cite) for key, ctx, cite in advice.notes
                  if key in ENGINE_NOTES]
        if advice.workload.kind not in ("llm", "multimodal"):
            return engine   # vision, speech, diffusion recipes train in fp16 AMP by default: no bf16 to give up
        if verdict.get("gpu"):
            said = verdict.get("caveats") or []
            return engine + [(self.templates.say(key, lang), cite) for key, cite in said]
        pick = (advice.recommendations or [{}])[0]
        if getattr(self.kb.gpus.get(pick.get("gpu") or ""), "vendor", None) != "nvidia":
            return engine
        return engine + [(self.templates.say(key, lang, **ctx), cite) for key, ctx, cite in advice.notes
                         if key in CARD_NOTES]

    @property
    def _sub_questions(self) -> sub_questions.SubQuestions:
        if not hasattr(self, "_sub_q"):
            self._sub_q = sub_questions.SubQuestions(self.parser.lex)
        return self._sub_q

    def _asks(self, text: str) -> list[str]:
        """What verdict a job question asks for: 'enough' (a budget), 'how_long' (time), from rules/lexicon.yaml."""
        if not hasattr(self, "_ask_cues"):
            from bot.conversation.cues import CueSet, _both
            self._ask_cues = {k: CueSet(_both(v)) for k, v in (self.parser.lex.get("asks") or {}).items()}
        found = [k for k, cues in self._ask_cues.items() if cues.any(text)]
        if "how_long" in found and LATENCY_ASK.search(text):
            found.remove("how_long")      # '首 token 大概多久', 'how long until the first token': a latency, not a job's time
        return found

    def _answer(self, d: Decision, lang: str, same_arch: list[str] | None = None, asks: list[str] | None = None,
                said_days: float | None = None, first: list[dict[str, Any]] | None = None,
                span_days: float | None = None, plan_before: dict[str, Any] | None = None,
                sub_asks: list[str] | None = None, asked_text: str | None = None) -> Reply:
        t = self.templates
        intent = d.intent or "finetune"
        advice = self.advisor.advise(intent, d.slots, d.assumed, lang)
        spot = self._spot_verdict(d, intent, advice, lang, span_days) if "spot" in (asks or []) else None
        if spot:
            first = [*(first or []), {"key": "verdict", "lines": spot["lines"], "sources": spot["sources"]}]
        assumptions = [t.say(k, lang, **{n: (t.say(v, lang) if isinstance(v, str) and v in t.table else v)
                                         for n, v in ctx.items()}) for k, ctx in advice.assumptions]
        checklist = [{"item": c["item"], "status": c["status"], "text": t.say(c["say"], lang, **c["ctx"]).strip(),
                      "citations": c["citations"]} for c in advice.checklist]
        notes: list[str] = []
        note_sources: dict[str, list[str]] = {}
        caveats = self._card_caveats(advice, lang)
        for key, ctx, cite in advice.notes:
            if key in CARD_NOTES + ENGINE_NOTES and caveats:
                continue           # said with the verdict on the card, first
            line = t.say(key, lang, **ctx)
            if line not in notes:
                notes.append(line)
            note_sources.setdefault(line, [])
            note_sources[line] += [c for c in cite if c not in note_sources[line]]
        mem = advice.memory
        memory = {"per_gpu_gib": mem.per_gpu_gib, "total_gib": mem.total_gib, "allocated_gib": mem.allocated_gib,
                  "breakdown": mem.breakdown, "gpus": mem.gpus,
                  "terms": [tm.model_dump() for tm in mem.terms]}
        assumptions += [t.say(n["key"], lang, **n["ctx"]) for n in mem.assumption_keys]
        slots = dict(d.slots)
        slots.pop("topic", None)
        for key, value in d.assumed.items():
            slots.setdefault(key, value) if key != "params_b" else None
        reply = Reply(status="answer", lang=lang, intent=d.intent, slots=slots, assumptions=assumptions,
                      memory=memory, compute=advice.compute, speed=advice.speed, batch=advice.batch,
                      recommendations=advice.recommendations,
                      considered=advice.considered, checklist=checklist,
                      rule_trace=advice.trace, notes=notes, targets=advice.targets,
                      billing=[{"mode": b, "text": t.say(f"billing_mode.{b}", lang)} for b in advice.billing])
        if advice.work is not None:
            reply.work = {**advice.work.model_dump(), "derivation": work_text(advice.work.model_dump(), t, lang)}
        w = advice.workload
        model_name = advice.model.name if advice.model else None
        if w.kind == "rendering":
            model_name = t.say("label.scene", lang, gib=f"{w.scene_gib or advice.memory.terms[0].gib:g}")
        # hours of audio to get through: a transcription job, not a service (its speech speed has their time)
        transcribing = w.kind == "speech" and w.task == "inference" and (advice.speed or {}).get("hours")
        task = "batch" if advice.batch or transcribing else intent if w.algorithm == "sft" else \
            f"algorithm.{w.algorithm}"
        extra = {"task": task, "model_name": model_name,
                 "params_b": advice.workload.params_b, "method": advice.workload.method,
                 "served_as": served_as(w),
                 "gpu_verdict": advice.gpu_verdict, "fallback": advice.fallback, "throughput": advice.throughput,
                 "caveats": caveats,
                 "speed": advice.speed, "batch": advice.batch, "claims": advice.claim_sources,
                 "note_sources": note_sources, "recommendations": reply.recommendations, "first": first,
                 "named_cloud": d.slots.get("provider") or d.slots.get("provider_uncovered"),
                 # a language model's training with no amount said: the pick stands, its time needs the dataset
                 "work_missing": advice.work is None and not w.tokens and w.task != "inference"
                 and w.kind in ("llm", "multimodal") and not advice.speed}
        same = [c for c in same_arch or [] if c in self.kb.models]
        if same and d.slots.get("model") in same:
            names = t.say("list.sep", lang).join(self.kb.models[c].name for c in same)
            reply.assumptions.insert(0, t.say("assume.same_arch", lang, chosen=self.kb.models[d.slots["model"]].name,
                                              values=names))
        if d.fits_for:
            reply.assumptions.insert(0, self._fits_for_line(d.fits_for, lang))
            reply.choices = [t.say(f"method.{v}", lang) for v in self.METHODS_BY_REACH if v != d.fits_for[1]]
        if d.assumed.get("method_why") and not d.slots.get("method"):
            # the method the job's field settles (rules/dialogue.yaml `usual`): said with why, the others as buttons
            chosen = d.assumed["method"]
            reply.choices = [t.say(f"method.{v}", lang) for v in self.METHODS_BY_REACH if v != chosen]
            reply.assumptions.insert(0, t.say("assume.method_usual", lang, method=t.say(f"method.{chosen}", lang),
                                              why=t.say(f"method_why.{d.assumed['method_why']}", lang),
                                              others=t.say("list.sep", lang).join(reply.choices)))
        if d.same_for:
            slot, chosen, values = d.same_for
            label = {v: t.say(f"method.{v}", lang) if slot == "method" and f"method.{v}" in t.table else
                     (self.kb.models[v].name if v in self.kb.models else v) for v in values}
            reply.assumptions.insert(0, t.say("assume.same_pick", lang, values=t.say("list.sep", lang).join(
                                                  label[v] for v in values),
                                              chosen=label[chosen]))
            reply.choices = [label[v] for v in values if v != chosen]
        reply.view = answer_view(reply.model_dump(), self.kb, t, extra)
        kind = d.slots.get("kind")
        if d.slots.get("model_name") and kind in KIND_DEFAULT_MODEL and d.slots.get("sized_as_kind") \
                and d.slots.get("model") == d.slots["sized_as_kind"]:
            # 'canary-1b for speech recognition': a model not on file of an audio or image kind is sized as that
            # kind's model on file of a like size, never as a language model, and the first line says so
            ref = self.kb.models[d.slots["model"]]
            reply.view.sections.insert(0, ViewSection(key="sized_as", lines=[t.say(
                "honesty.sized_as_kind", lang, name=d.slots["model_name"], model=ref.name, ref_params=f"{ref.params_b:.3g}", what=t.say(f"modality.{kind}.what", lang))]))
        elif d.slots.get("model_name") and not d.slots.get("model") and kind in KIND_DEFAULT_MODEL and (default := next(
                (ctx["model"] for k, ctx in advice.assumptions if k in ("assume.kind_model", "assume.live_speech_model")),
                None)):
            # 'RT-DETR-L object detection': a model not on file with no size said, sized as the kind's model on file
            # used when none is named, and said first (never silently that model, never a language model)
            reply.view.sections.insert(0, ViewSection(key="sized_as", lines=[t.say(
                "honesty.sized_as_default", lang, name=d.slots["model_name"], model=default,
                what=t.say(f"modality.{kind}.what", lang))]))
        elif d.slots.get("model_name") and not d.slots.get("model") and advice.workload.params_b:
            # a model the knowledge base does not know is never silently another one: the first line says what it
            # was sized as (the critic's honesty invariant)
            reply.view.sections.insert(0, ViewSection(key="sized_as", lines=[t.say(
                "honesty.sized_as", lang, name=d.slots["model_name"], params=f"{advice.workload.params_b:g}")]))
        if d.slots.get("gpu_name") and not d.slots.get("gpu_model"):
            # a card not on file ('one RTX 3060 12GB at home') is never silently dropped for a rented one: judged by
            # its memory when said, else the answer says the plans are rented and asks its memory
            key = "honesty.gpu_by_memory" if d.slots.get("gpu_memory_gib") else "honesty.gpu_unknown"
            reply.view.sections.insert(0, ViewSection(key="gpu_unknown", lines=[t.say(
                key, lang, name=d.slots["gpu_name"], mem=f"{d.slots.get('gpu_memory_gib') or 0:g}")]))
        if d.changed:
            # a follow-up that changed the job: the same job planned again, and what changed, said first
            job = f"{t.say(f'task.{task}', lang)} {model_name or ''}".strip()
            reply.changed = changes_as_data(d.changed)
            # after a verdict the question asked for ('p4d or p5 for this run?'): the decision is the first line
            at = next((i for i, s in enumerate(reply.view.sections) if s.key != "verdict"), len(reply.view.sections))
            lines = [changed_line(d.changed, job, t, lang, self.kb, d.slots)]
            # the plan the answer now leads with (the headline): their own cards when those hold the job, never a
            # rental shown after them (set7: '1 x H100 -> 8 x H100' under 'Yours: 8 x A10')
            mine = next((r for r in reply.recommendations if r.get("label") == "yours"), None)
            rec = mine if mine and mine.get("fits") and reply.recommendations[0] is mine else \
                next((r for r in reply.recommendations if r.get("label") != "yours"), None)
            delta = fleet_delta(plan_before, plan_summary(rec)) if rec else None
            if delta:
                # '要加多少？': how many cards more (or fewer) than the plan before, and what that costs an hour
                reply.rule_trace.append({"rule": "fleet_delta", "fired": True, "because": delta})
                lines.append(self._fleet_delta_line(delta, lang))
            reply.view.sections.insert(at, ViewSection(key="changed", lines=lines))
        lead = next((s for s in reply.view.sections if s.key == "lead"), None)
        if advice.gpu_verdict and lead:
            reply.notes.insert(0, lead.lines[0])
        if d.cheaper:
            self._cheaper(reply, d, intent, advice, lang)
        self._job_verdict(reply, d.slots, [a for a in asks or [] if a != "memory"], lang, said_days,
                          advice.gpu_verdict)
        if "memory" in (asks or []) and advice.one_copy is not None:
            self._memory_first(reply, advice, lang)
        if sub_asks:
            # 'and how much a month?', '包月还是按需?', 'can it finish by Friday?': each its own line, from this plan
            sub_questions.answer(self.kb, t, sub_asks, reply, d.slots, asked_text or "", lang,
                                 sub_questions.answered_already(reply, bool(spot), bool(advice.gpu_verdict)),
                                 said_days, usage_hours(asked_text or "", self.parser._num))
        if (reply.verdict or {}).get("kind") == "enough" and reply.verdict.get("answer") == "no":
            self._budget_paths(reply, d, intent, advice, lang)
        if spot:
            reply.verdict = {**spot["verdict"], "line": spot["lines"][0]}
        gv = advice.gpu_verdict or {}
        cloud = self._named_cloud_line(d.slots, reply.recommendations, advice.fallback, lang) \
            if not (gv.get("owned") and gv["row"].get("fits")) else None     # their cards answer it: no rental first
        if cloud:        # before any verdict (after what a follow-up changed): the plans are not on the cloud asked for
            at = 1 if reply.view.sections and reply.view.sections[0].key == "changed" else 0
            reply.view.sections.insert(at, ViewSection(key="cloud", lines=[cloud]))
        self._consistent(reply)
        reply.text, reply.details = short_text(reply.view, t, lang), details_text(reply.view, t, lang)
        reply.citations = [s.model_dump(exclude={"n"}) for s in reply.view.sources]
        return reply

    def _series_card(self, parse) -> None:
        """An Azure VM series said by its family name, the card glued to it ('NVadsA10 v5', 'NC A100 v4',
        'NCads H100 v5'): that card, when the turn names no other."""
        if parse.slots.gpu_model or parse.slots.gpu_models:
            return
        m = _SERIES.search(parse.text.lower())
        if m and _SERIES_GPU.get(m.group(1)) in self.kb.gpus:
            parse.slots = parse.slots.model_copy(update={"gpu_model": _SERIES_GPU[m.group(1)], "topic": None})
            parse.out_of_scope, parse.job_words = False, True

    def _quant_speed(self, parse, state: dict[str, Any]) -> str | None:
        """'how much faster would AWQ int4 be, and why?', '用 AWQ int4 量化版会快多少？为啥' after a job was planned: the job
        planned again at that precision (not the 'faster?' plan ask, not the quantization primer), then its speed
        before and after and why."""
        if not state.get("answered") or state.get("intent") != "inference":
            return None
        t = parse.text.lower()
        m = _QUANT_WORD.search(t)
        if not m or not _SPEED_WORD.search(t):
            return None
        w = m.group(0)
        prec = "fp8" if "fp8" in w else "int8" if ("int8" in w or "8" in w) else "int4"
        parse.slots = parse.slots.model_copy(update={"precision": prec, "topic": None})
        parse.intent, parse.out_of_scope, parse.job_words = None, False, True
        return prec

    def _quant_speed_lines(self, reply: Reply, before: dict[str, Any] | None, prec: str, lang: str) -> None:
        """Speed before and after at the new precision, from the two plans, and why (memory- or compute-bound)."""
        rec = next((r for r in reply.recommendations if r.get("label") != "yours"), None)
        if not before or not rec:
            return
        after = plan_summary(rec)
        t = self.templates
        was = str(before.get("precision") or "bf16").upper()
        if before.get("job_hours") and after.get("job_hours"):
            b, a = float(before["job_hours"]) * before["cards"], float(after["job_hours"]) * after["cards"]
            speed = t.say("quant.speed_batch", lang, was=was, now=prec.upper(), b=f"{b:,.1f}", a=f"{a:,.1f}",
                          x=f"{b / a:.2f}")
        elif before.get("per_replica") and after.get("per_replica") and before.get("tpot_ms") and after.get("tpot_ms"):
            # a service is planned to its time per token, so the speed shows in what a card carries at that time
            cap_b = float(before["per_replica"]) / max(1, before["cards"] // max(1, _replicas(before)))
            cap_a = float(after["per_replica"]) / max(1, after["cards"] // max(1, _replicas(after)))
            b, a = 1 / cap_b, 1 / cap_a
            speed = t.say("quant.speed_serve", lang, was=was, now=prec.upper(), b=f"{cap_b:,.3g}", a=f"{cap_a:,.3g}",
                          x=f"{cap_a / cap_b:.2f}", tb=f"{before['tpot_ms']:,.0f}", ta=f"{after['tpot_ms']:,.0f}")
        elif before.get("tpot_ms") and after.get("tpot_ms"):
            b, a = float(before["tpot_ms"]), float(after["tpot_ms"])      # no load said: one stream's speed
            speed = t.say("quant.speed_tpot", lang, was=was, now=prec.upper(), b=f"{b:,.1f}", a=f"{a:,.1f}",
                          x=f"{b / a:.2f}")
        else:
            return
        ratio = b / a if a else 1.0
        seqs = int(after.get("sequences") or before.get("sequences") or 0)
        key = "quant.why_memory" if ratio >= 1.15 else "quant.why_compute"
        why = t.say(key, lang, seqs=seqs or "?", now=prec.upper())
        ids = ["awq-paper"] + (["vllm-fp8-w8a8"] if key == "quant.why_compute" else [])
        reply.rule_trace.append({"rule": "quant_speed", "fired": True,
                                 "because": {"before": b, "after": a, "ratio": round(ratio, 3), "bound": key[10:]}})
        at = next((i + 1 for i, x in enumerate(reply.view.sections) if x.key == "changed"), 0)
        reply.view.sections.insert(at, ViewSection(key="quant_speed", lines=[speed, why]))
        reply.text, reply.details = short_text(reply.view, t, lang), details_text(reply.view, t, lang)
        have = {c.get("id") for c in reply.citations}
        reply.citations = [*reply.citations, *[{"id": i, "title": self.kb.sources[i].title, "url": self.kb.sources[i].url}
                                               for i in ids if i in self.kb.sources and i not in have]]

    OFF_PEAK_HOURS = 12      # off-peak hours a day assumed when the question names none (said in the answer)

    def _off_peak(self, parse, state: dict[str, Any]) -> float | None:
        """'晚上流量只有白天的 1/5，怎么省钱', 'nights are 20% of peak, how to save' after a service was planned: the
        share of the peak load those hours carry. The turn is then the service planned at that share (its schedule
        words and 'save money' are about those hours, not the job's), and the answer says the smaller fleet and
        what scaling down saves."""
        if not state.get("answered") or state.get("intent") != "inference" or not _has_load(state.get("slots") or {}):
            return None
        off = offpeak_scale(parse.text) or offpeak_absolute(parse.text, parse.slots.model_dump(exclude_none=True),
                                                            state.get("slots") or {})
        if not off:
            return None
        parse.slots = parse.slots.model_copy(update={k: None for k in (
            "usage_hours_month", "usage_hours_day", "usage_days_week", "budget", "qps", "concurrency", "token_rate",
            "daily_users", "load", "qps_basis", "qps_average", "peak_factor")} | {"load_scale": off})
        gpu = (state.get("plan") or {}).get("gpu")
        if gpu and not parse.slots.gpu_model and not (state.get("slots") or {}).get("gpu_model") \
                and not (state.get("slots") or {}).get("gpu_allowed"):
            parse.slots = parse.slots.model_copy(update={"gpu_allowed": [gpu]})    # the peak fleet's card, fewer
        parse.intent, parse.out_of_scope, parse.job_words = None, False, True
        return off

    def _off_peak_line(self, reply: Reply, off: float, lang: str) -> None:
        """The off-peak fleet and what scaling down to it saves an hour and a month, from the fleet delta."""
        delta = next((x["because"] for x in reply.rule_trace if x.get("rule") == "fleet_delta"), None)
        if not delta:
            return
        t, h = self.templates, self.OFF_PEAK_HOURS
        ctx = dict(pct=f"{off * 100:g}", before=delta["cards_before"], after=delta["cards_after"], h=h)
        if delta["cards_delta"] >= 0 or "hour_delta" not in delta:
            line = t.say("offpeak.no_saving", lang, **ctx)
        else:
            saved = -delta["hour_delta"]
            line = t.say("offpeak.saving", lang, **ctx, hd=f"{saved:,.2f}", cur=delta["currency"],
                         md=money_text(saved * h * 30), yd=money_text(saved * h * 365))
        reply.rule_trace.append({"rule": "off_peak", "fired": True, "because": {**ctx, "share": off}})
        at = next((i + 1 for i, x in enumerate(reply.view.sections) if x.key == "changed"), 0)
        reply.view.sections.insert(at, ViewSection(key="off_peak", lines=[line]))
        reply.text, reply.details = short_text(reply.view, t, lang), details_text(reply.view, t, lang)

    def _compared_again(self, reply: Reply, state: dict[str, Any], new_state: dict[str, Any], lang: str) -> None:
        """A comparison of cards made again with one quantity changed ('L4s vs H100s for 50 req/s?' then 'and if
        traffic triples?'): what changed said first, then each side's cards before and after. Each comparison's sides
        are kept with the session ('compared') for the next one."""
        v = reply.verdict or {}
        if v.get("kind") != "compare" or not v.get("sides"):
            return
        now = {x["name"]: {"cards": x.get("gpus"), "per_hour": x.get("hourly"), "currency": x.get("currency"),
                           "gpu": x.get("gpu"), "label": x.get("label") or x.get("gpu_name")} for x in v["sides"]}
        was = state.get("compared") or {}
        new_state["compared"] = now
        before = (state.get("aside") or {}).get("slots") or {}
        after = (new_state.get("aside") or {}).get("slots") or {}
        changes = changed_slots(before, after) if was and before else []
        if not changes or set(now) != set(was):
            return      # nothing changed, or another comparison (a side added or dropped: 'what about just lambda?')
        job = " vs ".join(str(x["label"]) for x in now.values())
        lines = [changed_line(changes, job, self.templates, lang, self.kb, after)]
        for name, side in now.items():
            delta = fleet_delta(was.get(name), side)
            if delta:
                lines.append(self._fleet_delta_line(delta, lang))
        reply.changed = changes_as_data(changes)
        reply.text = "\n".join([*lines, reply.text])

    def _against_compared(self, reply: Reply, compared: dict[str, Any], lang: str) -> None:
        """The job planned after a comparison, on another card or with a change: its fleet against each side compared
        before, cards and price, said first."""
        rec = next((r for r in reply.recommendations if r.get("label") != "yours"), None)
        if not rec:
            return
        now = plan_summary(rec)
        lines = [self._fleet_delta_line(d, lang) for d in (fleet_delta(side, now) for side in compared.values()) if d]
        if not lines:
            return
        reply.rule_trace.append({"rule": "against_compared", "fired": True, "because": {"sides": list(compared)}})
        reply.view.sections.insert(0, ViewSection(key="changed", lines=[self.templates.say("changed.against", lang),
                                                                         *lines]))
        reply.text, reply.details = short_text(reply.view, self.templates, lang), \
            details_text(reply.view, self.templates, lang)

    def _fleet_delta_line(self, delta: dict[str, Any], lang: str) -> str:
        """'Fleet: 16 x A10 -> 48 x A10 (32 more cards); 35.92 -> 107.76 USD/h (+71.84 USD/h, +52,443 USD a month).'"""
        t = self.templates

        def cards(n: int, gid: str | None) -> str:
            return t.say("changed.cards", lang, n=n, gpu=self.kb.gpus[gid].name if gid in self.kb.gpus else gid or "GPU")
        n = delta["cards_delta"]
        said = t.say("changed.more", lang, n=n) if n > 0 else t.say("changed.fewer", lang, n=-n) if n < 0 else \
            t.say("changed.same_count", lang)
        if delta["gpu_before"] != delta["gpu_after"]:
            said = t.say("changed.other_card", lang, delta=said)
        ctx = dict(before=cards(delta["cards_before"], delta["gpu_before"]),
                   after=cards(delta["cards_after"], delta["gpu_after"]), delta=said)
        if "hour_delta" not in delta:
            return t.say("changed.fleet", lang, **ctx)

        def hourly(v: float) -> str:
            return f"{v:,.2f}"

        def signed(v: float, said=hourly) -> str:
            return ("+" if v > 0 else "-" if v < 0 else "±") + said(abs(v))
        return t.say("changed.fleet_cost", lang, **ctx, hb=hourly(delta["hour_before"]),
                     ha=hourly(delta["hour_after"]), hd=signed(delta["hour_delta"]),
                     md=signed(delta["month_delta"], money_text), cur=delta["currency"])

    def _consistent(self, reply: Reply) -> None:
        """The critic's consistency invariant over the rendered answer (bot/render/consistency.py): a line that
        says something its own numbers contradict (a placeholder, CUDA words on Ascend, 'below' with nothing below,
        'cheaper' that is not, a total that is not hours x price) is left out, and rule_trace says what."""
        found = consistency.problems(reply.view, reply.model_dump(), self.kb.gpus)
        if found:
            reply.view = consistency.drop(reply.view, found)
            reply.rule_trace.append(_consistency_entry(found))

    def cloud_name(self, cloud: str, lang: str) -> str:
        """A cloud's name: the knowledge base's provider, else rules/lexicon.yaml `clouds` (one it does not cover)."""
        if cloud in self.kb.providers:
            return self.kb.providers[cloud].display_name(lang)
        names = (self.parser.lex.get("clouds") or {}).get(cloud) or {}
        return str(names.get(lang) or names.get("en") or cloud)

    def _named_cloud_line(self, slots: dict[str, Any], recs: list[dict[str, Any]], fallback: dict[str, Any] | None,
                          lang: str) -> str | None:
        """The pick stays on the cloud the user named; when it cannot, the first line says so plainly: a cloud the
        knowledge base does not cover is said to be not covered, and the nearest plan elsewhere is named as such."""
        t = self.templates
        rent = [r for r in recs if r.get("label") != "yours"]
        top = rent[0] if rent else None
        elsewhere = f"{self.cloud_name(top['provider'], lang)} {top['flavor']}" if top else ""
        if slots.get("provider_uncovered") and not slots.get("provider"):
            cloud = self.cloud_name(slots["provider_uncovered"], lang)
            return t.say("cloud.not_covered" if top else "cloud.not_covered_none", lang, cloud=cloud,
                         elsewhere=elsewhere)
        named = slots.get("provider")
        if named and top and top["provider"] != named and not fallback:
            return t.say("cloud.named_none", lang, cloud=self.cloud_name(named, lang), elsewhere=elsewhere)
        return None

    def _spot_verdict(self, d: Decision, intent: str, advice, lang: str, span_days: float | None
                      ) -> dict[str, Any] | None:
        """'Is spot a good idea for our 4-day fine-tune on p4d?': for a training job, the verdict on the card and
        cloud named (else the pick), with the saving after reclaims, the checkpoint interval and the provider's
        interruption terms, cited."""
        # a batch job (items, an offline flag, hours of audio to transcribe) resumes from its last written shard
        batch = intent == "inference" and bool(advice.batch or d.slots.get("offline") or d.slots.get("items")
                                               or (advice.speed or {}).get("hours"))
        if intent not in ("train", "finetune") and not batch:
            return None
        named = d.slots.get("gpu_model")
        if named:          # the card (and cloud) named: its own plans, where the pick may be another card
            ids = [g for g in self.advisor._gpu_ids(named) if g in self.kb.gpus]
            advice = self.advisor.plan_on(intent, d.slots, d.assumed, lang, ids) or advice
        w = advice.workload
        rentals = [r for r in [*advice.recommendations, *advice.considered] if r.get("label") != "yours"
                   and not r.get("ruled_out") and not r.get("breaks") and r.get("price_per_hour") is not None]
        rec = next((r for r in advice.recommendations if r.get("label") != "yours"), None)
        spot = [r for r in rentals if r.get("spot_price_per_hour")]
        if rec is not None and rec.get("spot_price_per_hour") is None and spot:
            # the pick has no spot price: judge the plan for the same job that has one (the cheapest on spot)
            rec = min(spot, key=lambda r: (self.kb.convert(r["spot_price_per_hour"] * (r.get("job_hours") or 1),
                                                           r["currency"], "USD"), r["id"]))
        share, interval = batch_spot_overhead() if batch else spot_overhead(w, (rec or {}).get("instances") or 1)
        if batch:
            interval /= 60          # minutes between result flushes, in hours as training's interval is
        v = verdict_math.spot_verdict(rec, share, interval, 0.0 if batch else checkpoint_gb(w),
                                      span_days * 24 if span_days else None, d.slots.get("deadline_days"))
        v["batch"] = batch
        prov = self.kb.providers.get((rec or {}).get("provider") or "")
        mode = next((m for m in (prov.billing if prov else []) if "spot" in m.id and m.reclaim), None)
        reclaim = _in_lang(mode.reclaim, lang) if mode else None
        if mode and lang == "zh" and not has_cjk(reclaim or ""):
            reclaim = mode.summary_zh           # the interruption terms on file are in English only
        lines = say_verdict.spot_lines(self.templates, v, lang, prov.display_name(lang) if prov else "", reclaim)
        return {"verdict": v, "lines": lines, "sources": list(mode.sources) if mode else []}

    def _inverse_reply(self, d: Decision, lang: str, what: str) -> Reply:
        """The biggest model (or most tokens) the budget or the fleet x time trains: the verdict first, then the plan
        for the sized job; with no limit to size against, the verdict says what it needs."""
        v = self.advisor.inverse(d.slots, d.assumed, lang, what)
        lines = say_verdict.inverse_lines(self.templates, v, lang)
        if v.get("answer") != "estimate":
            slots = {k: x for k, x in d.slots.items() if k not in ("params_b", "tokens", "topic")}
            return Reply(status="info", lang=lang, intent="train", slots=slots, text=lines[0],
                         verdict={**v, "line": lines[0]})
        d.slots = sized_slots(d.slots, v)
        reply = self._answer(d, lang, first=[{"key": "verdict", "lines": lines,
                                              "sources": ["chinchilla-hoffmann", "kaplan-scaling"]}])
        reply.verdict = {**v, "line": lines[0]}
        return reply

    def _budget_paths(self, reply: Reply, d: Decision, intent: str, advice, lang: str) -> None:
        """After 'No, not enough': each priced way to fit the budget (fewer tokens, a smaller model of the family,
        the concessions of 'cheaper?'), under the verdict line, marked within the budget or still over."""
        t = self.templates
        base = next((r for r in advice.recommendations if r.get("label") != "yours"), None)
        if base is None:
            return
        paths = self.advisor.budget_paths(intent, d.slots, d.assumed, lang, base, advice.workload.method)
        reply.verdict["paths"] = paths
        lines = [t.say("verdict.paths.head", lang, amount=money_text(d.slots["budget_amount"]),
                       ccy=d.slots.get("budget_currency") or "")]
        lines += [say_verdict.path_line(t, p, lang, self.kb) for p in paths]
        if not paths:
            lines.append(t.say("verdict.paths.none", lang))
        section = next((s for s in reply.view.sections if s.key == "verdict"), None) if reply.view else None
        if section is not None:
            section.lines += lines
        elif reply.view is not None:          # the budget stated, not asked about: after the line that says so
            reply.view.sections.insert(min(1, len(reply.view.sections)), ViewSection(key="paths", lines=lines))

    def _cheaper(self, reply: Reply, d: Decision, intent: str, advice, lang: str) -> None:
        """'cheaper?' after an answer: the concessions that make the job cheaper (bot/plan/cheaper.py), said first, or
        that the plan is already the cheapest that meets the job as stated."""
        t = self.templates
        base = next((r for r in advice.recommendations if r.get("label") != "yours"), None)
        if base is None:
            return
        options = cheaper_options(lambda s: self.advisor.advise(intent, s, d.assumed, lang).recommendations, intent,
                                  d.slots, base, advice.workload.method, list(self.kb.providers))
        reply.cheaper = [o.as_dict() for o in options]
        provider = self.kb.providers[base["provider"]].display_name(lang) if base["provider"] in self.kb.providers \
            else base["provider"]
        lines = [t.say("cheaper.already", lang, provider=provider)]
        for o in options:
            where = self.kb.providers[o.provider].display_name(lang) if o.provider in self.kb.providers else o.provider
            lines.append(t.say("cheaper.option", lang, saving=f"{100 * o.saving:.0f}", instances=o.instances,
                               flavor=o.flavor, gpus=o.gpus_total, gpu=o.gpu_name, provider=where,
                               cost=f"{o.cost:,.2f}", currency=o.currency, per=t.say(f"cheaper.per.{o.per}", lang),
                               change=t.say(f"cheaper.change.{o.change}", lang, provider=where)))
        if not options:
            lines.append(t.say("cheaper.none", lang))
        # said first, on every surface (after the verdict a comparison asked for: '阿里云和腾讯云哪个划算')
        at = next((i for i, x in enumerate(reply.view.sections) if x.key not in ("verdict", "changed")), len(reply.view.sections))
        reply.view.sections.insert(at, ViewSection(key="cheaper", lines=lines))

    def _job_verdict(self, reply: Reply, slots: dict[str, Any], asks: list[str], lang: str,
                     said_days: float | None = None, named: dict[str, Any] | None = None) -> None:
        """'Is 2,000 CNY enough?', 'how long on my 64 H100?': the verdict sentence first, and as data. A budget
        stated with the question is asked about too; a deadline is judged when the time is asked."""
        budget = slots.get("budget_amount") is not None
        if not asks and not budget:
            return
        if "enough" in asks and not budget and not slots.get("deadline_days") and said_days:
            slots = {**slots, "deadline_days": said_days}      # '30 天够吗': the time is what must be enough
        if asks == ["enough"] and not budget and not slots.get("deadline_days"):
            return        # 'are 4 T4 enough for 100 qps?': about the cards, which the answer's first line judges
        # 'enough?' is about the budget when one is stated, else about the time ('30 天够吗' with a deadline)
        wants_budget = budget and ("enough" in asks or "how_long" not in asks)
        recs = reply.recommendations
        mine = next((r for r in recs if r.get("label") == "yours"), None)
        rental = next((r for r in recs if r.get("label") != "yours"), None)
        if wants_budget:
            v = verdict_math.budget_verdict(rental, slots)
            line = say_verdict.budget_line(self.templates, v, lang)
        else:
            # 'H800 要多少卡多久': the card asked about, when it holds the job and is timed, before any rental
            row = (named or {}).get("row") or {}
            asked = {**row, "label": "named"} if row.get("fits") and row.get("job_hours") else None
            v = verdict_math.time_verdict(mine or asked or rental, slots.get("deadline_days"),
                                          work_said=reply.work is not None)
            line = say_verdict.time_line(self.templates, v, lang)
        if ("enough" in asks or "how_long" in asks) and reply.view is not None:
            reply.view.sections.insert(0, ViewSection(key="verdict", lines=[line]))     # first, on every surface
        elif "enough" in asks or "how_long" in asks:
            reply.text = line + "\n" + reply.text
        reply.verdict = {**v, "line": line}

    def _memory_first(self, reply: Reply, advice, lang: str) -> None:
        """'How much memory does it need? / 显存够不够': the whole job on one card as stated (weights, gradients,
        optimizer state, activations, KV cache, overhead) against the card's memory, then the plan below's GiB a
        card, term by term, against its card; first, on every surface. The numbers are bot/plan/verdicts
        memory_verdict's (the critic checks the terms add up and each fits agrees with its total)."""
        one, t = advice.one_copy, self.templates
        pick = next((r for r in reply.recommendations if r.get("fits")), None)
        gv = advice.gpu_verdict or {}
        est = advice.memory

        def terms_of(need: float) -> dict[str, float] | None:
            # the plan's own terms: the advisor's estimate is the pick's layout when its total is the plan's
            return dict(est.breakdown) if est is not None and abs(est.per_gpu_gib - need) < 0.06 else None
        plans: list[dict[str, Any]] = []
        card = None
        if gv.get("need_gib") is not None and gv.get("memory_gib"):
            # the card asked about (or theirs): the one copy against it, then its best layout, fitting or not
            # a card known by its memory alone ('a 24 GiB card'): said without its article after 'one' / 'N x'
            card = {"gpu_name": re.sub(r"^an? ", "", gv.get("gpu_name") or ""), "memory_gib": gv["memory_gib"]}
            plans.append({"per_gpu_gib": gv["need_gib"], "cards": gv.get("gpus") or 1, "gpu_name": card["gpu_name"],
                          "memory_gib": gv["memory_gib"], "breakdown": gv.get("breakdown") or terms_of(gv["need_gib"]),
                          "side": "yours" if gv.get("owned") else "named"})
        if pick and pick.get("per_gpu_gib") and not gv.get("fits"):
            card = card or {"gpu_name": pick.get("gpu_name"), "memory_gib": pick.get("gpu_memory_gib")}
            plans.append({"per_gpu_gib": pick["per_gpu_gib"], "cards": pick.get("gpus_total") or 1,
                          "gpu_name": pick.get("gpu_name"), "memory_gib": pick.get("gpu_memory_gib"),
                          "breakdown": terms_of(pick["per_gpu_gib"]), "side": "pick"})
        v = verdict_math.memory_verdict(one.per_gpu_gib, one.breakdown, card, plans, MIN_HEADROOM)

        def parts(terms: dict[str, float]) -> str:
            return t.say("list.sep", lang).join(t.say(f"memory_ask.term.{k}", lang, gib=f"{x:,.1f}")
                                                for k, x in terms.items() if x >= 0.05)
        c = v.get("card")
        against = t.say("memory_ask.against." + ("fits" if c["fits"] else "over"), lang, gpu=c["gpu_name"],
                        mem=f"{c['memory_gib']:g}", usable=f"{c['usable_gib']:g}") if c else ""
        after = "".join(
            t.say(f"memory_ask.{p['side']}", lang, need=f"{p['per_gpu_gib']:,.1f}", mem=f"{p['memory_gib']:g}",
                  n=p["cards"], gpu=p["gpu_name"],
                  parts=t.say("memory_ask.parts", lang, parts=parts(p["breakdown"])) if p["breakdown"] else "",
                  fit=t.say("memory_ask." + ("fits" if p["fits"] else "over"), lang))
            for p in v["plans"])
        line = t.say("memory_ask.line", lang, total=f"{one.per_gpu_gib:,.1f}", parts=parts(one.breakdown),
                     against=against) + after
        if reply.view is not None:
            # the card asked about answers 'will it OOM on a T4?' yes or no: that stays first, its accounting next
            at = 1 if reply.view.sections and reply.view.sections[0].key == "lead" and gv else 0
            reply.view.sections.insert(at, ViewSection(key="verdict", lines=[line]))
        else:
            reply.text = line + "\n" + reply.text
        reply.verdict = reply.verdict or {**v, "line": line}

    def _fits_for_line(self, fits_for: tuple, lang: str) -> str:
        """'fits your cards: QLoRA; does not fit: full fine-tuning, LoRA. Answered for QLoRA (choose another below)'."""
        t = self.templates
        _, chosen, fit, unfit, offload = fits_for

        def names(methods: list[str]) -> str:
            return t.say("list.sep", lang).join(t.say(f"method_name.{m}", lang) for m in methods)
        parts = [t.say(key, lang, methods=names(ms)) for key, ms in (
            ("fits_their_cards.fit", fit), ("fits_their_cards.offload", offload), ("fits_their_cards.unfit", unfit)) if ms]
        key = "fits_their_cards.answered" if fit or offload else "fits_their_cards.nearest"
        return t.say("list.sep_clause", lang).join(parts) + t.say(key, lang, chosen=t.say(f"method_name.{chosen}", lang))

    def _topics_named(self, text: str) -> list[str]:
        """Every topic the question names, the most specific first (the longest cue heard: 'modelarts' before
        '规格'), so a question about a platform's flavors is answered with the platform, not the naming scheme."""
        hits = [(max(len(c) for c in cues.all(text)), tp) for tp, cues in self.parser.topics.items() if cues.any(text)]
        return [tp for _, tp in sorted(hits, key=lambda h: -h[0]) if tp in self.kb.topics]

    def _renting_lines(self, gid: str, d: Decision, lang: str, cite: Citer) -> list[str]:
        """The sizes on file that rent this GPU, on the cloud named (else the default one, else any): card, count,
        memory, CPUs and RAM, interconnect, network, price and use, cited: what 'what is Snt9b' asks for."""
        provider = d.slots.get("provider") or self.advisor.default_provider
        fs = [f for f in self.kb.flavors_with_gpu(gid) if f.provider == provider] or list(self.kb.flavors_with_gpu(gid))
        fs = sorted(fs, key=lambda f: (f.provider, f.gpu_count, f.vcpus or 0, f.id))[:4]
        facts = [info.flavor_facts(self.kb, f.id) for f in fs]
        return [cite.after(say_verdict.flavor_line(self.templates, f, lang), f["sources"]) for f in facts]

    def _topic_line(self, topic: str, lang: str, cite: Citer, cloud: str | None = None) -> str:
        """A sourced topic explanation in the reply's language, citing its sources; on a `cloud` the answer is about,
        without the sentences that speak for another cloud only ('On Huawei Cloud the price follows...' in an answer
        about Alibaba's spot instances says less rather than another cloud's terms)."""
        tp = self.kb.topics[topic]
        title, text = (tp.title_zh, tp.text_zh) if lang == "zh" else (tp.title_en, tp.text_en)
        if cloud in self.kb.providers:
            text = self._only_this_cloud(text, cloud) or text
        return cite.after(f"{title}: {text}", tp.sources)

    def _only_this_cloud(self, text: str, cloud: str) -> str:
        """`text` less each sentence that names another cloud of the knowledge base and not `cloud`."""
        def names(pid: str) -> list[str]:
            p = self.kb.providers[pid]
            return [n for n in {p.name, p.name_zh} if n]
        mine = names(cloud)
        others = [n for pid in self.kb.providers if pid != cloud for n in names(pid)]
        parts = re.split(r"(?<=[.。;；])\s*", text)
        kept = [x for x in parts if not (any(n in x for n in others) and not any(n in x for n in mine))]
        return (" " if text.isascii() else "").join(x for x in kept if x).strip()

    def _info(self, d: Decision, parse, lang: str, job_intent: str | None = None,
              kept: dict[str, Any] | None = None) -> Reply:
        t = self.templates
        slots = {k: v for k, v in d.slots.items() if k != "topic"}
        base = dict(status="info", lang=lang, intent=d.intent, slots=slots)
        if d.intent == "help":
            return Reply(text=t.say("reply.help", lang), **base)
        lines: list[str] = []
        cite = Citer(self.kb)
        verdict = None
        if parse.versus and d.intent in ("compare", "explain"):
            # two precisions, methods, clouds or flavors for the job: the verdict first, each side's plan, then
            # (for flavors) what each one is
            found = self._versus(parse, d, lang, _job_intent(parse, d) or job_intent, cite)
            if found:
                lines += found[0]
                verdict = found[1]
                if parse.versus["axis"] == "flavor":
                    self._flavor_lines(parse, d, lang, cite, lines)
                d.intent = "compare"
                base["intent"] = "compare"
        if d.intent == "compare" and not lines:
            counts = side_counts(self.parser, parse.text, d.slots.get("gpu_models") or [])
            plans = self.advisor.compare({**d.slots, **({"gpu_counts": counts} if counts else {})}, d.assumed, lang,
                                         _job_intent(parse, d))   # the same plans decide
            if plans:
                verdict = plans["verdict"]
                lines += say_verdict.compare_lines(t, verdict, lang, verdict.get("figures"), cite)
                if plans.get("typical"):
                    lines.append(t.say("verdict.typical_job", lang, job=t.say(f"verdict.typical.{plans['typical']}",
                                                                               lang)))
                if plans.get("work_assumed"):
                    lines.append(t.say(f"verdict.assume.tokens_{plans['work_assumed']}", lang))
                lines += compare_lines(self.kb, t, plans, lang, cite)[1:]
            data = info.compare(self.kb, d.slots)
            lines += [_spec_line(g, t, lang, cite) for g in data["gpus"]]
            if not data["gpus"]:
                d.intent = "explain"
        if d.intent in ("explain", "compare") and not lines:
            verdict = self._flavor_lines(parse, d, lang, cite, lines)
        if d.intent in ("explain", "compare") and not lines and d.slots.get("gpu_model"):
            # one GPU (or a platform's name for it, 'Snt9b'): its datasheet figures, the sizes that rent it, then
            # what else the question names ('和自己开 ECS 有什么区别': the platform topic), most specific first
            data = info.compare(self.kb, {"gpu_model": d.slots["gpu_model"]})
            lines += [_spec_line(g, t, lang, cite) for g in data["gpus"]]
            if data["gpus"]:
                verdict = {"kind": "explain", "gpu": data["gpus"][0]["id"], "line": lines[0]}
                lines += self._renting_lines(data["gpus"][0]["id"], d, lang, cite)
                lines += [self._topic_line(tp, lang, cite) for tp in self._topics_named(parse.text)[:2]]
        if d.intent in ("explain", "compare") and not lines:
            data = info.explain(self.kb, d.slots, parse.text)
            for cid in data["claims"]:
                c = self.kb.claims[cid]
                lines.append(cite.after(c.finding_zh if lang == "zh" else c.finding_en, c.sources))
            if data["topic"]:
                lines.append(self._topic_line(data["topic"], lang, cite))
        if d.intent == "billing":
            if kept and not (d.slots.get("model") or d.slots.get("params_b")) and job_intent not in JOB_INTENTS:
                # 'is spot ok for that?' after a comparison: the job compared, on the side it preferred
                d = Decision("info", d.intent, {**(kept.get("slots") or {}), **(kept.get("chosen") or {}),
                                                **{k: v for k, v in d.slots.items() if v is not None}}, d.assumed)
                job_intent = kept.get("job_intent")
            data = info.billing(self.kb, d.slots, self.advisor.default_provider)
            verdict = self._billing_verdict(parse, d, data["provider"], lang, job_intent)
            if verdict.get("provider") in self.kb.providers and verdict["provider"] != data["provider"]:
                # priced on the job's own pick: its cloud's billing modes, not the default one's
                data = info.billing(self.kb, {**d.slots, "provider": verdict["provider"]}, verdict["provider"])
            prov = self.kb.providers[data["provider"]]
            if d.slots.get("provider_uncovered") and not d.slots.get("provider"):
                # a cloud not covered: said first, and every term below labelled as another cloud's
                lines.append(t.say("cloud.not_covered_info", lang, elsewhere=prov.display_name(lang),
                                   cloud=self.cloud_name(d.slots["provider_uncovered"], lang)))
            lines += say_verdict.billing_lines(t, verdict, lang, prov.display_name(lang))
            if data["topic"]:
                lines.append(self._topic_line(data["topic"], lang, cite, data["provider"]))
            for m in prov.billing:
                if m.id not in data["modes"]:
                    continue
                name = m.name_zh if lang == "zh" else m.name_en
                summary = m.summary_zh if lang == "zh" else m.summary_en
                extra = f" {_in_lang(m.reclaim, lang)}" if m.reclaim and "spot" in m.id else ""
                lines.append(cite.after(f"{prov.display_name(lang)} {name}: {summary}{extra}", m.sources))
        if not lines:
            return Reply(text=t.say("reply.help", lang), **base)
        found = [p for x in lines for p in consistency.text_problems(x)]
        if found:              # says less rather than something false; a test fails on the trace (tests/conftest.py)
            lines = [x for x in lines if not consistency.text_problems(x)] or lines
        citations = cite.citations()
        text = "\n".join(lines) + "\n" + sources_line(citations, lang, t)
        if verdict is not None:
            verdict = {**verdict, "line": lines[0]}
        reply = Reply(text=text, citations=citations, verdict=verdict, **base)
        if found:
            reply.rule_trace.append(_consistency_entry(found))
        return reply


# Azure GPU VM series by family name (NVadsA10 v5, NC A100 v4, NC H100 v5, NCasT4 v3, ND MI300X v5): the card in it
_SERIES = re.compile(r"(?<![a-z0-9])(?:standard_)?n[cdv](?:\d+)?[a-z]*?\s*_?(a10|a100|h100|h200|t4|v100|mi300x)(?:\s*_?v\d)?"
                     r"(?![a-z0-9])")
_SERIES_GPU = {"a10": "a10", "a100": "a100-80gb-pcie", "h100": "h100-nvl", "h200": "h200", "t4": "t4",
               "v100": "v100-16gb", "mi300x": "mi300x"}


def _replicas(fleet: dict[str, Any]) -> int:
    return int(fleet.get("replicas") or 1)


_QUANT_WORD = re.compile(r"awq|gptq|int4|int8|fp8|4[- ]?bit|8[- ]?bit|4\s*位|8\s*位|(?<![向矢定])量化(?!交易|投资|基金|私募)")
_SPEED_WORD = re.compile(r"(?<![a-z])(?:faster|speed|speedup|how fast|quicker|slower|throughput)(?![a-z])|快|速度|提速|加速|慢")


# a question about how a cloud bills ('is monthly billing cheaper?', '包月划算吗'), not what the plan costs
_BILLING_MODE = re.compile(r"(?<![a-z])(?:billing|subscription|prepaid|reserved|reservation|commit(?:ment|ted)?|savings plan|"
                           r"spot|preemptible|on-demand|on demand|pay-as-you-go|pay as you go|pay-per-use)(?![a-z])|"
                           r"包年|包月|预付|预留|竞价|抢占|按需|按量|计费方式|划算")


def _plan_of(reply: Reply) -> dict[str, Any]:
    """The plan an answer led with, kept in the session for a follow-up about it ('faster?', 'why so many cards?')."""
    rec = next((r for r in reply.recommendations if r.get("label") != "yours"), None) or \
        next(iter(reply.recommendations), None) or {}
    return {k: rec.get(k) for k in ("flavor", "gpu", "gpus_total", "instances", "replicas", "tpot_ms")} | \
        {"hours": rec.get("job_hours"), "fleet": plan_summary(rec) if rec else None}


def _hours_text(h: float) -> str:
    return f"{h:,.1f}" if h < 100 else f"{h:,.0f}"


def _money(rec: dict[str, Any] | None, key: str) -> str:
    if not rec or rec.get(key) is None:
        return "-"
    return f"{money_text(float(rec[key]))} {rec.get('currency') or ''}".strip()


def _consistency_entry(found: list[dict[str, Any]]) -> dict[str, Any]:
    return {"rule": "critic.answer-consistency", "fired": True,
            "because": "; ".join(f"{p['check']} ({p['where']}): {p['line'][:120]}" for p in found[:4])
            + (f" (+{len(found) - 4})" if len(found) > 4 else ""), "problems": found}


class _Collect(Citer):
    """A citer that numbers nothing: lines said before an answer keep their sources for the section's last line
    (the answer's view numbers them with its own)."""

    def after(self, text: str, ids: list[str] | None) -> str:
        self.numbers(ids)
        return text


def _spec_line(g: dict[str, Any], t: Templates, lang: str, cite: Citer) -> str:
    """One GPU's spec and cheapest list price, citing the spec's and the price's sources."""
    price = g["price"]
    ptxt = (f"{price['per_gpu_hour']:.2f} {price['currency']}/GPU-h ({t.say('price.list', lang)}, "
            f"{price['flavor']}, {price['date'] or t.say('price.undated', lang)})") if price else \
        t.say("label.no_price", lang)
    flops = g["bf16_tflops"] or g["fp16_tflops"]
    # a figure not on file is said as such, never as '-' or '?'; NVLink is NVIDIA's (an Ascend card has HCCS)
    bw = f"{g['memory_bandwidth_gbs']} GB/s" if g["memory_bandwidth_gbs"] else t.say("spec.no_bandwidth", lang)
    compute = f"{flops} TFLOPS {'BF16' if g['bf16_tflops'] else 'FP16'} dense" if flops else \
        t.say("spec.no_tflops", lang)
    fp8 = f"FP8 {g['fp8_tflops']}" if g["fp8_tflops"] else t.say("spec.no_fp8", lang)
    link = [f"NVLink {g['nvlink_gbs']}" if g["nvlink_gbs"] else t.say("spec.no_nvlink", lang)] \
        if g.get("vendor", "nvidia") == "nvidia" else []
    return cite.after(f"{g['name']}: {g['memory_gib']:g} GiB, {bw}, {compute}, " + ", ".join([fp8, *link]) +
                      f"; {', '.join(g['positioning'])}; {ptxt}", [*g["sources"], *(price["sources"] if price else [])])


# words that follow 'vs'/'or' without naming anything to compare ('aws or not', 'lambda or something')
_SAME_TWICE = re.compile(r"(?<![a-z0-9._-])([a-z0-9][a-z0-9._-]*)\s*(?:vs\.?|versus|or|还是|对比|和|与)\s*\1(?![a-z0-9._-])")
_PLAIN_WORDS = {"not", "something", "else", "other", "others", "what", "which", "the", "this", "that", "both", "either",
                "neither", "none", "any", "anything", "cheaper", "cheapest", "better", "more", "less", "spot", "cloud",
                "clouds", "gpu", "gpus", "prem", "onprem", "local", "own", "buy", "buying", "rent", "renting"}
# asked as a capability of the card: 'support', 'can I use/run/train', '能不能', '支持' (bot/plan/capability.py)
_CAP_ASK = re.compile(r"(?<![a-z])(?:support(?:s|ed)?|compatible)(?![a-z])|(?<![a-z])can (?:[\w.-]+ ){0,4}?(?:use|run|do|train|"
                      r"serve|handle)(?![a-z])|(?<![a-z])does (?:[\w.-]+ ){0,3}?(?:have|do|run|support)(?![a-z])|"
                      r"(?<![a-z])works? (?:on|with)(?![a-z])|支持|能不能|能否|能用|可以用|可不可以|行不行|能跑|可以跑")
_CAN_RUN = re.compile(r"能跑|能不能跑|跑得动|跑得了|能否运行|能运行|放得下|装得下|"
                      r"(?:can|could|will|would) (?:[\w.-]+ ){0,3}(?:run|fit|hold|handle|do)\b|"
                      r"(?:is|are) (?:[\w.-]+ ){0,2}(?:enough|big enough)|does it fit|fit on")
_YEAR = re.compile(r"(?<![a-z0-9])(?:1|one|a)[ -]?(?:yr|year)|yearly|annual|reserved instance|savings plan|commit|包年|一年|年付")
_DAYS_ENOUGH = re.compile(r"(\d+(?:\.\d+)?)\s*(?:个)?\s*(days?|weeks?|天|周|星期)\s*(?:够|enough|is enough|be enough)")


def _days_said(text: str) -> float | None:
    """'30 天够吗', '3 weeks enough?': the time a 'enough?' question weighs the job against, in days."""
    m = _DAYS_ENOUGH.search(text)
    if not m:
        return None
    return float(m.group(1)) * (7 if m.group(2)[0] in "w周星" else 1)


def _looks_like_a_gpu(word: str) -> bool:
    """'z900', 'h300', 'rtx5080': letters and digits together, not a size ('8b', '80gb', '4k', '2x')."""
    return bool(re.fullmatch(r"[a-z]+-?\d+[a-z0-9-]*|\d+[a-z]+\d*[a-z]*", word)) and \
        not re.fullmatch(r"\d+(?:b|m|k|g|gb|gib|x|t|h|d|w|ms|s)", word)


def _job_intent(parse, d) -> str | None:
    """The job a compare question is about, from its job words (the parser's train / finetune / inference cues)."""
    scores = {k: v for k, v in parse.intent_scores.items() if k in ("train", "finetune", "inference") and v > 0}
    return max(scores, key=lambda k: (scores[k], k)) if scores else None


def _offloaded(verdict: dict[str, Any]) -> bool:
    """Did the user's cards need state moved to host RAM to hold the job (bot/plan/own.py's offload rungs)?"""
    return any("offload" in c.get("change", "") for c in (verdict.get("row") or {}).get("changes") or [])


def _card_choice(name: str) -> str:
    """A card's name as a button: without its bracketed detail ('NVIDIA A10G (AWS)' would also name a cloud), still
    read back as that card (every card on file with a bandwidth figure is)."""
    return re.sub(r"\s*\([^)]*\)", "", name)


def _count_text(value: float) -> str:
    """A count as people write it: '-8', '1,000,000,000,000', '1e+31'."""
    if abs(value) >= 1e15:
        return f"{value:.0e}"
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


def _in_lang(text: str, lang: str) -> str:
    """Fields written as "English / 中文" show the part in the reply's language. The English part may hold " / "
    itself ("metadata 'spot', or via Cloud Trace Service / ..."), so the split is where the Chinese begins."""
    from bot.records.text import has_cjk
    parts = [p.strip() for p in text.split(" / ")]
    first_zh = next((i for i, p in enumerate(parts) if p and has_cjk(p[:2])), None)
    if first_zh is None or first_zh == 0:
        return text
    en, zh = " / ".join(parts[:first_zh]), " / ".join(parts[first_zh:])
    return zh if lang == "zh" else en


def served_as(w) -> str | None:
    """A service's weights when they are not 16-bit (FP8, INT8, 4-bit), and whether its KV cache is FP8 too: the
    answer names it beside the model, where the reader sees what the memory figure assumes."""
    if w.task != "inference" or w.precision not in ("fp8", "int8", "int4", "nf4"):
        return None
    return "fp8_kv" if w.precision == "fp8" and w.kv_dtype == "fp8" else w.precision


def _count_of_flavor(text: str, flavor: str) -> int | None:
    """A count said with a flavor's name ('4 g5.12xlarge instances', '4 x p4d.24xlarge', '3 台 g6.xlarge',
    'g6.xlarge x 4'): the instances meant, else None."""
    name = re.escape(flavor.lower())
    m = re.search(rf"(?<![\d.])(\d{{1,4}})\s*(?:[x×*]|台|个)?\s*{name}(?![\w.])", text.lower()) or \
        re.search(rf"(?<![\w.]){name}\s*(?:[x×*])\s*(\d{{1,4}})(?![\d.])", text.lower())
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None
