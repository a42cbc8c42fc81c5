"""Docs kept honest: the README opens with the two set-up commands, and every command it shows runs."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.surfaces.cli.main import main

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```([a-z]*)\n(.*?)```", README, flags=re.S)
# shell blocks hold commands; other blocks are output
COMMANDS = [line.strip() for lang, block in BLOCKS if lang == "sh" for line in block.splitlines()
            if line.strip().startswith("gpu-advisor ")]
INTERACTIVE = ("chat", "serve")          # long-running: covered by their own tests


def test_readme_starts_with_the_two_commands():
    first = BLOCKS[0][1].strip().splitlines()
    assert [line.split()[0:2] for line in first] == [["make", "run"], ["make", "test"]]
    assert README.index("```") < README.index("\n## ")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_readme_command_runs(command):
    args = shlex.split(command)[1:]
    if args[0] in INTERACTIVE:
        pytest.skip("interactive")
    res = CliRunner().invoke(main, args)
    assert "Traceback" not in res.output
    assert res.exit_code == 0 or (args[0] == "doctor" and res.exit_code == 1), res.output


def test_commands_were_found():
    assert len(COMMANDS) >= 10


def test_the_ways_to_call_the_command_work_as_written():
    """The README's block on calling `gpu-advisor` after `make run`, run line by line in bash exactly as written
    (from the checkout, whose .venv `make test` has just made), each line after the activate line."""
    import subprocess
    block = next(b for lang, b in BLOCKS if lang == "sh" and ". .venv/bin/activate" in b)
    lines = [line.split("  #")[0].strip() for line in block.strip().splitlines()]
    assert lines[0] == ". .venv/bin/activate" and len(lines) == 4
    repo = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("VIRTUAL_ENV", "MAKEFLAGS", "MAKELEVEL")}
    env["PATH"] = "/usr/bin:/bin"                    # a fresh shell: nothing of .venv on PATH
    for line in lines[1:]:
        script = f"{lines[0]} && {line}" if line.startswith("gpu-advisor ") else line
        res = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0 and "Pick:" in res.stdout, (line, res.stdout[-500:], res.stderr[-1000:])
