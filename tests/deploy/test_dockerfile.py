"""Dockerfile: passes hadolint, and builds what the rest of the project expects.

No image is built here (no Docker engine); hadolint parses the file with Docker's grammar and
applies its best-practice rules, and the tests below check what hadolint cannot know.
"""

from __future__ import annotations

import fnmatch
import json
import re

from tests.deploy.files import DOCKERFILE, DOCKERIGNORE, ROOT, run, tool


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    pairs = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            pairs.append((keyword.upper(), rest.strip()))
    return pairs


def test_hadolint_passes() -> None:
    result = run(tool("hadolint"), "--no-color", str(DOCKERFILE))
    assert result.returncode == 0, result.stdout + result.stderr


def test_uv_is_the_version_the_makefile_pins() -> None:
    makefile_pin = re.search(r"uv==([\d.]+)", (ROOT / "Makefile").read_text())
    docker_pin = re.search(r"ARG UV_VERSION=([\d.]+)", DOCKERFILE.read_text())
    assert makefile_pin
    assert docker_pin
    assert docker_pin.group(1) == makefile_pin.group(1)


def test_installs_the_workspace_from_the_lock_without_dev_tools() -> None:
    runs = [args for kw, args in instructions() if kw == "RUN" and "uv sync" in args]
    assert runs, "no uv sync"
    for args in runs:
        assert {"--frozen", "--all-packages", "--no-dev"} <= set(args.split()), args


def test_runtime_stage_is_non_root_with_accord_entrypoint() -> None:
    steps = instructions()
    stages = [args for kw, args in steps if kw == "FROM"]
    assert len(stages) >= 2, "multi-stage build expected"
    last_from = max(i for i, (kw, _) in enumerate(steps) if kw == "FROM")
    runtime = steps[last_from:]
    users = [args for kw, args in runtime if kw == "USER"]
    assert users
    assert users[-1].split(":")[0] not in {"0", "root"}
    entrypoint = [json.loads(args) for kw, args in runtime if kw == "ENTRYPOINT"]
    cmd = [json.loads(args) for kw, args in runtime if kw == "CMD"]
    assert entrypoint == [["accord"]]
    assert cmd == [["serve", "orchestrator", "--host", "0.0.0.0"]]
    healthcheck = " ".join(args for kw, args in runtime if kw == "HEALTHCHECK")
    assert "urllib" in healthcheck
    assert "curl" not in healthcheck


def test_copied_sources_exist_and_are_not_ignored() -> None:
    ignored = [
        p.strip() for p in DOCKERIGNORE.read_text().splitlines() if p.strip() and p[0] != "#"
    ]
    sources = [
        src
        for kw, args in instructions()
        if kw == "COPY" and "--from=" not in args
        for src in args.split()[:-1]
    ]
    assert sources
    for src in sources:
        path = src.rstrip("/")
        assert (ROOT / path).exists(), src
        assert not any(fnmatch.fnmatch(path, pattern) for pattern in ignored), src


def test_the_build_context_leaves_out_local_state() -> None:
    ignored = set(DOCKERIGNORE.read_text().split())
    assert {".venv", ".git", ".env", ".accord", "tests"} <= ignored
