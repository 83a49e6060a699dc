"""The Accord contract test kit: checks any A2A agent or MCP tool server, in any language,
against accord.contracts over the wire. Every check is tagged with a requirement ID of the
manifest (accord.contracts.manifest).

    report = await run_kit(["http://127.0.0.1:8701"], KitOptions(credential=Credential(token=t)))
    assert report.ok, [r.failure_message() for r in report.failures]

CLI: ``accord-contract-test URL...`` (and ``accord contract-test`` where Accord's CLI is
installed); pytest: the ``accord_contract`` plugin (pytest_plugin). Probes come from the
applications (entry point group ``accord.kit.probes``) and a probe file (probes.py).
"""

from accord.kit.model import CheckResult, Report, TargetKind, Verdict
from accord.kit.options import Credential, KitOptions
from accord.kit.probes import AgentProbe, Probes, ToolProbe, load_probes
from accord.kit.report import junit_xml, render_table, write_junit
from accord.kit.run_checks import checks_for, detect, run_kit, run_target

__all__ = [
    "AgentProbe",
    "CheckResult",
    "Credential",
    "KitOptions",
    "Probes",
    "Report",
    "TargetKind",
    "ToolProbe",
    "Verdict",
    "checks_for",
    "detect",
    "junit_xml",
    "load_probes",
    "render_table",
    "run_kit",
    "run_target",
    "write_junit",
]
