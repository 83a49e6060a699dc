"""Router overhead: the offline model called directly vs through the router, in one run.

Baseline: ``OfflineModel.understand`` on N distinct refund messages. Then the same messages
through ``Router.understand`` (cache misses: key, budget, route, record) and once more (cache
hits: zero calls). Ratios are against the baseline's messages per second.

    .venv/bin/python bench/models_routing.py [--messages 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from accord.agents.models import OfflineModel, Router
from accord.runtime.models import AnswerCache, CacheScope, UnitBudget

TEMPLATES = [
    "鞋码不合适，想退款，订单 O-{n}",
    "my mug arrived broken, order O-{n}",
    "I changed my mind about order o-{n}, refund please",
    "订单号：{n}，还没收到货",
    "the jacket is not as described, photo: IMG_{n}.jpg, O-{n}",
]


async def main(messages: int) -> None:
    texts = [TEMPLATES[i % len(TEMPLATES)].format(n=1000 + i) for i in range(messages)]
    model = OfflineModel()
    started = time.perf_counter()
    for text in texts:
        await model.understand(text)
    base = messages / (time.perf_counter() - started)

    router = Router(model, cache=AnswerCache(capacity=2 * messages))
    scope = CacheScope.tenant("bench", "u1")
    budget = UnitBudget(10 * messages)
    rates = []
    for _ in range(2):  # first pass misses, second pass hits
        started = time.perf_counter()
        for text in texts:
            (await router.understand(text, budget=budget, scope=scope)).unwrap()
        rates.append(messages / (time.perf_counter() - started))
    snap = router.metrics.snapshot()
    print(f"offline model direct : {base:9.0f} msg/s  (baseline 1.00)")
    print(f"router, cache misses : {rates[0]:9.0f} msg/s  ratio {rates[0] / base:.2f}")
    print(f"router, cache hits   : {rates[1]:9.0f} msg/s  ratio {rates[1] / base:.2f}")
    print(
        f"runs {snap['samples']}, calls {snap['total_calls']}, units {snap['total_units']}, "
        f"p95 {snap['p95_latency_ms']} ms (nearest rank)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=3000)
    asyncio.run(main(parser.parse_args().messages))
