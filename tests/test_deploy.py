"""The deploy files agree with each other and with the app: the mode the manifest ships (Socket Mode) is what the
Kubernetes Deployment runs, liveness and startup call GET /healthz and readiness GET /readyz in both modes (a Slack
or database outage restarts nothing), re-applying the kustomization
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
    paths = {probe: container[probe]["httpGet"]["path"] for probe in ("startupProbe", "readinessProbe", "livenessProbe")}
    assert paths == {"startupProbe": "/healthz", "livenessProbe": "/healthz", "readinessProbe": "/readyz"}
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
    docs = list(yaml.safe_load_all(out.stdout))
    assert sorted(d["kind"] for d in docs) == ["Deployment", "PersistentVolumeClaim", "Service"]
    [dep] = [d for d in docs if d["kind"] == "Deployment"]
    [container] = dep["spec"]["template"]["spec"]["containers"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"         # rendered: liveness apart from
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"         # readiness


# ----- the PostgreSQL variant: deploy/k8s-postgres (an overlay of deploy/k8s) ---------------------------------------
K8S_PG = DEPLOY / "k8s-postgres"


def _yaml(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def _settings_names() -> set[str]:
    """Every environment variable the code reads (bot/records/config.py's settings model)."""
    from bot.records.config import _model
    return {name.upper() for name in _model().model_fields}


def _pod_labels() -> dict[str, str]:
    [base] = _yaml(DEPLOY / "k8s" / "deployment.yaml")
    return base["spec"]["template"]["metadata"]["labels"]


def test_postgres_overlay_references_exist_and_apply_no_secret():
    [kust] = _yaml(K8S_PG / "kustomization.yaml")
    assert "../k8s" in kust["resources"]
    for name in kust["resources"]:
        target = K8S_PG / name
        assert (target / "kustomization.yaml").is_file() if target.is_dir() else target.is_file(), name
    for patch in kust["patches"]:
        assert (K8S_PG / patch["path"]).is_file(), patch
    applied = [d for name in kust["resources"] if (K8S_PG / name).is_file() for d in _yaml(K8S_PG / name)]
    applied += [d for patch in kust["patches"] for d in _yaml(K8S_PG / patch["path"])]
    assert "Secret" not in {d["kind"] for d in applied}          # re-applying never replaces credentials


def test_postgres_overlay_replicas_rolling_update_pdb_and_no_volume():
    [patch] = _yaml(K8S_PG / "deployment-patch.yaml")
    assert patch["spec"]["replicas"] >= 2
    assert patch["spec"]["strategy"] == {"type": "RollingUpdate",
                                         "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    pod = patch["spec"]["template"]["spec"]
    [container] = pod["containers"]
    [db] = [e for e in container["env"] if e["name"] == "ADVISOR_DB"]
    assert db["value"] is None and db["valueFrom"]["secretKeyRef"] == {"name": "gpu-advisor-db", "key": "ADVISOR_DB"}
    assert pod["volumes"] == [{"name": "data", "$patch": "delete"},             # no data volume: PostgreSQL holds it
                              {"name": "spool", "emptyDir": {"sizeLimit": "256Mi"}}]   # requests kept in an outage
    [spool] = [e for e in container["env"] if e["name"] == "ADVISOR_SPOOL_DIR"]
    assert {"name": "spool", "mountPath": spool["value"]} in container["volumeMounts"]
    [pvc] = _yaml(DEPLOY / "k8s" / "pvc.yaml")
    [gone] = _yaml(K8S_PG / "no-volume.yaml")
    assert (gone["$patch"], gone["kind"], gone["metadata"]["name"]) == ("delete", pvc["kind"], pvc["metadata"]["name"])
    [pdb] = _yaml(K8S_PG / "pdb.yaml")
    assert pdb["kind"] == "PodDisruptionBudget" and pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["minAvailable"] < patch["spec"]["replicas"]          # a drain can still evict one pod
    assert pdb["spec"]["selector"]["matchLabels"].items() <= _pod_labels().items()


def test_postgres_overlay_env_names_are_what_the_code_reads():
    from bot.store.backend import is_postgres_url
    [base] = _yaml(DEPLOY / "k8s" / "deployment.yaml")
    [patch] = _yaml(K8S_PG / "deployment-patch.yaml")
    names = {e["name"] for doc in (base, patch) for e in doc["spec"]["template"]["spec"]["containers"][0]["env"]}
    [secret] = _yaml(K8S_PG / "secret.example.yaml")
    assert names | set(secret["stringData"]) <= _settings_names()
    assert set(secret["stringData"]) == {"ADVISOR_DB"} and is_postgres_url(secret["stringData"]["ADVISOR_DB"])


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_postgres_overlay_renders():
    out = subprocess.run(["kubectl", "kustomize", str(K8S_PG)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    docs = {d["kind"]: d for d in yaml.safe_load_all(out.stdout)}
    assert sorted(docs) == ["Deployment", "PodDisruptionBudget", "Service"]      # no PVC, no Secret
    dep, pdb = docs["Deployment"], docs["PodDisruptionBudget"]
    assert dep["spec"]["replicas"] >= 2 and dep["spec"]["strategy"]["type"] == "RollingUpdate"
    pod = dep["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"      # a rolling update waits for it
    [db] = [e for e in container["env"] if e["name"] == "ADVISOR_DB"]
    assert "value" not in db and db["valueFrom"]["secretKeyRef"]["name"] == "gpu-advisor-db"
    assert sorted(m["mountPath"] for m in container["volumeMounts"]) == ["/spool", "/tmp"]
    assert not any("persistentVolumeClaim" in v for v in pod.get("volumes", []))
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert {e["name"] for e in container["env"]} <= _settings_names()


def test_the_stop_grace_fits_in_the_pods_termination_grace():
    """SIGTERM lets the workers finish for ADVISOR_STOP_GRACE_S, then hands the rest back: that must end before
    Kubernetes kills the pod (terminationGracePeriodSeconds), with time left to exit."""
    from bot.records.config import settings
    [base] = _yaml(DEPLOY / "k8s" / "deployment.yaml")
    grace = base["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert settings().advisor_stop_grace_s + 5 <= grace          # measured: exit up to 2.2 s after it, under load
