//! Writes a round-cost workload (see `sluice_lab::round_cost`) for
//! FastClick, so that both engines run the same traffic through the same
//! graph: the workload's frames as a pcap at PCAP and, on stdout, a Click
//! configuration that loads them into memory, replays them once to warm
//! up, then LOOPS times in batches of B through each NF's nearest Click
//! element to the sink, timed inside Click. At the end it prints
//! `sluice-fastclick T0 T1 N0 N1`: the steady clock (s) and the sink's
//! count (pkt) before and after the LOOPS replays.
//!
//!     fastclick CASE B LOOPS PCAP [SINK] > CASE.click
//!
//! SINK is `discard` (a router's usual sink, counted through its `count`
//! handler; the default) or `counter` (`Counter -> Discard`, which also
//! updates two rate estimators per batch, each reading the clock).
//! Click's LPM reads the destination from an annotation, so an LPM is
//! `CheckIPHeader2(OFFSET 14)` (no checksum check) then `RadixIPLookup`;
//! an Ethernet check is a `Classifier` whose other output discards.

use std::fmt::Write as _;

use pcap_file::pcap::{PcapPacket, PcapWriter};
use sluice_nf::{LpmSpec, MacRewriteSpec, NfSpec, TypeCheckSpec};
use sluice_lab::round_cost::{frames, shape};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (case, batch, loops, pcap, sink) = match &args[..] {
        [_, case, batch, loops, pcap] => (case, batch, loops, pcap, "discard"),
        [_, case, batch, loops, pcap, sink] => (case, batch, loops, pcap, sink.as_str()),
        _ => {
            eprintln!("usage: fastclick CASE B LOOPS PCAP [discard|counter] > CASE.click");
            std::process::exit(2);
        }
    };
    if let Err(e) = write_pcap(pcap) {
        eprintln!("fastclick: cannot write {pcap}: {e}");
        std::process::exit(1);
    }
    match config(case, batch, loops, pcap, sink) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("fastclick: {e}");
            std::process::exit(1);
        }
    }
}

/// The workload's frames, one per flow, as a pcap at `path`.
fn write_pcap(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let mut writer = PcapWriter::new(std::io::BufWriter::new(std::fs::File::create(path)?))?;
    for (i, frame) in frames()?.iter().enumerate() {
        writer.write_packet(&PcapPacket::new(std::time::Duration::from_micros(i as u64), frame.len() as u32, frame))?;
    }
    Ok(())
}

/// The Click configuration of workload `case`.
fn config(case: &str, batch: &str, loops: &str, pcap: &str, sink: &str) -> Result<String, Box<dyn std::error::Error>> {
    let (head, branches) = shape(case)?;
    let sink = match sink {
        "discard" => "sink :: Discard;",
        "counter" => "sink :: Counter -> Discard;",
        other => return Err(format!("unknown sink '{other}' (discard or counter)").into()),
    };
    let mut text = format!(
        "FromDump({pcap}, STOP false, TIMING false)\n  -> replay :: ReplayUnqueue(STOP 1, BURST {batch}, QUICK_CLONE false, ACTIVE true);\n{sink}\n"
    );
    let mut at = "replay".to_string();
    for (i, nf) in head.iter().enumerate() {
        at = element(&mut text, &at, &format!("h{i}"), nf)?;
    }
    for (b, nfs) in branches.iter().enumerate() {
        let mut from = if branches.len() > 1 { format!("{at}[{b}]") } else { at.clone() };
        for (i, nf) in nfs.iter().enumerate() {
            from = element(&mut text, &from, &format!("b{b}_{i}"), nf)?;
        }
        writeln!(text, "{from} -> sink;")?;
    }
    // The first replay (STOP 1) loads the frames and warms up; the timed
    // part is the LOOPS replays after it.
    writeln!(
        text,
        "DriverManager(pause, set t0 $(now_steady), set n0 $(sink.count), write replay.stop {loops}, write replay.active true, pause,\n  \
         set t1 $(now_steady), print \"sluice-fastclick $t0 $t1 $n0 $(sink.count)\", stop);"
    )?;
    Ok(text)
}

/// Appends NF `nf` as element `name` fed by `from`; returns what feeds the next.
fn element(text: &mut String, from: &str, name: &str, nf: &NfSpec) -> Result<String, Box<dyn std::error::Error>> {
    match nf {
        NfSpec::TypeCheck(TypeCheckSpec { ether_type, also }) if also.is_empty() => writeln!(text, "{from} -> {name} :: Classifier(12/{ether_type:04x}, -); {name}[1] -> Discard;")?,
        NfSpec::Lpm(LpmSpec { routes, .. }) => {
            let routes: Vec<String> = routes.iter().map(|(prefix, gate)| format!("{prefix} {gate}")).collect();
            writeln!(text, "{from} -> CheckIPHeader2(OFFSET 14) -> {name} :: RadixIPLookup({});", routes.join(", "))?
        }
        NfSpec::TtlDecrement(_) => writeln!(text, "{from} -> {name} :: DecIPTTL;")?,
        NfSpec::MacRewrite(MacRewriteSpec { src, dst }) => writeln!(text, "{from} -> {name} :: EtherRewrite(SRC {src}, DST {dst});")?,
        NfSpec::IpChecksum(_) => writeln!(text, "{from} -> {name} :: SetIPChecksum;")?,
        other => return Err(format!("no Click element stands for {}", other.kind()).into()),
    }
    Ok(name.to_string())
}
