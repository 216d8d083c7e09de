"""Parts of a description checked by the core when they are made: the base
of the classes generated from the core's types (`sluice.nf`,
`sluice.template`, `sluice.poll`), their JSON form, and the check that
names the field at fault."""

from __future__ import annotations

from typing import Any, ClassVar, Mapping, Sequence, TypeVar, Union

from sluice import _core
from sluice.json_form import dumps_finite, to_json

K = TypeVar("K")

#: A table of (key, gate) entries, as a mapping or as pairs in order.
Table = Union[Mapping[K, int], Sequence[tuple[K, int]]]


class Checked:
    """A frozen dataclass that the core checks when it is made."""

    def __post_init__(self) -> None:
        name = type(self).__name__
        encoded = dumps_finite(to_json(self), lambda place, number: f"{name}: {place}: {number} is not a finite number")
        try:
            self._check(encoded)
        except ValueError as e:
            raise ValueError(f"{name}: {e}") from None

    def _check(self, fields_json: str) -> None:
        """Asks the core whether `fields_json` is valid; raises ValueError naming the field if not."""
        raise NotImplementedError

    def spec(self) -> Mapping[str, Any]:
        """The JSON form the core reads."""
        fields: dict[str, Any] = to_json(self)
        return fields


class NF(Checked):
    """Base of every NF configuration: its fields are those of the core's NF named `kind`."""

    #: The NF's name in descriptions ("lpm").
    kind: ClassVar[str]

    def _check(self, fields_json: str) -> None:
        _core.check_nf(self.kind, fields_json)

    def spec(self) -> dict[str, Any]:
        """The JSON form the core reads: `type` and the fields."""
        return {"type": self.kind, **super().spec()}


class Part(Checked):
    """Base of a generated part of a description (`Template`, `PollSettings`),
    checked as the core's `part` of that name."""

    #: The part's name for the core ("template", "poll").
    part: ClassVar[str]

    def _check(self, fields_json: str) -> None:
        _core.check_part(self.part, fields_json)
