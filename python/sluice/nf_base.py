"""What every NF configuration of `sluice.nf` shares: its JSON form and its
check against the core's definition of the NF, which names the field at
fault. The classes themselves are generated from the core (`sluice.nf`)."""

from __future__ import annotations

import json
from typing import Any, ClassVar, Mapping, Sequence, TypeVar, Union

from sluice import _core
from sluice.json_form import non_finite, to_json

K = TypeVar("K")

#: A table of (key, gate) entries, as a mapping or as pairs in order.
Table = Union[Mapping[K, int], Sequence[tuple[K, int]]]


class NF:
    """Base of every NF configuration: a frozen dataclass whose fields are
    those of the core's NF named `kind`, checked by the core when made."""

    #: The NF's name in descriptions ("lpm").
    kind: ClassVar[str]

    def __post_init__(self) -> None:
        fields = to_json(self)
        found = non_finite(fields, "")
        if found is not None:
            raise ValueError(f"{type(self).__name__}: {found[0]}: {found[1]} is not a finite number")
        try:
            _core.check_nf(self.kind, json.dumps(fields))
        except ValueError as e:
            raise ValueError(f"{type(self).__name__}: {e}") from None

    def spec(self) -> dict[str, Any]:
        """The JSON form the core reads: `type` and the fields."""
        return {"type": self.kind, **to_json(self)}
