"""Mutations of a valid request: wrong types, extremes, unicode, nesting, unknown and missing
fields, duplicate keys, huge numbers, broken encodings and odd headers.

Each mutation returns the raw body (bytes: some mutations are not JSON any more) and headers to
add. :func:`deck` deals them from a seeded ``random.Random``, so a failing case is repeated
with the same seed: shuffled rounds of every mutation, so a short run still covers each kind
(a run of N cases uses each mutation at least N // len(MUTATIONS) times).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from typing import Any, Final

Case = tuple[str, bytes, dict[str, str]]  # (mutation name, body, extra headers)
Mutation = Callable[[Any, random.Random], Case]

ODD_VALUES: Final[tuple[Any, ...]] = (
    None,
    True,
    0,
    -1,
    2**63,
    -(2**63) - 1,
    10**30,
    1.5e308,
    -0.0,
    "",
    "x" * 5000,
    "💥" * 200,
    "\u202eevil",
    "\x00nul",
    "O-1001'; DROP TABLE orders;--",
    "../../etc/passwd",
    [],
    {},
    [[[]]],
    {"$ref": "#"},
)
RAW_NUMBERS: Final = ("1e999", "-1e999", "1" * 5000, "NaN", "Infinity", "0x10", "01", "1.")
ODD_HEADERS: Final[tuple[dict[str, str], ...]] = (
    {"A2A-Version": ""},
    {"A2A-Version": "2.0"},
    {"A2A-Version": "1.0.0.0.0"},
    {"A2A-Version": "9" * 64},
    {"A2A-Version": "v1"},
    {"Content-Type": "text/plain"},
    {"Content-Type": "application/json; charset=utf-16"},
    {"Accept": "image/png"},
    {"MCP-Protocol-Version": "1999-01-01"},
    {"MCP-Session-Id": "not-a-session"},
    {"traceparent": "00-zz-zz-zz"},
    {"traceparent": "x" * 300},
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, sub in value.items():
            out += _paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            out += _paths(sub, (*prefix, i))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(value)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return out


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _odd_value(request: Any, rnd: random.Random) -> Case:
    path = rnd.choice(_paths(request))
    return (
        "odd value at /" + "/".join(map(str, path)),
        _dumps(_replace(request, path, rnd.choice(ODD_VALUES))),
        {},
    )


def _drop_field(request: Any, rnd: random.Random) -> Case:
    paths = [p for p in _paths(request) if p]
    if not paths:
        return _odd_value(request, rnd)
    path = rnd.choice(paths)
    out = copy.deepcopy(request)
    node = out
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return "dropped /" + "/".join(map(str, path)), _dumps(out), {}


def _unknown_field(request: Any, rnd: random.Random) -> Case:
    objects = [p for p in _paths(request) if isinstance(_get(request, p), dict)]
    if not objects:
        return _odd_value(request, rnd)
    path = rnd.choice(objects)
    target = copy.deepcopy(request)
    node = _get(target, path)
    node[rnd.choice(["__proto__", "constructor", "extra", "x" * 300, "é"])] = rnd.choice(ODD_VALUES)
    return "unknown field at /" + "/".join(map(str, path)), _dumps(target), {}


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _deep(request: Any, rnd: random.Random) -> Case:
    depth = rnd.choice((33, 64, 200, 5000))
    nested: Any = 1
    for _ in range(min(depth, 300)):
        nested = {"a": nested} if rnd.random() < 0.5 else [nested]
    if depth > 300:
        text = "[" * depth + "]" * depth
        return f"nested {depth}", text.encode(), {}
    path = rnd.choice(_paths(request))
    return (
        f"nested {depth} at /" + "/".join(map(str, path)),
        _dumps(_replace(request, path, nested)),
        {},
    )


def _raw_number(request: Any, rnd: random.Random) -> Case:
    path = rnd.choice(_paths(request))
    marker = "__FUZZ_NUMBER__"
    text = json.dumps(_replace(request, path, marker))
    return "raw number", text.replace(f'"{marker}"', rnd.choice(RAW_NUMBERS)).encode(), {}


def _duplicate_key(request: Any, rnd: random.Random) -> Case:
    text = json.dumps(request)
    if isinstance(request, dict) and request:
        key = rnd.choice(list(request))
        text = text[:-1] + f', "{key}": {json.dumps(rnd.choice(ODD_VALUES))}' + "}"
    return "duplicate key", text.encode(), {}


def _bytes(request: Any, rnd: random.Random) -> Case:
    body = _dumps(request)
    choice = rnd.randrange(6)
    if choice == 0:
        return "truncated", body[: rnd.randrange(max(1, len(body)))], {}
    if choice == 1:
        return "invalid utf-8", body[:10] + b"\xff\xfe\xc0\x80" + body[10:], {}
    if choice == 2:
        return "utf-8 BOM", b"\xef\xbb\xbf" + body, {}
    if choice == 3:
        return "random bytes", rnd.randbytes(rnd.randint(1, 512)), {}
    if choice == 4:
        return "lone surrogate", body.replace(b'"', b'"\\ud800', 1), {}
    return "empty", b"", {}


def _odd_header(request: Any, rnd: random.Random) -> Case:
    return "odd header", _dumps(request), dict(rnd.choice(ODD_HEADERS))


def _not_an_object(request: Any, rnd: random.Random) -> Case:
    return "not an object", _dumps(rnd.choice(([request], "x", 1, None, [[request]]))), {}


MUTATIONS: Final[tuple[Mutation, ...]] = (
    _odd_value,
    _odd_value,
    _odd_value,
    _drop_field,
    _unknown_field,
    _deep,
    _raw_number,
    _duplicate_key,
    _bytes,
    _odd_header,
    _not_an_object,
)


def deck(rnd: random.Random) -> Iterator[Mutation]:
    """Endless shuffled rounds of MUTATIONS (odd values three times a round, as before): with
    independent draws a 300-case run missed a rarer kind now and then; rounds cannot."""
    while True:
        round_ = list(MUTATIONS)
        rnd.shuffle(round_)
        yield from round_
