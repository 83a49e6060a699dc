"""Where the data directory is (issue #36): ``ACCORD_DATA_DIR``; else the project's ``.accord``,
found from the current directory up as git finds ``.git``; else ``./.accord``."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.protocol.settings import data_dir, data_dir_path


@pytest.fixture(autouse=True)
def no_data_dir_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACCORD_DATA_DIR", raising=False)


def test_a_subfolder_of_an_application_uses_the_applications(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "accord.yaml").write_text("name: shop\n")
    deep = tmp_path / "examples" / "js"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert data_dir() == tmp_path / ".accord"
    assert not (deep / ".accord").exists()


def test_an_existing_data_directory_marks_the_project_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".accord").mkdir()  # the repository's root after a first `accord up` there
    (tmp_path / "tests" / "interop").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "tests" / "interop")
    assert data_dir_path() == tmp_path / ".accord"


def test_the_nearest_project_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".accord").mkdir()
    inner = tmp_path / "apps" / "shop"
    (inner / "src").mkdir(parents=True)
    (inner / "accord.yaml").write_text("name: shop\n")
    monkeypatch.chdir(inner / "src")
    assert data_dir_path() == inner / ".accord"


def test_the_root_of_a_project_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert data_dir_path() == tmp_path / ".accord"  # the documented default, unchanged


def test_the_variable_wins_over_any_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "accord.yaml").write_text("name: shop\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ACCORD_DATA_DIR", str(tmp_path / "elsewhere"))
    assert data_dir_path() == tmp_path / "elsewhere"
    monkeypatch.setenv("ACCORD_DATA_DIR", "relative")
    assert data_dir_path() == tmp_path / "relative"  # relative to where the command runs


def test_moving_to_another_folder_finds_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for project in (one, two):
        (project / "sub").mkdir(parents=True)
        (project / "accord.yaml").write_text("name: shop\n")
    monkeypatch.chdir(one / "sub")
    assert data_dir_path() == one / ".accord"
    monkeypatch.chdir(two / "sub")
    assert data_dir_path() == two / ".accord"
