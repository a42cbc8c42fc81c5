"""The deploy files agree with each other and with the app: the mode the manifest ships (Socket Mode) is what the
Kubernetes Deployment runs, every health check calls GET /healthz in both modes, re-applying the kustomization
never replaces the Secret, and the image builds its wheel with the data it needs."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def test_kustomization_never_applies_a_secret():
    kust = yaml.safe_load((DEPLOY / "k8s" / "kustomization.yaml").read_text(encoding="utf-8"))
    for name in kust["resources"]:
        assert (DEPLOY / "k8s" / name).is_file(), name
        for doc in yaml.safe_load_all((DEPLOY / "k8s" / name).read_text(encoding="utf-8")):
            assert doc["kind"] != "Secret", f"{name}: kubectl apply -k would overwrite the real credentials"
    example = yaml.safe_load((DEPLOY / "k8s" / "secret.example.yaml").read_text(encoding="utf-8"))
    assert set(example["stringData"]) == {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"}
    from bot.surfaces.slack.settings import is_placeholder
    assert all(is_placeholder(v) for v in example["stringData"].values() if v)     # refused if applied by mistake


def test_deployment_runs_the_manifests_mode_with_probes_that_work_in_both():
    manifest = yaml.safe_load((DEPLOY / "slack-app-manifest.yml").read_text(encoding="utf-8"))
    assert manifest["settings"]["socket_mode_enabled"] is True
    dep = yaml.safe_load((DEPLOY / "k8s" / "deployment.yaml").read_text(encoding="utf-8"))
    [container] = dep["spec"]["template"]["spec"]["containers"]
    assert container["args"] == ["serve"]                   # Socket Mode when the Secret has SLACK_APP_TOKEN
    assert container["envFrom"] == [{"secretRef": {"name": "gpu-advisor-slack"}}]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    annotations = dep["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/path"] == "/metrics"


def test_dockerfile_health_check_and_wheel_inputs():
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    health = next(line for line in text.splitlines() if line.strip().startswith("CMD [\"python\""))
    assert "/healthz" in health and "SLACK_APP_TOKEN" not in health          # the same check in both modes
    for needed in ("setup.py", "MANIFEST.in", "LICENSE", "knowledge", "rules"):
        assert f"COPY {needed}" in text or f" {needed} " in text.split("RUN pip wheel")[0], needed
    allowed = (DEPLOY.parent / ".dockerignore").read_text(encoding="utf-8")
    for needed in ("setup.py", "MANIFEST.in", "LICENSE", "knowledge/", "rules/"):
        assert f"!{needed}" in allowed, needed


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomization_renders():
    out = subprocess.run(["kubectl", "kustomize", str(DEPLOY / "k8s")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(out.stdout)]
    assert sorted(kinds) == ["Deployment", "PersistentVolumeClaim", "Service"]
