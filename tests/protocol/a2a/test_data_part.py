"""wire.data_part: the JSON value a data part carries, exactly as protobuf's JSON parser reads it
(a part built from the dict and one parsed from its JSON text are the same message)."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2

from accord.protocol.a2a.wire import data_part

VALUES: list[dict[str, Any]] = [
    {},
    {"order_id": "O-1001", "amount_cents": 5999, "ratio": 0.25, "final_sale": False},
    {"none": None, "empty": [], "nested": {"items": [{"sku": "A", "n": 1}, [1, "x", None, True]]}},
    {"text": "鞋码不合适，想退款", "big": 2**53, "negative": -1.5e300},
]


@pytest.mark.parametrize("value", VALUES)
def test_a_data_part_is_the_value_json_parsing_gives(value: dict[str, Any]) -> None:
    part = data_part(value)
    assert part.media_type == "application/json"
    assert part.data == json_format.Parse(json.dumps(value), struct_pb2.Value())
    assert json_format.MessageToDict(part.data) == value


def test_a_value_json_has_no_type_for_is_a_parse_error() -> None:
    with pytest.raises(json_format.ParseError):
        data_part({"at": datetime.datetime.now(datetime.UTC)})
