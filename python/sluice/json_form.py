"""The JSON form the core reads, from Python values: what `spec()`
methods return, and the check that keeps NaN and infinity out of it."""

from __future__ import annotations

import json
import math
import os
from dataclasses import fields, is_dataclass
from typing import Any, Callable, Mapping, Optional


#: Types that are their own JSON form, tested first: a large description's
#: values are mostly these, and the abstract-class tests below are slow.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def to_json(value: Any) -> Any:
    """`value` as the core reads it: dataclasses as objects, mappings as
    lists of [key, value] pairs, tuples as lists, paths as strings."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    names = _field_names(kind)
    if names is not None:
        return {name: to_json(getattr(value, name)) for name in names}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return [[to_json(k), to_json(v)] for k, v in value.items()]
    return value


#: Per class met, its field names if it is a dataclass (see `_field_names`).
_FIELD_NAMES: dict[type, Optional[tuple[str, ...]]] = {}


def _field_names(kind: type) -> Optional[tuple[str, ...]]:
    """The field names of dataclass `kind` (`None`: not a dataclass), found once per class."""
    if kind not in _FIELD_NAMES:
        _FIELD_NAMES[kind] = tuple(f.name for f in fields(kind)) if is_dataclass(kind) else None
    return _FIELD_NAMES[kind]


def dumps_finite(value: Any, refusal: Callable[[str, float], str]) -> str:
    """`value` as JSON text; a NaN or infinity in it raises ValueError with
    `refusal(place, number)`. The encoder finds one; only then is `value`
    walked for its place (a walk of a large description takes seconds, the
    encoder does not)."""
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:
        found = non_finite(value, "")
        if found is None:
            raise
        raise ValueError(refusal(*found)) from None


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
