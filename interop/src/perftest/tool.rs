//! The tools' side of the exchange: what a run is (verb, role, sizes), perftest's socket
//! protocol and its KEYS message, and the buffers both sides fill.

use crate::oob;
use crate::Result;
use crate::{err, Rig, Role, PUMP_CYCLES};
use ferroce_driver::{DmaBuf, MemoryRegion};
use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The verb a tool measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Write,
    Send,
    Read,
    FetchAdd,
    CmpSwap,
}

impl Verb {
    pub fn tool(self) -> &'static str {
        match self {
            Verb::Write => "ib_write_bw",
            Verb::Send => "ib_send_bw",
            Verb::Read => "ib_read_bw",
            Verb::FetchAdd | Verb::CmpSwap => "ib_atomic_bw",
        }
    }

    /// The tool with its verb-specific flags, as the results table names it.
    pub fn label(self) -> &'static str {
        match self {
            Verb::FetchAdd => "ib_atomic_bw -A FETCH_AND_ADD",
            Verb::CmpSwap => "ib_atomic_bw -A CMP_AND_SWAP",
            v => v.tool(),
        }
    }

    pub(super) fn atomic(self) -> bool {
        matches!(self, Verb::FetchAdd | Verb::CmpSwap)
    }
}

/// One run.
#[derive(Clone, Copy, Debug)]
pub struct Perftest {
    pub verb: Verb,
    pub role: Role,
    /// Message size (atomics: 8, whatever is given).
    pub size: u32,
    pub iters: u32,
    pub mtu: u32,
    /// rxe's ACK timeout exponent (`-u`): 4.096 us x 2^u of wall-clock time.
    pub timeout: u32,
    pub seed: u64,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct PerftestResult {
    pub guest_output: String,
    pub wall: Duration,
    /// ferroce's traffic in simulated time, when ferroce was the active side.
    pub gbps: Option<f64>,
    pub bytes_checked: u64,
}

pub(super) const VERSION: &[u8] = b"6.06";

pub(super) const KEYS_LEN: usize = 108;

pub(super) const CYCLE_BUFFER: u32 = 4096;

pub(super) const CACHE_LINE: u32 = 64;

/// READs and atomics ferroce serves at once (`max_dest_rd_atomic`).
pub(super) const OUT_READS: u32 = ferroce_spec::queues::MAX_RD_ATOMIC as u32;

/// Work requests ferroce keeps outstanding as the active side.
pub(super) const TX_DEPTH: u32 = 64;

/// Wall time without progress after which a run is stalled.
pub(super) const STALL: Duration = Duration::from_secs(60);

/// Atomic slots: perftest's `vaddr + 64 * (k mod 64)`.
pub(super) const SLOTS: u32 = 64;

/// perftest's KEYS message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keys {
    pub lid: u16,
    pub out_reads: u32,
    pub qpn: u32,
    pub psn: u32,
    pub rkey: u32,
    pub vaddr: u64,
    pub gid: [u8; 16],
    pub srqn: u32,
}

impl Keys {
    pub fn encode(&self) -> [u8; KEYS_LEN] {
        let mut t = format!(
            "{:04x}:{:04x}:{:06x}:{:06x}:{:08x}:{:016x}:",
            self.lid, self.out_reads, self.qpn, self.psn, self.rkey, self.vaddr
        );
        for b in self.gid {
            t += &format!("{b:02x}:");
        }
        t += &format!("{:08x}:", self.srqn);
        let mut out = [0u8; KEYS_LEN];
        out[..t.len()].copy_from_slice(t.as_bytes());
        out
    }

    pub fn decode(m: &[u8]) -> Result<Keys> {
        let text = std::str::from_utf8(m.split(|&b| b == 0).next().unwrap_or_default())
            .map_err(|_| err("perftest KEYS: not text"))?;
        let f: Vec<&str> = text.split(':').collect();
        let bad = || err(format!("perftest KEYS {text:?}: not in perftest's format"));
        if f.len() != 24 {
            return Err(bad());
        }
        let h = |s: &str| u64::from_str_radix(s, 16).map_err(|_| bad());
        let mut gid = [0u8; 16];
        for (i, g) in gid.iter_mut().enumerate() {
            *g = h(f[6 + i])? as u8;
        }
        Ok(Keys {
            lid: h(f[0])? as u16,
            out_reads: h(f[1])? as u32,
            qpn: h(f[2])? as u32,
            psn: h(f[3])? as u32,
            rkey: h(f[4])? as u32,
            vaddr: h(f[5])?,
            gid,
            srqn: h(f[22])? as u32,
        })
    }
}

pub(super) fn mtu_code(mtu: u32) -> u8 {
    match mtu {
        256 => 1,
        512 => 2,
        1024 => 3,
        2048 => 4,
        _ => 5,
    }
}

/// The socket, lockstep: the TCP client writes first in every exchange.
pub(super) struct Chan {
    pub(super) s: TcpStream,
    pub(super) client: bool,
    pub(super) guest_done: Option<(i32, String)>,
}

impl Chan {
    /// Exchange `mine` for the peer's message of the same size, the NIC running meanwhile.
    pub(super) fn xchg(&mut self, rig: &mut Rig, mine: &[u8], what: &str) -> Result<Vec<u8>> {
        if self.client {
            oob::write_all(&mut self.s, mine, what)?;
            self.read(rig, mine.len(), what)
        } else {
            let theirs = self.read(rig, mine.len(), what)?;
            oob::write_all(&mut self.s, mine, what)?;
            Ok(theirs)
        }
    }

    /// Read `n` bytes, running the NIC and watching the guest's tool while waiting.
    pub(super) fn read(&mut self, rig: &mut Rig, n: usize, what: &str) -> Result<Vec<u8>> {
        self.s
            .set_nonblocking(true)
            .map_err(|e| err(format!("socket: {e}")))?;
        let mut buf = vec![0u8; n];
        let mut got = 0;
        let start = Instant::now();
        let mut ended_at = None;
        while got < n {
            match self.s.read(&mut buf[got..]) {
                Ok(0) => {
                    return Err(err(format!(
                        "reading {what}: the tool closed its socket{}",
                        self.said()
                    )))
                }
                Ok(k) => {
                    got += k;
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(err(format!("reading {what}: {e}"))),
            }
            rig.run(4 * PUMP_CYCLES)?;
            if self.guest_done.is_none() {
                self.guest_done = rig.guest.poll()?;
            }
            if self.guest_done.is_some() {
                let t = *ended_at.get_or_insert_with(Instant::now);
                if t.elapsed() > Duration::from_secs(3) {
                    return Err(err(format!(
                        "reading {what}: the tool ended{}",
                        self.said()
                    )));
                }
            }
            if start.elapsed() > Duration::from_secs(600) {
                return Err(err(format!("reading {what}: nothing in 600 s")));
            }
        }
        self.s
            .set_nonblocking(false)
            .map_err(|e| err(format!("socket: {e}")))?;
        Ok(buf)
    }

    pub(super) fn said(&self) -> String {
        match &self.guest_done {
            Some((rc, out)) => format!(" (exit {rc}):\n{out}"),
            None => String::new(),
        }
    }
}

/// ferroce's buffers for a run.
pub(super) struct Bufs {
    /// The source of WRITEs and SENDs, or the target region exposed to the peer.
    pub(super) main: DmaBuf,
    pub(super) mr: MemoryRegion,
    /// Where READ data, atomic results and received messages land, one slot each.
    pub(super) land: DmaBuf,
    pub(super) land_mr: MemoryRegion,
    pub(super) slots: u32,
    pub(super) slot_len: u32,
}

/// ferroce's initial bytes at offset `i` of its main buffer.
pub(super) fn fill(seed: u64, len: usize) -> Vec<u8> {
    let s = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
    (0..len)
        .map(|i| {
            let x = s ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (x >> 29 ^ x >> 7) as u8 | 1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oob::gid_of_ipv4;

    #[test]
    fn keys_round_trip_in_perftests_108_byte_format() {
        let k = Keys {
            lid: 0,
            out_reads: 1,
            qpn: 0x11,
            psn: 0x3a5b7c,
            rkey: 0x1234,
            vaddr: 0x7f12_438b_c000,
            gid: gid_of_ipv4([192, 168, 1, 10]),
            srqn: 0,
        };
        let m = k.encode();
        let want = "0000:0001:000011:3a5b7c:00001234:00007f12438bc000:\
                    00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:01:0a:00000000:";
        assert_eq!(&m[..107], want.as_bytes());
        assert_eq!(m[107], 0);
        assert_eq!(Keys::decode(&m).unwrap(), k);
        assert!(Keys::decode(b"0000:0001").is_err());
    }
}
