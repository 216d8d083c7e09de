"""The lab's measurements (Rust, via PyO3; `sluice-lab`): in `sluice._core`
built with its `lab` feature, registered as this module."""

from typing import Optional, Sequence

__all__ = ["forward_raw", "poll_decision_ns", "pspat_arbiter_alone", "pspat_share", "pspat_throughput", "pspat_twfi", "pspat_victim", "round_cases", "round_fit", "round_ns", "round_visit_ns", "sleep_error_us"]

def pspat_arbiter_alone(algorithm: str, clients: int, per_client: int, seconds: float) -> float:
    """Decisions per second of the PSPAT arbiter alone over pre-filled mailboxes (M/s)."""

def pspat_throughput(architecture: str, algorithm: str, clients: int, seconds: float) -> tuple[float, float]:
    """Packets per second greedy clients get through pspat, mutex or none (M/s), and the arbiter's decisions per second (M/s)."""

def pspat_share(architecture: str, algorithm: str, link_pps: float, seconds: float, window_ms: float) -> list[list[int]]:
    """The 10:1 test: packets of the weight-10 and weight-1 flow per window."""

def pspat_victim(architecture: str, algorithm: str, interferers: int, victim_pps: float, link_bits_per_s: float, seconds: float) -> tuple[list[float], int, Optional[float]]:
    """The latency test: the victim's p10, p50, p90, p99 and max (µs), its packets timed, and the share of the run PSPAT's arbiter spent off its core (%; None for the mutex)."""

def pspat_twfi(algorithm: str, clients: int, packets: int, scan: float) -> tuple[float, Optional[float]]:
    """T-WFI of the client with half the link (units of L/B) and the paper's bound."""

def round_ns(case: str, batch: int, timing: bool) -> float:
    """Time of one walker round of a round-cost workload (replay, chain, branch4) at batch size `batch` (ns)."""

def round_cases() -> list[str]:
    """Names of the round-cost workloads."""

def round_fit(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """T0 (ns) and T1 (ns/pkt) of ns per round = T0 + T1·B through [(B, ns per round)], weighted by relative error."""

def round_visit_ns(chain_t0_ns: float, replay_t0_ns: float) -> float:
    """What one NF visit costs the walker (ns): the chain's T0 less the replay's, over the chain's NFs."""

def forward_raw(rx: str, tx: str, seconds: float, burst: int, bare: bool = False) -> str:
    """Forwards from port `rx` to `tx` for `seconds` in a bare loop: a backend's ceiling (JSON); `bare`: DPDK's own loop, no copies."""

def poll_decision_ns(spec: str) -> float:
    """What one decision of a poll policy costs (ns)."""

def sleep_error_us(request_us: float, samples: int) -> str:
    """How late plain and precise sleeps end here (JSON, µs)."""
