"""The kit's two outputs: a table for people (rich) and JUnit XML for CI.

JUnit: one ``<testsuite>`` per target, one ``<testcase>`` per check with ``classname`` = the
target and ``name`` = requirement ID + check; a violation is a ``<failure>`` whose message is
the one-line finding and whose text holds what was sent, what came back and the contract.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from accord.kit.model import CheckResult, Report, Verdict

_STYLE = {Verdict.PASS: "green", Verdict.FAIL: "bold red", Verdict.SKIP: "yellow"}


def render_table(report: Report, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title="Accord contract test", show_lines=False)
    for column in ("requirement", "check", "target", "result", "detail"):
        table.add_column(column, overflow="fold")
    for r in report.results:
        detail = r.failure_message() if r.outcome is Verdict.FAIL else r.detail
        table.add_row(
            r.requirement, r.check, r.target, f"[{_STYLE[r.outcome]}]{r.outcome.value}[/]", detail
        )
    console.print(table)
    counts = {o: sum(1 for r in report.results if r.outcome is o) for o in Verdict}
    console.print(
        f"{counts[Verdict.PASS]} passed, {counts[Verdict.FAIL]} failed, "
        f"{counts[Verdict.SKIP]} skipped"
    )


def junit_xml(results: Sequence[CheckResult]) -> ET.ElementTree[ET.Element]:
    root = ET.Element("testsuites", name="accord-contract-test")
    targets: dict[str, list[CheckResult]] = {}
    for r in results:
        targets.setdefault(r.target, []).append(r)
    for target, items in targets.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=target,
            tests=str(len(items)),
            failures=str(sum(r.outcome is Verdict.FAIL for r in items)),
            skipped=str(sum(r.outcome is Verdict.SKIP for r in items)),
            errors="0",
        )
        for r in items:
            case = ET.SubElement(suite, "testcase", classname=target, name=r.name)
            if r.outcome is Verdict.FAIL:
                failure = ET.SubElement(
                    case, "failure", message=f"{r.requirement}: {r.detail}", type=r.requirement
                )
                failure.text = r.failure_message()
            elif r.outcome is Verdict.SKIP:
                ET.SubElement(case, "skipped", message=r.detail)
    root.set("tests", str(len(results)))
    root.set("failures", str(sum(r.outcome is Verdict.FAIL for r in results)))
    return ET.ElementTree(root)


def write_junit(report: Report, path: Path | str) -> None:
    tree = junit_xml(report.results)
    ET.indent(tree)
    tree.write(Path(path), encoding="utf-8", xml_declaration=True)
