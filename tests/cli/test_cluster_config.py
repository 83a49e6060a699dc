"""`accord cluster`'s HAProxy configuration (accord.cli.cluster.haproxy_config).

One frontend per service on its port, its replicas behind it, checked on the readiness probe
the Kubernetes manifests use, and requests that are safe to send again retried on the other
replica. HAProxy itself checks the file when it is installed.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from accord.cli.cluster import READY_PATH, Frontend, haproxy_config
from accord.contracts.errors import AccordError, ErrorCode
from tests.support.ports import free_port

FRONTENDS = [Frontend("desk", 18700, (19001, 19002)), Frontend("tools", 18710, (19003, 19004))]


def test_each_service_has_a_frontend_on_its_port_and_its_replicas_behind_it() -> None:
    config = haproxy_config(FRONTENDS)
    assert "frontend desk\n    bind 127.0.0.1:18700\n" in config
    assert "    default_backend desk-replicas" in config
    assert "    server desk-1 127.0.0.1:19001\n    server desk-2 127.0.0.1:19002" in config
    assert "    server tools-2 127.0.0.1:19004" in config
    assert "retry-on conn-failure empty-response response-timeout 503" in config
    assert "option redispatch" in config
    # A second cancel is TaskNotCancelableError: a cancel is retried only if nothing got it.
    assert "    http-request disable-l7-retry if cancel" in config
    assert '    acl cancel req.body -m sub "CancelTask"' in config


def test_replicas_are_checked_on_the_manifests_readiness_probe() -> None:
    probes = set()
    for path in Path("deploy/k8s").glob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "Deployment":
                continue
            for container in doc["spec"]["template"]["spec"]["containers"]:
                if "readinessProbe" in container:
                    probes.add(container["readinessProbe"]["httpGet"]["path"])
    assert probes == {READY_PATH}
    assert f"option httpchk GET {READY_PATH}" in haproxy_config(FRONTENDS)


def test_haproxy_accepts_the_file(tmp_path: Path) -> None:
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.skip("haproxy not installed (apt-get install -y haproxy)")
    path = tmp_path / "haproxy.cfg"
    path.write_text(haproxy_config(FRONTENDS))
    checked = subprocess.run([haproxy, "-c", "-f", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr + checked.stdout
    assert "WARNING" not in checked.stderr + checked.stdout


def test_the_balancer_answers_its_own_errors_as_contract_errors(tmp_path: Path) -> None:
    """No replica answers: HAProxy's 503 is the contract's UNAVAILABLE (retry) in JSON, not
    its HTML page, so a client reads it like any service's error."""
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.skip("haproxy not installed (apt-get install -y haproxy)")
    front, *nobody = (free_port() for _ in range(3))  # the replicas' ports: nothing listens there
    path = tmp_path / "haproxy.cfg"
    path.write_text(haproxy_config([Frontend("desk", front, tuple(nobody))]))
    proc = subprocess.Popen([haproxy, "-db", "-f", str(path)], stdout=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 20
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{front}/tasks/t-1", timeout=10)
                break
            except httpx.ConnectError:
                assert proc.poll() is None, "haproxy exited"
                assert time.monotonic() < end, "haproxy did not listen"
                time.sleep(0.1)  # haproxy is binding its port, bounded by the deadline
        assert answer.status_code == 503
        assert answer.headers["content-type"] == "application/json"
        error = AccordError.from_http(answer.status_code, answer.json())
        assert error.code is ErrorCode.UNAVAILABLE
        assert answer.json()["error"]["retry"] == "retry"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
