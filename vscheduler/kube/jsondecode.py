"""`loads`: JSON from the API server, decoded by orjson, with the standard library's result for
anything orjson refuses.

Decoding is most of a list's CPU and a fair part of a watch event's: `python -m bench.list_decode`
(50,000 pods with managed fields, one 61 MB list body read through `ListBody` in 256 KiB pieces)
printed 0.464-0.52 s of CPU with `json.loads` and 0.261-0.287 s with `orjson.loads`.

orjson refuses a few things the standard library reads (`NaN`, lone surrogate escapes); should
one come, `json.loads` reads it as before, or raises the same `ValueError` it always did. One
difference stays: an integer past 64 bits reads as a float (the standard library keeps it whole).
The API server never sends one: it decodes numbers into int64 or float64 and sends those.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(data: bytes | str) -> Any:
    """The JSON value in `data`; `ValueError` (a `json.JSONDecodeError`) when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)
