"""Group 9 of the robustness issue: memory does not grow with the length
of a run. A soak samples the resident memory every period and fits a line
through the second half of them. The Rust side is flat to the page; the
Python side settles over the first minute or two (rich's progress keeps
its last 1000 samples, the allocators fill their arenas), so a 12-second
run still sees a slope of 100-300 KiB/min that a 3-minute run does not
(13 KiB/min). Before, every period's data was kept: 15 MiB/min at 20 ms
periods. (`sluice soak --seconds 1800` is the 30-minute check.)"""

from __future__ import annotations

import json
from pathlib import Path


def test_resident_memory_stays_flat_over_a_soak(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = sluice("soak", "--n", "16", "--seconds", "12", "--period-ms", "20", "--json", "soak.json")
    assert out.code == 0, out.err
    report = json.loads((tmp_path / "soak.json").read_text())
    assert abs(report["rss_slope_kib_per_min"]) < 1024, report
    assert report["rss_at_end"] - report["rss_after_warmup"] < 4 * 2**20, report
    assert report["summary"]["lossless"]
