"""Network-function configurations: what a module runs (the Rust NF is built from these)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


class NF:
    """Base of every NF configuration."""

    def spec(self) -> dict[str, Any]:
        """The JSON form the core reads."""
        raise NotImplementedError

    @property
    def outgates(self) -> int:
        """Number of outgates."""
        return 1


@dataclass(frozen=True)
class Bypass(NF):
    """Burns `cycles_per_batch + cycles_per_packet * b` TSC cycles per batch, then forwards it."""

    cycles_per_batch: int
    cycles_per_packet: int

    def spec(self) -> dict[str, Any]:
        return {"type": "bypass", "cycles_per_batch": self.cycles_per_batch, "cycles_per_packet": self.cycles_per_packet}


@dataclass(frozen=True)
class RandomSplit(NF):
    """Sends each packet to gate i with probability weights[i] / sum(weights)."""

    weights: Sequence[float]
    seed: int = 0

    def spec(self) -> dict[str, Any]:
        return {"type": "random_split", "weights": list(self.weights), "seed": self.seed}

    @property
    def outgates(self) -> int:
        return len(self.weights)
