//! The out-of-band exchange rdma-core's and perftest's tools make before any RoCE traffic:
//! each side's QPN, PSN and GID (and for perftest more) as text over TCP port 18515.

use super::err;
use crate::Result;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// One side's address, as `ibv_*_pingpong` sends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PpDest {
    pub lid: u16,
    pub qpn: u32,
    pub psn: u32,
    pub gid: [u8; 16],
}

/// `sizeof "0000:000000:000000:00000000000000000000000000000000"`: the text and its NUL.
pub const PP_MSG_LEN: usize = 52;

impl PpDest {
    /// `"%04x:%06x:%06x:%s"` with the GID as 32 hex digits in wire order, NUL-padded.
    pub fn encode(&self) -> [u8; PP_MSG_LEN] {
        let gid: String = self.gid.iter().map(|b| format!("{b:02x}")).collect();
        let text = format!("{:04x}:{:06x}:{:06x}:{gid}", self.lid, self.qpn, self.psn);
        let mut out = [0u8; PP_MSG_LEN];
        out[..text.len()].copy_from_slice(text.as_bytes());
        out
    }

    pub fn decode(msg: &[u8]) -> Result<PpDest> {
        let text = std::str::from_utf8(msg.split(|&b| b == 0).next().unwrap_or_default())
            .map_err(|_| err("pingpong address: not text"))?;
        let f: Vec<&str> = text.split(':').collect();
        let bad = || err(format!("pingpong address {text:?}: not LID:QPN:PSN:GID"));
        if f.len() != 4 || f[3].len() != 32 {
            return Err(bad());
        }
        let hex = |s: &str| u32::from_str_radix(s, 16).map_err(|_| bad());
        let mut gid = [0u8; 16];
        for (i, g) in gid.iter_mut().enumerate() {
            *g = u8::from_str_radix(&f[3][2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(PpDest {
            lid: hex(f[0])? as u16,
            qpn: hex(f[1])?,
            psn: hex(f[2])?,
            gid,
        })
    }
}

/// The GID of an IPv4 address (`::ffff:a.b.c.d`, RoCEv2 over IPv4).
pub fn gid_of_ipv4(ip: [u8; 4]) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[10] = 0xff;
    g[11] = 0xff;
    g[12..].copy_from_slice(&ip);
    g
}

/// The IPv4 address of a v4-mapped GID; ferroce speaks RoCEv2 over IPv4 only.
pub fn ipv4_of_gid(g: &[u8; 16]) -> Result<[u8; 4]> {
    if g[..10].iter().any(|&b| b != 0) || g[10..12] != [0xff, 0xff] {
        let text = std::net::Ipv6Addr::from(*g);
        return Err(err(format!(
            "peer GID {text} is not an IPv4-mapped address: ferroce sends RoCEv2 over IPv4 \
             (use GID index 1 in the guest: -g 1 / -x 1)"
        )));
    }
    Ok([g[12], g[13], g[14], g[15]])
}

/// Accept one connection on `listener` within `timeout`.
pub fn accept(listener: &TcpListener, timeout: Duration) -> Result<TcpStream> {
    listener
        .set_nonblocking(true)
        .map_err(|e| err(format!("listen: {e}")))?;
    let start = Instant::now();
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)
                    .and_then(|_| s.set_read_timeout(Some(timeout)))
                    .and_then(|_| s.set_nodelay(true))
                    .map_err(|e| err(format!("accept: {e}")))?;
                return Ok(s);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => return Err(err(format!("accept: {e}"))),
        }
        if start.elapsed() > timeout {
            return Err(err(format!(
                "no connection from the guest's tool in {timeout:?}"
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Connect to a tool listening in the guest behind `127.0.0.1:port` (QEMU's hostfwd). QEMU
/// takes the connection before the tool listens and closes it when the guest refuses it, so
/// this retries until a connection stays open; a connection that still dies before the tool's
/// first answer is the caller's to retry (it sees EOF on its first read).
pub fn connect(port: u16, timeout: Duration) -> Result<TcpStream> {
    let start = Instant::now();
    loop {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            s.set_nodelay(true)
                .and_then(|_| s.set_read_timeout(Some(Duration::from_millis(300))))
                .map_err(|e| err(format!("connect: {e}")))?;
            // A forward the guest refused is closed at once: a read sees EOF.
            let mut probe = [0u8; 1];
            match s.peek(&mut probe) {
                Ok(0) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    s.set_read_timeout(Some(timeout))
                        .map_err(|e| err(format!("connect: {e}")))?;
                    return Ok(s);
                }
                _ => {}
            }
        }
        if start.elapsed() > timeout {
            return Err(err(format!(
                "the guest's tool did not listen on its port in {timeout:?}"
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Read exactly `n` bytes.
pub fn read_n(s: &mut TcpStream, n: usize, what: &str) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; n];
    s.read_exact(&mut buf)
        .map_err(|e| err(format!("reading {what} ({n} bytes): {e}")))?;
    Ok(buf)
}

pub fn write_all(s: &mut TcpStream, data: &[u8], what: &str) -> Result<()> {
    s.write_all(data)
        .map_err(|e| err(format!("sending {what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pingpong_address_round_trips_in_rdma_cores_format() {
        let d = PpDest {
            lid: 0,
            qpn: 0x11,
            psn: 0xabcdef,
            gid: gid_of_ipv4([10, 0, 0, 20]),
        };
        let m = d.encode();
        assert_eq!(
            &m[..51],
            b"0000:000011:abcdef:00000000000000000000ffff0a000014"
        );
        assert_eq!(m[51], 0);
        assert_eq!(PpDest::decode(&m).unwrap(), d);
        assert_eq!(ipv4_of_gid(&d.gid).unwrap(), [10, 0, 0, 20]);
        assert!(ipv4_of_gid(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]).is_err());
    }
}
