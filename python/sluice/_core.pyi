"""Compiled core of Sluice (Rust, via PyO3). JSON in, JSON out."""

from typing import Callable, Optional, Sequence

__version__: str
#: δ of the SLO-aware controllers when none is given.
DEFAULT_DELTA: float
#: Periods a report keeps by default.
DEFAULT_KEEP_PERIODS: int
#: Round sizes a learned poll policy sees (the engine's `poll::features::HISTORY`).
POLL_HISTORY: int
#: The poll model file's format name and version.
POLL_MODEL_FORMAT: str
POLL_MODEL_VERSION: int
__all__ = ["DEFAULT_DELTA", "DEFAULT_KEEP_PERIODS", "POLL_HISTORY", "POLL_MODEL_FORMAT", "POLL_MODEL_VERSION", "__version__", "backends", "check_nf", "check_part", "controllers", "embed_check", "embed_place", "embed_validate", "forward_raw", "limits", "nf_schemas", "ns_per_cycle", "part_schema", "pcap_prefixes", "port_backends", "profile", "profiled_kinds", "pspat_arbiter_alone", "pspat_share", "pspat_throughput", "pspat_twfi", "poll_decision_ns", "poll_model_predict", "prepare_run_dir", "pspat_victim", "round_cases", "round_fit", "round_ns", "round_visit_ns", "run", "send", "serve", "sleep_error_us", "trace_analyze", "trace_synth", "validate"]

def validate(spec: str) -> str:
    """Validate a pipeline description (JSON); return its model (JSON). Raises ValueError."""

def run(
    spec: str,
    controller: object,
    backend: str = "engine",
    periods: int = 10,
    warmup_periods: int = 1,
    period_ms: float = 100.0,
    slo_statistic: str = "p95",
    delta: float = ...,
    timing: bool = True,
    on_period: Optional[Callable[[str], object]] = None,
    keep_periods: int = ...,
) -> str:
    """Run a pipeline description and return the report (JSON). An exception
    that stops the run carries the partial report as `sluice_report`."""

def serve(
    spec: str,
    run_dir: str,
    controller: str = "null",
    period_ms: float = 100.0,
    slo_statistic: str = "p95",
    delta: float = ...,
    timing: bool = True,
    listen: Optional[str] = None,
    token: Optional[str] = None,
    keep_periods: int = ...,
) -> str:
    """Serve a pipeline description until SIGINT or SIGTERM, its control
    API on `run_dir`/sluice.sock (and `listen`, with `token`); return the
    report of the whole run (JSON) once it has drained."""

def prepare_run_dir(run_dir: str) -> str:
    """Make `run_dir` (0700) if it is not there and check that a daemon may
    keep its socket and reports there: the caller's, writable by no one
    else, under directories no one else can change. Its absolute path;
    ValueError naming what is wrong."""

def limits() -> dict[str, float]:
    """The bounds a description must keep: max_workers, max_modules, max_flows, max_periods, max_period_ms, max_rate_pps, max_batch."""

def controllers() -> list[str]:
    """Names of the built-in controllers."""

def backends() -> list[str]:
    """Names of the backends."""

def port_backends() -> list[str]:
    """The port backends this build has (`af_xdp` where it was built with libxdp)."""

def ns_per_cycle() -> float:
    """Length of one Bypass cycle (ns): of a nominal 2.6 GHz clock, on every machine."""

def profile(kinds: list[str], max_batch: int = 32, reps: int = 200) -> str:
    """Profile NF kinds (eight modules of a kind in a row); JSON {"nfs": {NAME: {"t0_ns", "t1_ns", "r2", "beta"}}}."""

def nf_schemas() -> list[tuple[str, str, str]]:
    """Every NF's (name, class name, JSON Schema of its configuration as JSON text)."""

def check_nf(kind: str, fields: str) -> None:
    """Check NF `kind`'s fields (a JSON object) as a description's are read. Raises ValueError naming the field."""

def part_schema(part: str) -> str:
    """The JSON Schema (JSON text) of a part of a description: "template" or "poll"."""

def check_part(part: str, fields: str) -> None:
    """Check the fields (a JSON object) of a part of a description ("template", "poll") as a description's are read. Raises ValueError naming the field."""

def profiled_kinds() -> list[str]:
    """Names of the NF kinds the profiler knows."""

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

def trace_analyze(path: str, flows: str | None = None) -> str:
    """A capture's locality in one streaming pass (JSON); with `flows`, a per-flow Parquet table there."""

def poll_decision_ns(spec: str) -> float:
    """What one decision of a poll policy costs (ns)."""

def poll_model_predict(path: str, rows: list[list[float]]) -> list[float]:
    """What the learned poll model at `path` predicts (µs of sleep) for each row of its features."""

def sleep_error_us(request_us: float, samples: int) -> str:
    """How late plain and precise sleeps end here (JSON, µs)."""

def trace_synth(path: str, packets: int, segments: int = 1, flows_per_s: float = 3500.0, tcp_share: float = 0.8, seed: int = 1,
                ipv6_share: float = 0.0) -> str:
    """Writes a synthetic trace to `path`: what was written (JSON)."""

def send(spec: str, port: str, seconds: float) -> str:
    """Sends the description's source's packets on `port` for `seconds`; what
    was sent (JSON). The exception of a signal that stops it carries what
    was sent until then as `sluice_sent`."""

def pcap_prefixes(path: str) -> list[tuple[str, int]]:
    """Packets per IPv4 destination /24 of a capture (pcap or pcapng), most
    first, in one pass; Ctrl-C stops it."""

def embed_place(
    method: str,
    weights: list[int],
    cores: int,
    capacity: int,
    flows: list[list[int]],
    conflicts: list[tuple[int, int]],
    seed: int = 0,
) -> list[int]:
    """Place modules on cores with a heuristic (round-robin, random, best-fit, path-fit); each module's core. Raises ValueError."""

def embed_check(
    weights: list[int],
    cores: int,
    capacity: int,
    flows: list[list[int]],
    conflicts: list[tuple[int, int]],
    placement: list[int],
) -> list[int]:
    """Check an embedding (capacity, conflicts, cores); crossings per flow. Raises ValueError."""

def embed_validate(
    weights: list[int], cores: int, capacity: int, flows: list[list[int]], conflicts: list[tuple[int, int]]
) -> None:
    """Check an embedding instance. Raises ValueError naming the problem."""
