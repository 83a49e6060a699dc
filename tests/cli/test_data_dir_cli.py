"""The command line from a subfolder of a project (issue #36): it uses the project's data
directory, and a credential the mesh refuses is reported with the data directory in use."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support import forked
from tests.support.processes import run_service

SECRET = "q8Zr2mVx7LkP4tNw9sYb3cHd6fJg1aUe5oRi0"


def test_a_command_run_in_a_subfolder_uses_the_projects_data_directory(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    (project / "tests" / "interop" / "js").mkdir(parents=True)
    (project / "accord.yaml").write_text("name: shop\n")
    deep = project / "tests" / "interop" / "js"
    done = forked.run(["token", "revoke", "--jti", "j-1"], forked.bare_env(COLUMNS="200"), cwd=deep)
    assert done.returncode == 0, done.stderr
    assert f"(deny list: {project / '.accord' / 'revoked'})" in done.stdout
    assert "j-1" in (project / ".accord" / "revoked").read_text()
    assert not (deep / ".accord").exists()  # no second data directory, no second secret


def test_a_refused_token_names_the_data_directory_that_signed_it(tmp_path: Path) -> None:
    mesh_env = {"ACCORD_DATA_DIR": str(tmp_path / "mesh"), "ACCORD_JWT_SECRET": SECRET}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with run_service("risk", ["serve", "risk"], env=mesh_env, log_dir=tmp_path) as risk:
        # A development token made with another folder's secret than the mesh's.
        done = forked.run(["call", risk.url, "hello"], forked.bare_env(COLUMNS="80"), cwd=elsewhere)
    assert done.returncode != 0
    first = done.stderr.strip().splitlines()[0]
    assert first.startswith("UNAUTHENTICATED"), done.stderr
    assert str(elsewhere / ".accord") in first  # one line however narrow the terminal
    assert "ACCORD_DATA_DIR" in first
    assert os.path.exists(elsewhere / ".accord" / "jwt-secret")
