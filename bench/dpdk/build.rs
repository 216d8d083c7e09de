//! Builds the C shim against DPDK as pkg-config describes it.

use std::process::Command;

fn main() {
    let found = |metadata: bool| {
        pkg_config::Config::new()
            .atleast_version("22.11")
            .cargo_metadata(metadata)
            .probe("libdpdk")
            .expect("libdpdk-dev (pkg-config libdpdk) is needed: apt-get install libdpdk-dev")
    };
    let dpdk = found(false);
    let cflags = Command::new("pkg-config").args(["--cflags", "libdpdk"]).output().expect("pkg-config runs");
    let mut build = cc::Build::new();
    build.file("shim.c").opt_level(3);
    for flag in String::from_utf8_lossy(&cflags.stdout).split_whitespace() {
        build.flag(flag);
    }
    // After DPDK's -march=corei7: the machine's own, as the Rust side is built.
    build.flag("-march=native");
    for path in &dpdk.include_paths {
        build.include(path);
    }
    build.compile("sluice_dpdk_shim");
    // DPDK's libraries after the shim that needs them.
    found(true);
    println!("cargo:rerun-if-changed=shim.c");
}
