"""compose.yaml: valid against the Compose Specification, and wired the way docs/deploy.md says.

There is no Docker engine on CI, so nothing is started: the file is checked by schema and by
reading it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.deploy.files import COLLECTOR_CONFIG, COMPOSE, ROOT, load, run, tool
from tests.support.refund_app import REFUND_PORTS

INFRA = {"postgres", "otel-collector", "jaeger"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    doc: dict[str, Any] = load(COMPOSE)
    return doc


def accord_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in compose["services"].items() if k not in INFRA}


@pytest.fixture(scope="module")
def schema_check(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One check-jsonschema run over compose.yaml and a copy with a misspelt key.

    The copy guards the check itself: the schema must be strict enough to catch a typo in a
    service. One process for both keeps the suite fast (the tool takes seconds to start).
    """
    text = COMPOSE.read_text()
    assert "\n  cap_drop:" in text
    bad = tmp_path_factory.mktemp("compose") / "compose.yaml"
    bad.write_text(text.replace("\n  cap_drop:", "\n  cap_dropp:", 1))
    result = run(
        tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(COMPOSE), str(bad)
    )
    assert result.returncode == 1, "the misspelt copy must fail"
    return bad, result.stdout + result.stderr


def test_compose_file_matches_the_compose_specification(schema_check: tuple[Path, str]) -> None:
    _, output = schema_check
    assert f"{COMPOSE}::" not in output, output


def test_the_schema_check_rejects_a_misspelt_key(schema_check: tuple[Path, str]) -> None:
    bad, output = schema_check
    assert f"{bad}::$.services." in output
    assert "cap_dropp" in output


def test_every_service_of_the_mesh_runs_from_the_one_image(compose: dict[str, Any]) -> None:
    services = accord_services(compose)
    assert set(services) == set(REFUND_PORTS)
    assert len({s["image"] for s in services.values()}) == 1
    for name, service in services.items():
        assert service["command"][:2] == ["serve", name]


def test_only_the_orchestrator_and_the_jaeger_ui_are_published(compose: dict[str, Any]) -> None:
    published = {name: s["ports"] for name, s in compose["services"].items() if "ports" in s}
    assert published == {
        "orchestrator": [f"127.0.0.1:{REFUND_PORTS['orchestrator']}:8700"],
        "jaeger": ["127.0.0.1:16686:16686"],
    }


def test_services_wait_for_healthy_dependencies(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, service in accord_services(compose).items():
        deps = service["depends_on"]
        assert deps["postgres"] == {"condition": "service_healthy"}, name
        assert "otel-collector" in deps, name
    orchestrator_deps = services["orchestrator"]["depends_on"]
    for peer in set(REFUND_PORTS) - {"orchestrator"}:
        assert orchestrator_deps[peer] == {"condition": "service_healthy"}
    # Every dependency that is waited on as healthy has a health check to become healthy by.
    for service in services.values():
        for dep, cond in service.get("depends_on", {}).items():
            if cond["condition"] == "service_healthy":
                assert "healthcheck" in services[dep], dep
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])


def test_containers_are_hardened(compose: dict[str, Any]) -> None:
    for name, service in accord_services(compose).items():
        assert service["read_only"] is True, name
        assert "/data" in service["tmpfs"], name
        assert service["cap_drop"] == ["ALL"], name


def test_the_jwt_secret_has_no_default(compose: dict[str, Any]) -> None:
    # `${VAR:?message}` makes `docker compose up` fail instead of starting with a known secret.
    for name, service in accord_services(compose).items():
        for key in ("ACCORD_JWT_SECRET", "ACCORD_PUSH_SECRETS_KEY"):
            assert service["environment"][key].startswith(f"${{{key}:?"), (name, key)


def test_each_service_is_configured_for_the_mesh(compose: dict[str, Any]) -> None:
    services = accord_services(compose)
    for name, service in services.items():
        env = service["environment"]
        assert env["ACCORD_DATABASE_URL"].startswith("postgresql://")
        assert "@postgres:5432/" in env["ACCORD_DATABASE_URL"]
        assert env["OTEL_SERVICE_NAME"] == f"accord-{name}"
        assert env["OTEL_EXPORTER_OTLP_ENDPOINT"].startswith("http://otel-collector:")
        for peer in services:
            assert env[f"ACCORD_{peer.upper()}_URL"] == f"http://{peer}:{REFUND_PORTS[peer]}"


def test_mcp_servers_allow_their_own_host_name(compose: dict[str, Any]) -> None:
    for name in ("commerce", "payments"):
        patterns = compose["services"][name]["environment"]["ACCORD_ALLOWED_HOSTS"].split(",")
        assert f"{name}:*" in patterns


def test_collector_config_is_mounted_and_exports_to_jaeger(compose: dict[str, Any]) -> None:
    collector = compose["services"]["otel-collector"]
    source = collector["volumes"][0].split(":")[0]
    assert (ROOT / source).resolve() == COLLECTOR_CONFIG
    config = load(COLLECTOR_CONFIG)
    pipeline = config["service"]["pipelines"]["traces"]
    # Every component a pipeline names is defined (the collector refuses to start otherwise).
    for section in ("receivers", "processors", "exporters"):
        assert set(pipeline[section]) <= set(config[section]), section
    assert set(config["service"]["extensions"]) <= set(config["extensions"])
    assert "debug" in pipeline["exporters"]
    jaeger_exporters = [e for e in pipeline["exporters"] if e.startswith("otlp")]
    assert [config["exporters"][e]["endpoint"] for e in jaeger_exporters] == ["jaeger:4317"]
    assert "jaeger" in collector["depends_on"]


def test_every_service_reads_the_same_deny_list_and_api_keys(compose: dict[str, Any]) -> None:
    # The data dir is per-container tmpfs: a deny list kept there would be lost on restart.
    for name, service in accord_services(compose).items():
        (mount,) = service["volumes"]
        source, target, mode = mount.split(":")
        assert (ROOT / source).is_dir(), name
        assert mode == "ro", name
        env = service["environment"]
        for var in ("ACCORD_REVOKED_FILE", "ACCORD_API_KEYS"):
            assert env[var].startswith(target + "/"), (name, var)
        revoked = env["ACCORD_REVOKED_FILE"].removeprefix(target + "/")
        assert (ROOT / source / revoked).is_file(), name


def test_each_service_mounts_only_its_own_signing_key(compose: dict[str, Any]) -> None:
    """Issue #30: no service holds a key that signs for another; all read one trust table."""
    for name, service in accord_services(compose).items():
        (secret,) = service["secrets"]
        assert secret["source"] == f"key-{name}", name
        keys_dir = service["environment"]["ACCORD_KEYS_DIR"]
        assert secret["target"] == f"{keys_dir}/{name}/keyring.json", name
        assert compose["secrets"][f"key-{name}"]["file"] == f"./deploy/keys/{name}/keyring.json"
        trust = service["environment"]["ACCORD_SERVICE_TRUST"].removeprefix("/etc/accord/")
        assert (ROOT / "deploy" / "access" / trust).is_file(), name
