"""Services under test get ports of their own, and a port someone else answers is no start.

Found in CI: a mesh got the same port for its policy agent and its orchestrator; the
orchestrator could not bind, the policy agent answered its health check, and the test waited
90 s for an orchestrator that was not there.
"""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from accord.cli.mesh import MeshError, free_ports, installed_app, start_mesh
from tests.support.impostor import impostor
from tests.support.ports import free_port
from tests.support.processes import run_service, wait_healthy


def test_a_run_never_hands_out_a_port_twice_nor_one_of_the_kernels() -> None:
    kernel = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
    low = int(kernel[0])
    ports = [free_port() for _ in range(300)]
    assert len(set(ports)) == len(ports)
    assert all(p < low for p in ports), "bind(0) and outgoing connections use the kernel's range"
    for port in ports[:20]:
        with socket.socket() as s:  # each is free to bind
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", port))


def test_a_held_port_is_skipped() -> None:
    first = free_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", first + 1))  # the next in order, held by someone else
        holder.listen()
        assert free_port() != first + 1


def test_the_mesh_ports_are_distinct() -> None:
    for _ in range(50):
        ports = free_ports()
        assert set(ports) == set(installed_app().service_names)
        assert len(set(ports.values())) == len(installed_app().service_names)


def test_another_service_answering_is_not_health() -> None:
    port = free_port()
    with impostor(port, "policy"), pytest.raises(TimeoutError, match="'policy' answers there"):
        wait_healthy(f"http://127.0.0.1:{port}", deadline_s=1.0, service="orchestrator")
    with impostor(port, "orchestrator"):
        wait_healthy(f"http://127.0.0.1:{port}", deadline_s=5.0, service="orchestrator")


def test_a_service_whose_port_is_taken_does_not_start(tmp_path: Path) -> None:
    port = free_port()
    with (
        impostor(port, "policy"),
        pytest.raises(RuntimeError, match="risk did not start") as raised,
        run_service("risk", ["serve", "risk"], port=port, log_dir=tmp_path, deadline_s=60),
    ):
        pass
    assert "address already in use" in str(raised.value)


def _start_then_stop(data: Path, ports: dict[str, int]) -> None:
    # Stopped at once if it starts at all (the impostor taken for commerce): nothing left over.
    start_mesh(data, ports=ports, env={"ACCORD_DEV": "1"}).stop()


def test_accord_up_refuses_a_mesh_with_a_port_someone_else_answers(tmp_path: Path) -> None:
    ports = {name: free_port() for name in installed_app().service_names}
    with impostor(ports["commerce"], "policy"), pytest.raises(MeshError, match="commerce exited"):
        _start_then_stop(tmp_path / "data", ports)
    alive = subprocess.run(
        ["pgrep", "-f", "--", f"--port {ports['orchestrator']}"], capture_output=True, check=False
    )
    assert alive.returncode == 1, "the services that started were stopped"
