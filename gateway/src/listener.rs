//! Who holds a listening TCP port. A server the gateway starts to speak
//! Streamable HTTP is measured before it starts, but any local process could
//! have bound its port first (the release then fails to bind, and the
//! impostor answers). So the gateway talks to the port only when the
//! listening socket belongs to a process of the group it started: on Linux,
//! the socket's inode in `/proc/net/tcp{,6}` is looked up among the open
//! files of that group's processes.
//!
//! Which sockets listen at an address is asked of the kernel by netlink
//! sock_diag (the kernel walks only its listening sockets and filters by
//! state and port), and read from `/proc/net/tcp{,6}` only where netlink
//! is not there: generating that table walks every socket of the host, and
//! costs milliseconds per read once connections pile up in TIME_WAIT, which
//! a per-call check cannot afford.

use std::net::SocketAddr;

/// The sockets listening at `address`, when every one is held by a process
/// of group `group` (two listeners on one port, as SO_REUSEPORT allows,
/// share its connections: each must be the release's).
pub fn held_by_group(address: SocketAddr, group: u32) -> Result<std::collections::BTreeSet<u64>, String> {
    let sockets = sockets(address)?;
    let mut unheld = sockets.clone();
    if unheld.is_empty() {
        return Err(format!("no socket listens at {address} in /proc/net"));
    }
    let processes = std::fs::read_dir("/proc").map_err(|e| format!("cannot read /proc: {e}"))?;
    for process in processes.flatten() {
        let Some(pid) = process.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if process_group(pid) != Some(group) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else { continue };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else { continue };
            let inode = target.to_str().and_then(|t| t.strip_prefix("socket:[")).and_then(|t| t.strip_suffix(']')).and_then(|t| t.parse::<u64>().ok());
            if let Some(inode) = inode {
                unheld.remove(&inode);
            }
        }
        if unheld.is_empty() {
            return Ok(sockets);
        }
    }
    Err(format!("a socket listening at {address} is not held by the server the gateway started (process group {group}): another process took the port"))
}

/// The sockets listening at `address` now, by inode: a set that changes
/// after the release's listener was checked means another socket came or
/// went, and the release is started (and checked) again.
pub fn sockets(address: SocketAddr) -> Result<std::collections::BTreeSet<u64>, String> {
    Ok(listening_inodes(address)?.into_iter().collect())
}

/// Whether a socket listens at `address`, read from the kernel's tables
/// (not by connecting: nothing is sent to a listener before it is known whose it is).
pub fn listens(address: SocketAddr) -> Result<bool, String> {
    listening_inodes(address).map(|i| !i.is_empty())
}

/// The inodes of the sockets listening at `address` (or at the wildcard address of its family and port).
fn listening_inodes(address: SocketAddr) -> Result<Vec<u64>, String> {
    match sock_diag::listening(address) {
        Ok(inodes) => Ok(inodes),
        Err(_) => proc_listening_inodes(address),
    }
}

/// [`listening_inodes`] from `/proc/net/tcp{,6}`.
fn proc_listening_inodes(address: SocketAddr) -> Result<Vec<u64>, String> {
    let table = if address.is_ipv4() { "/proc/net/tcp" } else { "/proc/net/tcp6" };
    let text = std::fs::read_to_string(table).map_err(|e| format!("cannot read {table}: {e}"))?;
    Ok(text.lines().skip(1).filter_map(|line| listening(line, address)).collect())
}

/// The inode of one `/proc/net/tcp` row when it is a listener at `address`.
fn listening(line: &str, address: SocketAddr) -> Option<u64> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
    if *state != "0A" {
        return None;
    }
    let (ip, port) = local.split_once(':')?;
    if u16::from_str_radix(port, 16).ok()? != address.port() {
        return None;
    }
    let unspecified = ip.bytes().all(|b| b == b'0');
    (unspecified || kernel_hex(address.ip()) == ip).then(|| inode.parse().ok()).flatten()
}

/// An address as the kernel prints it in `/proc/net/tcp{,6}`: each 32-bit word in host order, in hex.
fn kernel_hex(ip: std::net::IpAddr) -> String {
    let octets = match ip {
        std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
        std::net::IpAddr::V6(v6) => v6.octets().to_vec(),
    };
    octets.chunks(4).map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))).collect()
}

/// The kernel's listening TCP sockets by netlink sock_diag (`ss -lt` asks
/// the same): one dump request for the address's family, state LISTEN and
/// its port; the answer's records carry each socket's address and inode.
mod sock_diag {
    use std::net::{IpAddr, SocketAddr};

    use rustix::net::netlink::{SOCK_DIAG, SocketAddrNetlink};
    use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType};

    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const NLM_F_REQUEST: u16 = 0x1;
    const NLM_F_DUMP: u16 = 0x300;
    const NLMSG_ERROR: u16 = 2;
    const NLMSG_DONE: u16 = 3;
    const TCP_LISTEN: u32 = 10;
    const IPPROTO_TCP: u8 = 6;
    /// `struct inet_diag_msg`: family, state, timer, retrans, then the socket
    /// id (ports big-endian, source and destination as four 32-bit words),
    /// then expires, rqueue, wqueue, uid and inode.
    const MSG_LEN: usize = 72;
    const SPORT: usize = 4;
    const SRC: usize = 8;
    const INODE: usize = 68;

    /// The inodes of the sockets listening at `address` or at the unspecified address of its family and port.
    pub(super) fn listening(address: SocketAddr) -> Result<Vec<u64>, String> {
        let fd = rustix::net::socket(AddressFamily::NETLINK, SocketType::DGRAM, Some(SOCK_DIAG)).map_err(|e| format!("netlink: {e}"))?;
        let family = if address.is_ipv4() { libc_af(AddressFamily::INET) } else { libc_af(AddressFamily::INET6) };
        // nlmsghdr (16 bytes), then inet_diag_req_v2 (56 bytes).
        let mut request = Vec::with_capacity(72);
        request.extend_from_slice(&72u32.to_ne_bytes());
        request.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        request.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
        request.extend_from_slice(&1u32.to_ne_bytes());
        request.extend_from_slice(&0u32.to_ne_bytes());
        request.extend_from_slice(&[family, IPPROTO_TCP, 0, 0]);
        request.extend_from_slice(&(1u32 << TCP_LISTEN).to_ne_bytes());
        let mut id = [0u8; 48];
        id[0..2].copy_from_slice(&address.port().to_be_bytes());
        request.extend_from_slice(&id);
        rustix::net::sendto(&fd, &request, SendFlags::empty(), &SocketAddrNetlink::new(0, 0)).map_err(|e| format!("netlink send: {e}"))?;
        let mut inodes = Vec::new();
        let mut buffer = vec![0u8; 32 * 1024];
        loop {
            let (_, length) = rustix::net::recv(&fd, &mut buffer[..], RecvFlags::empty()).map_err(|e| format!("netlink receive: {e}"))?;
            let mut at = 0;
            let received = &buffer[..length.min(buffer.len())];
            while at + 16 <= received.len() {
                let word = |o: usize| u32::from_ne_bytes([received[o], received[o + 1], received[o + 2], received[o + 3]]);
                let len = word(at) as usize;
                let kind = u16::from_ne_bytes([received[at + 4], received[at + 5]]);
                if len < 16 || at + len > received.len() {
                    return Err("netlink: a truncated answer".into());
                }
                match kind {
                    NLMSG_DONE => return Ok(inodes),
                    NLMSG_ERROR => return Err("netlink: the kernel refused the request".into()),
                    _ if len >= 16 + MSG_LEN => {
                        let msg = &received[at + 16..at + 16 + MSG_LEN];
                        let port = u16::from_be_bytes([msg[SPORT], msg[SPORT + 1]]);
                        let source = &msg[SRC..SRC + 16];
                        let matches_ip = match address.ip() {
                            IpAddr::V4(v4) => source[..4] == v4.octets() || source[..4] == [0; 4],
                            IpAddr::V6(v6) => source == v6.octets() || source == [0; 16],
                        };
                        if port == address.port() && matches_ip {
                            inodes.push(u64::from(u32::from_ne_bytes([msg[INODE], msg[INODE + 1], msg[INODE + 2], msg[INODE + 3]])));
                        }
                    }
                    _ => {}
                }
                // Messages are aligned to 4 bytes.
                at += (len + 3) & !3;
            }
        }
    }

    fn libc_af(family: AddressFamily) -> u8 {
        family.as_raw() as u8
    }
}

/// The process group of `pid` (field 5 of its stat, after the parenthesised name).
fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_of_this_process_is_found_and_another_group_is_told_apart() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let own = process_group(std::process::id()).unwrap();
        assert_eq!(held_by_group(address, own).map(|s| s.len()), Ok(1));
        assert_eq!(listens(address), Ok(true));
        let e = held_by_group(address, own.wrapping_add(1_000_000)).unwrap_err();
        assert!(e.contains("another process took the port"), "{e}");
        drop(listener);
        assert_eq!(listens(address), Ok(false));
        assert!(held_by_group(address, own).unwrap_err().contains("no socket listens"));
    }

    #[test]
    fn another_socket_on_the_same_port_is_another_set() {
        let first = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = first.local_addr().unwrap();
        let checked = sockets(address).unwrap();
        assert_eq!(checked.len(), 1);
        assert_eq!(sockets(address).unwrap(), checked, "the same listener reads the same");
        drop(first);
        let second = std::net::TcpListener::bind(address).unwrap();
        assert_ne!(sockets(address).unwrap(), checked, "a listener bound again on the port is another socket");
        drop(second);
    }

    #[test]
    fn netlink_and_proc_see_the_same_listeners() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let by_netlink = sock_diag::listening(address).expect("netlink sock_diag answers here");
        assert_eq!(by_netlink.len(), 1);
        assert_eq!(by_netlink, proc_listening_inodes(address).unwrap());
        let other: SocketAddr = format!("127.0.0.2:{}", address.port()).parse().unwrap();
        assert_eq!(sock_diag::listening(other).unwrap(), Vec::<u64>::new(), "another address on the port");
        drop(listener);
        assert_eq!(sock_diag::listening(address).unwrap(), Vec::<u64>::new());
    }

    #[test]
    fn kernel_rows_are_read_as_the_kernel_prints_them() {
        let row = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 424242 1 0000000000000000 100 0 0 10 0";
        let at = |s: &str| s.parse::<SocketAddr>().unwrap();
        if cfg!(target_endian = "little") {
            assert_eq!(listening(row, at("127.0.0.1:8080")), Some(424242));
        }
        assert_eq!(listening(row, at("127.0.0.1:8081")), None, "another port");
        assert_eq!(listening(&row.replace(" 0A ", " 01 "), at("127.0.0.1:8080")), None, "an established connection is no listener");
        let wildcard = row.replace("0100007F:1F90", "00000000:1F90");
        assert_eq!(listening(&wildcard, at("127.0.0.1:8080")), Some(424242), "a wildcard listener answers loopback too");
    }
}
