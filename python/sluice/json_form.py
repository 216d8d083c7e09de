"""The JSON form the core reads, from Python values: what `spec()`
methods return, and the check that keeps NaN and infinity out of it."""

from __future__ import annotations

import math
import os
from dataclasses import fields, is_dataclass
from typing import Any, Mapping, Optional


def to_json(value: Any) -> Any:
    """`value` as the core reads it: dataclasses as objects, mappings as
    lists of [key, value] pairs, tuples as lists, paths as strings."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return [[to_json(k), to_json(v)] for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


def non_finite(value: Any, where: str) -> Optional[tuple[str, float]]:
    """The place (`modules[1].nf.t_buff_us`) and value of the first NaN or infinity in `value`, if any."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (where, value)
    if isinstance(value, dict):
        children = [(f"{where}.{k}" if where else str(k), v) for k, v in value.items()]
    elif isinstance(value, (list, tuple)):
        children = [(f"{where}[{i}]", v) for i, v in enumerate(value)]
    else:
        return None
    for place, child in children:
        found = non_finite(child, place)
        if found is not None:
            return found
    return None
