"""Energy where the machine tells it: the package counter RAPL keeps under
`/sys/class/powercap`, read before and after a run. Where it cannot be
read (a VM, another vendor) nothing is estimated and `source` says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The package's RAPL domain (its counter in µJ, wrapping at `max_energy_range_uj`).
RAPL = Path("/sys/class/powercap/intel-rapl:0")


def _read(name: str) -> int | None:
    """The integer in the RAPL domain's file `name`, or None where it cannot be read."""
    try:
        return int((RAPL / name).read_text())
    except (OSError, ValueError):
        return None


def counter_uj() -> int | None:
    """The package's energy counter now (µJ), or None where it cannot be read."""
    return _read("energy_uj")


def used_uj(before: int | None, after: int | None) -> int | None:
    """The energy between two readings of `counter_uj` (µJ, across one wrap), None if either is."""
    if before is None or after is None:
        return None
    wrap = _read("max_energy_range_uj")
    return (after - before) % (wrap + 1 if wrap is not None else 1 << 32)


def source() -> dict[str, Any]:
    """Whether energy is measured and from where, or why not."""
    if counter_uj() is not None:
        return {"readable": True, "source": str(RAPL / "energy_uj")}
    why = "no RAPL domain (a VM, or not an Intel/AMD package)" if not RAPL.exists() else "RAPL's counter is not readable here"
    return {"readable": False, "why": f"{why}: {RAPL}; no joules are estimated"}
