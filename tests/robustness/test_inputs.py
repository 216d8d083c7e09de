"""Groups 4, 5, 6 and 8 of the robustness issue: output paths are checked
before a run, values that make a run meaningless are refused, flags are
applied or refused, and every mistake is one line with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli_helpers import SLUICE
from sluice import Controller, Pipeline
from sluice.pipelines import rc

pytestmark = pytest.mark.offline

RUN = ["run", "rc", "--n", "4", "--periods", "30", "--period-ms", "100"]


@pytest.mark.parametrize("args", [
    [*RUN, "--json", "/nonexistent-dir/out.json"],
    [*RUN, "--csv", "/nonexistent-dir/out.csv"],
    [*RUN, "--plot", "/nonexistent-dir/out.png"],
    [*RUN, "--json", "."],
    ["experiment", "overhead", "--json", "/nonexistent-dir/o.json"],
    ["profile", "--json", "/nonexistent-dir/p.json"],
])
def test_bad_output_paths_are_refused_before_the_run(sluice, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    out = sluice(*args)
    out.refused()
    assert out.out == "", "refused before running: no table, no progress"


def test_demo_out_naming_a_file_is_refused(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "f").write_text("")
    sluice("demo", "--out", "f").refused("is a file")


@pytest.mark.parametrize("args, words", [
    (["run", "l2l3", "--n", "4", "--rate", "1e30", "--periods", "2"], ["--rate"]),
    (["run", "l2l3", "--n", "4", "--periods", "0"], ["--periods"]),
    (["run", "rc", "--periods", "-1"], ["--periods"]),
    (["run", "rc", "--warmup", "-1"], ["--warmup"]),
    (["run", "rc", "--periods", str(2**64)], ["--periods"]),
    (["profile", "--reps", "0"], ["--reps"]),
    (["profile", "--reps", "-1"], ["--reps"]),
    (["profile", "--max-batch", "0"], ["--max-batch"]),
    (["profile", "--max-batch", "-1"], ["--max-batch"]),
    (["soak", "--seconds", "nan"], ["--seconds"]),
    (["soak", "--seconds", "-1"], ["--seconds"]),
    (["soak", "--period-ms", "0"], ["--period-ms"]),
    (["soak", "--n", "0"], ["--n"]),
    (["soak", "--controller", "magic"], ["--controller"]),
    (["demo", "--n", "0"], ["--n"]),
    (["demo", "--periods", "-1"], ["--periods"]),
    (["experiment", "failover", "--rate", "-1"], ["--rate"]),
    (["experiment", "failover", "--period-ms", "0"], ["--period-ms"]),
    (["experiment", "failover", "--down", "-1"], ["--down"]),
    (["experiment", "embedding", "--time-limit", "-1"], ["--time-limit"]),
    (["trace", "synth", "--out", "t.pcap", "--flows-per-s", "0"], ["--flows-per-s"]),
    (["trace", "synth", "--out", "t.pcap", "--seed", "-1"], ["--seed"]),
    (["train", "polling", "--seed", "-1"], ["--seed"]),
])
def test_meaningless_numbers_are_refused_in_one_line(sluice, args: list[str], words: list[str]) -> None:  # type: ignore[no-untyped-def]
    sluice(*args).refused(*words)


@pytest.mark.parametrize("content, words", [
    ("{not json", ["not JSON"]),
    ("[1, 2]", ["JSON object", "not a list"]),
    ('"a string"', ["JSON object", "not a str"]),
    ('{"modules": "x"}', ["modules", "invalid type"]),
    ('{"modules": null}', ["modules", "invalid type"]),
    ("{}", ["modules"]),
    ('{"modules": [], "schedular": {}}', ["schedular", "did you mean `scheduler`"]),
    ('{"modules": [{"name": "src", "source": {"synthetic": {"streams": [{"rate_pps": NaN}]}}}]}',
     ["modules[0].source.synthetic.streams[0].rate_pps", "nan is not a finite number"]),
])
def test_malformed_descriptions_are_one_line_errors(sluice, tmp_path: Path, content: str, words: list[str]) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "p.json").write_text(content)
    sluice("run", "p.json", "--periods", "1").refused(*words)


def test_a_missing_folder_or_binary_description_is_named(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sluice("run", "/nonexistent/spec.json").refused("/nonexistent/spec.json")
    (tmp_path / "d.json").mkdir()
    sluice("run", "d.json").refused("d.json")
    (tmp_path / "b.json").write_bytes(b"\xff\xfe\x00binary")
    sluice("run", "b.json").refused("b.json", "UTF-8")


def test_core_errors_name_the_field_by_its_path(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = rc(4).spec()
    spec["modules"][3]["worker"] = -1
    (tmp_path / "p.json").write_text(json.dumps(spec))
    sluice("run", "p.json", "--periods", "1").refused("modules[3].worker")


def test_flags_a_description_would_override_are_applied_or_refused(sluice, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "p.json").write_text(rc(4).to_json())
    out = sluice("run", "p.json", "--periods", "1", "--period-ms", "10", "--batch-size", "8", "--backend", "sim", "--json", "r.json")
    assert out.code == 0, out.err
    assert json.loads((tmp_path / "r.json").read_text())["batch_size"] == 8, "--batch-size is applied"
    sluice("run", "p.json", "--burstiness", "4").refused("--burstiness")
    sluice("run", "p.json", "--pcap", "x.pcap").refused("--pcap")


def test_unknown_keys_in_a_python_spec_reach_the_core_and_are_refused() -> None:
    spec = rc(2).spec()
    spec["flowz"] = []
    with pytest.raises(ValueError, match="unknown key `flowz` .did you mean `flows`"):
        Pipeline.from_spec(spec).validate()
    with pytest.raises(ValueError, match="modules"):
        Pipeline.from_spec({}).validate()


def test_backpressure_zero_is_refused() -> None:
    p = rc(2)
    p.scheduler = {"mode": "wfq", "backpressure_pkts": 0}
    with pytest.raises(ValueError, match="scheduler.backpressure_pkts"):
        p.validate()


class Returns(Controller):
    name = "returns"

    def __init__(self, value: object) -> None:
        super().__init__()
        self.value = value

    def step(self, model: dict[str, object], telemetry: dict[str, object]) -> dict[str, object]:
        return self.value  # type: ignore[return-value]


@pytest.mark.parametrize("value, words", [
    ({"trigger": {"rc": 8}}, "unknown key 'trigger' .did you mean 'triggers'"),
    ([1, 2], "not a dict"),
    (None, "None, not a dict"),
    ({"triggers": {"rc": -1}}, "not a count"),
    ({"triggers": {"nowhere": 1}}, "unknown module 'nowhere'"),
])
def test_a_controller_s_return_value_is_checked_every_period(value: object, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        rc(2).run(Returns(value), periods=2, period_ms=5, backend="sim")

