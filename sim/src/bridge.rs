//! A simulated NIC's Ethernet port on a socket to the world outside: a QEMU guest's NIC on a
//! `-netdev stream` socket (`tests/interop`, `ferroce interop`).
//!
//! - **Framing**: each frame on the stream is a 4-byte big-endian length and the frame, as
//!   QEMU's stream netdev writes it: Ethernet II with no preamble, no FCS and no padding.
//! - **Toward the outside**: frames leave the NIC's egress [`Link`] (with the MAC's padding,
//!   as a real wire carries them); the FCS is checked and removed. A frame whose FCS is wrong
//!   is dropped and counted, as a real receiving MAC would.
//! - **Toward the NIC**: a frame is padded to 60 bytes (as the sending MAC on a real wire
//!   would pad it), the FCS is appended and it goes on the ingress [`Link`] at 10 Gb/s. At
//!   most [`INJECT_BACKLOG`] frames wait there; the rest stay in the socket, whose sender then
//!   waits (a stream loses nothing).
//! - **Flow control**: the bridge is the NIC's link partner. PAUSE and PFC frames from the NIC
//!   (priority 0: the outside's frames are untagged) stop injection for the time they name,
//!   as a lossless switch port would, and go no further (a link partner consumes them); with
//!   PFC enabled on the NIC, its receive buffer then never overflows however fast the outside
//!   sends.
//! - **Time**: the simulation runs in its own time; the caller pumps the bridge every few
//!   hundred cycles ([`Bridge::pump`]), so simulated time keeps running while the outside
//!   thinks, and nothing here blocks.

use crate::{Link, Result, SimError};
use ferroce_spec::crc::crc32;
use ferroce_spec::mac_ctrl::{self, MacCtrl};
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// Frames from outside waiting on the ingress link at most; more wait in the socket.
pub const INJECT_BACKLOG: usize = 2;
/// The longest frame taken from outside (a tagged 9,000-byte jumbo without FCS).
pub const MAX_FRAME: usize = ferroce_spec::headers::ETH_MAX_FRAME - 4;

/// What crossed the bridge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BridgeStats {
    pub to_outside: u64,
    pub from_outside: u64,
    /// Frames from the NIC with a bad FCS (dropped).
    pub bad_fcs: u64,
    /// Frames from outside longer than [`MAX_FRAME`] or shorter than 14 bytes (dropped).
    pub bad_len: u64,
    /// PAUSE and PFC frames from the NIC that paused priority 0 (consumed here).
    pub pauses: u64,
    /// MAC control frames from the NIC the bridge could not read (dropped).
    pub bad_ctrl: u64,
}

pub struct Bridge {
    sock: UnixStream,
    egress: Link,
    ingress: Link,
    rbuf: Vec<u8>,
    wbuf: VecDeque<u8>,
    closed: bool,
    /// No injection before this time (ps): the NIC's last XOFF.
    paused_until: u64,
    pub stats: BridgeStats,
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> SimError + '_ {
    move |source| SimError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Bridge {
    /// Connect to the stream socket at `path` (the outside is the server), carrying `egress`'s
    /// frames out and frames from the socket into `ingress`.
    pub fn connect(path: &Path, egress: Link, ingress: Link) -> Result<Bridge> {
        let sock = UnixStream::connect(path).map_err(io_err(path))?;
        sock.set_nonblocking(true).map_err(io_err(path))?;
        Ok(Bridge {
            sock,
            egress,
            ingress,
            rbuf: Vec::new(),
            wbuf: VecDeque::new(),
            closed: false,
            paused_until: 0,
            stats: BridgeStats::default(),
        })
    }

    /// The other end closed the socket.
    pub fn closed(&self) -> bool {
        self.closed
    }

    /// Move what is ready both ways without blocking; true when anything moved.
    pub fn pump(&mut self) -> Result<bool> {
        let mut moved = false;
        for f in self.egress.take_frames() {
            let Some((body, fcs)) = f.split_last_chunk::<4>() else {
                self.stats.bad_fcs += 1;
                continue;
            };
            if crc32(body).to_le_bytes() != *fcs {
                self.stats.bad_fcs += 1;
                continue;
            }
            let quanta = match mac_ctrl::parse(body) {
                MacCtrl::NotCtrl => None,
                MacCtrl::Pause { time } => Some(time),
                MacCtrl::Pfc { enable, times } if enable & 1 == 1 => Some(times[0]),
                MacCtrl::Pfc { .. } => continue,
                MacCtrl::Malformed(_) => {
                    self.stats.bad_ctrl += 1;
                    continue;
                }
            };
            if let Some(q) = quanta {
                let now = self.ingress.now_ps();
                let rate = self.ingress.config().rate_bps;
                self.paused_until = now + mac_ctrl::quanta_ps(u64::from(q), rate);
                self.stats.pauses += 1;
                continue;
            }
            self.wbuf.extend((body.len() as u32).to_be_bytes());
            self.wbuf.extend(body);
            self.stats.to_outside += 1;
        }
        while !self.wbuf.is_empty() && !self.closed {
            let (a, _) = self.wbuf.as_slices();
            match self.sock.write(a) {
                Ok(0) => self.closed = true,
                Ok(n) => {
                    self.wbuf.drain(..n);
                    moved = true;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::BrokenPipe => self.closed = true,
                Err(e) => return Err(io_err(Path::new("bridge socket"))(e)),
            }
        }
        while self.ingress.inject_backlog() < INJECT_BACKLOG
            && !self.closed
            && self.ingress.now_ps() >= self.paused_until
        {
            if let Some(frame) = self.next_frame() {
                if frame.len() < 14 || frame.len() > MAX_FRAME {
                    self.stats.bad_len += 1;
                    continue;
                }
                let mut f = frame;
                if f.len() < 60 {
                    f.resize(60, 0);
                }
                let now = self.ingress.now_ps();
                self.ingress.inject(now, &f);
                self.stats.from_outside += 1;
                moved = true;
                continue;
            }
            let mut buf = [0u8; 16384];
            match self.sock.read(&mut buf) {
                Ok(0) => self.closed = true,
                Ok(n) => self.rbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::ConnectionReset => self.closed = true,
                Err(e) => return Err(io_err(Path::new("bridge socket"))(e)),
            }
        }
        Ok(moved)
    }

    /// A whole frame from the read buffer, if one is there.
    fn next_frame(&mut self) -> Option<Vec<u8>> {
        let len = u32::from_be_bytes(self.rbuf.get(..4)?.try_into().ok()?) as usize;
        if self.rbuf.len() < 4 + len {
            return None;
        }
        let f = self.rbuf[4..4 + len].to_vec();
        self.rbuf.drain(..4 + len);
        Some(f)
    }
}
