//! The Reframer on real packets: what it holds, when it lets go, in what
//! order, and that nothing is lost, duplicated or reordered within a flow.

use etherparse::PacketBuilder;
use proptest::prelude::*;
use sluice_core::harness::{Harness, Outcome};
use sluice_core::{NetworkFunction, PacketMeta};
use sluice_nf::reframer::{BypassRules, Priority, Reframer, ReframerConfig};

const T_BUFF_NS: u64 = 10_000;

/// A UDP packet of flow `flow` (its source port), sequence `seq` in its meta.
fn udp(flow: u16) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4([10, 0, 0, 1], [20, 0, 0, 1], 64).udp(flow, 80);
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 18]).unwrap();
    v
}

/// A TCP segment of flow `flow`, with SYN when `syn`, FIN when `fin`.
fn tcp(flow: u16, syn: bool, fin: bool) -> Vec<u8> {
    let mut b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4([10, 0, 0, 1], [20, 0, 0, 1], 64).tcp(flow, 80, 1, 1000);
    if syn {
        b = b.syn();
    }
    if fin {
        b = b.fin();
    }
    let mut v = Vec::new();
    b.write(&mut v, &[1, 2, 3]).unwrap();
    v
}

fn config() -> ReframerConfig {
    ReframerConfig { t_buff_ns: T_BUFF_NS, max_burst: 32, max_flows: 64, max_held: 512, priority: Priority::OldestInQueue, bypass: BypassRules::default(), coalesce_acks: false }
}

/// Metadata carrying `seq` (the test's packet number) and the flow as `mark`.
fn meta(seq: u32, flow: u16) -> PacketMeta {
    PacketMeta { seq, mark: flow as u32, ..Default::default() }
}

/// (flow, seq) of what gate 0 sent.
fn sent(o: &Outcome) -> Vec<(u32, u32)> {
    o.metas[0].iter().map(|m| (m.mark, m.seq)).collect()
}

/// Runs `r` on packets of `flows` (one each, numbered from `first`) at time `now`.
fn arrive(h: &mut Harness, r: &mut Reframer, flows: &[u16], first: u32, now: u64) -> Outcome {
    h.set_now(now);
    let frames: Vec<_> = flows.iter().map(|&f| udp(f)).collect();
    let metas: Vec<_> = flows.iter().enumerate().map(|(i, &f)| meta(first + i as u32, f)).collect();
    h.run_with_meta(r, &frames, &metas)
}

#[test]
fn interleaved_flows_leave_flow_by_flow_after_t_buff() {
    let (mut h, mut r) = (Harness::default(), Reframer::new(config()).unwrap());
    let o = arrive(&mut h, &mut r, &[1, 2, 3, 1, 2, 3, 1, 2, 3], 0, 0);
    assert!(sent(&o).is_empty(), "everything is held");
    assert_eq!(r.due_ns(), Some(T_BUFF_NS));
    h.set_now(T_BUFF_NS - 1);
    assert!(sent(&h.run(&mut r, &[])).is_empty(), "not yet due");
    h.set_now(T_BUFF_NS);
    let o = h.run(&mut r, &[]);
    assert_eq!(sent(&o), vec![(1, 0), (1, 3), (1, 6), (2, 1), (2, 4), (2, 7), (3, 2), (3, 5), (3, 8)]);
    let s = r.stats();
    assert_eq!((s.runs_in, s.runs_out, s.held(), s.released_timeout), (9, 3, 0, 3));
    assert_eq!((s.slf_in(), s.slf_out()), (1.0, 3.0));
    assert_eq!(r.due_ns(), None);
}

#[test]
fn a_flow_at_max_burst_leaves_at_once_and_b_caps_a_run() {
    let mut h = Harness::default();
    let mut r = Reframer::new(ReframerConfig { max_burst: 4, ..config() }).unwrap();
    let o = arrive(&mut h, &mut r, &[1, 2, 1, 2, 1, 1], 0, 0);
    assert_eq!(sent(&o), vec![(1, 0), (1, 2), (1, 4), (1, 5)]);
    assert_eq!(r.stats().released_burst, 1);
    // Eight flows time out together; B = 3 sends them three at a time.
    h.set_batch_size(3);
    let _ = arrive(&mut h, &mut r, &[3, 4, 5, 6, 7, 8, 9], 10, 1);
    h.set_now(T_BUFF_NS + 1);
    let mut out = Vec::new();
    loop {
        let o = h.run(&mut r, &[]);
        assert!(o.metas[0].len() <= 3);
        out.extend(sent(&o));
        if !r.ready() {
            break;
        }
    }
    assert_eq!(out.len(), 9, "flow 2's two packets and the seven others");
}

#[test]
fn bypass_classes_are_never_held_and_never_overtake_their_flow() {
    let mut h = Harness::default();
    let bypass = BypassRules { tcp_control: true, first_packets: 0, dscp: 0 };
    let mut r = Reframer::new(ReframerConfig { bypass, ..config() }).unwrap();
    h.set_now(0);
    let frames = vec![tcp(1, true, false), tcp(1, false, false), tcp(1, false, false), tcp(1, false, true), tcp(2, false, false)];
    let metas: Vec<_> = [1u16, 1, 1, 1, 2].iter().enumerate().map(|(i, &f)| meta(i as u32, f)).collect();
    let o = h.run_with_meta(&mut r, &frames, &metas);
    // SYN at once; the FIN releases the two held before it, then itself; flow 2 waits.
    assert_eq!(sent(&o), vec![(1, 0), (1, 1), (1, 2), (1, 3)]);
    let s = r.stats();
    assert_eq!((s.bypassed, s.released_bypass, s.held()), (2, 1, 1));

    // The first packets of each flow pass; the later ones wait.
    let mut r = Reframer::new(ReframerConfig { bypass: BypassRules { tcp_control: false, first_packets: 2, dscp: 0 }, ..config() }).unwrap();
    let o = arrive(&mut h, &mut r, &[5, 5, 5, 6], 0, 0);
    assert_eq!(sent(&o), vec![(5, 0), (5, 1), (6, 3)]);
}

#[test]
fn a_full_table_passes_new_flows_and_a_full_store_releases_the_oldest() {
    let mut h = Harness::default();
    let mut r = Reframer::new(ReframerConfig { max_flows: 2, ..config() }).unwrap();
    let o = arrive(&mut h, &mut r, &[1, 2, 3, 1], 0, 0);
    assert_eq!(sent(&o), vec![(3, 2)], "flow 3 finds both places holding packets");
    assert_eq!(r.stats().untracked, 1);
    h.set_now(T_BUFF_NS);
    assert_eq!(sent(&h.run(&mut r, &[])).len(), 3);
    // Both flows are idle now: a new one takes the place of the one released first.
    let _ = arrive(&mut h, &mut r, &[4], 10, T_BUFF_NS + 1);
    assert_eq!(r.stats().evicted, 1);

    let mut r = Reframer::new(ReframerConfig { max_held: 3, ..config() }).unwrap();
    let o = arrive(&mut h, &mut r, &[1, 2, 2, 3], 0, 0);
    assert_eq!(sent(&o), vec![(1, 0)], "the fourth packet pushes out the flow waiting longest");
    assert_eq!(r.stats().released_full, 1);
}

#[test]
fn priorities_order_flows_released_together() {
    let mut h = Harness::default();
    for (priority, expect) in [(Priority::OldestInQueue, vec![2, 1]), (Priority::OldestFlow, vec![1, 2]), (Priority::ShortestFlow, vec![2, 1])] {
        let mut r = Reframer::new(ReframerConfig { max_burst: 2, priority, ..config() }).unwrap();
        // Flow 1 is seen first and leaves by burst; both then hold one packet, flow 2's older.
        let _ = arrive(&mut h, &mut r, &[1, 1], 0, 0);
        let _ = arrive(&mut h, &mut r, &[2], 2, 1);
        let _ = arrive(&mut h, &mut r, &[1], 3, 2);
        h.set_now(2 + T_BUFF_NS);
        let order: Vec<u32> = sent(&h.run(&mut r, &[])).iter().map(|p| p.0).collect();
        assert_eq!(order, expect, "{priority:?}");
    }
}

#[test]
fn bad_settings_are_refused_with_the_reason() {
    for (c, word) in [
        (ReframerConfig { t_buff_ns: 0, ..config() }, "t_buff"),
        (ReframerConfig { max_burst: 0, ..config() }, "max_burst"),
        (ReframerConfig { max_flows: 0, ..config() }, "max_flows"),
        (ReframerConfig { max_held: 1 << 30, ..config() }, "max_held"),
    ] {
        let err = Reframer::new(c).err().expect("refused");
        assert!(err.contains(word), "{err}");
    }
}

proptest! {
    /// Random flows, arrival times and settings: every packet leaves once,
    /// in its flow's order, within t_buff of its arrival. Batches mix
    /// flows, so that a flow looked up early in a run may lose its place
    /// to a new one before its packet is taken in.
    #[test]
    fn nothing_lost_duplicated_reordered_or_held_past_t_buff(
        arrivals in prop::collection::vec((prop::collection::vec(0u16..12, 0..6), 0u64..3), 1..120),
        max_burst in 1usize..8,
        max_flows in 1usize..16,
        max_held in 1usize..40,
        first_packets in 0u64..3,
        batch in 1usize..8,
    ) {
        let mut h = Harness::default();
        h.set_batch_size(batch);
        let config = ReframerConfig { t_buff_ns: 5, max_burst, max_flows, max_held, priority: Priority::ShortestFlow, bypass: BypassRules { tcp_control: true, first_packets, dscp: 0 }, coalesce_acks: false };
        let mut r = Reframer::new(config).unwrap();
        let mut now = 0;
        let mut seq = 0u32;
        let mut arrived_at = Vec::new();
        let mut out: Vec<(u32, u32, u64)> = Vec::new();
        // The walker's runs with no input, at each due time up to `until` and while packets are ready.
        let run_due = |h: &mut Harness, r: &mut Reframer, out: &mut Vec<(u32, u32, u64)>, until: u64| {
            let mut at = until;
            while let Some(due) = r.due_ns().filter(|&d| d <= until) {
                at = due;
                h.set_now(at);
                out.extend(sent(&h.run(r, &[])).into_iter().map(|(f, s)| (f, s, at)));
                while r.ready() {
                    out.extend(sent(&h.run(r, &[])).into_iter().map(|(f, s)| (f, s, at)));
                }
            }
            while r.ready() {
                h.set_now(at);
                out.extend(sent(&h.run(r, &[])).into_iter().map(|(f, s)| (f, s, at)));
            }
        };
        for (flows, gap) in &arrivals {
            let (count, gap) = (flows.len(), *gap);
            run_due(&mut h, &mut r, &mut out, now + gap);
            now += gap;
            for _ in 0..count {
                arrived_at.push(now);
            }
            let o = arrive(&mut h, &mut r, flows, seq, now);
            seq += count as u32;
            out.extend(sent(&o).into_iter().map(|(f, s)| (f, s, now)));
            run_due(&mut h, &mut r, &mut out, now);
        }
        // Time passes with no arrivals: everything comes due.
        run_due(&mut h, &mut r, &mut out, u64::MAX);
        let mut seqs: Vec<u32> = out.iter().map(|p| p.1).collect();
        seqs.sort_unstable();
        prop_assert_eq!(seqs, (0..seq).collect::<Vec<_>>(), "each packet once");
        for f in 0..12u32 {
            let of_flow: Vec<u32> = out.iter().filter(|p| p.0 == f).map(|p| p.1).collect();
            prop_assert!(of_flow.windows(2).all(|w| w[0] < w[1]), "flow {} reordered: {:?}", f, of_flow);
        }
        for &(_, s, at) in &out {
            prop_assert!(at - arrived_at[s as usize] <= 5, "packet {} held {} ns", s, at - arrived_at[s as usize]);
        }
        prop_assert_eq!(r.stats().held(), 0);
    }
}

/// A TCP segment of flow 9 acknowledging `ack` with `window`, a SACK block when `sack`, `data` bytes of payload.
fn ack(ack: u32, window: u16, sack: bool, data: usize) -> Vec<u8> {
    let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4([10, 0, 0, 1], [20, 0, 0, 1], 64).tcp(9, 80, 1, window).ack(ack);
    let b = if sack { b.options(&[etherparse::TcpOptionElement::SelectiveAcknowledgement((ack + 100, ack + 200), [None; 3])]).unwrap() } else { b };
    let mut v = Vec::new();
    b.write(&mut v, &vec![7; data]).unwrap();
    v
}

#[test]
fn coalescing_keeps_the_last_duplicate_sack_and_window_changing_acks() {
    let mut h = Harness::default();
    let mut r = Reframer::new(ReframerConfig { coalesce_acks: true, ..config() }).unwrap();
    let frames = vec![
        ack(100, 500, false, 0), // superseded by 200
        ack(200, 500, false, 0), // the next one does not advance
        ack(200, 500, false, 0), // a duplicate
        ack(300, 500, false, 0), // the window changes after it
        ack(400, 600, false, 0), // superseded by 500
        ack(500, 600, true, 0),  // carries SACK
        ack(500, 600, false, 8), // data
        ack(600, 600, false, 0), // superseded by 700
        ack(700, 600, false, 0), // the last
    ];
    let metas: Vec<_> = (0..frames.len() as u32).map(|i| meta(i, 9)).collect();
    h.set_now(0);
    let o = h.run_with_meta(&mut r, &frames, &metas);
    assert!(sent(&o).is_empty());
    h.set_now(T_BUFF_NS);
    let o = h.run(&mut r, &[]);
    let kept: Vec<u32> = sent(&o).iter().map(|p| p.1).collect();
    assert_eq!(kept, vec![1, 2, 3, 5, 6, 8]);
    assert_eq!((o.dropped, r.stats().coalesced, r.stats().held()), (3, 3, 0));
    assert_eq!(o.gates[0][0], frames[1], "packets pass unchanged (checksums stay valid)");
}
