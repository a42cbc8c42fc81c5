"""An answer's view (bot/render/view.py) as terminal text: the short form (the decision), then the details.

`ask` prints the short form; `ask --details` (and chat's "details") add the details after it. Each part lists the
sources it cites: the short form sources 1..short_sources, the details the rest."""
from __future__ import annotations

from bot.records.models import AnswerView, ViewSection
from bot.render.reply import sources_line
from bot.render.templates import Templates


def marks(refs: list[int]) -> str:
    return "".join(f"[{n}]" for n in refs)


def section_lines(s: ViewSection) -> list[str]:
    """A section's short lines as the terminal shows them: its label before the first, continuation lines as they are."""
    if not s.lines:
        return []
    first = f"{s.label}: {s.lines[0]}" if s.label else s.lines[0]
    return [first, *s.lines[1:]]


def decision_lines(view: AnswerView, t: Templates, lang: str) -> list[str]:
    """The decision: every section's short lines, and the checklist at a glance (its items' words after the fold)."""
    lines = [line for s in view.sections if not s.folded for line in section_lines(s)]
    if view.checklist:
        sep = "，" if lang == "zh" else ", "
        glance = sep.join(f"{c.name} {c.status_word}" for c in view.checklist)
        lines.append(t.say("checklist.glance", lang, label=t.say("label.checklist", lang), items=glance))
    return lines


def short_text(view: AnswerView, t: Templates, lang: str) -> str:
    """The short form: the decision, and the sources it cites."""
    shown = view.sources[: view.short_sources]
    return "\n".join(decision_lines(view, t, lang) + ([sources_line([s.model_dump() for s in shown], lang, t)]
                                                      if shown else []))


def details_text(view: AnswerView, t: Templates, lang: str) -> str:
    """After the fold: each section's details, the checklist item by item, the plans considered, notes, what was
    assumed, and the sources cited here and not in the short form."""
    label = lambda k: t.say(f"label.{k}", lang)  # noqa: E731
    lines = [label("details")]
    for s in view.sections:             # each part's details after it (a folded part: the part, then its details)
        lines += (section_lines(s) if s.folded else []) + s.more
    if view.checklist:
        lines.append(label("checklist"))
        for c in view.checklist:
            row = f"  {c.status_word:<5} {c.name:<9} {c.text}"
            lines.append(f"{row} {marks(c.refs)}" if c.refs else row)
    if view.considered:
        lines.append(f"{label('considered')}:")
        lines += [f"      {considered_plan(r.flavor, r.instances):<24} {r.gpu_count}x {r.gpu_name:<22} {r.verdict}"
                  for r in view.considered]
    lines += [f"  {label('notes')}: {note}" for note in view.notes]
    if view.assumed:
        lines.append(f"{label('assumed')}: {view.assumed}")
    rest = view.sources[view.short_sources:]
    if rest:
        lines.append(sources_line([s.model_dump() for s in rest], lang, t))
    return "\n".join(lines)


def considered_plan(flavor: str, instances: int) -> str:
    """A considered plan's flavor with how many of it the plan takes ('4 x p5s.40xlarge.12')."""
    return f"{instances} x {flavor}" if instances > 1 else flavor
