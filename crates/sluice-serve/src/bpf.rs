//! Packet filters in tcpdump's language, compiled by libpcap's own
//! compiler and run by its BPF interpreter (`pcap_offline_filter`) in the
//! worker, for traces and captures. libpcap is loaded when a filter is
//! first asked for: a Sluice without it serves everything else, and a
//! filter then names what to install.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::OnceLock;

use sluice_core::PacketFilter;

/// The names libpcap's shared object goes by (Debian's libpcap0.8 first).
const LIBPCAP: [&str; 3] = ["libpcap.so.0.8", "libpcap.so.1", "libpcap.so"];
/// Ethernet, as the frames the workers hold start (`DLT_EN10MB`).
const DLT_EN10MB: c_int = 1;
/// The largest frame a filter is asked about (bytes).
const SNAP_LEN: c_int = 65_535;
/// No netmask known (`PCAP_NETMASK_UNKNOWN`): "ip broadcast" is refused.
const NETMASK_UNKNOWN: u32 = 0xffff_ffff;

#[repr(C)]
struct BpfProgram {
    len: c_uint,
    insns: *mut c_void,
}

#[repr(C)]
struct PacketHeader {
    ts: libc::timeval,
    caplen: u32,
    len: u32,
}

type OpenDead = unsafe extern "C" fn(c_int, c_int) -> *mut c_void;
type Compile = unsafe extern "C" fn(*mut c_void, *mut BpfProgram, *const c_char, c_int, u32) -> c_int;
type GetErr = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type Close = unsafe extern "C" fn(*mut c_void);
type FreeCode = unsafe extern "C" fn(*mut BpfProgram);
type OfflineFilter = unsafe extern "C" fn(*const BpfProgram, *const PacketHeader, *const u8) -> c_int;

/// libpcap's entry points, loaded once and kept for the process's life.
struct Libpcap {
    open_dead: OpenDead,
    compile: Compile,
    geterr: GetErr,
    close: Close,
    freecode: FreeCode,
    offline_filter: OfflineFilter,
    _lib: libloading::Library,
}

fn libpcap() -> Result<&'static Libpcap, String> {
    static LOADED: OnceLock<Result<Libpcap, String>> = OnceLock::new();
    LOADED.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Libpcap, String> {
    // SAFETY: loading libpcap runs no initialiser with requirements of ours.
    let lib = LIBPCAP
        .iter()
        .find_map(|name| unsafe { libloading::Library::new(name) }.ok())
        .ok_or("a filter needs libpcap, which is not installed (Debian: apt-get install libpcap0.8)")?;
    // SAFETY: each symbol has the type libpcap's pcap.h declares for it.
    unsafe {
        let get = |name: &[u8]| -> Result<*mut c_void, String> {
            lib.get::<*mut c_void>(name).map(|s| *s).map_err(|e| format!("libpcap lacks {}: {e}", String::from_utf8_lossy(&name[..name.len() - 1])))
        };
        Ok(Libpcap {
            open_dead: std::mem::transmute::<*mut c_void, OpenDead>(get(b"pcap_open_dead\0")?),
            compile: std::mem::transmute::<*mut c_void, Compile>(get(b"pcap_compile\0")?),
            geterr: std::mem::transmute::<*mut c_void, GetErr>(get(b"pcap_geterr\0")?),
            close: std::mem::transmute::<*mut c_void, Close>(get(b"pcap_close\0")?),
            freecode: std::mem::transmute::<*mut c_void, FreeCode>(get(b"pcap_freecode\0")?),
            offline_filter: std::mem::transmute::<*mut c_void, OfflineFilter>(get(b"pcap_offline_filter\0")?),
            _lib: lib,
        })
    }
}

/// A compiled filter.
pub struct Bpf {
    program: BpfProgram,
    pcap: &'static Libpcap,
    /// Its text, as given.
    pub text: String,
}

// SAFETY: the program is read only (`pcap_offline_filter` takes it const
// and keeps no state), and freed once, on drop.
unsafe impl Send for Bpf {}
// SAFETY: as above.
unsafe impl Sync for Bpf {}

impl Bpf {
    /// Compiles `text` (tcpdump's filter language) for Ethernet frames;
    /// the error is libpcap's, naming what it could not read.
    pub fn compile(text: &str) -> Result<Self, String> {
        let pcap = libpcap()?;
        let c_text = CString::new(text).map_err(|_| "a filter has no NUL byte".to_owned())?;
        let mut program = BpfProgram { len: 0, insns: std::ptr::null_mut() };
        // SAFETY: a dead handle compiles filters only; it is closed below,
        // after its error text is copied.
        unsafe {
            let handle = (pcap.open_dead)(DLT_EN10MB, SNAP_LEN);
            if handle.is_null() {
                return Err("libpcap could not make a handle to compile with".into());
            }
            let compiled = (pcap.compile)(handle, &mut program, c_text.as_ptr(), 1, NETMASK_UNKNOWN);
            let error = (compiled != 0).then(|| CStr::from_ptr((pcap.geterr)(handle)).to_string_lossy().into_owned());
            (pcap.close)(handle);
            if let Some(e) = error {
                return Err(format!("filter '{text}': {e}"));
            }
        }
        Ok(Self { program, pcap, text: text.to_owned() })
    }
}

impl PacketFilter for Bpf {
    fn matches(&self, frame: &[u8]) -> bool {
        let len = frame.len() as u32;
        let header = PacketHeader { ts: libc::timeval { tv_sec: 0, tv_usec: 0 }, caplen: len, len };
        // SAFETY: the program was compiled by this libpcap; the header says
        // how many bytes `frame` has.
        unsafe { (self.pcap.offline_filter)(&self.program, &header, frame.as_ptr()) != 0 }
    }
}

impl Drop for Bpf {
    fn drop(&mut self) {
        // SAFETY: compiled by `pcap_compile`, freed once.
        unsafe { (self.pcap.freecode)(&mut self.program) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet frame of IPv4 UDP from 10.0.0.1 to 10.0.0.2, port 53 to `dport`.
    fn udp(dport: u16) -> Vec<u8> {
        let mut f = vec![0u8; 42];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        f[14] = 0x45;
        f[16..18].copy_from_slice(&28u16.to_be_bytes());
        f[22] = 64;
        f[23] = 17;
        f[26..30].copy_from_slice(&[10, 0, 0, 1]);
        f[30..34].copy_from_slice(&[10, 0, 0, 2]);
        f[34..36].copy_from_slice(&53u16.to_be_bytes());
        f[36..38].copy_from_slice(&dport.to_be_bytes());
        f[38..40].copy_from_slice(&8u16.to_be_bytes());
        f
    }

    #[test]
    fn a_filter_takes_what_tcpdump_would_and_a_bad_one_is_named() {
        // `make` installs libpcap (scripts/setup.sh).
        let bpf = Bpf::compile("udp dst port 4789 and src host 10.0.0.1").unwrap();
        assert!(bpf.matches(&udp(4789)));
        assert!(!bpf.matches(&udp(4790)));
        assert!(!bpf.matches(&udp(4789)[..20]), "a frame too short for the test");
        let e = Bpf::compile("udp port banana").err().unwrap();
        assert!(e.contains("udp port banana") && e.contains("banana"), "{e}");
    }
}
