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
