"""One set of names and ports: accord.protocol.settings, compose.yaml and the k8s manifests.

A port changed in one place and not the others would deploy a mesh whose services cannot find
each other; this test makes that drift fail on CI instead.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from tests.deploy.files import COMPOSE, k8s_manifests, load, load_all, of_kind
from tests.support.refund_app import REFUND_PORTS


def port_after(args: list[str], flag: str = "--port") -> int:
    return int(args[args.index(flag) + 1])


def compose_ports() -> dict[str, int]:
    services: dict[str, Any] = load(COMPOSE)["services"]
    found: dict[str, int] = {}
    for name in REFUND_PORTS:
        service = services[name]
        port = port_after(service["command"])
        health = urlsplit(service["environment"]["ACCORD_HEALTHCHECK_URL"])
        assert health.port == port, f"{name}: health check probes another port"
        assert health.path == "/healthz"
        assert service["command"][service["command"].index("--host") + 1] == "0.0.0.0"
        found[name] = port
    return found


def k8s_ports() -> dict[str, int]:
    docs = load_all(k8s_manifests())
    k8s_services = of_kind(docs, "Service")
    found: dict[str, int] = {}
    for name, deployment in of_kind(docs, "Deployment").items():
        (c,) = deployment["spec"]["template"]["spec"]["containers"]
        assert c["args"][:2] == ["serve", name]
        port = port_after(c["args"])
        assert [p["containerPort"] for p in c["ports"]] == [port], name
        assert [p["port"] for p in k8s_services[name]["spec"]["ports"]] == [port], name
        found[name] = port
    return found


def test_compose_uses_the_default_ports() -> None:
    assert compose_ports() == REFUND_PORTS


def test_kubernetes_uses_the_default_ports() -> None:
    assert k8s_ports() == REFUND_PORTS


def test_service_urls_agree_everywhere() -> None:
    expected = {f"ACCORD_{n.upper()}_URL": f"http://{n}:{p}" for n, p in REFUND_PORTS.items()}
    configmap = of_kind(load_all(k8s_manifests()), "ConfigMap")["accord-config"]["data"]
    assert {k: v for k, v in configmap.items() if k in expected} == expected
    for name in REFUND_PORTS:
        env = load(COMPOSE)["services"][name]["environment"]
        assert {k: v for k, v in env.items() if k in expected} == expected, name
