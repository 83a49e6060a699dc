"""The production topology on one machine, and the long run under fire through it.

    .venv/bin/python bench/cluster.py serve            # `make cluster`
    .venv/bin/python bench/cluster.py chaos [--duration 300] [--every 3] [--seed N]
    .venv/bin/python bench/cluster.py single-points [--duration 180] [--every 8] [--outage 3]

``serve`` runs `accord cluster` (HAProxy in front of two replicas of every service) on
``ACCORD_DATABASE_URL``, else on a private cluster of Debian's PostgreSQL started for as long
as it runs (tests/support/postgres.py, the tests' own), until Ctrl-C.

``chaos`` starts such a cluster on a fresh database and sends refunds, approvals, answers and
cancels through the balancer while replicas are killed with SIGKILL and rolled with SIGTERM at
random (tests/mesh/cluster_support.py, shared with tests/mesh/test_cluster.py), then prints the
figures: requests, failures by code, 5xx seen by the clients, double refunds, tasks left
unfinished, kills, latency p50/p95 (nearest rank).

``single-points`` does the same on a PostgreSQL server of its own while, in turn, PostgreSQL
is stopped (``-m fast``, ``-m immediate``) for ``--outage`` seconds and started again on the
same port and data, and HAProxy is killed (SIGKILL, SIGTERM) and started again by `accord
cluster` (tests/mesh/single_points_support.py, shared with
tests/mesh/test_cluster_single_points.py); it prints the same figures plus how long the
cluster took to serve again after each hit and the 5xx the clients saw, by contract code.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import postgres  # noqa: E402


def _run_cluster(env: dict[str, str]) -> int:
    """`accord cluster` until it ends; Ctrl-C (or SIGTERM) here stops it cleanly: it stops its
    replicas and the balancer (a SIGKILL would leave them running)."""
    child = subprocess.Popen([sys.executable, "-m", "accord.cli.main", "cluster"], env=env)

    def stop(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.send_signal(signal.SIGTERM)
        return child.wait(timeout=60)


def serve() -> int:
    if os.environ.get("ACCORD_DATABASE_URL"):
        return _run_cluster(dict(os.environ))
    if not postgres.available():
        print("no ACCORD_DATABASE_URL and no PostgreSQL: apt-get install -y postgresql")
        return 2
    with postgres.private_cluster() as url:
        print(f"PostgreSQL (private, removed on exit): {url}", flush=True)
        return _run_cluster({**os.environ, "ACCORD_DATABASE_URL": url})


async def chaos(args: argparse.Namespace) -> int:
    from tests.mesh.cluster_support import running_cluster, under_fire

    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    with (
        postgres.private_cluster() as server,
        tempfile.TemporaryDirectory() as base,
        running_cluster(Path(base), postgres.fresh_database(server)) as cluster,
    ):
        report = await under_fire(
            cluster, seed=seed, duration_s=args.duration, every_s=args.every, flows=args.flows
        )
        problems = await report.problems(cluster)
        print(report.figures(), flush=True)
        for problem in problems:
            print(f"  problem: {problem}", flush=True)
        return 1 if problems else 0


async def single_points(args: argparse.Namespace) -> int:
    from tests.mesh.cluster_support import running_cluster
    from tests.mesh.single_points_support import single_points as run

    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    with (
        postgres.private_server(synchronous_commit=True) as server,
        tempfile.TemporaryDirectory() as base,
        running_cluster(Path(base), postgres.fresh_database(server.url)) as cluster,
    ):
        report = await run(
            cluster,
            server,
            seed=seed,
            duration_s=args.duration,
            every_s=args.every,
            outage_s=args.outage,
            flows=args.flows,
        )
        problems = await report.problems(cluster)
        print(report.figures(), flush=True)
        for problem in problems:
            print(f"  problem: {problem}", flush=True)
        return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="the cluster until Ctrl-C (`make cluster`)")
    run = sub.add_parser("chaos", help="the long run under fire, figures printed")
    run.add_argument("--duration", type=float, default=300.0)
    run.add_argument("--every", type=float, default=3.0, help="seconds between kills (about)")
    run.add_argument("--flows", type=int, default=4, help="concurrent customers")
    run.add_argument("--seed", type=int, default=None)
    points = sub.add_parser(
        "single-points", help="PostgreSQL and HAProxy restarted under load, figures printed"
    )
    points.add_argument("--duration", type=float, default=180.0)
    points.add_argument("--every", type=float, default=8.0, help="seconds between hits (about)")
    points.add_argument("--outage", type=float, default=3.0, help="seconds PostgreSQL is down")
    points.add_argument("--flows", type=int, default=4, help="concurrent customers")
    points.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    if args.command == "serve":
        return serve()
    if args.command == "single-points":
        return asyncio.run(single_points(args))
    return asyncio.run(chaos(args))


if __name__ == "__main__":
    sys.exit(main())
