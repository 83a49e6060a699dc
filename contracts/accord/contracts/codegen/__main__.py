"""``python -m accord.contracts.codegen LANGUAGE OUT [--check] [--export DIR]``: write a contract
package's generated sources into OUT, or (``--check``) report where OUT differs from a fresh
generation. ``--export`` reads what ``accord contracts export DIR`` wrote instead of building
the same documents in this process.

LANGUAGE is ``ts`` (the framework's contract: contracts/ts/src/generated), ``ts-app`` (an
application's own types: each shipped agent's skill input and output), ``java`` (the
framework's contract: contracts/java/src/main/java/dev/accord/contract/generated) or
``java-app`` (the skills' schemas as Java constants).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from accord.contracts.codegen import java, ts
from accord.contracts.codegen.model import app_model, contract_model

GENERATORS: Mapping[str, Callable[[Path | None], dict[str, str]]] = {
    "ts": lambda export: ts.render(contract_model(export), "ts"),
    "ts-app": lambda export: ts.render(app_model(export), "ts-app"),
    "java": lambda export: java.render(contract_model(export), "java"),
    "java-app": lambda export: java.render(app_model(export), "java-app"),
}
# The make target that regenerates each language's package (named when --check finds drift).
REGENERATE: Mapping[str, str] = {"java": "make contracts-java"}


def drift(files: Mapping[str, str], out: Path) -> list[str]:
    """What differs between ``out`` and ``files``: changed, missing and stray files."""
    found = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    problems = [f"stray: {name}" for name in sorted(found - set(files))]
    for name, text in sorted(files.items()):
        path = out / name
        if not path.is_file():
            problems.append(f"missing: {name}")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"changed: {name}")
    return problems


def write(files: Mapping[str, str], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for stray in out.rglob("*"):
        if stray.is_file() and stray.relative_to(out).as_posix() not in files:
            stray.unlink()
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m accord.contracts.codegen")
    parser.add_argument("language", choices=sorted(GENERATORS))
    parser.add_argument("out", type=Path)
    parser.add_argument("--check", action="store_true", help="report drift, write nothing")
    parser.add_argument("--export", type=Path, help="a directory `accord contracts export` wrote")
    args = parser.parse_args(argv)
    files = GENERATORS[args.language](args.export)
    if args.check:
        problems = drift(files, args.out)
        for line in problems:
            print(f"{args.out}: {line}", file=sys.stderr)
        if problems:
            target = REGENERATE.get(args.language, "make contracts-ts")
            print(f"regenerate: {target}", file=sys.stderr)
        return 1 if problems else 0
    write(files, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
