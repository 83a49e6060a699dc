"""Reading contract files: YAML in, a validated model out, or one clear error.

Nothing is half-loaded: a file either yields a complete, validated model or raises
:class:`ContractFileError` naming the file, the field and the rule that was broken.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar, cast

import yaml
from pydantic import BaseModel, ValidationError

from accord.contracts.errors import AccordError, ErrorCode
from accord.contracts.validation import first_broken

M = TypeVar("M", bound=BaseModel)
MAX_CONTRACT_FILE_BYTES = 256 * 1024
# libyaml's safe loader when PyYAML was built with it (the same rules, ~10x the pure-Python one).
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ContractFileError(AccordError):
    """A contract file is unreadable or breaks a rule of its format."""

    def __init__(self, path: Path | str, field: str, rule: str) -> None:
        self.path = str(path)
        self.field = field
        self.rule = rule
        super().__init__(
            ErrorCode.INVALID_INPUT,
            f"{self.path}: field {field!r}: {rule}",
            {"file": self.path, "field": field, "rule": rule},
        )


def read_yaml(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_CONTRACT_FILE_BYTES:
            raise ContractFileError(path, "<file>", f"larger than {MAX_CONTRACT_FILE_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ContractFileError(path, "<file>", f"cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ContractFileError(path, "<file>", "is not UTF-8 text") from None
    try:
        return yaml.load(text, Loader=_LOADER)  # a safe loader, C or Python
    except yaml.YAMLError:
        pass
    try:  # again with the Python loader: its marks name the line a person would look at
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "<document>"
        raise ContractFileError(path, where, "is not valid YAML") from None


def validate_model(model: type[M], data: Any, path: Path | str) -> M:
    if not isinstance(data, dict):
        raise ContractFileError(path, "<document>", "must be a mapping")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        broken = first_broken(exc, root="<document>")
        raise ContractFileError(
            path, broken.field, broken.message.removeprefix("Value error, ")
        ) from None


def load_model(model: type[M], path: Path) -> M:
    """``validate_model(model, read_yaml(path), path)``, parsed once per version of the file.

    Every service start and ``accord`` command reads the same shipped contracts several times
    (the domain tables, the tool config, the contract check, each tool's server), and one
    read of them all took ~75 ms of YAML and validation. The models are frozen; a file whose
    modification time or size changed is read again."""
    try:
        stat = path.stat()
    except OSError:
        return validate_model(model, read_yaml(path), path)  # its "cannot be read" error
    return cast(M, _loaded(model, str(path), stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=512)
def _loaded(model: type[BaseModel], path: str, mtime_ns: int, size: int) -> BaseModel:
    return validate_model(model, read_yaml(Path(path)), path)
