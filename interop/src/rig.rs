//! The rig: a simulated host ([`Station`]) and the guest, the NIC's port joined to the guest's
//! RoCE NIC by a [`Bridge`], the guest's clock held while its requests wait on ferroce.

use crate::guest::{self, Guest, GuestConfig};
use crate::hold::Hold;
use crate::oob;
use crate::Result;
use crate::{err, GUEST_IP, GUEST_MAC, NIC_IP, NIC_MAC, PUMP_CYCLES};
use ferroce_sim::bridge::Bridge;
use ferroce_sim::world::{Station, WorldConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which side of a tool ferroce plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// ferroce listens; the guest's tool connects.
    Server,
    /// The guest's tool listens; ferroce connects.
    Client,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Server => "server",
            Role::Client => "client",
        })
    }
}

/// A simulated host and a guest, their ports joined.
pub struct Rig {
    pub station: Station,
    pub guest: Guest,
    pub bridge: Bridge,
    /// Stops the guest's clock while its requests wait on ferroce.
    pub hold: Arc<Hold>,
    /// Frames ferroce sent and frames it received, one pcap each.
    pub pcaps: [PathBuf; 2],
}

/// What a rig needs.
#[derive(Clone, Debug)]
pub struct RigConfig {
    pub manifest: PathBuf,
    /// Working directory: sockets, the guest's serial log, pcaps.
    pub dir: PathBuf,
    /// The guest's Ethernet MTU: 1500 (IB MTU 1024) or 9000 (4096).
    pub eth_mtu: u32,
    pub hostfwd_port: u16,
    pub guestfwd_port: u16,
}

impl Rig {
    /// Boot the guest, build the station and join them.
    pub fn open(cfg: &RigConfig) -> Result<Rig> {
        let guest = Guest::boot(GuestConfig {
            manifest: cfg.manifest.clone(),
            dir: cfg.dir.clone(),
            eth_mtu: cfg.eth_mtu,
            mac: GUEST_MAC,
            ip: GUEST_IP,
            peer_mac: NIC_MAC,
            peer_ip: NIC_IP,
            hostfwd_port: cfg.hostfwd_port,
            guestfwd_port: cfg.guestfwd_port,
            python: guest::python(),
        })?;
        let station = Station::open(&WorldConfig::default(), NIC_MAC, NIC_IP)?;
        let hold = Arc::new(Hold::new(guest.qmp.clone())?);
        let bridge = Bridge::connect(
            &guest.roce_socket(),
            station.tx.clone(),
            station.rx.clone(),
            Some(hold.clone()),
        )?;
        Ok(Rig {
            station,
            guest,
            bridge,
            hold,
            pcaps: [PathBuf::new(), PathBuf::new()],
        })
    }

    /// A new simulated host (a NIC just out of reset) on the same guest: the old one's bridge
    /// connection closes and QEMU takes the new one.
    pub fn fresh(&mut self) -> Result<()> {
        self.hold.release();
        let station = Station::open(&WorldConfig::default(), NIC_MAC, NIC_IP)?;
        let hold = Arc::new(Hold::new(self.guest.qmp.clone())?);
        let bridge = Bridge::connect(
            &self.guest.roce_socket(),
            station.tx.clone(),
            station.rx.clone(),
            Some(hold.clone()),
        )?;
        self.hold = hold;
        self.station = station;
        self.bridge = bridge;
        Ok(())
    }

    /// Start a pcap of each direction: `<stem>-tx.pcap` (ferroce's frames) and `-rx.pcap`.
    pub fn tap(&mut self, dir: &Path, stem: &str) -> Result<()> {
        let tx = dir.join(format!("{stem}-tx.pcap"));
        let rx = dir.join(format!("{stem}-rx.pcap"));
        self.station.tx.tap(&tx)?;
        self.station.rx.tap(&rx)?;
        self.pcaps = [tx, rx];
        Ok(())
    }

    /// Run the NIC `cycles` cycles, pumping the bridge as it goes.
    pub fn run(&mut self, cycles: u64) -> Result<()> {
        let mut left = cycles;
        while left > 0 {
            let n = left.min(PUMP_CYCLES);
            self.station.run(n)?;
            self.bridge.pump()?;
            self.hold.tick(self.station.rx.now_ps())?;
            left -= n;
        }
        if self.bridge.closed() {
            return Err(err("the guest closed the RoCE link"));
        }
        Ok(())
    }

    /// Take `qp` to RTR and RTS toward the guest's QP `peer_qpn` (its first PSN `peer_psn`,
    /// its IPv4 address from its v4-mapped `peer_gid`), sending from `my_psn`.
    pub fn connect_qp(
        &mut self,
        qp: &mut ferroce_driver::QueuePair,
        mtu: u32,
        peer_qpn: u32,
        peer_psn: u32,
        peer_gid: &[u8; 16],
        my_psn: u32,
    ) -> Result<()> {
        use ferroce_driver::{QpAttr, QpState};
        let h = &mut self.station.host;
        let rtr = QpAttr {
            path_mtu: Some(mtu),
            dest_qpn: Some(peer_qpn),
            rq_psn: Some(peer_psn),
            remote_mac: Some(GUEST_MAC),
            remote_ipv4: Some(oob::ipv4_of_gid(peer_gid)?),
            ..QpAttr::default()
        };
        h.dev.modify_qp(qp, QpState::Rtr, rtr)?;
        let rts = QpAttr {
            sq_psn: Some(my_psn),
            ..QpAttr::default()
        };
        h.dev.modify_qp(qp, QpState::Rts, rts)?;
        self.hold.pair(qp.qpn, peer_qpn);
        Ok(())
    }

    /// The NIC's fault counters that are not zero, for error messages.
    pub fn faults(&self) -> String {
        match self.station.host.faults() {
            Ok(f) => {
                let v: Vec<String> = f
                    .iter()
                    .filter(|(_, n)| *n > 0)
                    .map(|(c, n)| format!("{c}={n}"))
                    .collect();
                if v.is_empty() {
                    "none".into()
                } else {
                    v.join(" ")
                }
            }
            Err(e) => e.to_string(),
        }
    }

    /// Run until the guest's command finishes; its status and output.
    pub fn finish_guest(&mut self, what: &str, timeout: Duration) -> Result<(i32, String)> {
        let start = Instant::now();
        loop {
            if let Some(r) = self.guest.poll()? {
                return Ok(r);
            }
            if start.elapsed() > timeout {
                return Err(err(format!(
                    "{what}: the guest's tool did not finish in {timeout:?}"
                )));
            }
            self.run(4 * PUMP_CYCLES)?;
        }
    }
}
