"""Where the contracts live: the framework's own folder and each application's.

The framework ships the kit's requirements and the registry snapshot, no agent or tool
contract of any application. An application's distribution registers the package that holds
its ``specs/`` folder (``agents/*.yaml``, ``tools/*.yaml``) under the ``accord.contracts``
entry-point group, the way its services register under ``accord.services``:

    [project.entry-points."accord.contracts"]
    shop = "shop_contracts"          # shop_contracts/specs/{agents,tools}/*.yaml

Everything that reads "the shipped contracts" (the tool config, the served cards, the export,
docs/contract.md) reads every registered folder, so installing an application's contracts is
all it takes for the framework to find them.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.metadata import entry_points
from pathlib import Path
from typing import Final

SPECS_GROUP: Final = "accord.contracts"  # entry points: NAME = package holding specs/
SPECS_FOLDER: Final = "specs"


def framework_specs() -> Path:
    """The framework's own folder: the kit's requirements and the registry snapshot."""
    return Path(str(resources.files("accord.contracts") / SPECS_FOLDER))


def registered_specs() -> dict[str, Path]:
    """Each registered application's contract folder, by entry-point name."""
    found: dict[str, Path] = {}
    for ep in sorted(entry_points(group=SPECS_GROUP), key=lambda e: e.name):
        # The value names a package; its specs/ folder is read, nothing is imported from it
        # beyond the package itself (resources.files needs it importable).
        found[ep.name] = Path(str(resources.files(ep.module) / SPECS_FOLDER))
    return found


@cache
def spec_folders() -> tuple[Path, ...]:
    """The framework's folder, then every registered application's, in entry-point order."""
    return (framework_specs(), *registered_specs().values())


def contract_files(kind: str) -> list[Path]:
    """Every ``KIND/*.yaml`` (``agents`` or ``tools``) in the registered folders."""
    return [path for folder in spec_folders() for path in sorted((folder / kind).glob("*.yaml"))]
