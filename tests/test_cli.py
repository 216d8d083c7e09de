"""The `sluice` command as the issue checks it."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sluice import _core

SLUICE = os.path.join(os.path.dirname(sys.executable), "sluice")


def sluice(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SLUICE, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_rc16_max_rebuilds_batches_that_pay_off(tmp_path: Path) -> None:
    reports = {}
    for controller in ("null", "max"):
        out = sluice(
            "run", "rc", "--n", "16", "--controller", controller, "--backend", "engine",
            "--periods", "10", "--json", f"{controller}.json", cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr
        reports[controller] = json.loads((tmp_path / f"{controller}.json").read_text())
    for r in reports.values():
        s = r["summary"]
        assert s["generated"] == s["delivered"] + s["dropped"] + s["in_flight"]
    # Max rebuilds the batches Null leaves split 16 ways (what it pays off in
    # rate is `sluice experiment static`'s figure, not a check here).
    null, mx = reports["null"]["summary"], reports["max"]["summary"]
    assert mx["mean_batch"] >= 28 and null["mean_batch"] < 8, (mx["mean_batch"], null["mean_batch"])


def test_run_writes_csv_and_plot_and_names_errors(tmp_path: Path) -> None:
    out = sluice("run", "rc", "--n", "2", "--backend", "sim", "--periods", "2", "--period-ms", "10",
                 "--csv", "r.csv", "--plot", "r.png", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "r.csv").read_text().startswith("period,")
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    bad = sluice("run", "rc", "--batch-size", "0", "--periods", "1", cwd=tmp_path)
    assert bad.returncode == 2 and "'--batch-size': 0 is not in the range 1<=x<=256" in bad.stderr
    unknown = sluice("run", "nope", cwd=tmp_path)
    assert unknown.returncode != 0 and "unknown pipeline 'nope'" in unknown.stderr
    wide = sluice("run", "rc", "--controller", "projgrad", "--delta", "0.5", "--periods", "1", cwd=tmp_path)
    assert wide.returncode == 2 and "'--delta': 0.5 is not in the range 0<=x<0.5" in wide.stderr
    full = sluice("run", "rc", "--n", "2", "--backend", "sim", "--periods", "1", "--period-ms", "10",
                  "--json", "r.json", "--csv", "/dev/full", cwd=tmp_path)
    assert full.returncode == 2 and "could not write --csv '/dev/full': [Errno 28]" in full.stderr, full.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["delivered"] > 0, "the JSON that could be written was"
    missing = sluice("run", "rc", "--n", "2", "--backend", "sim", "--periods", "1", "--period-ms", "10",
                     "--json", "m.json", "--csv", "/nonexistent/x.csv", cwd=tmp_path)
    assert "warning: --csv '/nonexistent/x.csv': folder '/nonexistent' does not exist" in missing.stderr, missing.stderr
    assert missing.returncode == 2 and "could not write --csv '/nonexistent/x.csv'" in missing.stderr, missing.stderr
    assert json.loads((tmp_path / "m.json").read_text())["summary"]["delivered"] > 0, "the JSON beside a bad path was written"


def test_run_takes_a_json_description(tmp_path: Path) -> None:
    from sluice.pipelines import rc

    (tmp_path / "p.json").write_text(rc(2).to_json())
    out = sluice("run", "p.json", "--backend", "sim", "--periods", "1", "--period-ms", "10", "--json", "o.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "o.json").read_text())["pipeline"] == "rc(2)"


def test_embed_places_a_pipeline_on_cores_and_the_placed_description_runs(tmp_path: Path) -> None:
    out = sluice("embed", "mgw", "--bearers", "2", "--users", "2", "--cores", "2", "--ha", "dl_b0_u0", "--out", "placed.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "crossings between cores" in out.stdout, out.stdout
    spec = json.loads((tmp_path / "placed.json").read_text())
    worker = {m["name"]: m.get("worker") for m in spec["modules"]}
    flow = next(f for f in spec["flows"] if f["name"] == "dl_b0_u0")
    nfs = [m for m in flow["path"] if f"{m}~1" in worker]
    assert nfs and {worker[m] for m in nfs}.isdisjoint(worker[f"{m}~1"] for m in nfs), "the HA flow's copy runs on other cores"
    assert set(worker.values()) <= {0, 1, 2} and worker["src~ha"] == 0, "NFs on workers 1..2, sources on worker 0"
    run = sluice("run", "placed.json", "--backend", "sim", "--periods", "2", "--period-ms", "10", "--json", "r.json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["lossless"]
    # The worker of the copies fails for two periods: the HA flow loses nothing, and the report says why packets were dropped.
    down = worker[f"{nfs[0]}~1"]
    run = sluice("run", "placed.json", "--backend", "sim", "--periods", "5", "--period-ms", "10", "--outage", f"{down}:2-4", "--json", "r.json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    totals = json.loads((tmp_path / "r.json").read_text())["flow_totals"]["dl_b0_u0"]
    assert totals["generated"] == totals["delivered"] and totals["dropped"] > 0, totals
    assert "at a down worker" in run.stdout and "lost packets: none" in run.stdout.replace("\n", " "), run.stdout
    bad = sluice("run", "placed.json", "--outage", "1-3", cwd=tmp_path)
    assert bad.returncode == 2 and "'--outage': takes W:FROM-UNTIL" in bad.stderr, bad.stderr
    for args, says in ((["--ha", "nope"], "--ha: HA flow 'nope' is not a flow"), (["--rate", "1e9"], "more than a core's capacity 1000 (its load at --rate 1e+09"),
                       (["--ha", "dl_b0_u0", "--k", "2"], "on 3 disjoint sets of cores (itself and 2 copies), but there are 2 core(s)"),
                       (["--method", "ilp-sum", "--time-limit", "0.001"], "no placement on 2 core(s) within --time-limit 0.001 s")):
        bad = sluice("embed", "mgw", "--cores", "2", *args, cwd=tmp_path)
        assert bad.returncode == 2 and says in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


def test_demo_prints_the_comparison_and_writes_a_plot(tmp_path: Path) -> None:
    out = sluice("demo", "--n", "4", "--periods", "2", "--period-ms", "20", "--out", "o", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "null" in out.stdout and "max" in out.stdout and "lossless" in out.stdout
    assert (tmp_path / "o" / "demo.png").exists()
    assert (tmp_path / "o" / "demo-max.json").exists()


def test_profile_writes_the_report_and_the_profile_pipelines_use(tmp_path: Path) -> None:
    import os

    out = sluice("profile", "--nf", "lpm", "--nf", "bypass", "--max-batch", "8", "--reps", "20", "--json", "p.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "p.json").read_text())
    assert set(report["nfs"]) == {"lpm", "bypass"}
    assert {"t0_ns", "t1_ns", "r2", "beta"} <= set(report["nfs"]["lpm"])
    assert report["nfs"]["bypass"]["beta"] <= 0.05, "Bypass(1000, 0) costs per batch only"
    saved = json.loads(open(os.environ["SLUICE_PROFILE"]).read())
    assert saved["nfs"]["lpm"] == report["nfs"]["lpm"]
    bad = sluice("profile", "--nf", "warp_drive", cwd=tmp_path)
    assert bad.returncode != 0 and "profiler: no setup for NF 'warp_drive'" in bad.stderr and "pipeline description" not in bad.stderr
    (tmp_path / "a-file").write_text("")
    nowhere = subprocess.run([SLUICE, "profile", "--nf", "lpm"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             env={**os.environ, "SLUICE_PROFILE": str(tmp_path / "a-file" / "profile.json")})
    assert nowhere.returncode == 2 and "the profile's folder" in nowhere.stderr and "NF cost models" not in nowhere.stdout, nowhere.stderr


def test_static_counts_override_the_quick_ones_one_by_one() -> None:
    from sluice.lab.static import Settings

    assert Settings.make(True, "sim", periods=3) == Settings(8, 3, 100.0, "sim", 4)
    assert Settings.make(False, "engine", warmup=2, period_ms=10.0, rounds=2) == Settings(2, 200, 10.0, "engine", 2)
    assert Settings.make(False, "engine", slo_statistic="mean", keep_disturbed=True) == Settings(100, 200, 100.0, "engine", 1, "mean", True)


def test_run_takes_a_poll_policy_per_worker_and_names_a_bad_one(tmp_path: Path) -> None:
    ok = sluice("run", "rc", "--n", "2", "--backend", "engine", "--periods", "2", "--period-ms", "20",
                "--worker-poll", "0=empty-poll", "--json", "r.json", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["lossless"]
    bad = sluice("run", "rc", "--n", "2", "--worker-poll", "0=snooze", cwd=tmp_path)
    assert bad.returncode == 2 and "'--worker-poll': '0=snooze': give W=POLICY" in bad.stderr, bad.stderr


@pytest.mark.parametrize("port, words", [
    ("netmap:x", ["port 'netmap:x'", "unknown backend 'netmap'"]),
    ("af_packet:nosuch0", ["port 'af_packet:nosuch0'", "no interface named 'nosuch0'"]),
    ("af_xdp:lo@7", ["port 'af_xdp:lo@7'", "no queue 7"]),
    ("af_xdp:lo@x", ["port 'af_xdp:lo@x'", "queue 'x' is not a number"]),
    ("dpdk:net_bogus0", ["port 'dpdk:net_bogus0'", "no DPDK device 'net_bogus0'"]),
])
def test_a_bad_port_is_refused_in_one_error_line_that_names_it(tmp_path: Path, port: str, words: list[str]) -> None:
    backend = port.split(":")[0]
    if backend in ("af_xdp", "dpdk") and backend not in _core.port_backends():
        pytest.skip(f"built without {backend}")
    if backend != "netmap" and os.geteuid() != 0:
        pytest.skip("opening a port needs root")
    out = sluice("run", "l2l3", "--n", "4", "--periods", "2", "--rx", port, cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and all(w in errors[0] for w in words), out.stderr


def test_run_through_a_scheduled_egress_that_makes_sources_wait_drops_nothing(tmp_path: Path) -> None:
    # As below, but a full class holds gw's one source back: nothing dropped, everything made delivered.
    out = sluice("run", "gw", "--n", "8", "--periods", "6", "--period-ms", "50", "--rate", "100000", "--egress-sched", "drr",
                 "--link-rate", "268.8Mbit", "--weights", "tight=3,bulk=1", "--class", "tight=flow0,flow1,flow2,flow3",
                 "--class", "bulk=flow4*,flow5,flow6,flow7", "--egress-wait", "--backend", "sim", "--json", "g.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    s = json.loads((tmp_path / "g.json").read_text())["summary"]
    assert s["dropped"] == 0 and s["generated"] == s["delivered"] and s["generated"] > 50_000, s


def test_run_through_a_scheduled_egress_shares_the_link_by_class_weight(tmp_path: Path) -> None:
    # gw(8) offers 8 × 100 kpps of 60-byte packets; the link carries 400 kpps (84 bytes each on the wire).
    # On the simulator: the engine offers 800 kpps only where the machine has the cycles for it.
    out = sluice("run", "gw", "--n", "8", "--periods", "6", "--period-ms", "50", "--rate", "100000", "--egress-sched", "drr",
                 "--link-rate", "268.8Mbit", "--weights", "tight=3,bulk=1", "--class", "tight=flow0,flow1,flow2,flow3",
                 "--class", "bulk=flow4*,flow5,flow6,flow7", "--backend", "sim", "--json", "g.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "scheduled egress, by class" in out.stdout
    r = json.loads((tmp_path / "g.json").read_text())
    totals = r["flow_totals"]
    tight = sum(totals[f"flow{i}"]["delivered"] for i in range(4))
    bulk = sum(totals[f"flow{i}"]["delivered"] for i in range(4, 8))
    assert abs(tight / (tight + bulk) - 0.75) < 0.05 * 0.75, (tight, bulk)
    s = r["summary"]
    assert s["accounted"] and s["generated"] == s["delivered"] + s["dropped"] + s["in_flight"], s
    # What the link had no room for was dropped at the egress, and is said to be.
    assert s["dropped"] == s["drops"]["egress_full"] > 0, s
    assert "at full egresses" in out.stdout and "by NFs" not in out.stdout, out.stdout
    # Each period says what each class carried: its flows' sums.
    for p in r["periods"]:
        per_class = p["classes"]
        assert set(per_class) == {"tight", "bulk"}
        assert per_class["tight"]["delivered"] == sum(p["flows"][f"flow{i}"]["delivered"] for i in range(4)), p
    for flags, expect in ((("--egress-sched", "drr"), "needs --egress-sched, --link-rate, --weights"),
                          (("--egress-sched", "drr", "--link-rate", "fast", "--weights", "a=1", "--class", "a=flow*"), "'--link-rate': fast: a rate in bit/s"),
                          (("--egress-sched", "drr", "--link-rate", "1Gbit", "--weights", "a=1", "--class", "b=flow*"), "no such class"),
                          (("--egress-sched", "drr", "--link-rate", "1Gbit", "--weights", "a=1", "--class", "a=flow0"), "flow 'flow1' is in no class")):
        bad = sluice("run", "gw", "--n", "2", "--periods", "1", *flags, cwd=tmp_path)
        assert bad.returncode != 0 and expect in bad.stderr, bad.stderr


def test_run_offers_per_flow_rates(tmp_path: Path) -> None:
    out = sluice("run", "l2l3", "--n", "2", "--periods", "2", "--backend", "sim", "--rate", "1e5", "--flow-rate", "flow0=3e5", "--json", "r.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    flows = json.loads((tmp_path / "r.json").read_text())["periods"][-1]["flows"]
    assert round(flows["flow0"]["rate_pps"], -3) == 300_000 and round(flows["flow1"]["rate_pps"], -3) == 100_000
    for bad, why in ((["--flow-rate", "ghost=5"], "no flow 'ghost'"), (["--flow-rate", "flow0"], "takes FLOW=PPS"), (["--rate", "-1"], "-1.0 is not in the range 0<x")):
        out = sluice("run", "l2l3", "--n", "2", "--periods", "1", *bad, cwd=tmp_path)
        assert out.returncode != 0 and why in out.stderr, out.stderr


def test_published_rows_keep_labels_with_commas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference CSVs write VRF(1,1) unquoted; its row still reads as VRF(1,1)."""
    from sluice.lab.static import published

    (tmp_path / "batchy_table2.csv").write_text("pipeline,modules,mpps_null\nVRF(12,8),509,1.5\nRC(16),25,0.43\n")
    monkeypatch.setenv("SLUICE_REFERENCE", str(tmp_path))
    assert published() == {"VRF(12,8)": {"pipeline": "VRF(12,8)", "modules": "509", "mpps_null": "1.5"},
                           "RC(16)": {"pipeline": "RC(16)", "modules": "25", "mpps_null": "0.43"}}


def test_trace_analyze_reports_the_locality_of_a_capture(tmp_path: Path) -> None:
    """A capture of two flows in runs of three: SLF 3 at every batch size
    that is a multiple of the run, the report keys the issue names."""
    import struct

    frame = bytearray(bytes.fromhex("0200000000fe020000000001080045000020000000004011000a00000114000101"
                                    "0400080000" + "0c0000") + bytes(4))
    records = []
    for i in range(96):
        frame[34:36] = struct.pack("!H", 1024 + (i // 3) % 2)
        records.append(struct.pack("<IIII", 0, i * 1000, len(frame), len(frame)) + bytes(frame))
    (tmp_path / "t.pcap").write_bytes(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1) + b"".join(records))
    out = sluice("trace", "analyze", "t.pcap", "--json", "a.json", "--plot", "a.png", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    a = json.loads((tmp_path / "a.json").read_text())
    assert (a["packets"], a["flows"]) == (96, 2)
    assert a["slf"]["32"] == pytest.approx(96 / 34)  # 32 runs, two of them cut by the batch boundaries at 32 and 64
    assert a["slf"]["1024"] == 3.0 and a["packets_per_s"] > 0
    assert (tmp_path / "a.png").stat().st_size > 0
    bad = sluice("trace", "analyze", "missing.pcap", cwd=tmp_path)
    assert bad.returncode != 0 and "missing.pcap" in bad.stderr


def test_trace_synth_writes_a_trace_analyze_finds_real_locality_in(tmp_path: Path) -> None:
    out = sluice("trace", "synth", "--packets", "100000", "--segments", "1", "--out", "s.pcap", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "100000 packets" in out.stdout
    assert sluice("trace", "analyze", "s.pcap", "--json", "a.json", "--flows", "f.parquet", cwd=tmp_path).returncode == 0
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["packets"] == 100000 and 1.1 <= a["slf"]["32"] <= 1.4, a["slf"]
    table = (tmp_path / "f.parquet").read_bytes()
    assert table[:4] == table[-4:] == b"PAR1"
    bad = sluice("trace", "synth", "--segments", "0", "--out", "s.pcap", cwd=tmp_path)
    assert bad.returncode != 0 and "segments" in bad.stderr


def test_trace_synth_writes_ipv6_flows_the_analyzer_and_a_dual_stack_replay_take(tmp_path: Path) -> None:
    out = sluice("trace", "synth", "--packets", "20000", "--ipv6-share", "0.5", "--out", "d.pcap", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert sluice("trace", "analyze", "d.pcap", "--json", "a.json", cwd=tmp_path).returncode == 0
    a = json.loads((tmp_path / "a.json").read_text())
    assert a["packets"] == 20000 and a["not_ip"] == 0, a
    run = sluice("run", "l2l3-dual", "--n", "2", "--pcap", "d.pcap", "--backend", "sim", "--periods", "1", "--period-ms", "5", "--json", "r.json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    s = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert s["accounted"] and s["delivered"] > 0, s


def test_a_long_runs_progress_line_gives_the_last_periods_figures_and_the_losses_so_far() -> None:
    from sluice.cli.output import _period_line

    flow = {"delivered": 10, "p95_us": 12.5}
    period = {"rate_pps": 2.5e6, "mean_batch": 7.25,
              "flows": {"a": flow, "b": {**flow, "p95_us": 40.0}, "idle": {"delivered": 0, "p95_us": 0.0}},
              "totals": {"drops": {"nf": 1500, "egress_full": 1_250_000, "duplicates": 99}}}
    # The worst p95 of the flows that delivered; HA copies removed by design are not lost.
    assert _period_line(period) == "2.5 Mpps · batch 7.2 · p95 ≤ 40 µs · lost 1.25M"
    period["totals"]["drops"] = {"nf": 0, "duplicates": 99}
    assert _period_line(period).endswith("lost 0")


def test_every_experiment_refuses_where_it_could_not_write_before_it_runs_any(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    for flags, said in ((("--out", "a-file"), "--out 'a-file' is a file"), (("--runs", "a-file"), "--runs 'a-file' is a file"),
                        (("--readme", "missing.md"), "'missing.md' does not exist")):
        out = sluice("experiment", "all", "--quick", *flags, cwd=tmp_path)
        assert out.returncode == 2 and said in out.stderr and "Traceback" not in out.stderr, out.stderr
        assert not (tmp_path / "out").exists(), "no experiment ran"


def test_a_large_pipeline_says_how_long_it_takes_and_shows_each_step(tmp_path: Path) -> None:
    """Its build, checks and start take seconds a few thousand modules up:
    it says so first and shows each period as it ends, on a terminal or not."""
    out = sluice("run", "rc", "--n", "3000", "--backend", "sim", "--periods", "2", "--period-ms", "1", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert re.search(r"rc\(3000\): 6002 modules and 3000 flows: about \d+ s to check and start", out.stderr), out.stderr
    assert [line.split(":")[0] for line in out.stderr.splitlines() if line.startswith("period ") and " of " in line] == [f"period {i} of 3" for i in (1, 2, 3)]


def test_serve_takes_the_router_s_flags_for_the_router_alone(tmp_path: Path) -> None:
    done = sluice("serve", "rc", "--no-icmp-errors", "--run-dir", str(tmp_path / "run"), cwd=tmp_path)
    assert done.returncode == 2 and "--interface, --route and --no-icmp-errors make the router: give `router`" in done.stderr, done.stderr


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores it may run on")
def test_two_runs_at_once_take_different_cores(tmp_path: Path) -> None:
    runs = [subprocess.Popen([SLUICE, "run", "rc", "--n", "4", "--periods", "40", "--period-ms", "100"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    time.sleep(2.5)
    cores = []
    for p in runs:
        for task in Path(f"/proc/{p.pid}/task").iterdir():
            if (task / "comm").read_text().strip() == "sluice-worker-0":
                status = (task / "status").read_text()
                cores.append(next(line.split()[-1] for line in status.splitlines() if line.startswith("Cpus_allowed_list")))
    for p in runs:
        p.terminate()
        p.communicate(timeout=30)
    assert len(cores) == 2 and cores[0] != cores[1], cores


def test_every_command_of_the_cli_modules_is_found_by_its_name() -> None:
    # The group imports a command's module only when the command is asked
    # for: a command its module map lacks could never be run.
    import sluice.cli
    from sluice.cli.app import COMMAND_MODULES, main

    for module in pkgutil.iter_modules(sluice.cli.__path__):
        importlib.import_module(f"sluice.cli.{module.name}")
    assert sorted(main.commands) == sorted(COMMAND_MODULES)
    for name, module_name in COMMAND_MODULES.items():
        assert main.commands[name].callback.__module__ == f"sluice.cli.{module_name}", name
