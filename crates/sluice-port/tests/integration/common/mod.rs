//! What the port tests share: a veth pair in a namespace of the test's own, and frames.

use std::process::Command;

/// Moves this thread into a fresh network namespace with veth pair
/// `vtx0` ↔ `vrx0`, both up; false, said as a skip of `test`, where that
/// is not allowed here. The namespace goes away with the thread and the
/// sockets in it.
pub fn veth_pair_in_own_namespace(test: &str) -> bool {
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        skipped(test, &format!("no network namespace ({})", std::io::Error::last_os_error()));
        return false;
    }
    let ip = |args: &[&str]| Command::new("ip").args(args).status().is_ok_and(|s| s.success());
    let ok = ip(&["link", "add", "name", "vtx0", "type", "veth", "peer", "name", "vrx0"]) && ip(&["link", "set", "vtx0", "up"]) && ip(&["link", "set", "vrx0", "up"]);
    if !ok {
        skipped(test, "no veth pair (is iproute2 installed?)");
    }
    ok
}

/// Says that `test` did not run, and why, on the terminal itself: the
/// harness shows a passing test's own output to no one.
pub fn skipped(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {why}");
}

/// A UDP frame to 10.0.`net`.1 carrying `seq`.
pub fn frame(net: u8, seq: u32) -> Vec<u8> {
    let builder = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4([10, 9, 0, 1], [10, 0, net, 1], 64).udp(1000, 2000);
    let mut out = Vec::new();
    builder.write(&mut out, &seq.to_be_bytes()).unwrap();
    out
}
