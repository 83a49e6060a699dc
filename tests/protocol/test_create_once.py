"""Development secrets made on first use by services that start together (private_files.py).

CI found an agent that read the push key file another agent had created and not yet written,
and refused to start. Here many processes race for one file, released together.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import stat
from pathlib import Path

from accord.protocol.private_files import create_once

RACERS = 12


def _race(
    path: str,
    start: multiprocessing.synchronize.Barrier,
    out: multiprocessing.Queue[str],
) -> None:
    start.wait(timeout=30)
    out.put(create_once(Path(path), f"value-of-{multiprocessing.current_process().name}"))


def test_racing_processes_all_keep_the_one_value_written_whole(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    for round_ in range(5):
        path = tmp_path / f"secret-{round_}"
        start = ctx.Barrier(RACERS)
        out: multiprocessing.Queue[str] = ctx.Queue()
        racers = [ctx.Process(target=_race, args=(str(path), start, out)) for _ in range(RACERS)]
        for racer in racers:
            racer.start()
        seen = [out.get(timeout=60) for _ in racers]
        for racer in racers:
            racer.join(timeout=30)
            assert racer.exitcode == 0
        assert len(set(seen)) == 1
        assert seen[0].startswith("value-of-")
        assert path.read_text() == seen[0]
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"secret-{i}" for i in range(5)]


def test_an_existing_file_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text("first\n")
    assert create_once(path, "second") == "first"
    assert path.read_text() == "first\n"
