"""Only one thing pyproject.toml cannot say: the wheel carries knowledge/ and rules/ as package data under
bot/data/, so every install (a venv, `pip install --user`, a wheel in a container) finds them through
importlib.resources without a variable (bot/records/config.py). In a checkout they stay where they are."""
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA = ("knowledge", "rules")


class BuildWithData(build_py):
    """build_py, plus knowledge/**/*.yaml and rules/**/*.yaml copied to bot/data/ (operators' local/ left out)."""

    def run(self) -> None:
        super().run()
        for name in DATA:
            for src in sorted((ROOT / name).rglob("*.yaml")):
                rel = src.relative_to(ROOT / name)
                if rel.parts[0] == "local":
                    continue
                dest = Path(self.build_lib) / "bot" / "data" / name / rel
                self.mkpath(str(dest.parent))
                self.copy_file(str(src), str(dest))


setup(cmdclass={"build_py": BuildWithData})
