#!/usr/bin/env bash
# Installs what `make demo` and `make test` need and is missing: system
# packages (apt-get), the virtualenv .venv/, and the sluice package with its
# Rust core built in release mode. `setup.sh system` stops after the
# system packages.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  need_apt+=(python3-venv)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${need_apt[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need_apt[@]}"
fi
# Traces' and captures' filters are compiled and run by libpcap, loaded
# when a filter is asked for.
# (grep reads all of ldconfig's list: with -q, pipefail would see ldconfig's SIGPIPE.)
if ! ldconfig -p 2>/dev/null | grep 'libpcap\.so' >/dev/null && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing libpcap0.8 (filters of traces and captures)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libpcap0.8 >/dev/null; } \
    || echo "setup: libpcap0.8 not installed; traces and captures take no filter" >&2
fi
# AF_XDP ports link libxdp and libbpf, DPDK ports libdpdk (each found with
# pkg-config when the Rust core is built); without them those backends say
# what to install.
if ! pkg-config --exists libxdp libbpf libdpdk 2>/dev/null && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing libxdp-dev, libbpf-dev, libdpdk-dev and pkg-config (AF_XDP and DPDK ports)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libxdp-dev libbpf-dev libdpdk-dev pkg-config >/dev/null; } \
    || echo "setup: libxdp or libdpdk not installed; Sluice builds without the af_xdp or dpdk backend" >&2
fi
# tcpreplay cross-checks the sender's rate in `sluice experiment ports`,
# ping, tracepath and ethtool are the router tests' hosts' tools and iperf3
# the hosts experiment's, which run as root (as ports do): installed there,
# skipped where they cannot be.
root_tools=()
command -v tcpreplay >/dev/null 2>&1 || root_tools+=(tcpreplay)
command -v ping >/dev/null 2>&1 || root_tools+=(iputils-ping)
command -v tracepath >/dev/null 2>&1 || root_tools+=(iputils-tracepath)
command -v ethtool >/dev/null 2>&1 || root_tools+=(ethtool)
command -v iperf3 >/dev/null 2>&1 || root_tools+=(iperf3)
if [ "$(id -u)" -eq 0 ] && [ ${#root_tools[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing ${root_tools[*]}"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${root_tools[@]}" >/dev/null; } \
    || echo "setup: ${root_tools[*]} not installed; the ports experiment leaves out its cross-check, the router tests are skipped" >&2
fi
# `setup.sh system`: the system packages only (CI builds the tests beside
# the rest of the setup once the libraries they link are there).
[ "${1:-}" = system ] && exit 0
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo (Rust) is not on PATH; install the Rust toolchain (https://rustup.rs) and retry" >&2
  exit 1
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q 'maturin>=1.5,<2'
# The product, its extras and the lab's measurements compiled into the core
# (the `lab` feature: a plain `pip install .` builds neither). Python
# compiles a module's bytecode when it is first imported rather than every
# module of every dependency here (20 s of CPU saved on a two-core VM).
MATURIN_PEP517_ARGS="--features lab" .venv/bin/python -m pip install -q --no-compile -e '.[test,lab]'
.venv/bin/python -c 'import sluice; print("setup: sluice", sluice.__version__, "ready in .venv/")'
