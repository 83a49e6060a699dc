"""Chaos, the long run: refunds flow while random services are killed and restarted.

The five services run as real processes on one data directory (tests/mesh/support.py); about
every ``--every`` seconds one of them (never more than two at once) gets SIGKILL (or SIGTERM
with ``--sigterm``; ``--rolling`` takes them in turn, one at a time) and is started again at
once. Each round has its own seed, printed first: ``--seed N --rounds 1`` replays a round.

Printed per round and in total: kills per service, requests, accepted, completed, failed,
ledger rows for the refunded order (must be 1) and the denied one (must be 0), and each
service's median time from process start to healthy.

    .venv/bin/python bench/chaos.py [--rounds 5] [--duration 120] [--every 2] [--seed N]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.mesh.chaos import DENIED, REFUNDED, ledger_problems, run_chaos  # noqa: E402
from tests.mesh.support import running_mesh  # noqa: E402


async def _round(seed: int, args: argparse.Namespace) -> tuple[int, int, int]:
    with tempfile.TemporaryDirectory() as base, running_mesh(Path(base)) as mesh:
        report = await run_chaos(
            mesh,
            seed=seed,
            duration_s=args.duration,
            every_s=args.every,
            customers=args.customers,
            sig=signal.SIGTERM if args.sigterm else signal.SIGKILL,
            rolling=args.rolling,
        )
        rows = mesh.refund_rows()
        print(
            f"{report.summary()} ledger[{REFUNDED}]={rows.get(REFUNDED, 0)} "
            f"ledger[{DENIED}]={rows.get(DENIED, 0)}",
            flush=True,
        )
        for outcome in report.not_completed:
            print(f"  not completed: {outcome.task_id} {outcome.error}", flush=True)
        problems = ledger_problems(report, mesh.refund_keys())
        for problem in problems:
            print(f"  ledger: {problem}", flush=True)
        ok = not problems
        return sum(report.kills.values()), len(report.not_completed), 0 if ok else 1


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--every", type=float, default=2.0)
    parser.add_argument("--customers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--sigterm", action="store_true")
    parser.add_argument("--rolling", action="store_true")
    args = parser.parse_args()
    seeds = random.Random(args.seed)
    kills = failed = wrong = 0
    for n in range(args.rounds):
        seed = args.seed if args.seed is not None and n == 0 else seeds.randrange(10**6)
        k, f, w = await _round(seed, args)
        kills, failed, wrong = kills + k, failed + f, wrong + w
    print(f"total: rounds={args.rounds} kills={kills} failed={failed} ledger_wrong={wrong}")
    return 1 if failed or wrong else 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
