"""`sluice._core`: the compiled part of the Python package. Bindings only: JSON in, JSON out; every
rule lives in the Rust crates behind it.

Generated from the binding's Rust source by scripts/generate.py: do not edit."""

from typing import Optional

#: Round sizes a learned poll policy sees (the engine's `poll::features::HISTORY`).
POLL_HISTORY: int
#: The poll model file's format name.
POLL_MODEL_FORMAT: str
#: The poll model file's format version.
POLL_MODEL_VERSION: int
#: The package's version.
__version__: str

__all__ = ["POLL_HISTORY", "POLL_MODEL_FORMAT", "POLL_MODEL_VERSION", "__version__", "check_nf", "check_part", "controllers", "embed_check", "embed_place", "embed_validate", "limits", "nf_schemas", "ns_per_cycle", "part_schema", "pcap_prefixes", "poll_model_predict", "port_backends", "prepare_run_dir", "profile", "profiled_kinds", "read_state", "run", "send", "serve", "trace_analyze", "trace_synth", "validate"]

def validate(spec: str) -> str:
    """Validates a pipeline description (JSON) and returns its model as JSON."""

def nf_schemas() -> list[tuple[str, str, str]]:
    """Every NF's name, class name and the JSON Schema of its configuration (JSON text): what
    `sluice.nf` is generated from."""

def check_nf(kind: str, fields: str) -> None:
    """Checks NF `kind`'s fields (a JSON object) as a description's are read; the error names the
    field."""

def part_schema(part: str) -> str:
    """The JSON Schema of a whole description ("pipeline"), of a run's parameters ("run"), of a
    part of a description, or of what the core returns (a run's "report", whose periods
    `on_period` receives; the "model" `validate` returns; what `send` "sent"), by name (see
    `SCHEMAS`): what the typed Python of `sluice` is generated from."""

def check_part(part: str, fields: str) -> None:
    """Checks the fields (a JSON object) of a part (see `PARTS`) as a description's are read (their
    types and names, and the rules of a part on its own; what they mean with the rest is checked
    with the pipeline); the error names the field."""

def run(spec: str, controller: object, params: str, on_period: Optional[object] = None) -> str:
    """Runs a pipeline description (JSON) and returns the report (JSON). `controller` is a built-in
    controller's name or a Python object with `name`, `init_json` and `step_json`; `on_period`,
    if given, is called with each period's JSON as it ends; `params` are the run's
    `sluice_pipeline::RunParams` (JSON; a field left out keeps its default).

    A signal (Ctrl-C), an exception in `on_period` or in a Python controller, or an action the
    pipeline refuses stops the run within a period: the pipeline drains, and the exception (a
    RuntimeError for a refused action) is raised with the report of the periods done, marked
    interrupted, as its `sluice_report` attribute."""

def serve(spec: str, run_dir: str, controller: str, params: str, listen: Optional[str] = None, token: Optional[str] = None, state: Optional[str] = None) -> str:
    """Serves a pipeline description (JSON) until SIGINT or SIGTERM (see `sluice_serve`): the
    control API listens on `run_dir`/sluice.sock (and on `listen` with `token`, if given); each
    change made is printed on stderr; `params` as `run`'s, whose periods it ignores (it runs
    until stopped); the description in force is written to `state` (a path) after every change,
    if given (see `read_state`). Returns the report of the whole run (JSON) once it has drained."""

def read_state(path: str) -> Optional[str]:
    """The text of the state file `path` of `serve` (`None`: there is none yet), its place checked
    as `serve` checks it: a JSON object with the description in force and the controller, as
    `GET /v1/pipeline` answers."""

def prepare_run_dir(run_dir: str) -> str:
    """Makes the run directory `run_dir` (0700) if it is not there and checks that a daemon may
    keep its socket and reports there (the caller's, writable by no one else, under directories
    no one else can change); returns its absolute path."""

def controllers() -> list[str]:
    """Names of the built-in controllers."""

def limits() -> dict[str, float]:
    """The bounds a description must keep (see `sluice_core::limits`), by name."""

def port_backends() -> list[str]:
    """The port backends this build has (`af_xdp` where it was built with libxdp)."""

def ns_per_cycle() -> float:
    """Length of one Bypass cycle (ns): of a nominal 2.6 GHz clock, on every machine."""

def profile(kinds: list[str], max_batch: int = 32, reps: int = 200) -> str:
    """Profiles each NF kind (eight modules of it in a row) at batch sizes 1..=max_batch; returns
    `{"nfs": {NAME: {"t0_ns", "t1_ns", "r2", "beta"}}}` as JSON."""

def profiled_kinds() -> list[str]:
    """Names of the NF kinds the profiler knows."""

def pcap_prefixes(path: str) -> list[tuple[str, int]]:
    """Packets per destination prefix of a capture (IPv4 /24, IPv6 /48), most first:
    [("a.b.c.0/24", count)], in one pass. Ctrl-C stops it."""

def send(spec: str, port: str, seconds: float) -> str:
    """Sends the pipeline description's (JSON) source's packets on `port` for `seconds`; returns
    what was sent (JSON: packets, bytes, seconds, ring_full). Ctrl-C stops it early: the
    signal's exception carries what was sent until then as `sluice_sent`."""

def trace_analyze(path: str, flows: Optional[str] = None) -> str:
    """Analyses a capture's locality in one streaming pass (see `sluice_traffic::trace_analysis`);
    returns JSON with the analysis and the pass's speed (`packets_per_s`). With `flows`, also
    writes one row per flow there as Parquet."""

def trace_synth(path: str, packets: int, segments: int = 1, flows_per_s: float = 3500.0, tcp_share: float = 0.8, seed: int = 1, ipv6_share: float = 0.0) -> str:
    """Writes a synthetic trace to `path` (see `sluice_traffic::trace_synth`); returns JSON with
    what was written and how fast."""

def poll_model_predict(path: str, rows: list[list[float]]) -> list[float]:
    """What the learned poll model at `path` predicts (µs of sleep) for each of `rows` (its
    features: the last round sizes, latest first, then the idle time in µs and the arrival rate
    in pkt/µs), before the policy bounds it."""

def embed_place(method: str, weights: list[int], cores: int, capacity: int, flows: list[list[int]], conflicts: list[tuple[int, int]], seed: int = 0) -> list[int]:
    """Places modules on cores with a heuristic (round-robin, random, best-fit, path-fit); returns
    each module's core."""

def embed_check(weights: list[int], cores: int, capacity: int, flows: list[list[int]], conflicts: list[tuple[int, int]], placement: list[int]) -> list[int]:
    """Checks that `placement` embeds the instance (capacity, conflicts, one existing core per
    module); returns the crossings of each flow."""

def embed_validate(names: list[str], weights: list[int], cores: int, capacity: int, flows: list[list[int]], conflicts: list[tuple[int, int]]) -> None:
    """Checks an embedding instance whose modules are called `names`; raises ValueError naming the
    problem (and the module, by its name)."""
