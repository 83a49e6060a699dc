"""Which test runs which documented command (docs/testing.md "Commands in the docs").

Each entry: a regular expression matched at the start of a command (as tests/docs/doc_commands.py
reads it), the test file that runs that command or the behaviour it shows, and a string that
file holds where it does so: a test file that stops holding it fails tests/docs, so the entry
cannot point at a test that no longer runs the command.
"""

from __future__ import annotations

COVERED: tuple[tuple[str, str, str], ...] = (
    # the mesh and what a customer or an approver does with it
    (r"make demo$", "tests/mesh/test_cli.py", '"demo"'),
    (r"make up$", "tests/workspace/test_makefile.py", "up"),
    # `make cluster` runs bench/cluster.py serve, which runs `accord cluster`; the test starts
    # that command on a fresh PostgreSQL database and sends every flow through its balancer.
    (r"make cluster$", "tests/mesh/cluster_support.py", '"cluster"'),
    (r"ACCORD_DATABASE_URL=\S+ accord cluster ", "tests/mesh/cluster_support.py", '"--replicas"'),
    (r"(ACCORD_DEV=1 )?accord up$", "tests/mesh/test_cli.py", '"up"'),
    (r"accord refund ", "tests/mesh/test_cli.py", 'accord(mesh, "refund"'),
    (r"printf .* \| accord chat$", "tests/mesh/test_cli.py", '"chat"'),
    (r"accord approve ", "tests/mesh/test_cli.py", '"approve"'),
    (r"accord tasks ", "tests/mesh/test_cli.py", '"tasks"'),
    (r"accord stats", "tests/agents/runner/test_stats_cmd.py", '"stats"'),
    (r"accord db (current|upgrade)", "tests/storage/test_db_cli.py", '"upgrade"'),
    (r"accord new help-desk", "tests/apps/test_new_app.py", '"new"'),
    (r"accord card ", "tests/agents/test_policy_cli.py", '"card"'),
    (r"accord call http://127.0.0.1:870[12] ", "tests/agents/test_policy_cli.py", '"call"'),
    (r"accord call http://127.0.0.1:9000", "tests/security/test_credential_origin.py", "origin"),
    (r"accord serve (policy|risk)$", "tests/agents/test_checks_lookup.py", '["serve", "risk"]'),
    (r"accord serve commerce --stdio", "tests/tools/test_stdio.py", '"--stdio"'),
    (r"accord serve (commerce|payments)", "tests/tools/conftest.py", "serve"),
    (r"accord token revoke|accord token --revoke", "tests/security/test_tokens.py", '"revoke"'),
    (r"accord webhook ", "tests/cli/test_webhook_cli.py", '"webhook"'),
    (r"accord contract-test( |$)", "tests/kit/test_cli.py", "contract-test"),
    (
        r"accord contracts (diff|compat|release)",
        "tests/contracts/evolution/test_releases.py",
        '"compat"',
    ),
    (r"make release VERSION=", "tests/contracts/evolution/test_releases.py", '"release"'),
    (
        r"ACCORD_CONTRACTS_DIR=contracts accord serve policy",
        "tests/agents/test_served_contracts.py",
        "ACCORD_CONTRACTS_DIR",
    ),
    (r"make compat$", "tests/workspace/test_ci_never_skips.py", "compat"),
    # curl and other languages
    (r'curl -sS "\$\{ACCORD_URL', "tests/interop/test_curl.py", "curl-refund.sh"),
    (
        r"curl -sS http://127.0.0.1:8701/message:send",
        "tests/interop/test_refund_curl.py",
        "curl-refund-approval.sh",
    ),
    (
        r"sh docs/curl-refund-answer.sh$",
        "tests/interop/test_refund_curl.py",
        "curl-refund-answer.sh",
    ),
    (r"cd tests/interop/go && go build", "tests/interop/test_refund_go.py", '"build"'),
    (r"\./refund-client http://127.0.0.1:8700", "tests/interop/test_refund_go.py", "run_client"),
    (
        r"cd tests/interop/java && mvn -q -B package",
        "tests/interop/test_refund_java.py",
        "maven_package(REACTOR",
    ),
    (r"java -jar refund-client/target/", "tests/interop/test_refund_java.py", "run_client"),
    (r"curl -s \$URL/", "tests/protocol/a2a/test_auth_gate.py", "X-API-Key"),
    (
        r"curl -sS http://127.0.0.1:8700/ ",
        "tests/mesh/test_push.py",
        "CreateTaskPushNotificationConfig",
    ),
    (r"node refund_client.mjs", "tests/interop/test_clients_js.py", "refund_client.mjs"),
    (r"npm install @a2a-js/sdk", "tests/interop/test_clients_js.py", "refund_client.mjs"),
    (
        r"node node_modules/.*conformance",
        "tests/interop/test_mcp_conformance.py",
        "expected-failures",
    ),
    (
        r"cd tests/interop/js && export PATH",
        "tests/interop/test_mcp_conformance.py",
        "NODE_MODULES",
    ),
    (r"ACCORD_TRACE_FILE=", "tests/telemetry/test_refund_trace.py", "ACCORD_TRACE_FILE"),
    # contracts in TypeScript, the kit's wheel, the pytest plugin
    (r"make contracts-ts", "tests/contracts/test_ts_contract.py", "make contracts-ts"),
    # contracts in Java and the Java member
    (r"make contracts-java", "tests/contracts/test_java_contract.py", "make contracts-java"),
    (
        r"python -m accord.contracts.codegen java",
        "tests/contracts/test_java_contract.py",
        "export_all",
    ),
    (
        r"cd tools/java && mvn -q -B package",
        "tests/interop/test_java_member.py",
        "maven_package(MEMBERS",
    ),
    (r"make java-member", "tests/interop/test_java_member.py", "make java-member"),
    (r"python -m accord.contracts.codegen ts", "tests/contracts/test_ts_contract.py", "ts-app"),
    (r"cd contracts/ts && npm install", "tests/contracts/test_ts_contract.py", "dist"),
    # contracts in Go, the Go member
    (r"make contracts-go", "tests/contracts/test_go_contract.py", "make contracts-go"),
    (r"python -m accord.contracts.codegen go", "tests/contracts/test_go_contract.py", "go-app"),
    (r"make go-member", "tests/interop/test_go_member.py", "make go-member"),
    (r"make dist$", "tests/kit/test_kit_wheel.py", "install"),
    (r"python -m venv kit && kit/bin/pip install", "tests/kit/test_kit_wheel.py", "install"),
    (r"kit/bin/accord-contract-test", "tests/kit/test_kit_wheel.py", "accord-contract-test"),
    (r"pytest tests/test_contract.py --accord-target", "tests/kit/test_plugin.py", "accord-target"),
    (
        r"ACCORD_DATA_DIR=\$\(mktemp -d\) (\.venv/bin/)?python docs/examples/runner_demo.py",
        "tests/agents/runner/test_demo.py",
        "runner_demo",
    ),
)
