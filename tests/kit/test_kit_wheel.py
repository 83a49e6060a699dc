"""The kit installed alone, as a team whose agents are written in another language installs it:
accord-kit's wheel and the contract's, built from this tree, in a clean venv of the same Python
with no other Accord distribution; its own command, ``accord-contract-test``, against
policy-check served as a real process.

Offline: the third-party packages come from uv's cache (the lock's versions, exported as
pylock.toml), the two wheels from ``--find-links``: nothing is fetched, so this runs on a machine
that only ran ``make setup``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from accord.agents.refund.kit_probes import PROBES
from accord.kit.probes import PROBES_GROUP, Probes
from tests.support.processes import run_service
from tests.support.service_keys import TEST_SERVICE, sign_as
from tests.support.tool_auth import ALL_TOOLS, SKILL_GRANTS

ROOT = Path(__file__).resolve().parents[2]
UV = ROOT / ".tools" / "bin" / "uv"  # made by `make setup`, the uv that built .venv
SECRET = "kit-wheel-secret-0123456789-0123456789"
SKILL = "refund.policy"

pytestmark = pytest.mark.timeout(180)


def _uv(*args: str | Path) -> None:
    done = subprocess.run(
        [str(UV), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"uv {args}: {done.stdout}{done.stderr}"


@pytest.fixture(scope="module")
def kit_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a clean venv holding accord-kit and what its wheel asks for, no more."""
    base = tmp_path_factory.mktemp("kit-wheel")
    wheels, lock, venv = base / "wheels", base / "pylock.toml", base / "venv"
    for package in ("accord-kit", "accord-contracts"):
        _uv("build", "--offline", "--quiet", "--wheel", "--package", package, "-o", wheels)
    _uv(
        *("export", "--frozen", "--quiet", "--package", "accord-kit", "--no-emit-workspace"),
        *("--no-dev", "--format", "pylock.toml", "-o", lock),
    )
    _uv("venv", "--quiet", "--python", os.path.realpath(sys.executable), venv)
    python = venv / "bin" / "python"
    # Compiled once here: where PYTHONDONTWRITEBYTECODE is set, each run would compile again.
    install = ("pip", "install", "--offline", "--quiet", "--compile-bytecode", "--python", python)
    _uv(*install, "-r", lock)  # the third-party packages, at the lock's versions
    _uv(*install, "--find-links", wheels, "accord-kit")  # resolved from the wheel's metadata
    return python


@pytest.fixture(scope="module")
def policy_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("kit-wheel-policy")
    env = {"ACCORD_DATA_DIR": str(data), "ACCORD_JWT_SECRET": SECRET}
    with run_service("policy", ["serve", "policy"], env=env, log_dir=data, deadline_s=90) as svc:
        yield svc.url


def _kit(python: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """The kit's console script, with no Accord setting in its environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCORD_", "UV_"))}
    return subprocess.run(
        [str(python.parent / "accord-contract-test"), *map(str, args)],
        env={**env, "COLUMNS": "200", "VIRTUAL_ENV": str(python.parent.parent)},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _cases(junit: Path) -> dict[str, ET.Element]:
    return {str(c.get("name")): c for c in ET.parse(junit).getroot().iter("testcase")}


def _token() -> str:
    # A service granted every shipped tool and skill, as tests/kit/test_services.py uses.
    return sign_as(TEST_SERVICE, scopes=ALL_TOOLS + SKILL_GRANTS)


def test_only_the_kit_and_the_contract_are_installed(kit_python: Path) -> None:
    code = (
        "import importlib.metadata as m, json; "
        "print(json.dumps(sorted(d.metadata['Name'] for d in m.distributions())))"
    )
    names = json.loads(subprocess.check_output([str(kit_python), "-c", code], text=True))
    ours = {n for n in names if n.startswith("accord")}
    assert ours == {"accord-kit", "accord-contracts"}
    no_protocol = subprocess.run(
        [str(kit_python), "-c", "import accord.protocol"], capture_output=True, check=False
    )
    assert no_protocol.returncode != 0


def test_without_probes_the_kit_alone_passes_and_says_what_it_skipped(
    kit_python: Path, policy_url: str, tmp_path: Path
) -> None:
    junit = tmp_path / "kit.xml"
    done = _kit(kit_python, policy_url, "--token", _token(), "--junit", junit)
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = {
        name: str(s.get("message"))
        for name, case in _cases(junit).items()
        if (s := case.find("skipped")) is not None
    }
    assert [n for n, message in skipped.items() if PROBES_GROUP in message], skipped


def test_a_probe_file_gives_the_kit_alone_its_inputs(
    kit_python: Path, policy_url: str, tmp_path: Path
) -> None:
    probe = tmp_path / "probes.json"
    probe.write_text(Probes(agents={SKILL: PROBES.agents[SKILL]}).model_dump_json())
    junit = tmp_path / "kit.xml"
    done = _kit(kit_python, policy_url, "--token", _token(), "--probe", probe, "--junit", junit)
    assert done.returncode == 0, done.stdout + done.stderr
    messages = [
        str(s.get("message"))
        for case in _cases(junit).values()
        if (s := case.find("skipped")) is not None
    ]
    assert not [m for m in messages if PROBES_GROUP in m]
