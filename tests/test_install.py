"""Installs that are not this checkout find the knowledge base: the wheel is built here, offline
(`--no-build-isolation`, with the setuptools `make` installs), and installed without an index into a clean venv and
into a `--user` site; then `gpu-advisor ask` answers from a folder far from the checkout, with no ADVISOR_* set.
The dependencies are the ones already installed in .venv (put on the path), so nothing is downloaded."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
QUESTION = "lora finetune qwen2.5 7b, tight budget"


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    try:
        import setuptools
        if int(setuptools.__version__.split(".")[0]) < 77:
            pytest.skip(f"setuptools {setuptools.__version__} cannot build this project offline (needs >= 77; "
                        "`make install` installs it)")
    except ImportError:
        pytest.skip("setuptools is not installed, so the wheel cannot be built offline")
    out = tmp_path_factory.mktemp("wheel")
    res = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                "-q", "-w", str(out), str(REPO)])
    assert res.returncode == 0, res.stderr[-2000:]
    [whl] = out.glob("gpu_advisor-*.whl")
    return whl


def _clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ADVISOR_", "SLACK_", "PYTHON"))}
    env.update(ADVISOR_DB=str(tmp / "advisor.db"), ADVISOR_CACHE_DIR="off", HOME=str(tmp))
    return env


def _answer(res: subprocess.CompletedProcess) -> dict:
    assert res.returncode == 0, res.stdout[-1000:] + res.stderr[-2000:]
    out = json.loads(res.stdout)
    assert out["status"] == "answer" and out["recommendations"] and out["citations"]
    return out


def test_wheel_in_a_clean_venv_answers(wheel, tmp_path):
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)]).returncode == 0
    py = venv / "bin" / "python"
    res = _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-index", "--no-deps", "-q",
                str(wheel)])
    assert res.returncode == 0, res.stderr[-2000:]
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")     # .venv's installed dependencies
    where = _run([str(py), "-c", "import bot; print(bot.__file__)"], cwd=tmp_path, env=_clean_env(tmp_path))
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr    # the wheel's copy, not the checkout
    _answer(_run([str(venv / "bin" / "gpu-advisor"), "ask", "--json", QUESTION], cwd=tmp_path,
                 env=_clean_env(tmp_path)))
    doctor = _run([str(venv / "bin" / "gpu-advisor"), "doctor"], cwd=tmp_path, env=_clean_env(tmp_path))
    assert f"knowledge/ at {site}/bot/data/knowledge (default)" in doctor.stdout, doctor.stdout


def test_wheel_installed_with_user_answers(wheel, tmp_path):
    base = Path(getattr(sys, "_base_executable", sys.executable))
    env = _clean_env(tmp_path)
    env["PYTHONUSERBASE"] = str(tmp_path / "userbase")
    res = _run([str(base), "-m", "pip", "install", "--user", "--no-index", "--no-deps", "--no-warn-script-location",
                "-q", str(wheel)], env=env, cwd=tmp_path)
    if res.returncode != 0 and "No module named pip" in res.stderr:
        pytest.skip(f"the base interpreter {base} has no pip for a --user install")
    assert res.returncode == 0, res.stderr[-2000:]
    env["PYTHONPATH"] = sysconfig.get_paths()["purelib"]      # the dependencies, as a user would have them
    _answer(_run([str(tmp_path / "userbase" / "bin" / "gpu-advisor"), "ask", "--json", QUESTION], cwd=tmp_path,
                 env=env))
