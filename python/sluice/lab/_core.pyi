"""`sluice.lab._core`: the lab's measurements (see `sluice-lab`), in a build with the `lab` feature
only: what the experiments call and the product does not.

Generated from the binding's Rust source by scripts/generate.py: do not edit."""

from typing import Optional

__all__ = ["ecmp_spread", "forward_raw", "poll_decision_ns", "pspat_arbiter_alone", "pspat_share", "pspat_throughput", "pspat_twfi", "pspat_victim", "round_cases", "round_fit", "round_ns", "round_visit_ns", "sleep_error_us"]

def round_ns(case: str, batch: int, timing: bool) -> float:
    """Time of one walker round of workload `case` (see `round_cost`) at batch size `batch` (ns)."""

def forward_raw(rx: str, tx: str, seconds: float, burst: int, bare: bool = False) -> str:
    """Forwards frames from port `rx` to port `tx` for `seconds` in a bare loop over the same rings
    a pipeline's ports use: a backend's ceiling; with `bare` (DPDK ports), DPDK's own loop,
    without Sluice's copies. Returns JSON: packets, tx_full, missed, seconds."""

def poll_decision_ns(spec: str) -> float:
    """What one decision of poll policy `spec` (the description's `poll` object, JSON) costs the
    worker (ns), over rounds of a light load (a packet every 1024 rounds: a learned model is
    asked, its rate bound passed)."""

def sleep_error_us(request_us: float, samples: int) -> str:
    """How late sleeps of `request_us` end on this machine (µs): the median and 99th percentile of
    plain sleeps and of precise ones (an absolute deadline early by the usual oversleep, then a
    spin), `samples` each."""

def pspat_arbiter_alone(algorithm: str, clients: int, per_client: int, seconds: float) -> float:
    """Decisions per second of the PSPAT arbiter alone over `clients` pre-filled mailboxes of
    `per_client` packets each (M/s)."""

def pspat_throughput(architecture: str, algorithm: str, clients: int, seconds: float) -> tuple[float, float]:
    """Packets per second (M/s) `clients` greedy clients get through `architecture` (pspat, mutex,
    none), and the arbiter's decisions per second of its busy time (M/s; PSPAT only)."""

def pspat_share(architecture: str, algorithm: str, link_pps: float, seconds: float, window_ms: float) -> list[list[int]]:
    """The 10:1 test: packets of the weight-10 and weight-1 flow in each `window_ms` window over a
    link of `link_pps` 60-byte packets a second (inf: unlimited)."""

def pspat_victim(architecture: str, algorithm: str, interferers: int, victim_pps: float, link_bits_per_s: float, seconds: float) -> tuple[list[float], int, Optional[float]]:
    """The latency test: the victim's latency quantiles p10, p50, p90, p99 and max (µs), how many
    of its packets were timed and the share of the run PSPAT's arbiter spent off its core (%;
    None for the mutex)."""

def pspat_twfi(algorithm: str, clients: int, packets: int, scan: float) -> tuple[float, Optional[float]]:
    """The T-WFI test on a virtual clock (see `sluice_pspat::twfi`): the client with half the link
    among `clients` with the paper's example weights, `packets` of its packets, the arbiter
    scanning every `scan` packet times (Δ_A); its T-WFI measured and the paper's bound for the
    algorithm with Δ_A added (eq. (1)–(3); None where the paper gives none), in units of L/B
    (one 1500-byte packet's time on the link)."""

def ecmp_spread(weights: list[int], flows: int, v6: bool, seed: int) -> tuple[list[float], int, float, int]:
    """How an LPM's multipath route spreads `flows` flows of a 5-tuple each (IPv6 if `v6`) over
    paths weighted `weights`, its hash seeded with `seed` (see `sluice_lab::ecmp`): each path's
    share of the flows, the flows whose packets took two paths, the share of the flows that
    moves when the last path is removed, and the flows of other paths among them."""

def round_fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """T0 (ns) and T1 (ns/pkt) of ns per round = T0 + T1·B through [(B, ns per round)] (see
    `round_cost::fit`)."""

def round_visit_ns(chain_t0_ns: float, replay_t0_ns: float) -> float:
    """What one NF visit costs the walker (ns), from the chain's and the replay's T0 (see
    `round_cost::nf_visit_ns`)."""

def round_cases() -> list[str]:
    """Names of the round-cost workloads."""
