//! The network interface a port opens: it must exist and be up.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::{Error, Result};

/// The interface named `iface` (for port `port`): its name as C wants it
/// and its index, or an error that says it does not exist or is down.
pub fn find(port: &str, iface: &str) -> Result<(CString, u32)> {
    let name = CString::new(iface).map_err(|_| Error::Name { port: port.into(), reason: "interface name holds a NUL byte".into() })?;
    // SAFETY: a NUL-terminated name.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if index == 0 {
        return Err(Error::Name { port: port.into(), reason: format!("no interface named '{iface}' (see `ip link`)") });
    }
    if !is_up(&name).map_err(|source| Error::Os { port: port.into(), step: "read the interface's flags", source })? {
        return Err(Error::Name { port: port.into(), reason: format!("interface '{iface}' is down (ip link set {iface} up)") });
    }
    Ok((name, index))
}

/// The network namespace this thread is in (the inode of its handle): an
/// interface name means one device per namespace.
#[cfg(af_xdp)]
pub fn namespace() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/thread-self/ns/net").map_or(0, |m| m.ino())
}

/// Checks that interface `iface` (index `index`, for port `port`) has
/// receive queue `queue`, as sysfs lists them; where sysfs shows another
/// namespace's interfaces (a thread that left the namespace it mounted),
/// the bind that follows says it instead.
#[cfg(af_xdp)]
pub fn check_queue(port: &str, iface: &str, index: u32, queue: u32) -> Result<()> {
    let dir = format!("/sys/class/net/{iface}");
    let same = std::fs::read_to_string(format!("{dir}/ifindex")).is_ok_and(|i| i.trim() == index.to_string());
    let queues = if !same {
        0
    } else {
        std::fs::read_dir(format!("{dir}/queues")).map_or(0, |entries| entries.filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with("rx-")).count())
    };
    if queues > 0 && queue as usize >= queues {
        return Err(Error::Name { port: port.into(), reason: format!("'{iface}' has {queues} receive queue(s): no queue {queue}") });
    }
    Ok(())
}

/// Whether the interface is administratively up.
fn is_up(name: &CString) -> io::Result<bool> {
    let req = ask(name, libc::SIOCGIFFLAGS)?;
    // SAFETY: SIOCGIFFLAGS filled the flags member.
    Ok(unsafe { req.ifr_ifru.ifru_flags } as libc::c_int & libc::IFF_UP != 0)
}

/// The MAC and MTU (bytes of IP packet) of the interface named `iface`, if
/// there is one in this namespace: what a router's interface has where its
/// description gives neither.
pub fn device(iface: &str) -> Option<([u8; 6], u32)> {
    let name = CString::new(iface).ok()?;
    let hw = ask(&name, libc::SIOCGIFHWADDR).ok()?;
    let mtu = ask(&name, libc::SIOCGIFMTU).ok()?;
    // SAFETY: SIOCGIFHWADDR filled the hardware address, SIOCGIFMTU the MTU.
    let (data, mtu) = unsafe { (hw.ifr_ifru.ifru_hwaddr.sa_data, mtu.ifr_ifru.ifru_mtu) };
    let mac = std::array::from_fn(|i| data[i] as u8);
    Some((mac, u32::try_from(mtu).ok()?))
}

/// An `ifreq` for `name` as the ioctl `request` fills it.
fn ask(name: &CString, request: libc::c_ulong) -> io::Result<libc::ifreq> {
    // SAFETY: a plain datagram socket, only asked about an interface.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a new descriptor this function owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: all-zero is a valid ifreq.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, &src) in req.ifr_name.iter_mut().take(libc::IFNAMSIZ - 1).zip(name.as_bytes()) {
        *dst = src as libc::c_char;
    }
    // SAFETY: the request reads the name and writes its member of `req`.
    if unsafe { libc::ioctl(fd.as_raw_fd(), request, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(req)
}
