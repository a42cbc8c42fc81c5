"""Reproducible installs (issue 33 item 5): requirements.lock pins every package `make install` puts in .venv (the
runtime dependencies and the test extras, pip-tools style), each pin satisfies pyproject.toml, every dependency has
an upper bound on its major version, `make install` (what CI runs) and deploy/Dockerfile install from the lock, and
the image's base is pinned by exact tag and digest."""
from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent
UNBOUNDED = {"setuptools", "wheel"}     # build tools, a new major every few months; the lock pins them


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def requirements() -> list[Requirement]:
    project = pyproject()["project"]
    return [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]


def locked() -> dict[str, Version]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9._-]+)==([^\s;\\]+)", line)
        assert m, f"requirements.lock: {line!r} is not an exact pin"
        pins[canonicalize_name(m.group(1))] = Version(m.group(2))
    return pins


def test_every_dependency_is_locked_within_its_range():
    pins = locked()
    for req in requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in requirements.lock: run `make lock`"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"requirements.lock has {req.name}=={pins[name]}, outside {req.specifier}: run `make lock`"
    for extra in ("psycopg-binary", "psycopg-pool"):           # the extras of psycopg[binary,pool]
        assert extra in pins


def test_every_dependency_has_an_upper_bound_on_its_major_version():
    for req in requirements():
        if canonicalize_name(req.name) in UNBOUNDED:
            continue
        uppers = [s for s in req.specifier if s.operator in ("<", "<=", "~=", "==")]
        assert uppers, f"{req} has no upper bound: a new major release would be installed untested"


def test_this_environment_was_installed_from_the_lock():
    """The packages of .venv are the locked versions (`make install` passes -c requirements.lock): what CI tests
    is what the image runs."""
    drift = {}
    for name, version in locked().items():
        try:
            have = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            drift[name] = (str(version), None)
            continue
        if have != version:
            drift[name] = (str(version), str(have))
    if drift:
        pytest.fail(f"installed versions differ from requirements.lock {drift}: run `make install`")


def test_make_install_and_the_image_install_from_the_lock():
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "$(STAMP): pyproject.toml requirements.lock" in make          # a new lock reinstalls
    assert "-c requirements.lock -e '.[test]'" in make and "-c requirements.lock --upgrade pip" in make
    docker = (REPO / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert "pip install --no-cache-dir -c /wheels/requirements.lock /wheels/*.whl" in docker
    assert "PIP_CONSTRAINT=/src/requirements.lock pip wheel" in docker
    assert "!requirements.lock" in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert (REPO / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith("make test")


def test_the_base_image_is_pinned_by_tag_and_digest():
    docker = (REPO / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    [image] = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", docker, re.M)
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm@sha256:[0-9a-f]{64}", image), image
    froms = re.findall(r"^FROM (\S+)", docker, re.M)
    assert froms and all(f == "${PYTHON_IMAGE}" for f in froms), froms
