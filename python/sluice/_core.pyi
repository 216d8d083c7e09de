"""Compiled core of Sluice (Rust, via PyO3). JSON in, JSON out."""

from typing import Callable, Optional, Sequence

__version__: str
#: Round sizes a learned poll policy sees (the engine's `poll::features::HISTORY`).
POLL_HISTORY: int
#: The poll model file's format name and version.
POLL_MODEL_FORMAT: str
POLL_MODEL_VERSION: int
__all__ = ["POLL_HISTORY", "POLL_MODEL_FORMAT", "POLL_MODEL_VERSION", "__version__", "check_nf", "check_part", "controllers", "embed_check", "embed_place", "embed_validate", "limits", "nf_schemas", "ns_per_cycle", "part_schema", "pcap_prefixes", "port_backends", "profile", "profiled_kinds", "poll_model_predict", "prepare_run_dir", "run", "send", "serve", "trace_analyze", "trace_synth", "validate"]

def validate(spec: str) -> str:
    """Validate a pipeline description (JSON); return its model (JSON). Raises ValueError."""

def run(spec: str, controller: object, params: str, on_period: Optional[Callable[[str], object]] = None) -> str:
    """Run a pipeline description with `params` (`sluice.run_params.RunParams`
    as JSON) and return the report (JSON). An exception that stops the run
    carries the partial report as `sluice_report`."""

def serve(spec: str, run_dir: str, controller: str, params: str, listen: Optional[str] = None, token: Optional[str] = None) -> str:
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

def trace_analyze(path: str, flows: str | None = None) -> str:
    """A capture's locality in one streaming pass (JSON); with `flows`, a per-flow Parquet table there."""

def poll_model_predict(path: str, rows: list[list[float]]) -> list[float]:
    """What the learned poll model at `path` predicts (µs of sleep) for each row of its features."""

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
    names: list[str], weights: list[int], cores: int, capacity: int, flows: list[list[int]], conflicts: list[tuple[int, int]]
) -> None:
    """Check an embedding instance whose modules are `names`. Raises ValueError naming the problem."""
