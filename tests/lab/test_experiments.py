"""The lab's experiments, each at its CI size (`--quick`): each runs and writes the report its
section of docs/RESULTS.md documents. `make lab-check` runs them (about four minutes here); `make
test` leaves them out, since they check the lab, not the product."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sluice import _core

SLUICE = os.path.join(os.path.dirname(sys.executable), "sluice")

needs_namespace = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None,
                                     reason="needs root, unshare and ip to make a network namespace")


def sluice(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SLUICE, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_experiment_static_writes_the_documented_report(tmp_path: Path) -> None:
    out = sluice("experiment", "static", "--quick", "--only", "rc16", "--backend", "sim", "--out", "o", "--json", "s.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "s.json").read_text())
    assert (report["settings"]["warmup"], report["settings"]["periods"], report["settings"]["rounds"]) == (8, 5, 4)
    (row,) = report["rows"]
    assert row["pipeline"] == "RC(16)" and row["modules"] == 34
    for c in ("null", "max", "nfvnice", "onoff", "projgrad"):
        assert {f"batch_{c}", f"mpps_{c}", f"viol_{c}_pct"} <= set(row)
    assert row["mpps_projgrad"] >= 5 * row["mpps_null"]
    assert row["viol_projgrad_pct"] <= 5
    for name in ("static.json", "static.csv", "static.md", "static.png"):
        assert (tmp_path / "o" / name).exists()
    protocol = (tmp_path / "o" / "static.md").read_text()
    assert "Deviations: one SLO per pipeline" in protocol and "; 8 warm-up + 5 measured periods (paper: 100 + 200)" in protocol
    trace_row = sluice("experiment", "static", "--only", "l2l3-pcap-16", "--backend", "sim", "--warmup", "1", "--periods", "1",
                       "--period-ms", "5", "--out", "t", "--json", "t.json", cwd=tmp_path)
    assert trace_row.returncode == 0, trace_row.stderr
    report = json.loads((tmp_path / "t.json").read_text())
    assert [r["pipeline"] for r in report["rows"]] == ["*L2L3(16)"] and report["trace"]["source"].startswith("`sluice trace synth`")
    assert "*L2L3 rows: `sluice trace synth` (one segment, seed 1) (1000000 packets" in (tmp_path / "t" / "static.md").read_text()
    bad = sluice("experiment", "static", "--only", "warp-9", cwd=tmp_path)
    assert bad.returncode != 0 and "unknown rows ['warp-9']" in bad.stderr
    bad = sluice("experiment", "static", "--quick", "--periods", "0", cwd=tmp_path)
    assert bad.returncode != 0 and "'--periods'" in bad.stderr and "0 is not in the range 1<=x<=" in bad.stderr


def test_experiment_overhead_reports_response_times(tmp_path: Path) -> None:
    out = sluice("experiment", "overhead", "--quick", "--backend", "sim", "--out", "o", "--json", "o.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads((tmp_path / "o.json").read_text())["rows"]
    assert [r["branching"] for r in rows] == [1, 2, 4, 8, 16, 32, 64]
    for r in rows:
        assert {"branching", "response_ms", "stats_pct", "gradient_pct", "control_pct"} <= set(r)
        assert r["response_ms"] > 0
        assert abs(r["stats_pct"] + r["gradient_pct"] + r["control_pct"] - 100) < 0.5


def test_experiment_ecmp_keeps_every_flow_on_one_path_and_moves_only_the_removed_path_s(tmp_path: Path) -> None:
    out = sluice("experiment", "ecmp", "--quick", "--out", "o", "--json", "e.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads((tmp_path / "e.json").read_text())["rows"]
    assert {(r["weights"], r["family"]) for r in rows} == {(w, f) for w in ("1:1:1:1", "1:2:3:4") for f in ("ipv4", "ipv6")}
    for r in rows:
        assert r["split_flows"] == 0 and r["moved_from_others"] == 0 and r["moved"] == r["removed_share"], r
        assert abs(sum(r["shares"]) - 1) < 1e-3, r
    assert "| 1:2:3:4 | ipv6 |" in out.stdout and (tmp_path / "o" / "ecmp.png").exists()


def test_experiment_twfi_keeps_each_bounded_algorithm_within_its_bound(tmp_path: Path) -> None:
    out = sluice("experiment", "twfi", "--quick", "--out", "o", "--json", "t.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads((tmp_path / "t.json").read_text())["rows"]
    assert {(r["algorithm"], r["clients"], r["scan_lb"]) for r in rows} == {(a, c, s) for a in ("drr", "wf2q+", "qfq", "fifo") for c in (5, 25, 100) for s in (0.0, 2.0)}
    for r in rows:
        assert r["bound_lb"] is None or r["twfi_lb"] <= r["bound_lb"], r
    bounds = {(r["algorithm"], r["clients"]): r["bound_lb"] for r in rows if r["scan_lb"] == 0.0}
    # The paper's eq. (3) at its example's weights; QFQ's eq. (2) with a 2048-byte budget.
    assert bounds[("drr", 25)] == 226 and bounds[("drr", 100)] == 301 and bounds[("qfq", 25)] == 16.38
    assert bounds[("wf2q+", 25)] is None and bounds[("fifo", 25)] is None
    assert "| 25 | qfq |" in out.stdout and (tmp_path / "o" / "twfi.png").exists()


def test_experiment_pspat_writes_the_documented_report(tmp_path: Path) -> None:
    out = sluice("experiment", "pspat", "--quick", "--repeats", "1", "--out", "o", "--json", "p.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    r = json.loads((tmp_path / "p.json").read_text())
    assert r["arbiter_mdps"] > 0
    assert [t["clients"] for t in r["throughput"]] == [1, 2, 4, 8]
    assert all({"clients", "pspat_mpps", "mutex_mpps", "none_mpps"} <= set(t) and t["pspat_mpps"] > 0 for t in r["throughput"])
    expected = {(a, o) for a in ("pspat", "mutex") for o in (0.25, 0.5, 1.0, 1.5, 2.0)}
    if os.geteuid() == 0 and all(shutil.which(t) for t in ("unshare", "ip", "tc")):
        expected |= {("htb", o) for o in (0.0625, 0.125, 0.25, 0.5, 1.0, 2.0)}
        # Far below what its senders push through the veth, Linux HTB keeps the 10:1 share in the median window.
        assert all(s["median_share_error_pct"] < 5 for s in r["share"] if s["scheduler"] == "htb" and s["overload"] <= 0.0625), r["share"]
        # Real frames on a veth: one and two clients through the scheduled egress, Linux TC and nothing, each putting frames out.
        assert [t["clients"] for t in r["throughput_frames"]] == [1, 2]
        assert all(t[f"{a}_fewest_frames"] > 0 for t in r["throughput_frames"] for a in ("pspat", "tc", "none")), r["throughput_frames"]
    assert {(s["scheduler"], s["overload"]) for s in r["share"]} == expected
    assert all({"scheduler", "overload", "max_share_error_pct", "windows_held", "windows"} <= set(s) for s in r["share"])
    # Each row says its runs (one in quick mode) and the scheduler's headroom over the link's rate.
    assert all(sum(s["held_per_run"]) == s["windows_held"] and s["headroom"] > 0 for s in r["share"])
    assert all(s["headroom"] > 1 for s in r["share"] if s["scheduler"] == "mutex" and s["overload"] < 1)
    # Below what the mutex sustains the link is not overloaded for PSPAT either: the median window holds 10:1.
    assert all(s["median_share_error_pct"] < 5 for s in r["share"] if s["scheduler"] == "pspat" and s["overload"] <= 0.5)
    assert all({"scheduler", "interferers", "p99_us", "p99_alone_us"} <= set(v) and v["p99_us"] > 0 for v in r["victim"])
    # The p99's ratio to alone over the runs, and the runs a stall touched named (by number).
    assert all(v["runs"] == 1 and v["p99_ratio_min"] <= v["p99_ratio"] <= v["p99_ratio_max"] for v in r["victim"])
    assert all(set(v["stalled_runs"]) <= {1} if v["scheduler"] == "pspat" else v["stalled_runs"] is None for v in r["victim"])
    assert all(f"over {v['runs']} runs" in row["metric"] for v, row in zip(r["victim"], [x for x in r["rows"] if x["test"] == "victim"]))
    assert all(p["predicted_mdps"] > 0 for p in r["cost_model"]["predicted"])
    assert (tmp_path / "o" / "pspat.png").read_bytes()[:4] == b"\x89PNG"


def test_experiment_polling_writes_the_documented_report(tmp_path: Path) -> None:
    out = sluice("experiment", "polling", "--quick", "--out", "o", "--json", "p.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    r = json.loads((tmp_path / "p.json").read_text())
    keys = {"policy", "load", "cpu_pct", "asleep_pct", "mpps", "mean_batch", "loss_pct", "mean_us", "p99_us", "slo_viol_pct"}
    assert all(keys <= set(row) for row in r["rows"]), r["rows"][0]
    assert all("needed_pct" in row for row in r["rows"] if row["input"] == "emulated")
    policies = {"busy", "empty-poll", "slo-aware", "slo-batching", "vpp-adaptive", "metronome", "learned"}
    assert {row["policy"] for row in r["rows"]} == policies == set(r["decision_ns"])
    idle = {row["policy"]: row for row in r["rows"] if row["load"] == 0 and row["input"] == "emulated"}
    # With no traffic a busy worker never sleeps and the sleeping ones do (what they decide; how
    # much of each period the machine then lets them sleep is the experiment's figure).
    sleepers = ("slo-aware", "slo-batching", "vpp-adaptive", "learned")
    assert idle["busy"]["asleep_pct"] == 0 and all(idle[p]["asleep_pct"] > 0 for p in sleepers), idle
    # At light load nothing is lost at the receive queues, whatever the policy. (Not checked at half
    # load: a 4096-packet queue holds under a millisecond there, this VM stalls a worker that long now
    # and then, busy polling or not, and its speed moves by more than the margin within one run.)
    light = [row for row in r["rows"] if 0 < row["load"] <= 0.1 and row["input"] == "emulated"]
    assert light and all(row["loss_pct"] == 0 for row in light), light
    port = [row for row in r["rows"] if row["input"] in ("af_packet", "af_xdp")]
    if os.geteuid() == 0 and shutil.which("unshare"):
        # On a veth pair too: what the sender sent at light load arrived, and an idle worker that may sleep sleeps.
        assert port and all(row["loss_pct"] <= 1 for row in port if row["load"] <= 0.1), port
        assert all(row["asleep_pct"] > 0 for row in port if row["load"] == 0 and row["policy"] in sleepers), port
    assert {"p50", "p99"} <= set(r["sleep_error_us"]) and all(ns > 0 for ns in r["decision_ns"].values())
    # Energy is measured where RAPL can be read (the report names the counter), and where it cannot
    # the report says why and no row carries an estimate.
    emulated = [row for row in r["rows"] if row["input"] == "emulated"]
    if r["energy"]["readable"]:
        assert r["energy"]["source"].endswith("energy_uj")
    else:
        assert "RAPL" in r["energy"]["why"] and all(row["uj_per_pkt"] is None for row in emulated)
    assert set(r["figure1"]["rounds"]) == {"busy", "slo-batching", "learned"} and all(r["figure1"]["rounds"].values())
    # Under load, the batching policies beside busy polling in the same runs, each with its target.
    assert {(u["policy"], u["load"]) for u in r["under_load"]} == {(p, load) for p in ("busy", "slo-batching", "learned") for load in (0.25, 0.5, 0.75, 1.2)}
    assert all(u["target_cpu_pct"] == round(1.15 * u["needed_pct"] + 5, 1) and u["of_busy"] > 0 for u in r["under_load"])
    # Held out from the training: bursty arrivals and a tight SLO, each policy beside busy polling.
    assert {(h["pattern"], h["policy"]) for h in r["held_out"]} == {(t, p) for t in ("bursty", "tight SLO") for p in ("busy", "slo-batching", "learned")}
    assert all(h["of_busy"] > 0 and h["mean_batch"] >= 1 for h in r["held_out"]) and "Held out" in (tmp_path / "o" / "polling.md").read_text()
    for png in ("polling", "polling-steps", "polling-rounds"):
        assert (tmp_path / "o" / f"{png}.png").read_bytes()[:4] == b"\x89PNG"


def test_train_polling_writes_a_model_the_engine_reads_and_the_training_report(tmp_path: Path) -> None:
    # Where a fresh checkout has no out/ yet: the defaults make it.
    out = sluice("train", "polling", "--iterations", "2", "--quick", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    r = json.loads((tmp_path / "out" / "polling-training.json").read_text())
    assert len(r["history"]) == 2 and all(len(h["runs"]) == len(r["scenarios_mbps"]) >= 6 for h in r["history"])
    assert all({"best_us", "candidate_us", "slept_us", "reward", "candidate_reward", "paper_reward", "cpu_pct", "p99_us"} <= set(run) for run in r["history"][0]["runs"])
    # Two iterations are too few to call a scenario settled.
    assert not any(r["settled"])
    run = sluice("run", "rc", "--n", "2", "--backend", "engine", "--periods", "2", "--period-ms", "20", "--poll", "learned",
                 "--poll-model", "out/polling-model.json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "out" / "polling-training.png").read_bytes()[:4] == b"\x89PNG"


def test_experiment_reframer_writes_the_documented_report(tmp_path: Path) -> None:
    out = sluice("experiment", "reframer", "--quick", "--repeats", "1", "--out", "o", "--json", "r.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    r = json.loads((tmp_path / "r.json").read_text())
    keys = {"config", "segments", "t_buff_us", "slf_in", "slf_out", "mpps", "cycles_per_packet", "mean_us", "p99_us", "viol_pct"}
    assert all(keys <= set(row) and row["lossless"] and row["mpps"] > 0 for row in r["rows"]), r["rows"]
    configs = {row["config"] for row in r["rows"]}
    assert {"baseline", "reframer", "projgrad", "both", "reframer-slo"} <= configs
    for row in r["rows"]:
        reframed = row["config"] in ("reframer", "both", "reframer-slo", "external")
        # A Reframer makes runs of one flow; without one the chain sees the trace's.
        assert (row["slf_out"] > 2 * row["slf_in"]) if reframed else (row["slf_out"] < 1.5), row
        if row["config"] == "reframer-slo":
            # Its controller holds packets for less than the fixed bound to keep the SLO. (How many periods
            # end over it is not checked: a millisecond's stall of this VM puts any period over 300 µs.)
            assert 0 < row["hold_us"] < row["t_buff_us"], row
    # Figures 16 and 18: every configuration at every load, each carrying its load whole.
    assert {(row["config"], row["load_share"]) for row in r["load"]} == {
        (c, share) for c in ("baseline", "reframer", "short flows unheld") for share in (0.5, 0.9)}
    assert all(row["lossless"] for row in r["load"]), r["load"]
    # A Reframer that lets each flow's first packets through holds fewer of them, and still some.
    assert [row["segments"] for row in r["short_flows_unheld"]] == [1]
    assert all(0 < row["bypassed_share"] < 1 and row["lossless"] for row in r["short_flows_unheld"]), r["short_flows_unheld"]
    # Figure 14: each configuration on one and two workers, every copy of it forwarding.
    assert {(row["config"], row["cores"]) for row in r["cores"]} == {
        (c, n) for c in ("chain", "reframer + chain", "reframer alone") for n in (1, 2)}
    assert all(len(row["delivered"]) == row["cores"] and all(n > 0 for n in row["delivered"].values()) and row["lossless"] for row in r["cores"]), r["cores"]
    table = (tmp_path / "o" / "reframer.md").read_text()
    assert "**At loads below saturation**" in table and "**By cores**" in table and "mean -46 %" in table
    assert (tmp_path / "o" / "reframer.png").read_bytes()[:4] == b"\x89PNG"


def test_experiment_embedding_writes_the_documented_report(tmp_path: Path) -> None:
    out = sluice("experiment", "embedding", "--time-limit", "5", "--out", "o", "--json", "e.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "e.json").read_text())
    assert set(report["instances"]) == {"mgw-10", "mgw-40"}
    ours = report["best_heuristic"]
    for name, inst in report["instances"].items():
        methods = inst["methods"]
        assert {"worst-case", "straw-man", "best-fit", "ilp-sum", "ilp-max", ours} <= set(methods)
        for row in methods.values():
            assert {"sum", "min", "max", "mean", "std", "time_s", "status", "bound", "cores_used"} <= set(row)
        assert methods[ours]["sum"] < methods["best-fit"]["sum"], name
        assert methods["best-fit"]["time_s"] <= 1e-3
        assert methods["ilp-max"]["status"] == "optimal"
    assert report["instances"]["mgw-10"]["methods"]["ilp-max"]["max"] == 2
    # Table 4.1's best-fit row, in the order the dissertation's tool took the modules.
    published = report["instances"]["mgw-10"]["methods"]["best-fit, published order"]
    assert (published["sum"], published["min"], published["max"], round(published["mean"], 2), round(published["std"], 2)) == (59, 0, 6, 2.46, 1.98)
    assert "| best-fit, published order | 59 | 0 | 6 | 2.46 | 1.98 |" in (tmp_path / "o" / "embedding.md").read_text()
    # The cores each method needs on the scaled instance (§4.3.4): best-fit 40 as published; the ILP at
    # least the bound (a 30-module conflict clique's worth, on this instance) and no more than best-fit.
    needed = {m: row["cores_needed"] for m, row in report["instances"]["mgw-40"]["methods"].items()}
    assert needed["best-fit"] == 40 and needed["ilp-sum"] == needed["ilp-max"]
    assert report["instances"]["mgw-40"]["fewest_cores"] <= needed["ilp-sum"] <= 40 < needed["worst-case"]
    # Figure 4.3: without resilience, every flow of the 22 counted; the ILPs cross at most twice, best-fit
    # less than the naive methods on every flow.
    fig43 = {r["method"]: r["crossings"] for r in report["without_resilience"]}
    assert all(len(c) == 22 for c in fig43.values()) and max(fig43["ilp-max"]) <= 2
    assert max(fig43["best-fit"]) < min(fig43["worst-case"]) and max(fig43["best-fit"]) < min(fig43["straw-man"])
    # Figures 4.1/4.5 on the engine: a worker down loses none of the HA flows' packets where the embedding
    # is resilient, and some where it is not; every packet accounted for either way.
    engine = {r["method"]: r for r in report["engine"]}
    assert set(engine) == {"ilp-sum", "best-fit", "worst-case", "1 core"}
    assert all(r["accounted"] and r["all_delivered"] > 0 for r in engine.values()), engine
    assert engine["ilp-sum"]["ha_lost"] == engine["best-fit"]["ha_lost"] == 0
    assert engine["worst-case"]["ha_lost"] > 0 and engine["1 core"]["ha_lost"] > 0
    assert "**On the engine**" in (tmp_path / "o" / "embedding.md").read_text()
    for name in ("embedding.json", "embedding.csv", "embedding.md", "embedding.png", "mgw-10.lgf", "mgw-40.lgf"):
        assert (tmp_path / "o" / name).exists()


def test_experiment_failover_loses_no_ha_packet(tmp_path: Path) -> None:
    out = sluice("experiment", "failover", "--period-ms", "50", "--down", "0.5", "--out", "o", "--json", "f.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "o" / "failover.json").read_text())
    assert report == json.loads((tmp_path / "f.json").read_text()) | {"rows": report["rows"]}
    assert report["ha_lost"] == 0 and report["accounted"]
    assert report["lossless"] is True, "no HA packet lost, and the report says so (not None)"
    flows = report["flows"]
    assert {n for n, f in flows.items() if f["ha"]} == {"dl_b0_u0", "ul_b0_u0"}
    for name, f in flows.items():
        assert f["dropped_outside_outage"] == 0, name
        if f["ha"]:
            assert f["lost"] == 0 and f["delivered"] == f["generated"] > 0
        else:
            assert f["lost"] == f["dropped"], f"{name}: every lost packet is counted"
    assert sum(f["lost"] for f in flows.values()) > 0, "the failed worker ran some non-HA flow"
    assert (tmp_path / "o" / "failover.png").exists()


def test_experiment_regime_finds_where_batching_pays(tmp_path: Path) -> None:
    out = sluice("experiment", "regime", "--quick", "--out", "o", "--json", "g.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads((tmp_path / "g.json").read_text())["rows"]
    point = {(r["plane"], r["branching"], r["beta"], r["burstiness"]): r for r in rows}
    assert all(r["speedup"] >= 0.97 and r["viol_pct"] == 0 for r in rows), rows
    assert point[("batchiness", 16, 0.1, 1)]["speedup"] > 1.3, "wide branching of batchy NFs gains"
    assert abs(point[("batchiness", 1, 0.1, 1)]["speedup"] - 1) < 0.02, "one branch already runs full batches"
    assert point[("batchiness", 16, 0.1, 1)]["speedup"] > point[("batchiness", 16, 0.5, 1)]["speedup"], "less batchy, less gain"
    assert point[("burstiness", 16, 0.3, 1)]["speedup"] > point[("burstiness", 16, 0.3, 32)]["speedup"], "bursts batch by themselves"
    assert (tmp_path / "o" / "regime.png").exists()


def test_experiment_dynamics_follows_the_changes(tmp_path: Path) -> None:
    out = sluice("experiment", "dynamics", "--quick", "--out", "o", "--json", "d.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = json.loads((tmp_path / "d.json").read_text())["rows"]
    runs = {(r["scenario"], r["controller"]) for r in rows}
    assert runs == {(s, c) for s in ("slo-wave", "load-steps", "bearer-steps") for c in ("null", "max", "projgrad")}
    wave = [r for r in rows if r["scenario"] == "slo-wave" and r["controller"] == "projgrad"]
    assert {r["slo_us"] for r in wave} == {60.0, 300.0}, "the SLO follows the square wave"
    # After each SLO change projgrad is back inside within two periods.
    for i, r in enumerate(wave[1:-2], start=1):
        if r["slo_us"] != wave[i - 1]["slo_us"]:
            assert not all(w["violated"] for w in wave[i + 1 : i + 3]), f"still over the SLO two periods after period {i}"
    loud = [r for r in rows if r["scenario"] == "load-steps" and r["controller"] == "max"]
    assert max(r["rate_mpps"] for r in loud) > 20 * min(r["rate_mpps"] for r in loud[1:]), "the offered load steps"
    assert (tmp_path / "o" / "dynamics.png").exists()


def test_experiment_decompose_restores_the_qos_slo(tmp_path: Path) -> None:
    out = sluice("experiment", "decompose", "--quick", "--out", "o", "--json", "x.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {(r["controller"], r["spare_workers"]): r for r in json.loads((tmp_path / "x.json").read_text())["rows"]}
    for c in ("null", "projgrad"):
        alone, split = rows[(c, 0)], rows[(c, 1)]
        assert alone["decomposed_after_period"] is None and alone["periods_over_slo_after"] == alone["periods_after"], alone
        assert split["decomposed_after_period"] == 0 and split["moved_modules"] > 0, split
        assert split["qos_p95_after_median_us"] < 50 < split["qos_p95_first_us"], split
        assert alone["lossless"] and split["lossless"] and split["dropped"] == 0
    assert rows[("null", 1)]["periods_over_slo_after"] == 0
    assert (tmp_path / "o" / "decompose.png").exists()


@needs_namespace
def test_experiment_ports_forwards_what_was_sent_and_its_sender_keeps_its_rate_as_tcpreplay_does(tmp_path: Any) -> None:
    sluice = os.path.join(os.path.dirname(sys.executable), "sluice")
    run = subprocess.run([sluice, "experiment", "ports", "--quick", "--repeats", "1", "--out", "o", "--json", "p.json"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    r = json.loads((tmp_path / "p.json").read_text())
    from sluice.lab.ports import row_name

    assert set(r["backends"]) == {row_name(b) for b in _core.port_backends()} and all(b["lossless"] for b in r["backends"].values()), r["backends"]
    senders = {c["sender"]: c for c in r["rate_check"]}
    assert "sluice" in senders and ("tcpreplay" in senders or shutil.which("tcpreplay") is None), senders
    assert all(abs(c["of_target"] - 1) <= 0.05 for c in senders.values()), senders
