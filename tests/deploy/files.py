"""Where the deployment files are and how the tests read them (plain YAML, no cluster)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose.yaml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
K8S = ROOT / "deploy" / "k8s"
KUSTOMIZATION = K8S / "kustomization.yaml"
COLLECTOR_CONFIG = ROOT / "deploy" / "otel-collector.yaml"

# The Kubernetes release the manifests are checked against (its schemas ship with
# kubernetes-validate, so the check runs offline).
K8S_VERSION = "1.33"


def k8s_manifests() -> list[Path]:
    """Every Kubernetes resource file; the kustomization is kustomize's, not the API server's."""
    return sorted(p for p in K8S.glob("*.yaml") if p != KUSTOMIZATION)


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def load_all(paths: list[Path]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in paths:
        docs.extend(d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d)
    return docs


def of_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def tool(name: str) -> str:
    """A console script installed next to the running interpreter (the project's venv)."""
    path = Path(sys.executable).parent / name
    assert path.exists(), f"{name} is not installed: run `uv sync --frozen --all-packages`"
    return str(path)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=ROOT, check=False)
