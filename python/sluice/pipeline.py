"""Building pipelines in Python, in the spirit of Batchy's configuration scripts.

    p = Pipeline("two-way")
    src = p.source("src")
    split = p.module("split", RandomSplit([1, 1]))
    ...
    p.connect(src, split)
    p.flow("tight", [src, split, a, out_a], slo_us=15)
    result = p.run("max", periods=10)

Every rule (dangling gates, cycles, flows off the graph, SLOs ≤ 0, B out of
range) is checked by the Rust core, whose errors name the culprit.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import asdict, dataclass
from typing import Callable, Optional, Sequence, Union, cast

from sluice import _core
from sluice.controller import Controller
from sluice.description import (PipelineDefaults, SchedulerDefaults, SyntheticDefaults, CoDelConfigJson, EdgeJson, EgressSchedulerJson, FlowJson, FlowRuleJson,
                                IcmpSettingsJson, InterfaceJson, ModuleJson, OutageJson, PipelineJson, PollSettingsJson, SchedulerJson,
                                RingJson, StreamJson)
from sluice.interface import IcmpSettings, Interface, Neighbor, NeighborTable
from sluice.json_form import dumps_finite
from sluice.nf import NF
from sluice.outputs import ModelJson, PeriodOutputJson, SentJson
from sluice.poll import POLL_KIND_VALUES, PollSettings
from sluice.poll_model import with_default_model
from sluice.result import RunResult
from sluice.run_params import RunParams
from sluice.schedulers import CoDelConfig, EgressClass, EgressParent, EgressScheduler, FqCoDelConfig, Scheduler
from sluice.traffic import Stream, Template, readable_capture


#: The workers' poll policies (see `Pipeline.set_poll`).
POLL_POLICIES = POLL_KIND_VALUES


@dataclass(frozen=True)
class Module:
    """A handle to a module of a pipeline."""

    name: str


ModuleRef = Union[Module, str]


def _name(m: ModuleRef) -> str:
    return m.name if isinstance(m, Module) else m


class Pipeline:
    """A data-flow graph of modules, with flows and their delay SLOs."""

    def __init__(
        self,
        name: str = "pipeline",
        batch_size: int = PipelineDefaults.batch_size,
        *,
        scheduler: str = SchedulerDefaults.mode,
        backpressure_pkts: Optional[int] = None,
        spare_workers: int = PipelineDefaults.spare_workers,
    ) -> None:
        """`scheduler` is "rtc" (run-to-completion) or "wfq" (a queue per
        controlled module, stride-scheduled by weight; sources pause while
        the queues hold `backpressure_pkts` packets, if given).
        `spare_workers` idle until pipeline decomposition moves flows there:
        when a flow misses its SLO on a worker whose modules at full batches
        take longer than that SLO, the flows that do not fit move to a spare
        while the pipeline runs."""
        self.spare_workers = spare_workers
        #: What the workers do after a round that drains their input (see `set_poll`).
        self.poll: PollSettingsJson = {}
        #: Workers with a poll policy of their own, by worker number (as a string, as in JSON).
        self.worker_poll: dict[str, PollSettingsJson] = {}
        self.name = name
        self.batch_size = batch_size
        #: How every worker orders its work.
        self.scheduler: SchedulerJson = Scheduler(scheduler, backpressure_pkts).spec()
        self._modules: list[ModuleJson] = []
        self._edges: list[EdgeJson] = []
        self._flows: list[FlowJson] = []
        self._outages: list[OutageJson] = []
        self._auto_streams: dict[str, list[StreamJson]] = {}
        #: Keys of a description read with `from_spec` that the core does not know.
        self._extra: dict[str, object] = {}
        #: The scheduled egress (see `schedule_egress`), if any.
        self.egress_scheduler: Optional[EgressSchedulerJson] = None
        #: The router's interfaces (see `interface`); a description's as it was read.
        self.interfaces: list[Union[Interface, InterfaceJson]] = []
        #: How many ICMP errors the router sends (None: Linux's limits); a description's as it was read.
        self.icmp: Union[IcmpSettings, IcmpSettingsJson, None] = None
        #: CoDel on the rings between workers (None: a full ring pushes back and drops nothing).
        self.ring_codel: Union[CoDelConfig, CoDelConfigJson, None] = None

    @classmethod
    def from_spec(cls, spec: PipelineJson) -> Pipeline:
        """A pipeline from a description in the core's JSON form (see `spec`).
        Keys it does not know are kept, so that the core refuses them by name."""
        if not isinstance(spec, dict):
            raise ValueError(f"a pipeline description is a JSON object, not {type(spec).__name__}")
        p = cls(str(spec.get("name", PipelineDefaults.name)), batch_size=spec.get("batch_size", PipelineDefaults.batch_size))
        p.scheduler = spec.get("scheduler", p.scheduler)
        p._modules = spec.get("modules", [])
        p._edges = spec.get("edges", [])
        p._flows = spec.get("flows", [])
        p._outages = spec.get("outages", [])
        p.spare_workers = spec.get("spare_workers", PipelineDefaults.spare_workers)
        p.poll = spec.get("poll", p.poll)
        p.worker_poll = dict(spec.get("worker_poll", {}))
        p.egress_scheduler = spec.get("egress_scheduler")
        p.interfaces = list(spec.get("interfaces", []))
        p.icmp = spec.get("icmp")
        p.ring_codel = spec.get("ring_codel")
        known = PipelineJson.__required_keys__ | PipelineJson.__optional_keys__
        p._extra = {k: v for k, v in spec.items() if k not in known}
        return p

    def _add(self, entry: ModuleJson) -> Module:
        self._modules.append(entry)
        return Module(entry["name"])

    def source(
        self,
        name: str,
        streams: Optional[Sequence[Stream]] = None,
        *,
        burstiness: int = SyntheticDefaults.burstiness,
        worker: int = 0,
    ) -> Module:
        """A synthetic source (a task's ingress) running on `worker`.

        Without `streams`, every flow whose path starts here adds a stream of
        its own (its template and rate); with them, packets carry the
        streams' flows (or none, for splitters downstream to decide).
        """
        own: list[StreamJson] = [] if streams is None else [s.spec() for s in streams]
        if streams is None:
            self._auto_streams[name] = own
        return self._add({"name": name, "source": {"synthetic": {"streams": own, "burstiness": burstiness}}, "worker": worker})

    def pcap_source(
        self,
        name: str,
        path: str,
        flows: Optional[dict[str, str]] = None,
        *,
        rate_pps: Optional[float] = None,
        worker: int = 0,
    ) -> Module:
        """A source replaying a capture (pcap or pcapng) in a loop; `flows` maps
        flow names to destination prefixes. A pipe or FIFO is read now, once."""
        path = readable_capture(path)
        prefixes: list[FlowRuleJson] = [{"flow": f, "prefix": p} for f, p in (flows or {}).items()]
        return self._add({"name": name, "source": {"pcap": {"path": path, "flows": prefixes, "rate_pps": rate_pps}}, "worker": worker})

    def map_pcap_flow(self, source: ModuleRef, flow: str, prefixes: Sequence[str]) -> None:
        """Packets of pcap source `source` whose destination is in one of `prefixes` belong to `flow`."""
        name = _name(source)
        for m in self._modules:
            if m["name"] == name and "pcap" in m.get("source", {}):
                m["source"]["pcap"]["flows"].extend({"flow": flow, "prefix": p} for p in prefixes)
                return
        raise ValueError(f"'{name}' is not a pcap source")

    def module(
        self,
        name: str,
        nf: NF,
        *,
        t0_ns: Optional[float] = None,
        t1_ns: Optional[float] = None,
        controlled: Optional[bool] = None,
        worker: Optional[int] = None,
        max_age_us: Optional[float] = None,
        gates: Sequence[str] = (),
    ) -> Module:
        """A network function behind a fractional buffer.

        `t0_ns`/`t1_ns` give its cost per batch and per packet (ns) when
        the NF does not imply them; `controlled` overrides the default (a
        known profile with batchiness T1/(T0+T1) ≤ 0.5). `worker` places it
        on a worker (default: its upstream's); edges between workers run
        through lock-free rings. `max_age_us` bounds how long the buffer may
        hold its oldest packet (off by default). `gates` names its outgates,
        gate 0's first, for `connect` to take by name.
        """
        entry: ModuleJson = {
            "name": name,
            "nf": nf.spec(),
            "t0_ns": t0_ns,
            "t1_ns": t1_ns,
            "controlled": controlled,
            "worker": worker,
            "max_age_us": max_age_us,
        }
        if gates:
            entry["gates"] = list(gates)
        return self._add(entry)

    def pcap_tap(self, name: str, path: str) -> Module:
        """A pass-through that writes every packet to a pcap file (for debugging, not for speed)."""
        return self._add({"name": name, "pcap_tap": {"path": path}})

    def sink(self, name: str, *, worker: Optional[int] = None) -> Module:
        """An egress: records delivery and delay of the flows that end here (each packet to its own)."""
        return self._add({"name": name, "sink": {}, "worker": worker})

    def rx_port(self, name: str, port: str, flows: Union[dict[str, str], Sequence[tuple[str, str]], None] = None, *, worker: int = 0,
                ring: Optional[RingJson] = None, fanout: Optional[int] = None) -> Module:
        """A source receiving on a network interface, `port` as
        `BACKEND:INTERFACE` (`af_packet:veth1`, `af_xdp:veth1@QUEUE`,
        `dpdk:DEVICE`); `flows` maps flow names to destination prefixes,
        IPv4 or IPv6, or lists (flow, prefix) pairs, several for a flow
        (unmatched packets: flows decided downstream). `ring` sets
        AF_PACKET's `block_size`, `blocks`, `frame_size` and
        AF_XDP's `descriptors`; `fanout` joins an AF_PACKET group that
        spreads flows over workers. Ports on several workers that name one
        interface alike are spread over it: AF_XDP gives each worker a
        queue of its own, AF_PACKET puts them in one fanout group. The
        engine only."""
        pairs = flows.items() if isinstance(flows, dict) else (flows or ())
        prefixes: list[FlowRuleJson] = [{"flow": f, "prefix": p} for f, p in pairs]
        return self._add({"name": name, "source": {"port": {"port": port, "flows": prefixes, "ring": ring or {}, "fanout": fanout}}, "worker": worker})

    def tx_port(self, name: str, port: str, *, worker: Optional[int] = None, ring: Optional[RingJson] = None) -> Module:
        """An egress that transmits on a network interface (`BACKEND:INTERFACE`)
        before it records delivery; what the ring has no room for is dropped, counted."""
        return self._add({"name": name, "sink": {"port": port, "ring": ring or {}}, "worker": worker})

    def use_ports(self, rx: Optional[str] = None, tx: Optional[str] = None, *, ring: Optional[RingJson] = None) -> None:
        """Receives on `rx` instead of the pipeline's one synthetic source,
        each flow told apart by its template's destination /24 (IPv6: /64), and
        transmits on `tx` at every egress; `ring` shapes the rings (see `rx_port`)."""
        if rx is not None:
            sources = [m for m in self._modules if "source" in m]
            if len(sources) != 1 or "synthetic" not in sources[0]["source"]:
                raise ValueError(f"a port replaces one synthetic source; '{self.name}' has {len(sources)} sources")
            streams = sources[0]["source"]["synthetic"]["streams"]
            flows = {s["flow"]: _site(s["template"]["dst_ip"]) for s in streams if s.get("flow")}
            prefixes: list[FlowRuleJson] = [{"flow": f, "prefix": p} for f, p in flows.items() if f is not None]
            sources[0]["source"] = {"port": {"port": rx, "flows": prefixes, "ring": ring or {}}}
            self._auto_streams.pop(sources[0]["name"], None)
        if tx is not None:
            for m in self._modules:
                if "sink" in m:
                    m["sink"] = {"port": tx, "ring": ring or {}}

    def interface(self, name: str, addresses: Sequence[str] = (), *, mac: Optional[str] = None, mtu: Optional[int] = None,
                  neighbors: Optional[dict[str, str]] = None, neighbor_table: NeighborTable = NeighborTable()) -> None:
        """A router interface: `name` as its ports name it (`sw1` of
        `af_packet:sw1`), its `addresses` with prefix lengths
        ("10.0.1.254/24", "2001:db8:1::fe/64"), its MAC and MTU (default: the
        device's where a port opens it), `neighbors` set by hand (address →
        MAC) and its neighbour table's size and timers. The router's NFs name
        it (`InterfaceInput`, `NextHop`, `InterfaceSplit`); its ports stamp
        their packets with it, which its ICMP errors answer from."""
        entries = tuple(Neighbor(address, hw) for address, hw in (neighbors or {}).items())
        self.interfaces.append(Interface(name, tuple(addresses), mac, mtu, entries, neighbor_table))

    def connect(self, upstream: ModuleRef, downstream: ModuleRef, gate: Union[int, str] = 0, ingate: int = 0) -> None:
        """Connects `upstream`'s outgate `gate` (its number, or a name `module` gave it) to `downstream`'s ingate `ingate`."""
        self._edges.append({"from": _name(upstream), "outgate": gate, "to": _name(downstream), "ingate": ingate})

    def chain(self, *modules: ModuleRef) -> None:
        """Connects each module's gate 0 to the next one."""
        for a, b in zip(modules, modules[1:]):
            self.connect(a, b)

    def flow(
        self,
        name: str,
        path: Sequence[ModuleRef],
        slo_us: Optional[float] = None,
        *,
        rate_pps: Optional[float] = None,
        template: Optional[Template] = None,
        slo_schedule: Sequence[tuple[int, float]] = (),
        rate_schedule: Sequence[tuple[int, float]] = (),
    ) -> None:
        """A flow along `path` (source to sink) with a delay SLO in µs (None: best effort)."""
        names = [_name(m) for m in path]
        self._flows.append(
            {"name": name, "path": names, "slo_us": slo_us, "slo_schedule": [list(s) for s in slo_schedule]}
        )
        streams = self._auto_streams.get(names[0]) if names else None
        if streams is not None:
            tpl = template or Template(dst_ip=f"20.0.{len(streams) % 250 + 1}.1")
            streams.append(Stream(tpl, flow=name, rate_pps=rate_pps, rate_schedule=rate_schedule).spec())
        elif rate_pps is not None or template is not None or rate_schedule:
            raise ValueError(f"flow '{name}': its source has explicit streams; set rate and template on those")

    def set_slo(self, flow: str, slo_us: Optional[float]) -> None:
        """Sets (or, with None, removes) the delay SLO of flow `flow` (µs)."""
        for f in self._flows:
            if f["name"] == flow:
                f["slo_us"] = slo_us
                return
        raise ValueError(f"no flow '{flow}' in pipeline '{self.name}'")

    def modules(self) -> list[str]:
        """Names of the modules, in the order they were added."""
        return [m["name"] for m in self._modules]

    def set_worker(self, module: ModuleRef, worker: int) -> None:
        """Places `module` on `worker` (edges to other workers become rings)."""
        name = _name(module)
        for m in self._modules:
            if m["name"] == name:
                m["worker"] = worker
                return
        raise ValueError(f"no module '{name}' in pipeline '{self.name}'")

    def _streams_of(self, flow: str) -> list[StreamJson]:
        if flow not in self.flows():
            raise ValueError(f"no flow '{flow}' in pipeline '{self.name}'")
        streams = [st for m in self._modules for st in m.get("source", {}).get("synthetic", {}).get("streams", []) if st.get("flow") == flow]
        if not streams:
            raise ValueError(f"flow '{flow}' has no synthetic stream of its own (a pcap replay has one rate for all its flows)")
        return streams

    def has_own_stream(self, flow: str) -> bool:
        """Whether flow `flow` has a synthetic stream of its own, whose rate can be set."""
        return any(st.get("flow") == flow for m in self._modules for st in m.get("source", {}).get("synthetic", {}).get("streams", []))

    def set_rate(self, flow: str, rate_pps: Optional[float]) -> None:
        """Sets the offered rate of flow `flow` (pkt/s; None: as fast as the
        worker takes packets) on the synthetic stream that carries it."""
        if rate_pps is not None and not rate_pps > 0:
            raise ValueError(f"flow '{flow}': rate {rate_pps} pkt/s must be > 0")
        for st in self._streams_of(flow):
            st["rate_pps"] = rate_pps

    def set_schedule(self, flow: str, *, slo_us: Sequence[tuple[int, float]] = (), rate_pps: Sequence[tuple[int, float]] = ()) -> None:
        """Steps flow `flow`'s SLO (µs) and offered rate (pkt/s) at the given
        periods (counted from the first, warm-up included)."""
        if flow not in self.flows():
            raise ValueError(f"no flow '{flow}' in pipeline '{self.name}'")
        if rate_pps:
            for st in self._streams_of(flow):
                st["rate_schedule"] = [list(step) for step in rate_pps]
        if slo_us:
            for f in self._flows:
                if f["name"] == flow:
                    f["slo_schedule"] = [list(step) for step in slo_us]

    def outage(self, worker: int, from_period: int, until_period: int) -> None:
        """Takes `worker` down from the start of period `from_period` until
        the start of `until_period` (warm-up periods count): its modules stop
        and the packets that reach it are dropped and counted, as on a failed core."""
        self._outages.append({"worker": worker, "from": from_period, "until": until_period})

    def flows(self) -> list[str]:
        """Names of the flows."""
        return [f["name"] for f in self._flows]

    def spec(self) -> PipelineJson:
        """The description the core reads."""
        modules = [cast(ModuleJson, {k: v for k, v in m.items() if v is not None}) if isinstance(m, dict) else m for m in self._modules] \
            if isinstance(self._modules, list) else self._modules
        description: PipelineJson = {
            **cast(PipelineJson, self._extra),
            "name": self.name,
            "batch_size": self.batch_size,
            "modules": modules,
            "edges": self._edges,
            "flows": self._flows,
            "scheduler": self.scheduler,
            "outages": self._outages,
            "spare_workers": self.spare_workers,
            "poll": with_default_model(self.poll),
        }
        if self.worker_poll:
            description["worker_poll"] = {w: with_default_model(poll) for w, poll in self.worker_poll.items()}
        if self.egress_scheduler is not None:
            description["egress_scheduler"] = self.egress_scheduler
        if self.interfaces:
            description["interfaces"] = [i.spec() if isinstance(i, Interface) else i for i in self.interfaces]
        if self.icmp is not None:
            description["icmp"] = self.icmp.spec() if isinstance(self.icmp, IcmpSettings) else self.icmp
        if self.ring_codel is not None:
            codel = self.ring_codel
            description["ring_codel"] = cast(CoDelConfigJson, asdict(codel)) if isinstance(codel, CoDelConfig) else codel
        return description

    def to_json(self) -> str:
        """The description as JSON; a NaN or infinite number in it is refused by its place."""
        return dumps_finite(self.spec(), lambda place, number: f"pipeline description: {place}: {number} is not a finite number")

    def set_poll(self, poll: Union[str, PollSettings], *, worker: Optional[int] = None) -> None:
        """What the workers do after a round that drains their input: a
        policy's name, or a policy and its settings as `sluice.poll.PollSettings`
        (which says what each policy does and what each setting means). With
        `worker`, only that worker polls so; the others keep theirs."""
        settings = PollSettings(policy=poll) if isinstance(poll, str) else poll
        poll_json = settings.spec()
        if worker is None:
            self.poll = poll_json
        else:
            self.worker_poll[str(worker)] = poll_json

    def schedule_egress(self, algorithm: str, link_bits_per_s: float, classes: dict[str, tuple[int, list[str]]], *,
                        queue_pkts: int = EgressScheduler.queue_pkts, overhead_bytes: int = EgressScheduler.overhead_bytes,
                        on_full: str = EgressScheduler.on_full, scan_gap_us: float = EgressScheduler.scan_gap_us,
                        codel: Optional[dict[str, CoDelConfig]] = None,
                        fq_codel: Optional[dict[str, FqCoDelConfig]] = None,
                        parents: Optional[dict[str, tuple[float, Optional[float]]]] = None,
                        under: Optional[dict[str, str]] = None) -> None:
        """Sends every flow through one scheduler sharing an emulated output
        link of `link_bits_per_s` (PSPAT-style: the workers hand packets to an
        arbiter thread, `algorithm` "fifo", "priority" (a class's weight is
        its priority, the largest first), "drr", "wf2q+" or "qfq"). `classes` maps a class
        name to its weight and its flows (names, or a prefix ending in `*`);
        every flow must be in exactly one class. A class's queue holds
        `queue_pkts` packets; what arrives beyond is dropped and counted
        (`on_full="drop"`), or the sources whose packets reach a full class
        wait (`"wait"`: each worker takes no packets in while a class it
        feeds has less than a batch of its share of the queue left; a
        source that feeds several classes waits for the fullest, so their
        shares then follow its mix rather than the weights). Each packet is
        charged `overhead_bytes` of framing on the link. The arbiter scans
        the workers' mailboxes at most every `scan_gap_us` (PSPAT's Δ_A; 0:
        back to back), which a packet may wait more (one worker is its own
        arbiter and decides at each round). The classes `codel` names keep
        their queues short with CoDel (RFC 8289) under its settings; those
        `fq_codel` names queue their flows apart, each kept short by its own
        CoDel (FQ-CoDel, RFC 8290). `parents` makes a class tree (HTB-like):
        a parent's name maps to the rate it is given and the ceiling it may
        borrow up to (bit/s; None: the link's), `under` each class to its
        parent, and `algorithm` shares each parent among its classes. Runs
        on the engine, and on the simulator with one worker."""
        codel, fq_codel, under = codel or {}, fq_codel or {}, under or {}
        for name, managed in (("codel", codel), ("fq_codel", fq_codel), ("under", under)):
            if unknown := set(managed) - set(classes):
                raise ValueError(f"{name}: no class named {sorted(unknown)[0]!r}")
        members = tuple(EgressClass(name, weight, tuple(flows), codel.get(name), fq_codel.get(name), under.get(name)) for name, (weight, flows) in classes.items())
        shaped = tuple(EgressParent(name, rate, ceil) for name, (rate, ceil) in (parents or {}).items())
        self.egress_scheduler = EgressScheduler(algorithm, link_bits_per_s, members, overhead_bytes, queue_pkts, on_full, scan_gap_us, shaped).spec()

    def send(self, port: str, seconds: float) -> SentJson:
        """Puts what this pipeline's source makes (its streams at their rates,
        or its trace) on `port` for `seconds`: traffic for a pipeline that
        receives on a real port. Returns packets, bytes, seconds, ring_full;
        the exception of Ctrl-C or SIGTERM carries those of what was sent
        until then as `sent`."""
        try:
            sent: SentJson = json.loads(_core.send(self.to_json(), port, seconds))
        except BaseException as e:
            partial = getattr(e, "sluice_sent", None)
            if partial is not None:
                e.sent = json.loads(partial)  # type: ignore[attr-defined]
            raise
        return sent

    def validate(self) -> ModelJson:
        """Checks the pipeline; returns the core's model. Raises ValueError naming the problem."""
        model: ModelJson = json.loads(_core.validate(self.to_json()))
        return model

    def run(
        self,
        controller: Union[str, Controller] = "null",
        *,
        periods: int = RunParams.periods,
        period_ms: float = RunParams.period_ms,
        warmup_periods: int = RunParams.warmup_periods,
        backend: str = RunParams.backend,
        slo_statistic: str = RunParams.slo_statistic,
        delta: float = RunParams.delta,
        timing: bool = RunParams.timing,
        on_period: Optional[Callable[[PeriodOutputJson], object]] = None,
        keep_periods: int = RunParams.keep_periods,
    ) -> RunResult:
        """Runs for `warmup_periods + periods` control periods under `controller`
        (a built-in's name, or a `sluice.controller.Controller`). The built-in
        SLO-aware controllers count a flow as active from (1 − `delta`)·SLO
        and grow its buffers up to (1 − 2·`delta`)·SLO. The result keeps the
        last `keep_periods` periods; its summary counts them all.

        Ctrl-C, or an exception raised by `on_period` or by a Python
        controller, stops the run within a period: the pipeline drains and
        the exception propagates with the result of the periods done as its
        `result` attribute (`result.interrupted` says why it ended)."""
        if not isinstance(controller, (str, Controller)):
            raise TypeError(f"controller must be a built-in's name or a sluice.controller.Controller, not {type(controller).__name__}")
        params = RunParams(backend, periods, warmup_periods, period_ms, slo_statistic, delta, timing, keep_periods)
        callback = None
        if on_period is not None:
            notify = on_period

            def callback(text: str) -> None:
                notify(json.loads(text))

        try:
            report = _core.run(self.to_json(), controller, json.dumps(params.spec()), on_period=callback)
        except BaseException as e:
            partial = getattr(e, "sluice_report", None)
            if partial is not None:
                e.result = RunResult(json.loads(partial))  # type: ignore[attr-defined]
            raise
        return RunResult(json.loads(report))


def _site(address: str) -> str:
    """The prefix a port tells a template's flow by: its destination's /24 (IPv6: /64)."""
    ip = ipaddress.ip_address(address)
    return str(ipaddress.ip_network(f"{ip}/{24 if ip.version == 4 else 64}", strict=False))
