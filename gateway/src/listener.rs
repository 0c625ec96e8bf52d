//! Who holds a listening TCP port. A server the gateway starts to speak
//! Streamable HTTP is measured before it starts, but any local process could
//! have bound its port first (the release then fails to bind, and the
//! impostor answers). So the gateway talks to the port only when the
//! listening socket belongs to a process of the group it started: on Linux,
//! the socket's inode in `/proc/net/tcp{,6}` is looked up among the open
//! files of that group's processes.

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
