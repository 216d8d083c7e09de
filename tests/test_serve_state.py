"""The description in force survives a restart: `sluice serve --state
FILE` writes it after every change, and served again from FILE the
router answers `GET /v1/pipeline` byte for byte as before and forwards
as it was left (a flow added live delivers again)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sluice import Pipeline
from test_serve import SLUICE, Served, until
from test_serve_flows import B, capture, flow, router


def test_a_restart_from_the_state_file_serves_the_description_in_force(tmp_path: Path) -> None:
    capture(tmp_path / "trace.pcap")
    state = tmp_path / "state" / "router.json"
    (tmp_path / "first").mkdir()
    first = Served(tmp_path / "first", "--state", str(state), pipeline=router(tmp_path / "trace.pcap"))
    try:
        c = first.client
        assert json.loads(state.read_text()) == c.pipeline(), "written at the start"
        c.add_flow("tuple", ["src", "type_check", "mac_split", "lpm", "ttl1", "mac_rewrite1", "checksum1", "out1"], slo_us=800, rules=[{"source": "src", "five_tuple": {"src": "10.0.0.7", "dst": f"{B}.9", "proto": "udp", "sport": 4242, "dport": 53}}])
        c.set_slo("flow0", 1500)
        c.remove_flow("flow1")
        c.routes("lpm", add=[("20.0.9.0/24", 1)])
        c.set_rate("src", 50_000)
        c.set_controller("projgrad")
        c.set_poll(0, "vpp-adaptive")
        in_force = c.request_raw("GET", "/v1/pipeline")[1]
        saved = tmp_path / "saved.json"
        done = subprocess.run([SLUICE, "ctl", "--run-dir", str(first.run_dir), "save", str(saved)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        code, log, _ = first.stop()
        assert code == 0, log
    finally:
        first.close()
    shown = json.loads(in_force)
    assert json.loads(state.read_text()) == shown == json.loads(saved.read_text())
    described = shown["description"]
    assert shown["controller"] == "projgrad"
    assert [f["name"] for f in described["flows"]] == ["flow0", "tuple"]
    assert next(f for f in described["flows"] if f["name"] == "flow0")["slo_us"] == 1500
    source = next(m for m in described["modules"] if m["name"] == "src")["source"]["pcap"]
    assert source["rate_pps"] == 50_000 and [r["flow"] for r in source["flows"]] == ["flow0", "tuple"], source
    assert ["20.0.9.0/24", 1] in next(m for m in described["modules"] if m["name"] == "lpm")["nf"]["routes"]
    assert described["worker_poll"] == {"0": {**described["poll"], "policy": "vpp-adaptive"}}
    Pipeline.from_spec(described).validate()

    # Served again, from another description: the state file's wins.
    (tmp_path / "again").mkdir()
    again = Served(tmp_path / "again", "--state", str(state))
    try:
        assert again.client.request_raw("GET", "/v1/pipeline")[1] == in_force
        until(lambda: flow(again, "tuple")["delivered"] > 0, "the flow added live forwards after the restart")
        code, log, report = again.stop()
        assert code == 0, log
        assert report["controller"] == "projgrad"
    finally:
        again.close()


def test_a_state_file_that_is_not_a_saved_state_is_refused_by_name(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    for text, words in [("{", "not JSON"), ('{"description": {}}', "not a saved state"),
                        ('{"description": {}, "controller": "nope"}', "unknown controller 'nope'")]:
        state.write_text(text)
        state.chmod(0o600)
        done = subprocess.run([SLUICE, "serve", "rc", "--run-dir", str(tmp_path / "run"), "--state", str(state)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr, (text, done.stderr)
    state.chmod(0o666)
    done = subprocess.run([SLUICE, "serve", "rc", "--run-dir", str(tmp_path / "run"), "--state", str(state)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "writable by others" in done.stderr, done.stderr
