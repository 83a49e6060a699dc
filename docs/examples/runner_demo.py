"""Embed the refund assistant in a Python program and print its event stream.

Run it from the repository root (no services need to be running: ``in_process=True`` serves
policy-check, risk-check and both tool servers inside this process, without opening a port):

    ACCORD_DATA_DIR=$(mktemp -d) .venv/bin/python docs/examples/runner_demo.py

Drop ``in_process=True`` to reach the services as configured instead (``accord up``).
"""

from __future__ import annotations

import asyncio

from accord.agents.runner import Event, Runner


def show(event: Event) -> None:
    """One line per part: who said it, and what kind of thing it is."""
    if event.author == "user":
        print(f"you> {event.text}")
    for call in event.get_function_calls():
        args = str(call.args)
        print(
            f"  {event.author:>14} -> call {call.name} {args[:90]}{'…' if len(args) > 90 else ''}"
        )
    for response in event.get_function_responses():
        status = response.response.get("status") or (
            "error" if "error" in response.response else "ok"
        )
        print(f"  {event.author:>14} <- {response.name}: {status}")
    for part in event.content.parts if event.content else []:
        if part.thought and part.text:
            prefix = "…" if event.partial else "·"
            print(f"  {event.author:>14} {prefix} {part.text}")
    if event.usage and not event.is_final_response():
        print(f"  {'':>14}   usage: {event.usage.units} units, {event.usage.calls} calls")
    if event.is_final_response():
        status = event.status.value if event.status else "?"
        print(f"[{status}] {event.text}")


async def main() -> None:
    async with Runner(in_process=True) as runner:
        # A refund that goes straight through: lookup, policy, risk, refunds.get, refunds.issue.
        print("== C-01, session demo-1")
        async for event in runner.run_async(
            "鞋码不合适，想退款，订单 O-1001", user="C-01", session="demo-1"
        ):
            show(event)

        # A damage claim: policy-check asks for evidence; the next message in the same session
        # answers it and the same workflow goes on.
        print("== C-01, session demo-2")
        async for event in runner.run_async(
            "my mug arrived broken, order O-1005", user="C-01", session="demo-2"
        ):
            show(event)
        async for event in runner.run_async(
            "the handle snapped off, photo IMG_2291.jpg", user="C-01", session="demo-2"
        ):
            show(event)

        print("== model metrics")
        models = runner.metrics.snapshot()
        print(
            f"  {models['samples']} runs, success {models['success_rate']:.0%}, "
            f"P95 {models['p95_latency_ms']} ms, {models['total_units']} units"
        )


if __name__ == "__main__":
    asyncio.run(main())
