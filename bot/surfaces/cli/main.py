"""The `gpu-advisor` command: a thin click layer over the core (like sqlite-utils' cli.py over db.py).

Heavy imports happen inside commands, so `gpu-advisor --help` and simple commands start fast.
"""
from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from bot.surfaces.cli import HELP
from bot.surfaces.cli.audit import audit
from bot.surfaces.cli.output import clean_arg, print_reply
from bot.records.errors import EXIT_FAILED, EXIT_OK, AdvisorError, ConfigError


def _fail(exc: AdvisorError) -> None:
    click.echo(f"Error: {exc.render()}", err=True)
    sys.exit(exc.exit_code)


class Group(click.Group):
    """Turns AdvisorError into a clean message and exit code instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AdvisorError as exc:
            _fail(exc)


EXIT_EPILOG = ("Exit status: 0 ok; 1 a check found a problem (kb validate, audit verify, doctor); 2 usage or "
               "configuration error; 3 not found (an audit id, a model, a knowledge record); 4 a dependency is "
               "unavailable (the database, PostgreSQL, Slack). docs/cli.md lists them with the --json outputs.")


@click.group(cls=Group, context_settings=HELP, epilog=EXIT_EPILOG)
@click.version_option(package_name="gpu-advisor")
def main() -> None:
    """Which cloud GPU instance to rent for a deep-learning job, and why."""


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str)


# ----- ask / chat --------------------------------------------------------------------------------------------------
LAST_ASK = "last-ask"          # the session-store entry that remembers a user's latest `ask` conversation


def _ask_session(svc: Any, user: str, session: str | None, cont: bool) -> str:
    """The conversation an `ask` belongs to: --session names one; --continue takes the previous `ask`'s; otherwise a
    new one, so that an earlier question (its language, its model) never leaks into an unrelated new one."""
    from bot.store.sessions import session_key
    if session:
        return session
    key = session_key("cli", None, None, LAST_ASK, user)
    if cont:
        last = (svc.sessions.load(key) or {}).get("session")
        if not last:
            raise click.UsageError("there is no earlier `ask` to continue (conversations expire after 6 hours); "
                                   "ask without --continue to start one")
        return str(last)
    import uuid
    sid = f"ask-{uuid.uuid4().hex[:8]}"
    svc.sessions.save(key, {"session": sid})
    return sid


@main.command()
@click.argument("text", required=False)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per turn (fields: docs/answer.md; schema: `gpu-advisor schema`).")
@click.option("--session", help="Conversation id; slots are kept between turns of the same session.")
@click.option("--continue", "cont", is_flag=True,
              help="Continue the conversation of your previous `ask` (without it, each `ask` starts a new one).")
@click.option("--batch", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="One question per line (plain text, or JSON objects with 'text' and optional 'session').")
@click.option("--details", is_flag=True,
              help="After the decision, the details: plans considered, the checklist's reasons, assumptions, sources.")
def ask(text: str | None, as_json: bool, session: str | None, cont: bool, batch: Path | None, details: bool) -> None:
    """Ask one question (one conversation turn). Each `ask` is a new conversation unless --session or --continue.

    Prints the decision first (pick or verdict, what the job needs, time and cost, targets met); --details adds the
    rest. --json prints both (`text` and `details`) with every figure."""
    from bot.surfaces.service import Service
    if batch is None and not text:
        raise click.UsageError("give a question, e.g. gpu-advisor ask \"lora finetune qwen2.5 7b\", or --batch FILE")
    svc = Service()
    user = getpass.getuser()
    if batch is not None:
        # invalid UTF-8 in the file becomes U+FFFD instead of ending the run
        for lineno, line in enumerate(batch.read_bytes().decode("utf-8", "replace").splitlines(), 1):
            if not line.strip():
                continue
            item: dict[str, Any] = {"text": line}
            if line.lstrip().startswith("{"):
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as exc:
                    click.echo(_dump({"line": lineno, "error": f"not valid JSON ({exc.msg}); write one object per "
                                                               "line with a 'text' field, or plain text"}))
                    continue
                if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                    click.echo(_dump({"line": lineno, "error": "each JSON line needs a 'text' string"}))
                    continue
            # each line is its own conversation unless it (or --session) names one to continue
            out = svc.ask(item["text"], surface="cli", user=user,
                          session=item.get("session") or session or f"batch-{batch.name}-{lineno}")
            click.echo(_dump(out))
        return
    out = svc.ask(clean_arg(text or ""), surface="cli", user=user, session=_ask_session(svc, user, session, cont))
    if as_json:
        click.echo(_dump(out))
    else:
        print_reply(out, details)


@main.command()
@click.option("--session", default=None, help="Conversation id (default: a new one per chat).")
def chat(session: str | None) -> None:
    """Talk to the advisor in the terminal (the same pipeline as Slack). Type a listed choice's number to pick it,
    'details' for the last answer's details; Ctrl-C clears the line, Ctrl-D or 'quit' ends."""
    from bot.surfaces.cli.chat import run_chat
    run_chat(session)


# ----- estimate ----------------------------------------------------------------------------------------------------
@main.command()
@click.option("--model", help="Model name, matched fuzzily (llama-3.1-8b, 'Qwen2.5 7B', bert-large).")
@click.option("--params", type=float, help="Parameter count in billions, when the model is not on file.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="A model's config.json (Hugging Face): its architecture, for a model not on file.")
@click.option("--method", type=click.Choice(["full", "freeze", "lora", "qlora", "inference"]), default="lora",
              show_default=True)
@click.option("--precision", type=click.Choice(["fp32", "fp16", "bf16", "fp8", "int8", "int4", "nf4"]),
              default=None, help="Default: bf16 (nf4 base for qlora).")
@click.option("--pure-bf16", is_flag=True, help="16-bit weights and optimizer state, no fp32 master copy.")
@click.option("--optimizer", type=click.Choice(["adamw", "adamw8bit", "sgd", "adafactor"]), default="adamw",
              show_default=True)
@click.option("--batch-size", type=click.IntRange(1, 4096), default=None, help="Per GPU.")
@click.option("--seq-len", type=click.IntRange(1, 10_000_000), default=None)
@click.option("--gpus", type=click.IntRange(1, 100_000), default=1, show_default=True, help="GPUs in total.")
@click.option("--nodes", type=click.IntRange(1, 10_000), default=1, show_default=True)
@click.option("--sharding", type=click.Choice(["none", "ddp", "zero1", "zero2", "zero3", "fsdp", "hsdp"]), default=None)
@click.option("--offload", type=click.Choice(["none", "optimizer", "full"]), default="none", show_default=True)
@click.option("--grad-checkpointing", is_flag=True, help="The same as --checkpointing full.")
@click.option("--checkpointing", type=click.Choice(["none", "full", "selective"]), default=None,
              help="Activation checkpointing: full keeps each layer's input and recomputes the layer; selective "
                   "recomputes part of each layer (--selective-policy). Default: none, or full with "
                   "--grad-checkpointing.")
@click.option("--checkpoint-every", type=click.IntRange(1, 1000), default=1, show_default=True,
              help="With --checkpointing full: checkpoint one layer in N, the others keep all their activations "
                   "(torchtitan's selective_ac_option = N).")
@click.option("--selective-policy", type=click.Choice(["attention", "alternate-mm"]), default="attention",
              show_default=True,
              help="What selective checkpointing recomputes: attention = only the attention core (Korthikanti et al., "
                   "Megatron-LM); alternate-mm = all but every other matmul's output and attention's (torchtitan 'op').")
@click.option("--frozen-dtype", type=click.Choice(["fp32", "bf16", "fp16"]), default=None,
              help="LoRA / freeze: the frozen base's dtype when it differs from --precision (e.g. fp32 under bf16 "
                   "autocast).")
@click.option("--eager-attention", is_flag=True, help="Attention without a memory-efficient kernel (s^2 scores).")
@click.option("--fsdp-mixed-frozen", is_flag=True,
              help="LoRA under FSDP with frozen and adapter weights in the same FSDP units (gradients for both).")
@click.option("--no-sync-accumulation", is_flag=True,
              help="Gradient accumulation inside FSDP's no_sync(): unsharded gradients on every GPU.")
@click.option("--kbit-upcast", type=click.Choice(["none", "norms", "all"]), default="none", show_default=True,
              help="QLoRA prepared by PEFT's prepare_model_for_kbit_training: 'all' keeps embeddings, LM head and norms "
                   "in fp32 (TRL SFTTrainer under fp16, PEFT called directly), 'norms' only the norms (TRL under bf16); "
                   "either makes the hidden states fp32.")
@click.option("--double-quant/--no-double-quant", default=True, show_default=True,
              help="NF4 constants double-quantised (4.127 bits a weight; the QLoRA recipe, LitGPT's bnb.nf4-dq) or one "
                   "fp32 absmax per 64 weights (4.5 bits; BitsAndBytesConfig's default, LitGPT's bnb.nf4).")
@click.option("--quantize-lm-head", is_flag=True,
              help="The LM head quantised too (LitGPT / Lightning's BitsandbytesPrecision convert every Linear); "
                   "transformers keeps it 16-bit.")
@click.option("--grad-accumulation", type=click.IntRange(1, 100_000), default=1, show_default=True,
              help="Micro-batches per optimizer step; above 1 the gradients stay allocated through every forward.")
@click.option("--adamw-impl", type=click.Choice(["foreach", "fused", "for-loop"]), default="foreach", show_default=True,
              help="torch.optim.AdamW's implementation: foreach (the CUDA default) allocates one moment-sized "
                   "temporary in its step.")
@click.option("--bnb-saves-input", is_flag=True,
              help="bitsandbytes 0.42 or older: every 4-bit matmul keeps its input for backward (QLoRA).")
@click.option("--lora-rank", type=click.IntRange(1, 4096), default=16, show_default=True)
@click.option("--framework", type=click.Choice(["hf", "litgpt", "torchtune"]), default="hf", show_default=True,
              help="Whose training code: hf (transformers + PEFT: fp32 LoRA adapters, each adapted layer saves its own "
                   "copy of its input), litgpt or torchtune (LoRA copies only through dropout).")
@click.option("--lora-dropout", type=click.FloatRange(0, 1, max_open=True), default=0.05, show_default=True,
              help="LoRA dropout; above 0 each adapted input also keeps a dropout mask.")
@click.option("--lora-targets", type=click.Choice(["all-linear", "attention", "qkv", "qv"]), default="all-linear",
              show_default=True)
@click.option("--concurrency", type=click.IntRange(1, 100_000), default=1, show_default=True,
              help="Inference: concurrent sequences.")
@click.option("--context", type=click.IntRange(1, 10_000_000), default=None, help="Inference: tokens per sequence.")
@click.option("--engine", type=click.Choice(["transformers", "vllm", "sglang", "tgi", "llama.cpp"]), default=None,
              help="Inference: the serving engine (prefill step, KV pool, CUDA graphs). Default: a chunked-prefill "
                   "server such as vLLM, said in the notes.")
@click.option("--tokens", type=float, default=None, help="Training tokens, for time and cost.")
@click.option("--input-len", type=click.IntRange(1, 10_000_000), default=None,
              help="Serving: prompt tokens per request (default 1024).")
@click.option("--output-len", type=click.IntRange(1, 10_000_000), default=None,
              help="Serving: generated tokens per request (default 256).")
@click.option("--kv-dtype", type=click.Choice(["bf16", "fp16", "fp8", "int8"]), default=None,
              help="Serving: KV-cache element type (default: 16-bit; fp8 needs an Ada/Hopper/Blackwell GPU).")
@click.option("--tp", type=click.IntRange(1, 1024), default=None,
              help="Tensor-parallel degree (serving default: all --gpus; training default 1).")
@click.option("--pp", type=click.IntRange(1, 1024), default=1, show_default=True, help="Pipeline-parallel degree.")
@click.option("--vp", type=click.IntRange(1, 128), default=1, show_default=True,
              help="Training: model chunks per pipeline stage (interleaved pipeline; divides the bubble).")
@click.option("--ep", type=click.IntRange(1, 1024), default=1, show_default=True,
              help="Training a mixture of experts: expert-parallel degree (must divide the expert count).")
@click.option("--gpu", "gpu_name", default=None, help="A GPU to check the fit on (and to time training on).")
@click.option("--json", "as_json", is_flag=True)
def estimate(**opts: Any) -> None:
    """The memory estimate of one job; with --tokens its training speed and time, with --gpu its serving speed."""
    from bot.surfaces.cli.estimate import run_estimate
    run_estimate(opts)


# ----- kb ----------------------------------------------------------------------------------------------------------
@main.group(context_settings=HELP)
def kb() -> None:
    """Check and browse the knowledge base."""


@kb.command("validate", epilog="Exit status: 0 no problem, 1 problems found (each named with file, key and fix).")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object: ok, problems [{file, key, message, fix}], counts, rules, version.")
def kb_validate(as_json: bool) -> None:
    """Check knowledge/ and rules/: schema, references, sources, aliases, rules. Exit 1 on any problem."""
    from bot.records import config
    from bot.plan.engine import check_rules
    from bot.knowledge.loader import check_knowledge
    from bot.render.templates import default_templates
    kbase, problems = check_knowledge(config.knowledge_dir(), config.local_prices_file())
    sources = set(kbase.sources) if kbase else None
    _rs, rproblems = check_rules(config.rules_dir(), sources, default_templates().keys)
    problems += rproblems
    if kbase is not None and _rs is not None:
        from bot.surfaces.cli.kb import rule_quote_problems
        problems += rule_quote_problems(_rs.rules, kbase)
    kinds = ("sources", "gpus", "models", "flavors", "providers", "claims", "topics")
    if as_json:
        click.echo(_dump({"ok": not problems,
                          "problems": [{"file": p.file, "key": p.key, "message": p.message, "fix": p.fix or None}
                                       for p in problems],
                          "counts": {k: len(getattr(kbase, k)) for k in kinds} if kbase is not None else None,
                          "rules": len(_rs.rules) if _rs is not None else None,
                          "version": f"{kbase.version}+{_rs.version}" if kbase is not None and _rs is not None
                          else None}))
        sys.exit(EXIT_FAILED if problems else EXIT_OK)
    if problems:
        for p in problems:
            click.echo(str(p), err=True)
        click.echo(f"{len(problems)} problem(s).", err=True)
        sys.exit(EXIT_FAILED)
    counts = ", ".join(f"{len(getattr(kbase, k))} {k}" for k in kinds)
    click.echo(f"ok: {counts}; {len(_rs.rules)} rules; version {kbase.version}+{_rs.version}")


@kb.command("update-prices")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--date", "price_date", type=click.DateTime(formats=["%Y-%m-%d"]),
              help="The date of the catalog version (its commit date, or the day the provider's page was read). "
                   "Without it, rows are dated by a versions.yaml beside the CSVs, else left undated.")
@click.option("--version", "version", default=None,
              help="The catalog version the CSVs come from (e.g. a skypilot-catalog commit), kept with the date.")
@click.option("--networks", type=click.Path(exists=True, path_type=Path),
              help="networks.yaml with interconnects per family (default: next to the CSVs, else data/catalog/).")
@click.option("--dry-run", is_flag=True, help="Report what would change without writing knowledge/flavors/.")
@click.option("--json", "as_json", is_flag=True)
def kb_update_prices(path: Path, price_date, version: str | None, networks: Path | None, dry_run: bool,
                     as_json: bool) -> None:
    """Re-import a SkyPilot-format price catalog (a directory of <provider>.csv, or one such file) into
    knowledge/flavors/ and report what changed. Rows the catalog flags as data quirks stay 'flagged'."""
    from bot.knowledge.catalog import ImportError_, update_prices
    from bot.records import config
    from bot.surfaces.cli.kb import print_update_report
    try:
        report = update_prices(path, config.knowledge_dir(), networks,
                               price_date.date() if price_date else None, dry_run, version)
    except (ImportError_, OSError, ValueError, KeyError) as exc:
        _fail(ConfigError(f"cannot import {path}: {exc}",
                          fix="check the CSV has the SkyPilot columns of data/catalog/README.md"))
        return
    print_update_report(report, as_json)


@kb.command("audit")
@click.option("--max-age-days", type=int, default=None,
              help="Warning age for prices and rates (default: ADVISOR_PRICE_MAX_AGE_DAYS, else 90).")
@click.option("--json", "as_json", is_flag=True)
def kb_audit(max_age_days: int | None, as_json: bool) -> None:
    """List what answers could rest on without enough behind it: weakly sourced facts, same-stack-only flavors,
    unknown interconnect/RDMA/bf16/fp8, and prices older than the warning age."""
    from bot.knowledge.audit import audit
    from bot.knowledge.loader import default_knowledge
    from bot.records import config
    from bot.surfaces.cli.kb import print_audit
    age = max_age_days if max_age_days is not None else config.price_max_age_days()
    print_audit(audit(default_knowledge(), age), as_json)


@kb.command("schema")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
def kb_schema(output: Path | None) -> None:
    """The JSON Schema of knowledge/*.yaml, from the knowledge models, for editors (docs/knowledge.md)."""
    from bot.knowledge.schema import knowledge_schema
    _write_schema(knowledge_schema(), output)


def _write_schema(schema: dict[str, Any], output: Path | None) -> None:
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}")


@main.command("schema")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output.")
def answer_schema_cmd(output: Path | None) -> None:
    """The JSON Schema of `ask --json` (the answer contract, docs/answer.md), from the answer models."""
    from bot.records.answer import answer_schema
    _write_schema(answer_schema(), output)


@kb.command("list")
@click.argument("what", type=click.Choice(["flavors", "gpus", "models", "sources", "providers", "claims", "topics"]))
@click.option("--provider", help="Only this provider's flavors (huaweicloud, aliyun, aws, gcp, azure, lambda, nebius, verda, ...).")
@click.option("--json", "as_json", is_flag=True)
def kb_list(what: str, provider: str | None, as_json: bool) -> None:
    """List records of one kind."""
    from bot.surfaces.cli.kb import list_records
    list_records(what, provider, as_json)


@kb.command("gpus")
@click.argument("gpu")
@click.option("--region", default=None, help="Only offers sold in this region's market (us-east-1, cn-mainland ...).")
@click.option("--json", "as_json", is_flag=True)
def kb_gpus(gpu: str, region: str | None, as_json: bool) -> None:
    """One GPU across clouds, platforms and regions (like `sky show-gpus`): price and spot price per GPU-hour, the
    price's date (or 'undated'), cheapest first."""
    from bot.knowledge.loader import default_knowledge
    from bot.knowledge.offers import gpu_offers
    from bot.surfaces.cli.kb import print_offers
    print_offers(gpu_offers(default_knowledge(), gpu, region), as_json)


@kb.command("show")
@click.argument("record_id")
@click.option("--json", "as_json", is_flag=True)
def kb_show(record_id: str, as_json: bool) -> None:
    """Show one record (a flavor, GPU, model, source, provider or claim)."""
    from bot.surfaces.cli.kb import show_record
    show_record(record_id, as_json)


# ----- audit (commands in cli_audit.py) + replay --------------------------------------------------------------------
main.add_command(audit)
import bot.surfaces.cli.audit_migrate  # noqa: E402,F401  (registers `audit migrate` on the group)
from bot.surfaces.cli.slack_cmds import slack  # noqa: E402  (the `slack` group: new-key, rotate-key, workspaces)
main.add_command(slack)


@audit.command("replay")
@click.argument("advice_id")
@click.option("--json", "as_json", is_flag=True)
def audit_replay(advice_id: str, as_json: bool) -> None:
    """Ask a recorded question again against today's knowledge and rules, and show what changed."""
    from bot.store.audit import diff_records
    from bot.surfaces.service import Service
    try:
        old, new = Service().replay(advice_id)
    except AdvisorError as exc:
        _fail(exc)
        return
    changes = diff_records(old.get("reply") or {}, new)
    if as_json:
        click.echo(_dump({"advice_id": old["id"], "kb_version_then": old.get("kb_version"),
                          "kb_version_now": new.get("kb_version"),
                          "changes": [getattr(c, "__dict__", c) for c in changes], "reply": new}))
        return
    click.echo(f"{old['id']} asked {old['ts']}: {old['question']}")
    click.echo(f"knowledge then {old.get('kb_version')}, now {new.get('kb_version')}")
    if not changes:
        click.echo("No change: today's answer is the same.")
    for c in changes:
        click.echo(f"  - {c}")


# ----- serve / doctor ----------------------------------------------------------------------------------------------
@main.command()
@click.option("--socket", "mode", flag_value="socket", help="Socket Mode (needs SLACK_APP_TOKEN).")
@click.option("--http", "mode", flag_value="http", help="HTTP mode: POST /slack/events, GET /healthz, /readyz.")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="HTTP port (default $PORT or 3000; 0 picks a free port).")
@click.option("--host", default="0.0.0.0", show_default=True)
def serve(mode: str | None, port: int | None, host: str) -> None:
    """Run the Slack bot: Socket Mode when SLACK_APP_TOKEN is set (or --socket), else HTTP."""
    from bot.records.errors import ConfigError
    from bot.surfaces.slack.serve import serve as serve_slack
    if mode is None:
        mode = "socket" if os.environ.get("SLACK_APP_TOKEN") else "http"
    if port is None:
        raw = os.environ.get("PORT", "3000").strip()
        if not raw.isdigit() or int(raw) > 65535:
            _fail(ConfigError(f"PORT={raw!r} is not a port number", fix="set PORT to 1-65535, or pass --port N"))
        port = int(raw)
    serve_slack(mode, host, port)


@main.command(epilog="Exit status: 0 nothing failed (warnings allowed), 1 at least one check failed.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object: ok, version, python, problems, warnings, checks [{status, area, text, fix}].")
def doctor(as_json: bool) -> None:
    """Check configuration, Slack settings, database and knowledge base; say what to fix."""
    from bot.surfaces.doctor import run_doctor
    sys.exit(run_doctor(as_json=as_json))


if __name__ == "__main__":  # pragma: no cover
    main()
