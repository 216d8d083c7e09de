//! Builds the AF_XDP backend where libxdp (and the libbpf it loads
//! programs with) can be linked: `cfg(af_xdp)`. Without them the backend
//! names the packages to install (`apt-get install libxdp-dev libbpf-dev`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(af_xdp)");
    println!("cargo::rerun-if-env-changed=PKG_CONFIG_PATH");
    let found = pkg_config::Config::new().atleast_version("1.2").probe("libxdp").is_ok() && pkg_config::probe_library("libbpf").is_ok();
    if found {
        println!("cargo::rustc-cfg=af_xdp");
    }
}
