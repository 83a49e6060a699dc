"""deploy/k8s: every manifest valid for Kubernetes 1.33 (strict, offline), and sound for Accord."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.files import (
    K8S,
    K8S_VERSION,
    KUSTOMIZATION,
    k8s_manifests,
    load,
    load_all,
    of_kind,
    run,
    tool,
)
from tests.support.refund_app import REFUND_PORTS

PASSED = re.compile(r"^INFO (?P<file>\S+) passed for resource (?P<resource>\S+) against version")


@pytest.fixture(scope="module")
def docs() -> list[dict[str, Any]]:
    return load_all(k8s_manifests())


@pytest.fixture(scope="module")
def validation(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One kubernetes-validate run over every manifest and a copy with an unknown field.

    The copy guards the check: --strict must reject a misspelt field. One process for all
    keeps the suite fast.
    """
    text = (K8S / "policy.yaml").read_text()
    assert "readOnlyRootFilesystem" in text
    bad = tmp_path_factory.mktemp("k8s") / "policy.yaml"
    bad.write_text(text.replace("readOnlyRootFilesystem", "readOnlyRoot"))
    files = [*map(str, k8s_manifests()), str(bad)]
    result = run(tool("kubernetes-validate"), "-k", K8S_VERSION, "--strict", *files)
    assert result.returncode != 0, "the copy with an unknown field must fail"
    return bad, result.stdout + result.stderr


def test_every_manifest_validates_strictly(validation: tuple[Path, str]) -> None:
    bad, output = validation
    mine = [line for line in output.splitlines() if str(bad) not in line]
    assert not [line for line in mine if not line.startswith("INFO ")], output
    # kubernetes-validate only warns (exit 0) about a kind it has no schema for: require a pass
    # line for every document, so nothing slips through unchecked.
    passed = [m["resource"] for line in mine if (m := PASSED.match(line))]
    expected = [f"{d['kind'].lower()}/{d['metadata']['name']}" for d in load_all(k8s_manifests())]
    assert sorted(passed) == sorted(expected)


def test_strict_validation_rejects_an_unknown_field(validation: tuple[Path, str]) -> None:
    bad, output = validation
    errors = [line for line in output.splitlines() if line.startswith(f"ERROR {bad} ")]
    assert len(errors) == 1
    assert "readOnlyRoot" in errors[0]


def test_kustomization_lists_every_manifest() -> None:
    kustomization = load(KUSTOMIZATION)
    assert sorted(kustomization["resources"]) == sorted(p.name for p in k8s_manifests())
    assert kustomization["namespace"] == "accord"


def test_everything_lives_in_the_accord_namespace(docs: list[dict[str, Any]]) -> None:
    assert set(of_kind(docs, "Namespace")) == {"accord"}
    for doc in docs:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == "accord", doc["metadata"]["name"]


def test_each_service_has_a_deployment_a_service_and_a_disruption_budget(
    docs: list[dict[str, Any]],
) -> None:
    deployments = of_kind(docs, "Deployment")
    assert set(deployments) == set(REFUND_PORTS)
    assert set(of_kind(docs, "Service")) == set(REFUND_PORTS) | {"postgres"}
    assert set(of_kind(docs, "PodDisruptionBudget")) == set(REFUND_PORTS)
    for name, deployment in deployments.items():
        assert deployment["spec"]["replicas"] >= 2, name


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    first: dict[str, Any] = containers[0]
    return first


def test_probes_resources_and_hardening(docs: list[dict[str, Any]]) -> None:
    for name, deployment in of_kind(docs, "Deployment").items():
        pod = deployment["spec"]["template"]["spec"]
        c = container(deployment)
        assert c["readinessProbe"]["httpGet"]["path"] == "/readyz", name
        assert c["livenessProbe"]["httpGet"]["path"] == "/healthz", name
        assert {"cpu", "memory"} <= set(c["resources"]["requests"]), name
        assert {"cpu", "memory"} <= set(c["resources"]["limits"]), name
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert c["securityContext"]["readOnlyRootFilesystem"] is True, name
        assert c["securityContext"]["allowPrivilegeEscalation"] is False, name
        # The data dir is writable scratch space in an emptyDir, not the image's filesystem.
        volumes = {v["name"]: v for v in pod["volumes"]}
        data = next(m for m in c["volumeMounts"] if m["mountPath"] == "/data")
        assert "emptyDir" in volumes[data["name"]], name


def test_configuration_comes_from_the_configmap_and_the_secret(docs: list[dict[str, Any]]) -> None:
    config = of_kind(docs, "ConfigMap")["accord-config"]["data"]
    secret = of_kind(docs, "Secret")["accord-secrets"]["stringData"]
    assert set(secret) == {"ACCORD_JWT_SECRET", "ACCORD_DATABASE_URL", "ACCORD_PUSH_SECRETS_KEY"}
    # Placeholders must be impossible to mistake for real values.
    assert all("REPLACE_ME" in value for value in secret.values())
    assert "@postgres:5432/" in secret["ACCORD_DATABASE_URL"]
    assert of_kind(docs, "Service")["postgres"]["spec"]["type"] == "ExternalName"
    assert not {k for k in config if "SECRET" in k or "DATABASE_URL" in k}
    for name, deployment in of_kind(docs, "Deployment").items():
        refs = container(deployment)["envFrom"]
        assert {"configMapRef": {"name": "accord-config"}} in refs, name
        assert {"secretRef": {"name": "accord-secrets"}} in refs, name
        env = {e["name"]: e["value"] for e in container(deployment)["env"]}
        assert env["OTEL_SERVICE_NAME"] == f"accord-{name}"


def test_mcp_servers_allow_their_cluster_host_names(docs: list[dict[str, Any]]) -> None:
    deployments = of_kind(docs, "Deployment")
    for name in ("commerce", "payments"):
        env = {e["name"]: e["value"] for e in container(deployments[name])["env"]}
        patterns = env["ACCORD_ALLOWED_HOSTS"].split(",")
        assert f"{name}:*" in patterns
        assert f"{name}.accord.svc.cluster.local:*" in patterns


def test_every_replica_reads_the_shared_deny_list_and_api_keys(docs: list[dict[str, Any]]) -> None:
    config = of_kind(docs, "ConfigMap")["accord-config"]["data"]
    revoked_map = of_kind(docs, "ConfigMap")["accord-revoked"]
    for name, deployment in of_kind(docs, "Deployment").items():
        pod = deployment["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts = {m["mountPath"]: m for m in container(deployment)["volumeMounts"]}
        revoked_dir, _, revoked_key = config["ACCORD_REVOKED_FILE"].rpartition("/")
        volume = volumes[mounts[revoked_dir]["name"]]
        assert volume["configMap"]["name"] == revoked_map["metadata"]["name"], name
        assert revoked_key in revoked_map["data"], name
        keys_dir, _, keys_key = config["ACCORD_API_KEYS"].rpartition("/")
        secret = volumes[mounts[keys_dir]["name"]]["secret"]
        # Optional, so a mesh without API keys still starts.
        assert secret == {"secretName": "accord-api-keys", "optional": True}, name
        assert keys_key == "api-keys.yaml"
        assert all(m.get("readOnly") for p, m in mounts.items() if p.startswith("/etc/")), name


def _ingress_sources(docs: list[dict[str, Any]], target: str) -> set[str] | None:
    """The app names allowed to reach ``target`` by the NetworkPolicies that select it
    (``{"*accord*"}`` for "any Accord pod"); None when no policy selects it."""
    sources: set[str] | None = None
    for policy in of_kind(docs, "NetworkPolicy").values():
        selector = policy["spec"]["podSelector"]
        names = {selector.get("matchLabels", {}).get("app.kubernetes.io/name")}
        for expr in selector.get("matchExpressions", []):
            if expr["key"] == "app.kubernetes.io/name":
                names |= set(expr["values"])
        if target not in names:
            continue
        sources = sources or set()
        for rule in policy["spec"].get("ingress", []):
            for peer in rule.get("from", []):
                pods = peer["podSelector"]
                label = pods.get("matchLabels", {})
                if label.get("app.kubernetes.io/part-of") == "accord":
                    sources.add("*accord*")
                if "app.kubernetes.io/name" in label:
                    sources.add(label["app.kubernetes.io/name"])
                for expr in pods.get("matchExpressions", []):
                    sources |= set(expr["values"])
    return sources


def test_only_the_orchestrator_and_commerce_reach_payments(docs: list[dict[str, Any]]) -> None:
    """Issue 12: payments can move money; the orchestrator is its only writer. Issue 13:
    commerce reads the ledger's refunds (refunds.list, its only grant) for its answers."""
    assert _ingress_sources(docs, "payments") == {"orchestrator", "commerce"}
    assert _ingress_sources(docs, "commerce") == {"orchestrator", "policy", "risk"}
    assert _ingress_sources(docs, "orchestrator") is None  # the entry point


def test_termination_grace_covers_the_pre_stop_pause_and_the_drain(
    docs: list[dict[str, Any]],
) -> None:
    """SIGTERM comes after preStop; the kubelet's SIGKILL comes terminationGracePeriodSeconds
    after the pod started terminating. The drain (ACCORD_SHUTDOWN_GRACE_S) must end before it."""
    config = of_kind(docs, "ConfigMap")["accord-config"]["data"]
    drain_s = float(config["ACCORD_SHUTDOWN_GRACE_S"])
    for name, deployment in of_kind(docs, "Deployment").items():
        if name == "postgres":
            continue
        pod = deployment["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        pause_s = container["lifecycle"]["preStop"]["sleep"]["seconds"]
        assert pause_s >= 2, name  # endpoints leave the load balancers before SIGTERM
        assert pod["terminationGracePeriodSeconds"] > pause_s + drain_s, name


def test_each_deployment_mounts_only_its_own_signing_key(docs: list[dict[str, Any]]) -> None:
    """Issue #30: a Secret per service, mounted by that Deployment alone, under ACCORD_KEYS_DIR;
    the trust table and the services' public keys come from ConfigMaps every pod mounts."""
    config = of_kind(docs, "ConfigMap")["accord-config"]["data"]
    trust = of_kind(docs, "ConfigMap")["accord-trust"]["data"]
    mounted_by: dict[str, set[str]] = {}
    for name, deployment in of_kind(docs, "Deployment").items():
        pod = deployment["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts = {m["mountPath"]: m for m in container(deployment)["volumeMounts"]}
        own = volumes[mounts[f"{config['ACCORD_KEYS_DIR']}/{name}"]["name"]]["secret"]
        assert own["secretName"] == f"accord-key-{name}", name
        for volume in volumes.values():
            if "secret" in volume and volume["secret"]["secretName"].startswith("accord-key-"):
                mounted_by.setdefault(volume["secret"]["secretName"], set()).add(name)
        trust_dir, _, trust_key = config["ACCORD_SERVICE_TRUST"].rpartition("/")
        assert volumes[mounts[trust_dir]["name"]]["configMap"]["name"] == "accord-trust", name
        assert trust_key in trust
    assert all(len(users) == 1 for users in mounted_by.values()), mounted_by
