//! Builds the backends whose libraries are installed: AF_XDP where libxdp
//! (and the libbpf it loads programs with) can be linked, `cfg(af_xdp)`;
//! DPDK where libdpdk (≥ 22.11) is, with its C shim, `cfg(dpdk)`. Without
//! them a port of that backend names the packages to install.

use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(af_xdp)");
    println!("cargo::rustc-check-cfg=cfg(dpdk)");
    println!("cargo::rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo::rerun-if-changed=dpdk_shim.c");
    watch_installed_libraries();
    if pkg_config::Config::new().atleast_version("1.2").probe("libxdp").is_ok() && pkg_config::probe_library("libbpf").is_ok() {
        println!("cargo::rustc-cfg=af_xdp");
    }
    let dpdk = |metadata: bool| pkg_config::Config::new().atleast_version("22.11").cargo_metadata(metadata).probe("libdpdk");
    if let Ok(found) = dpdk(false) {
        let cflags = Command::new("pkg-config").args(["--cflags", "libdpdk"]).output().expect("pkg-config ran a moment ago");
        let mut shim = cc::Build::new();
        shim.file("dpdk_shim.c").opt_level(3).warnings(false);
        for flag in String::from_utf8_lossy(&cflags.stdout).split_whitespace() {
            shim.flag(flag);
        }
        for path in &found.include_paths {
            shim.include(path);
        }
        shim.compile("sluice_dpdk_shim");
        // DPDK's libraries after the shim that needs them, and the virtual
        // device bus, which pkg-config's list leaves out.
        dpdk(true).expect("found a moment ago");
        println!("cargo::rustc-link-lib=rte_bus_vdev");
        println!("cargo::rustc-cfg=dpdk");
    }
}

/// Probes again when a library is installed or removed, not only when this
/// crate changes: an install adds its `.pc` file to one of pkg-config's
/// folders, which are watched; without pkg-config, the folder its package
/// installs it in is.
fn watch_installed_libraries() {
    let folders = match Command::new("pkg-config").args(["--variable", "pc_path", "pkg-config"]).output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string() + ":" + &std::env::var("PKG_CONFIG_PATH").unwrap_or_default(),
        _ => "/usr/bin".to_string(),
    };
    // A folder that does not exist would make every build run this again.
    for folder in folders.split(':').filter(|f| std::path::Path::new(f).is_dir()) {
        println!("cargo::rerun-if-changed={folder}");
    }
}
