//! `reframer(t_buff, max_burst, …)`: flow-aware batching, after Reframer
//! ("Packet Order Matters!", NSDI'22). It holds each 5-tuple flow's packets
//! for up to `t_buff` and sends them flow by flow, so that the batches
//! behind it carry runs of one flow and per-flow work (a lookup, a table
//! entry) is paid once a run instead of once a packet.
//!
//! A flow is released when its oldest packet has waited `t_buff`, when it
//! holds `max_burst` packets, when a packet of a bypass class arrives for
//! it (that packet follows the flow's held ones, so no flow is reordered),
//! or early, oldest first, when the Reframer holds `max_held` packets.
//! Flows released together go out in the configured order; everything
//! released leaves in runs of at most the pipeline's batch size B, in
//! later runs when more than B came due (the walker runs the NF again).
//!
//! The flow table holds `max_flows` flows and never grows. A flow stays in
//! it while it holds packets and after, idle, until a new flow needs its
//! place (least recently released first). When every place holds packets,
//! a new flow's packets pass without being held (counted `untracked`):
//! that flow has nothing held, so passing keeps its order.
//!
//! Packets that are not IPv4, or whose ports are cut off, pass at once
//! (`unparsed`); IPv4 packets other than UDP and TCP are keyed by their
//! addresses and protocol.

pub mod ack_coalesce;

use sluice_core::DropReason;
use crate::five_tuple::FiveTuple;
use crate::flow_index::{prefetch, FlowIndex};
use sluice_core::wire::ip_protocol;
use sluice_core::wire::l4::{self, tcp_flags};
use sluice_core::wire::ip_of;

use ack_coalesce::PureAck;
use sluice_core::telemetry::NfCounters;
use sluice_core::{Batch, NetworkFunction, NfContext, Outputs, PacketId, PacketPool};

/// No flow, cell or list neighbour.
const NIL: u32 = u32::MAX;

/// Most flows a Reframer tracks.
pub const MAX_FLOWS: usize = 1 << 20;
/// Most packets a Reframer holds: half the largest pool.
pub const MAX_HELD: usize = sluice_core::limits::MAX_POOL_BUFFERS / 2;

/// The order in which flows released together leave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// The flow whose oldest held packet waited longest first.
    #[default]
    OldestInQueue,
    /// The flow first seen earliest first.
    OldestFlow,
    /// The flow with the fewest packets seen so far first (mice before elephants).
    ShortestFlow,
}

/// Packets that are never held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BypassRules {
    /// TCP segments with SYN, FIN or RST set.
    pub tcp_control: bool,
    /// The first this many packets of each flow: flows of at most this
    /// many packets (mice) are never delayed.
    pub first_packets: u64,
    /// Packets whose DSCP is one of these (bit d: DSCP d).
    pub dscp: u64,
}

/// What a Reframer is built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReframerConfig {
    /// The longest a packet is held (ns).
    pub t_buff_ns: u64,
    /// A flow is released once it holds this many packets (pkt).
    pub max_burst: usize,
    /// Flows the table tracks.
    pub max_flows: usize,
    /// Packets held at most (pkt).
    pub max_held: usize,
    /// The order of flows released together.
    pub priority: Priority,
    /// Packets never held.
    pub bypass: BypassRules,
    /// Drop a flow's pure ACKs that the next one sent with them makes
    /// redundant (see [`ack_coalesce`]); counted, and as the NF's drops.
    pub coalesce_acks: bool,
}

/// What a Reframer has done so far (cumulative counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReframerStats {
    /// Packets that arrived (pkt).
    pub packets_in: u64,
    /// Runs of one flow in the batches that arrived.
    pub runs_in: u64,
    /// Packets sent (pkt).
    pub packets_out: u64,
    /// Runs of one flow in the batches sent.
    pub runs_out: u64,
    /// Packets sent without being held: a bypass class, not IPv4, no room in the flow table (pkt).
    pub bypassed: u64,
    /// Of those, packets that were not IPv4 (pkt).
    pub unparsed: u64,
    /// Of those, packets of new flows that found the flow table full of flows holding packets (pkt).
    pub untracked: u64,
    /// Flow releases because the oldest packet waited `t_buff`.
    pub released_timeout: u64,
    /// Flow releases because the flow held `max_burst` packets.
    pub released_burst: u64,
    /// Flow releases because a bypass packet of the flow arrived.
    pub released_bypass: u64,
    /// Flow releases because the Reframer held `max_held` packets.
    pub released_full: u64,
    /// Σ over flow releases of the time from the flow's last arrival to the release (ns).
    pub idle_wait_ns: u64,
    /// Flows entered into the table.
    pub flows_entered: u64,
    /// Pure ACKs dropped because the next one sent with them made them redundant (pkt).
    pub coalesced: u64,
    /// Idle flows forgotten to make room for new ones.
    pub evicted: u64,
}

/// The names of [`ReframerStats`]' fields, in the order of its NF counter slots.
pub const COUNTER_NAMES: [&str; 15] = [
    "packets_in", "runs_in", "packets_out", "runs_out", "bypassed", "unparsed", "untracked",
    "released_timeout", "released_burst", "released_bypass", "released_full", "idle_wait_ns", "flows_entered", "evicted", "coalesced",
];

impl ReframerStats {
    /// Mean run of one flow in the batches that arrived (the spatial locality factor, SLF).
    pub fn slf_in(&self) -> f64 {
        ratio(self.packets_in, self.runs_in)
    }

    /// Mean run of one flow in the batches sent.
    pub fn slf_out(&self) -> f64 {
        ratio(self.packets_out, self.runs_out)
    }

    /// Packets held now, ready ones included (pkt).
    pub fn held(&self) -> u64 {
        self.packets_in - self.packets_out - self.coalesced
    }

    /// Flows in the table now.
    pub fn flows(&self) -> u64 {
        self.flows_entered - self.evicted
    }

    /// The NF counter slots, in [`COUNTER_NAMES`]' order.
    fn slots(&self) -> [u64; 15] {
        let s = self;
        [
            s.packets_in, s.runs_in, s.packets_out, s.runs_out, s.bypassed, s.unparsed, s.untracked,
            s.released_timeout, s.released_burst, s.released_bypass, s.released_full, s.idle_wait_ns, s.flows_entered, s.evicted, s.coalesced,
        ]
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// One tracked flow: one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Flow {
    key: FiveTuple,
    first_seen_ns: u64,
    /// When its oldest held packet arrived (ns; meaningful while it holds some).
    waiting_since_ns: u64,
    last_arrival_ns: u64,
    /// Packets seen since it entered the table (saturating).
    seen: u32,
    held: u32,
    /// Its held packets: first and last cell.
    head: u32,
    tail: u32,
    /// Neighbours in the list it is on: holding, or idle.
    prev: u32,
    next: u32,
}

/// A doubly linked list of flows through their `prev`/`next`.
#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
}

impl List {
    const EMPTY: List = List { head: NIL, tail: NIL };

    fn push_back(&mut self, flows: &mut [Flow], f: u32) {
        flows[f as usize].prev = self.tail;
        flows[f as usize].next = NIL;
        match self.tail {
            NIL => self.head = f,
            t => flows[t as usize].next = f,
        }
        self.tail = f;
    }

    fn remove(&mut self, flows: &mut [Flow], f: u32) {
        let Flow { prev, next, .. } = flows[f as usize];
        match prev {
            NIL => self.head = next,
            p => flows[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => flows[n as usize].prev = prev,
        }
    }
}

/// A held packet and the next held packet of its flow.
#[derive(Clone, Copy)]
struct Cell {
    id: PacketId,
    next: u32,
}

/// A packet ready to leave and the flow it counts as (for runs out).
#[derive(Clone, Copy)]
struct Ready {
    id: PacketId,
    flow: u32,
}

/// Holds packets per flow and sends them flow by flow (see the module doc).
pub struct Reframer {
    config: ReframerConfig,
    index: FlowIndex,
    flows: Vec<Flow>,
    /// Places of the table no flow has.
    free_flows: Vec<u32>,
    /// Flows that hold packets, by when their oldest arrived.
    holding: List,
    /// Flows that hold none, least recently active first.
    idle: List,
    cells: Vec<Cell>,
    free_cells: Vec<u32>,
    /// Packets released and not yet sent, in order (a ring).
    ready: Box<[Ready]>,
    ready_head: usize,
    ready_len: usize,
    /// Flows that timed out in this run (sorted by priority before release).
    due: Vec<u32>,
    /// Per packet of the batch being taken in: its flow and bypass class
    /// (`None`: not IPv4), and the flow entry found for it (a hint, see `process`).
    classes: Box<[Option<(FiveTuple, bool)>; sluice_core::MAX_BURST]>,
    hints: Box<[u32; sluice_core::MAX_BURST]>,
    /// Flows evicted before the hints were taken: a hint is stale only
    /// where a flow was evicted since (a new flow may have taken its place).
    hints_evicted: u64,
    stats: ReframerStats,
}

impl Reframer {
    /// A Reframer, or what is wrong with `config`.
    pub fn new(config: ReframerConfig) -> Result<Self, String> {
        if config.t_buff_ns == 0 {
            return Err("reframer t_buff must be > 0 (0 holds nothing: leave the reframer out)".into());
        }
        if !(1..=sluice_core::MAX_BURST).contains(&config.max_burst) {
            return Err(format!("reframer max_burst {} is outside 1..={}", config.max_burst, sluice_core::MAX_BURST));
        }
        if !(1..=MAX_FLOWS).contains(&config.max_flows) {
            return Err(format!("reframer max_flows {} is outside 1..={MAX_FLOWS}", config.max_flows));
        }
        if !(1..=MAX_HELD).contains(&config.max_held) {
            return Err(format!("reframer max_held {} pkt is outside 1..={MAX_HELD}", config.max_held));
        }
        let (flows, held) = (config.max_flows, config.max_held);
        let blank = Flow { key: FiveTuple::v4(0, 0, 0, 0, 0), first_seen_ns: 0, waiting_since_ns: 0, last_arrival_ns: 0, seen: 0, held: 0, head: NIL, tail: NIL, prev: NIL, next: NIL };
        Ok(Self {
            index: FlowIndex::with_capacity(flows),
            flows: vec![blank; flows],
            free_flows: (0..flows as u32).rev().collect(),
            holding: List::EMPTY,
            idle: List::EMPTY,
            cells: vec![Cell { id: PacketId(0), next: NIL }; held],
            free_cells: (0..held as u32).rev().collect(),
            // Everything held, a batch left from the last run and a batch arriving
            // (each run sends at least as many as arrived); a power of two, indexed by mask.
            ready: vec![Ready { id: PacketId(0), flow: NIL }; (held + 2 * sluice_core::MAX_BURST).next_power_of_two()].into(),
            ready_head: 0,
            ready_len: 0,
            due: Vec::with_capacity(flows),
            classes: Box::new([None; sluice_core::MAX_BURST]),
            hints: Box::new([NIL; sluice_core::MAX_BURST]),
            hints_evicted: 0,
            stats: ReframerStats::default(),
            config,
        })
    }

    /// What it has done so far.
    pub fn stats(&self) -> ReframerStats {
        self.stats
    }

    /// The flow a packet belongs to (`None`: not IP, or malformed) and whether it bypasses by its headers.
    fn classify(rules: &BypassRules, pool: &PacketPool, id: PacketId) -> Option<(FiveTuple, bool)> {
        let ip = ip_of(pool.data(id)).ok()?;
        let (proto, upper) = ip.upper().ok()?;
        let key = FiveTuple::of_upper(&ip, proto, upper)?;
        let mut bypass = rules.dscp & (1 << ip.dscp()) != 0;
        if proto == ip_protocol::TCP && rules.tcp_control {
            let flags = l4::tcp_flags(upper).unwrap_or(0);
            bypass |= flags & (tcp_flags::SYN | tcp_flags::FIN | tcp_flags::RST) != 0;
        }
        Some((key, bypass))
    }

    /// The flow of `key`, entered if new (`None`: the table is full of flows
    /// holding packets); `hint`, a flow looked up for it earlier in the run
    /// (or `NIL`), is it unless its place went to another flow since.
    fn flow_of(&mut self, key: FiveTuple, hint: u32, now: u64) -> Option<u32> {
        if hint != NIL && (self.stats.evicted == self.hints_evicted || self.flows[hint as usize].key == key) {
            return Some(hint);
        }
        let flows = &self.flows;
        let mut slot = match self.index.find(&key, |f| flows[f as usize].key) {
            Ok(f) => return Some(f),
            Err(slot) => slot,
        };
        let f = match self.free_flows.pop() {
            Some(f) => f,
            None => {
                let f = self.idle.head;
                if f == NIL {
                    return None;
                }
                self.idle.remove(&mut self.flows, f);
                let flows = &self.flows;
                self.index.remove(&flows[f as usize].key, |f| flows[f as usize].key);
                // Removing moved entries: find the new key's slot again.
                slot = self.index.find(&key, |f| flows[f as usize].key).expect_err("the key is new");
                self.stats.evicted += 1;
                f
            }
        };
        self.index.insert_at(slot, f);
        self.stats.flows_entered += 1;
        self.flows[f as usize] = Flow { key, first_seen_ns: now, waiting_since_ns: now, last_arrival_ns: now, seen: 0, held: 0, head: NIL, tail: NIL, prev: NIL, next: NIL };
        self.idle.push_back(&mut self.flows, f);
        Some(f)
    }

    fn push_ready(&mut self, id: PacketId, flow: u32) {
        let mask = self.ready.len() - 1;
        debug_assert!(self.ready_len <= mask, "ready holds everything held and a batch");
        self.ready[(self.ready_head + self.ready_len) & mask] = Ready { id, flow };
        self.ready_len += 1;
    }

    /// Moves flow `f`'s held packets to the ready queue, in order; it becomes idle.
    fn release(&mut self, f: u32, now: u64) {
        let flow = self.flows[f as usize];
        let mut c = flow.head;
        while c != NIL {
            let Cell { id, next } = self.cells[c as usize];
            self.push_ready(id, f);
            self.free_cells.push(c);
            c = next;
        }
        self.stats.idle_wait_ns += now.saturating_sub(flow.last_arrival_ns);
        self.holding.remove(&mut self.flows, f);
        self.idle.push_back(&mut self.flows, f);
        let flow = &mut self.flows[f as usize];
        flow.held = 0;
        flow.head = NIL;
        flow.tail = NIL;
    }

    /// Holds packet `id` in flow `f`.
    fn hold(&mut self, f: u32, id: PacketId, now: u64) {
        if self.free_cells.is_empty() {
            // Full: the flow waiting longest goes early (it may be `f`).
            self.release(self.holding.head, now);
            self.stats.released_full += 1;
        }
        let c = self.free_cells.pop().expect("a release freed a cell");
        self.cells[c as usize] = Cell { id, next: NIL };
        if self.flows[f as usize].held == 0 {
            self.idle.remove(&mut self.flows, f);
            self.holding.push_back(&mut self.flows, f);
            self.flows[f as usize].waiting_since_ns = now;
            self.flows[f as usize].head = c;
        } else {
            let tail = self.flows[f as usize].tail;
            self.cells[tail as usize].next = c;
        }
        let flow = &mut self.flows[f as usize];
        flow.tail = c;
        flow.held += 1;
        if flow.held as usize >= self.config.max_burst {
            self.release(f, now);
            self.stats.released_burst += 1;
        }
    }

    /// Takes in one arriving packet of `class` (see `classify`): held, or
    /// ready at once; `hint` as for `flow_of`. Returns its flow (`NIL`: none).
    fn admit(&mut self, id: PacketId, class: Option<(FiveTuple, bool)>, hint: u32, now: u64) -> u32 {
        let Some((key, by_header)) = class else {
            self.stats.bypassed += 1;
            self.stats.unparsed += 1;
            self.push_ready(id, NIL);
            return NIL;
        };
        let Some(f) = self.flow_of(key, hint, now) else {
            self.stats.bypassed += 1;
            self.stats.untracked += 1;
            self.push_ready(id, NIL);
            return NIL;
        };
        let flow = &mut self.flows[f as usize];
        flow.seen = flow.seen.saturating_add(1);
        flow.last_arrival_ns = now;
        if by_header || u64::from(flow.seen) <= self.config.bypass.first_packets {
            if flow.held > 0 {
                self.release(f, now);
                self.stats.released_bypass += 1;
            }
            self.stats.bypassed += 1;
            self.push_ready(id, f);
        } else {
            self.hold(f, id, now);
        }
        f
    }

    /// Releases the flows whose oldest packet has waited `t_buff` at `now`, in priority order.
    fn release_timed_out(&mut self, now: u64) {
        let mut f = self.holding.head;
        while f != NIL && self.flows[f as usize].waiting_since_ns + self.config.t_buff_ns <= now {
            self.due.push(f);
            f = self.flows[f as usize].next;
        }
        if self.due.is_empty() {
            return;
        }
        let flows = &self.flows;
        match self.config.priority {
            // The holding list is already in this order.
            Priority::OldestInQueue => {}
            // Unstable sorts do not allocate; ties go by waiting time.
            Priority::OldestFlow => self.due.sort_unstable_by_key(|&f| (flows[f as usize].first_seen_ns, flows[f as usize].waiting_since_ns)),
            Priority::ShortestFlow => self.due.sort_unstable_by_key(|&f| (flows[f as usize].seen, flows[f as usize].waiting_since_ns)),
        }
        for i in 0..self.due.len() {
            self.release(self.due[i], now);
        }
        self.stats.released_timeout += self.due.len() as u64;
        self.due.clear();
    }

    /// Sends up to `n` ready packets out of gate 0, counting runs of one
    /// flow; drops the pure ACKs the next packet makes redundant, when it coalesces.
    fn send(&mut self, ctx: &mut NfContext<'_>, out: &mut Outputs<'_>, n: usize) {
        let n = self.ready_len.min(n);
        let mask = self.ready.len() - 1;
        let mut last = NIL;
        // The packet just before, if it was a pure ACK.
        let mut previous: Option<PureAck> = None;
        let mut sent = 0;
        for i in 0..n {
            let Ready { id, flow } = self.ready[(self.ready_head + i) & mask];
            if self.config.coalesce_acks && flow != NIL {
                let this = PureAck::of(ctx.pool.data(id));
                let before = if flow == last { previous } else { None };
                let next = self.ready[(self.ready_head + i + 1) & mask];
                let superseded = this.is_some_and(|a| {
                    i + 1 < self.ready_len && next.flow == flow && PureAck::of(ctx.pool.data(next.id)).is_some_and(|b| a.superseded_by(&b, before.as_ref()))
                });
                previous = this;
                if superseded {
                    ctx.drop_packet(id, DropReason::Superseded);
                    self.stats.coalesced += 1;
                    last = flow;
                    continue;
                }
            }
            if sent == 0 || flow != last || flow == NIL {
                self.stats.runs_out += 1;
            }
            last = flow;
            out.push(0, id);
            sent += 1;
        }
        self.ready_head = (self.ready_head + n) & mask;
        self.ready_len -= n;
        self.stats.packets_out += sent;
    }
}

impl NetworkFunction for Reframer {
    fn outgates(&self) -> usize {
        1
    }

    fn process(&mut self, ctx: &mut NfContext<'_>, input: &mut Batch, out: &mut Outputs<'_>) {
        let now = ctx.now();
        let ids = input.as_slice();
        let arrived = ids.len();
        // Three passes, so that a batch's cache misses overlap: parse each
        // packet and fetch its index slot; look its flow up and fetch the
        // entry; then take the packets in, in order.
        for (class, &id) in self.classes.iter_mut().zip(ids) {
            *class = Self::classify(&self.config.bypass, ctx.pool, id);
            if let Some((key, _)) = class {
                self.index.prefetch(key);
            }
        }
        let flows = &self.flows;
        self.hints_evicted = self.stats.evicted;
        for (hint, class) in self.hints.iter_mut().zip(&self.classes[..arrived]) {
            *hint = match class.as_ref().map(|(key, _)| self.index.find(key, |f| flows[f as usize].key)) {
                Some(Ok(f)) => {
                    prefetch(&flows[f as usize]);
                    f
                }
                _ => NIL,
            };
        }
        let mut last = NIL;
        for (i, &id) in ids.iter().enumerate() {
            let f = self.admit(id, self.classes[i], self.hints[i], now);
            if i == 0 || f != last || f == NIL {
                self.stats.runs_in += 1;
            }
            last = f;
        }
        self.stats.packets_in += arrived as u64;
        input.clear();
        self.release_timed_out(now);
        // A run sends B, or as many as arrived: what waits to be sent stays bounded.
        self.send(ctx, out, ctx.batch_size().max(arrived));
        ctx.note_held(self.due_ns(), self.ready());
    }

    fn most_held(&self) -> usize {
        self.config.max_held
    }

    fn held(&self) -> usize {
        self.stats.held() as usize
    }

    fn due_ns(&self) -> Option<u64> {
        match self.holding.head {
            NIL => None,
            f => Some(self.flows[f as usize].waiting_since_ns + self.config.t_buff_ns),
        }
    }

    fn ready(&self) -> bool {
        self.ready_len > 0
    }

    fn release_all(&mut self) {
        while self.holding.head != NIL {
            let f = self.holding.head;
            self.release(f, self.flows[f as usize].last_arrival_ns);
        }
    }

    fn set_hold_ns(&mut self, ns: u64) {
        self.config.t_buff_ns = ns.max(1);
    }

    fn read_counters(&self, into: &mut NfCounters) {
        into[..COUNTER_NAMES.len()].copy_from_slice(&self.stats.slots());
    }
}

/// `reframer`: flow-aware batching (Reframer, NSDI'22). Holds each 5-tuple
/// flow's packets up to `t_buff_us` and sends them flow by flow, so the
/// batches behind it carry runs of one flow. A flow also leaves once it
/// holds `max_burst` packets; the table tracks `max_flows` flows and the
/// NF holds at most `max_held` packets (beyond, the flow waiting longest
/// leaves early). Flows released together leave `priority` first. With
/// `slo_control`, the run sets the hold time each period from the delay
/// slack of the flows through it, up to `t_buff_us`, growing it only while
/// a µs more saves ≥ 0.1% of the measured work per packet (a period's
/// `modules[name]["hold_us"]` says what it was). With `coalesce_acks`, a
/// flow's pure ACKs that the next one sent with them makes redundant are
/// dropped (not duplicates, SACKs, window changes or the last; counted as
/// the NF's drops and as `coalesced`). Its counters: packets and runs of
/// one flow in and out, releases by cause, bypassed packets, flows entered
/// and evicted.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReframerSpec {
    /// The longest a packet is held (µs, > 0, at most 1 s).
    pub t_buff_us: f64,
    /// A flow leaves once it holds this many packets (pkt, 1..=256).
    #[serde(default = "reframer_defaults::max_burst")]
    pub max_burst: usize,
    /// Flows tracked (the table never grows).
    #[serde(default = "reframer_defaults::max_flows")]
    pub max_flows: usize,
    /// Packets held at most (pkt); beyond, the longest-waiting flow leaves early.
    #[serde(default = "reframer_defaults::max_held")]
    pub max_held: usize,
    /// The order of flows released together.
    #[serde(default)]
    pub priority: Priority,
    /// Packets never held.
    #[serde(default)]
    pub bypass: ReframerBypass,
    /// Drop pure ACKs that the next one of their flow, sent with them,
    /// makes redundant.
    #[serde(default)]
    pub coalesce_acks: bool,
    /// Let the run's hold controller choose the hold time from the delay
    /// slack of the flows through it, up to `t_buff_us`.
    #[serde(default)]
    pub slo_control: bool,
}

/// Packets a `reframer` never holds, as descriptions write them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReframerBypass {
    /// TCP segments with SYN, FIN or RST.
    #[serde(default = "reframer_defaults::tcp_control")]
    pub tcp_control: bool,
    /// The first this many packets of every flow (so flows this short are never delayed).
    #[serde(default)]
    pub first_packets: u64,
    /// Packets with one of these DSCP values (0..=63).
    #[serde(default)]
    pub dscp: Vec<u8>,
}

impl Default for ReframerBypass {
    fn default() -> Self {
        Self { tcp_control: reframer_defaults::tcp_control(), first_packets: 0, dscp: Vec::new() }
    }
}

impl ReframerBypass {
    fn rules(&self) -> Result<BypassRules, String> {
        let mut dscp = 0u64;
        for &d in &self.dscp {
            if d > 63 {
                return Err(format!("reframer bypass DSCP {d} is outside 0..=63"));
            }
            dscp |= 1 << d;
        }
        Ok(BypassRules { tcp_control: self.tcp_control, first_packets: self.first_packets, dscp })
    }
}

/// Defaults of a `reframer`'s settings.
mod reframer_defaults {
    pub fn max_burst() -> usize {
        32
    }
    pub fn max_flows() -> usize {
        65_536
    }
    pub fn max_held() -> usize {
        4096
    }
    pub fn tcp_control() -> bool {
        true
    }
}

impl ReframerSpec {
    /// The hold time in ns (at least 1).
    fn t_buff_ns(&self) -> u64 {
        (self.t_buff_us * 1e3).round().max(1.0) as u64
    }
}

impl crate::NfConfig for ReframerSpec {
    fn build(&self) -> Result<Box<dyn NetworkFunction>, String> {
        let t_buff_us = self.t_buff_us;
        if !(t_buff_us.is_finite() && t_buff_us > 0.0 && t_buff_us <= 1e6) {
            return Err(format!("reframer t_buff_us {t_buff_us} must be > 0 and at most 1 s"));
        }
        Ok(Box::new(Reframer::new(ReframerConfig {
            t_buff_ns: self.t_buff_ns(),
            max_burst: self.max_burst,
            max_flows: self.max_flows,
            max_held: self.max_held,
            priority: self.priority,
            bypass: self.bypass.rules()?,
            coalesce_acks: self.coalesce_acks,
        })?))
    }

    fn most_held(&self) -> usize {
        self.max_held
    }

    fn max_hold_ns(&self) -> Option<u64> {
        self.slo_control.then(|| self.t_buff_ns())
    }

    fn counter_names(&self) -> &'static [&'static str] {
        &COUNTER_NAMES
    }
}
