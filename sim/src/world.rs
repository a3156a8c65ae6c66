//! Two hosts, each with a NIC on Verilator and the Rust driver, joined by a 10G link in each
//! direction: the world the two-NIC tests, the demo and the benchmark run in. The NICs are
//! `ferroce_nic_64` joined by frame-level links ([`Phy::Frames`]), or `ferroce_nic_10g` joined
//! by XGMII links ([`Phy::Xgmii`]: the whole 10G NIC, its XGMII encoder and decoder included).

use crate::build::{ModelLibrary, Training};
use crate::host::{SimNic, Stepping};
use crate::pcie::PcieConfig;
pub use crate::wire::Wire;
use crate::{Link, LinkConfig, PauseGenerator, RandomFaults, Result, SimError, XgmiiLink};
use ferroce_driver::{
    CompletionQueue, Device, MemoryRegion, PfcConfig, ProtectionDomain, QpAttr, QpState, QueuePair,
    RecvWr, SendWr, Sge, Vlan, WrOpcode,
};
use ferroce_spec::queues::WC_SUCCESS;
use std::cell::RefCell;
use std::rc::Rc;

/// PFC for untagged RoCE (priority 0) on the NIC's 32 KiB receive buffer, as the lossless
/// test and the demo use it: XOFF above 6 KiB leaves 26 KiB of headroom (a frame arriving, a
/// frame of our own delaying the PFC frame, the peer's frame already started, the cable both
/// ways: 4 KiB-MTU frames over up to about 1.2 km at 10 Gb/s); XON under 5 KiB, above one whole frame, because the buffer counts
/// whole frames and a lower mark lets it run dry before the peer resumes (4.0 instead of
/// 5.0 Gb/s into a 5 Gb/s host); pause time 1,000 quanta (51.2 us at 10 Gb/s, refreshed at
/// half while the wish lasts).
pub const LOSSLESS_PFC: PfcConfig = PfcConfig {
    enable: 0x01,
    quanta: 1000,
    xoff_bytes: 6 << 10,
    xon_bytes: 5 << 10,
};

pub type Dev = Device<crate::host::SimBar, crate::host::SimMem>;

/// One host: its NIC model, driver, a protection domain and a completion queue.
pub struct Host {
    pub dev: Dev,
    pub sim: Rc<RefCell<SimNic>>,
    pub pd: ProtectionDomain,
    pub cq: CompletionQueue,
    pub mac: [u8; 6],
    pub ip: [u8; 4],
}

/// Host `a` and host `b`; `ab` carries a's frames to b, `ba` the other way.
pub struct World {
    pub a: Host,
    pub b: Host,
    pub ab: Wire,
    pub ba: Wire,
    /// The retry attributes `connect` gives both QPs of a pair on RTR -> RTS (`None`: the
    /// driver's defaults).
    pub retry: RetryAttrs,
}

/// A QP's retry attributes, as `QpAttr` has them, and its READ limit (`max_rd_atomic`): the
/// send side's attributes `connect` sets on RTR -> RTS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetryAttrs {
    pub timeout: Option<u8>,
    pub retry_cnt: Option<u8>,
    pub rnr_retry: Option<u8>,
    pub max_rd_atomic: Option<u8>,
}

/// What joins the two NICs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phy {
    /// `ferroce_nic_64`, frames (with FCS) carried whole by [`Link`].
    #[default]
    Frames,
    /// `ferroce_nic_10g`, XGMII words carried by [`XgmiiLink`].
    Xgmii,
}

impl Phy {
    /// The NIC design for this face.
    pub fn design(self) -> &'static str {
        match self {
            Phy::Frames => "ferroce_nic_64",
            Phy::Xgmii => "ferroce_nic_10g",
        }
    }
}

/// How the world is built.
#[derive(Clone, Copy, Debug)]
pub struct WorldConfig {
    pub pcie: PcieConfig,
    pub link: LinkConfig,
    /// Seed for the root complexes' completion reordering (`None`: in order).
    pub reorder_seed: Option<u64>,
    /// Random back-pressure on each NIC's memory requests (`m_rq_tready` low on this share of
    /// cycles, from `reorder_seed`); 0: none.
    pub rq_pause: f64,
    pub cq_depth: u32,
    /// Memory write bandwidth of each host (a, b) in Gb/s; `None`: as fast as the NIC writes.
    pub write_gbps: [Option<f64>; 2],
    /// What joins the NICs: frame links, or XGMII links between whole 10G NICs.
    pub phy: Phy,
    /// Build the models with VCD support (then [`Host::wave`] writes a window of cycles).
    pub trace: bool,
    /// Random faults on both links (frame links only): a to b draws from `faults.seed`, b to
    /// a from `faults.seed + 1`. Counted in each link's [`LinkStats`].
    pub faults: RandomFaults,
}

impl Default for WorldConfig {
    fn default() -> Self {
        WorldConfig {
            pcie: PcieConfig::default(),
            link: LinkConfig::default(),
            reorder_seed: None,
            rq_pause: 0.0,
            cq_depth: 4096,
            write_gbps: [None, None],
            phy: Phy::Frames,
            trace: false,
            faults: RandomFaults::default(),
        }
    }
}

const MACS: [[u8; 6]; 2] = [
    [0x02, 0xfe, 0x00, 0x00, 0x00, 0x0a],
    [0x02, 0xfe, 0x00, 0x00, 0x00, 0x0b],
];
const IPS: [[u8; 4]; 2] = [[10, 0, 0, 10], [10, 0, 0, 11]];

/// How a world's NIC model is built: the worlds run the long simulations (the system tests,
/// the demo, the benchmarks, interop), so their model's C++ is compiled at `-O3`, which
/// measured 1.15-1.25x the cycles/s of `-O2` on the whole NIC for about a third more compile
/// time of its evaluation code (once, cached), and optimised by the profile of [`TRAINING`]
/// (1.15-1.3x again, for a second build and the training run, about 70 s more, once); the
/// blocks' short testbenches keep `-O2`. A model built for waveforms has no profile. Tests
/// that step a NIC of their own use it too, so that one model serves them all.
pub fn nic_build(trace: bool) -> crate::BuildOptions {
    crate::BuildOptions {
        trace,
        opt: "-O3",
        training: (!trace).then_some(TRAINING),
        ..Default::default()
    }
}

/// The workload the world's NIC model is optimised for: one QP pair, PFC on, four WRITEs,
/// SENDs and READs of each of 64 B, 4 KiB + 1 and 16 KiB and four FETCH_AND_ADDs at each of
/// those three steps, both ways, stepped on one thread. Rename it when the workload changes (its name keys the cached profile).
pub const TRAINING: Training = Training {
    name: "verbs both ways, one QP pair, 1",
    run: train,
};

fn train(lib: &ModelLibrary) -> Result<()> {
    let phy = [Phy::Frames, Phy::Xgmii]
        .into_iter()
        .find(|p| p.design() == lib.top)
        .unwrap_or_default();
    let mut w = World::open_on(
        &WorldConfig {
            phy,
            ..WorldConfig::default()
        },
        lib,
    )?;
    w.set_stepping(Stepping::Sequential);
    const LEN: usize = 4 << 14;
    let mrs = [
        w.a.buffer(LEN, &vec![0x5a; LEN])?,
        w.b.buffer(LEN, &vec![0xa5; LEN])?,
    ];
    for h in [&mut w.a, &mut w.b] {
        h.dev.set_pfc(&LOSSLESS_PFC)?;
    }
    let (qa, qb) = w.connect(4096, 0x100, 0x200, 64)?;
    let mut qps = [qa, qb];
    use WrOpcode::{AtomicFetchAndAdd, RdmaRead, RdmaWrite, Send};
    for (op, size) in [RdmaWrite, Send, RdmaRead, AtomicFetchAndAdd]
        .into_iter()
        .flat_map(|op| {
            [64usize, 4097, 16384].map(|s| (op, if op == AtomicFetchAndAdd { 8 } else { s }))
        })
    {
        for from in 0..2 {
            let (mine, theirs) = (&mrs[from], &mrs[1 - from]);
            let sge = |m: &MemoryRegion, i: usize| Sge {
                addr: m.addr + (i * size) as u64,
                length: size as u32,
                lkey: m.lkey,
            };
            let wrs: Vec<SendWr> = (0..4)
                .map(|i| SendWr {
                    wr_id: i as u64,
                    opcode: op,
                    sg_list: vec![sge(mine, i)],
                    remote_addr: sge(theirs, i).addr,
                    rkey: theirs.rkey,
                    compare_add: 1,
                    signaled: true,
                    ..Default::default()
                })
                .collect();
            let [qa, qb] = &mut qps;
            let (me, peer, q, pq) = if from == 0 {
                (&mut w.a, &mut w.b, qa, qb)
            } else {
                (&mut w.b, &mut w.a, qb, qa)
            };
            let receives = if op == Send { wrs.len() } else { 0 };
            let rwrs: Vec<RecvWr> = (0..receives)
                .map(|i| RecvWr {
                    wr_id: i as u64,
                    sg_list: vec![sge(theirs, i)],
                })
                .collect();
            if receives > 0 {
                peer.dev.post_recv(pq, &rwrs)?;
            }
            me.dev.post_send(q, &wrs)?;
            let (mut sent, mut received, mut failed) = (0, 0, None);
            step_until(
                &me.sim.clone(),
                200_000,
                "the training run's completions",
                || {
                    let polled = successes(&mut me.dev, &mut me.cq)
                        .and_then(|s| Ok((s, successes(&mut peer.dev, &mut peer.cq)?)));
                    match polled {
                        Ok((s, r)) => (sent, received) = (sent + s, received + r),
                        Err(e) => failed = Some(e),
                    }
                    (sent >= wrs.len() && received >= receives) || failed.is_some()
                },
            )?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Completions polled from `cq`, all successful (else the first that is not, as an error).
fn successes(dev: &mut Dev, cq: &mut CompletionQueue) -> Result<usize> {
    let wcs = dev.poll_cq(cq, 16)?;
    match wcs.iter().find(|wc| wc.status != WC_SUCCESS) {
        Some(wc) => Err(SimError::Design(format!("the training run: {wc:?}"))),
        None => Ok(wcs.len()),
    }
}

impl World {
    pub fn open(cfg: &WorldConfig) -> Result<World> {
        let lib = crate::designs::library(cfg.phy.design(), &nic_build(cfg.trace))?;
        Self::open_on(cfg, &lib)
    }

    /// [`World::open`] with NICs of the model `lib` (of `cfg.phy`'s design).
    fn open_on(cfg: &WorldConfig, lib: &ModelLibrary) -> Result<World> {
        cfg.faults.validate()?;
        let mut ta = crate::designs::open_tb_on(cfg.phy.design(), lib)?;
        let mut tb = crate::designs::open_tb_on(cfg.phy.design(), lib)?;
        let (ab, ba) = match cfg.phy {
            Phy::Frames => (
                Wire::Frames(Link::connect(
                    &mut ta, "m_axis", &mut tb, "s_axis", cfg.link,
                )?),
                Wire::Frames(Link::connect(
                    &mut tb, "m_axis", &mut ta, "s_axis", cfg.link,
                )?),
            ),
            Phy::Xgmii => (
                Wire::Xgmii(XgmiiLink::connect(
                    &mut ta, "xgmii_tx", &mut tb, "xgmii_rx", cfg.link,
                )?),
                Wire::Xgmii(XgmiiLink::connect(
                    &mut tb, "xgmii_tx", &mut ta, "xgmii_rx", cfg.link,
                )?),
            ),
        };
        if !cfg.faults.is_clean() {
            ab.set_timed_fault_hook(cfg.faults.hook())?;
            ba.set_timed_fault_hook(cfg.faults.reseeded(cfg.faults.seed.wrapping_add(1)).hook())?;
        }
        let pcie = |k: u64| PcieConfig {
            cpl_reorder_seed: cfg.reorder_seed.map(|s| s ^ k),
            ..cfg.pcie
        };
        let sa = SimNic::new(ta, pcie(1))?;
        let sb = SimNic::new(tb, pcie(2))?;
        SimNic::join(&sa, &sb)?;
        if cfg.rq_pause > 0.0 {
            for (k, sim) in [(3u64, &sa), (4, &sb)] {
                let g = PauseGenerator::random(cfg.reorder_seed.unwrap_or(0) ^ k, cfg.rq_pause);
                sim.borrow()
                    .rc
                    .borrow_mut()
                    .set_rq_backpressure_generator(g);
            }
        }
        for (gbps, sim) in cfg.write_gbps.iter().zip([&sa, &sb]) {
            if let Some(g) = gbps {
                let period_ns = sim.borrow().tb.period_ps() as f64 / 1000.0;
                sim.borrow()
                    .rc
                    .borrow_mut()
                    .set_write_bandwidth(g * period_ns / 8.0);
            }
        }
        Ok(World {
            a: Host::open(sa, MACS[0], IPS[0], cfg.cq_depth)?,
            b: Host::open(sb, MACS[1], IPS[1], cfg.cq_depth)?,
            ab,
            ba,
            retry: RetryAttrs::default(),
        })
    }

    /// How the two NICs step ([`Stepping`]; `Auto` unless set).
    pub fn set_stepping(&mut self, stepping: Stepping) {
        for h in [&self.a, &self.b] {
            h.sim.borrow_mut().set_stepping(stepping);
        }
    }

    /// Cycles stepped with the two models evaluated at once.
    pub fn parallel_cycles(&self) -> u64 {
        self.a.sim.borrow().parallel_cycles() + self.b.sim.borrow().parallel_cycles()
    }

    /// A connected RC QP pair, `a`'s first: path MTU `pmtu`, first PSNs `psn_ab` (a to b)
    /// and `psn_ba`, send queues of `depth` entries.
    pub fn connect(
        &mut self,
        pmtu: u32,
        psn_ab: u32,
        psn_ba: u32,
        depth: u32,
    ) -> Result<(QueuePair, QueuePair)> {
        self.connect_tagged(pmtu, psn_ab, psn_ba, depth, None)
    }

    /// `connect`, both QPs sending with the 802.1Q tag `vlan` (their PFC priority).
    pub fn connect_tagged(
        &mut self,
        pmtu: u32,
        psn_ab: u32,
        psn_ba: u32,
        depth: u32,
        vlan: Option<Vlan>,
    ) -> Result<(QueuePair, QueuePair)> {
        let qa = self.a.dev.create_qp(&self.a.pd, &self.a.cq, depth)?;
        let qb = self.b.dev.create_qp(&self.b.pd, &self.b.cq, depth)?;
        self.join(qa, qb, pmtu, psn_ab, psn_ba, vlan)
    }

    /// `connect`, each QP in the protection domain and completion queue given for its side
    /// (`[a's, b's]`) rather than its host's own: QPs that share nothing with the others.
    pub fn connect_in(
        &mut self,
        pds: [&ProtectionDomain; 2],
        cqs: [&CompletionQueue; 2],
        pmtu: u32,
        psn_ab: u32,
        psn_ba: u32,
        depth: u32,
    ) -> Result<(QueuePair, QueuePair)> {
        let qa = self.a.dev.create_qp(pds[0], cqs[0], depth)?;
        let qb = self.b.dev.create_qp(pds[1], cqs[1], depth)?;
        self.join(qa, qb, pmtu, psn_ab, psn_ba, None)
    }

    /// Walk a fresh QP on each side to RTS, each the other's peer.
    fn join(
        &mut self,
        mut qa: QueuePair,
        mut qb: QueuePair,
        pmtu: u32,
        psn_ab: u32,
        psn_ba: u32,
        vlan: Option<Vlan>,
    ) -> Result<(QueuePair, QueuePair)> {
        self.walk(&mut qa, &mut qb, pmtu, psn_ab, psn_ba, vlan)?;
        Ok((qa, qb))
    }

    /// Connect a QP pair again, as an application would after an error: both QPs to RESET
    /// (the NIC keeps nothing of their last connection), then to RTS, each the other's peer,
    /// with new first PSNs. Receive WRs are to be posted again.
    pub fn reconnect(
        &mut self,
        qa: &mut QueuePair,
        qb: &mut QueuePair,
        pmtu: u32,
        psn_ab: u32,
        psn_ba: u32,
    ) -> Result<()> {
        for (h, q) in [(&mut self.a, &mut *qa), (&mut self.b, &mut *qb)] {
            h.dev.modify_qp(q, QpState::Reset, QpAttr::default())?;
        }
        self.walk(qa, qb, pmtu, psn_ab, psn_ba, None)
    }

    /// `join`'s walk, on QPs in RESET.
    fn walk(
        &mut self,
        qa: &mut QueuePair,
        qb: &mut QueuePair,
        pmtu: u32,
        psn_ab: u32,
        psn_ba: u32,
        vlan: Option<Vlan>,
    ) -> Result<()> {
        for (h, q) in [(&mut self.a, &mut *qa), (&mut self.b, &mut *qb)] {
            h.dev.modify_qp(q, QpState::Init, QpAttr::default())?;
        }
        let (qpn_a, qpn_b) = (qa.qpn, qb.qpn);
        let retry = self.retry;
        let (mac_a, ip_a, mac_b, ip_b) = (self.a.mac, self.a.ip, self.b.mac, self.b.ip);
        let pairs = [
            (&mut self.a, qa, qpn_b, mac_b, ip_b, psn_ba, psn_ab),
            (&mut self.b, qb, qpn_a, mac_a, ip_a, psn_ab, psn_ba),
        ];
        for (h, q, dest, mac, ip, rq_psn, sq_psn) in pairs {
            let rtr = QpAttr {
                path_mtu: Some(pmtu),
                dest_qpn: Some(dest),
                rq_psn: Some(rq_psn),
                remote_mac: Some(mac),
                remote_ipv4: Some(ip),
                vlan,
                ..QpAttr::default()
            };
            h.dev.modify_qp(q, QpState::Rtr, rtr)?;
            let rts = QpAttr {
                sq_psn: Some(sq_psn),
                timeout: retry.timeout,
                retry_cnt: retry.retry_cnt,
                rnr_retry: retry.rnr_retry,
                max_rd_atomic: retry.max_rd_atomic,
                ..QpAttr::default()
            };
            h.dev.modify_qp(q, QpState::Rts, rts)?;
        }
        Ok(())
    }

    /// Step both NICs (and the links) until `done` holds; fails after `max_cycles`.
    pub fn run_until(
        &self,
        max_cycles: u64,
        what: &str,
        done: impl FnMut() -> bool,
    ) -> Result<u64> {
        step_until(&self.a.sim, max_cycles, what, done)
    }

    /// Run both NICs for `cycles` cycles.
    pub fn run(&self, cycles: u64) -> Result<()> {
        Ok(self.a.sim.borrow_mut().run(cycles)?)
    }

    /// The current cycle (both NICs are at it).
    pub fn cycle(&self) -> u64 {
        self.a.sim.borrow().tb.cycle()
    }
}

/// One host whose NIC's port is a wire to the outside (`crate::bridge`): `ferroce_nic_64`,
/// its frames leaving on `tx` and arriving on `rx`, PFC on for priority 0
/// ([`LOSSLESS_PFC`]).
pub struct Station {
    pub host: Host,
    pub tx: Link,
    pub rx: Link,
}

impl Station {
    /// A host with MAC `mac` and IPv4 `ip` (the rest of `cfg` as for a world: PCIe, link
    /// timing, CQ depth; `phy` must be frames).
    pub fn open(cfg: &WorldConfig, mac: [u8; 6], ip: [u8; 4]) -> Result<Station> {
        if cfg.phy != Phy::Frames {
            return Err(SimError::Design(
                "a station's port is a frame link (ferroce_nic_64)".into(),
            ));
        }
        let opts = nic_build(cfg.trace);
        let mut tb = crate::designs::open_tb(cfg.phy.design(), &opts)?;
        let tx = Link::egress(&mut tb, "m_axis", cfg.link)?;
        let rx = Link::ingress(&mut tb, "s_axis", cfg.link)?;
        let sim = SimNic::new(tb, cfg.pcie)?;
        let mut host = Host::open(sim, mac, ip, cfg.cq_depth)?;
        // Lossless priority 0: the outside (crate::bridge) pauses when the NIC says so.
        host.dev.set_pfc(&LOSSLESS_PFC)?;
        Ok(Station { host, tx, rx })
    }

    /// Run the NIC for `cycles` cycles.
    pub fn run(&self, cycles: u64) -> Result<()> {
        Ok(self.host.sim.borrow_mut().run(cycles)?)
    }

    /// The current cycle.
    pub fn cycle(&self) -> u64 {
        self.host.sim.borrow().tb.cycle()
    }
}

/// Step `sim` and its peers until `done` holds, failing after `max_cycles`. The model is
/// borrowed only while it steps, so `done` may read counters and host memory of any NIC.
pub fn step_until(
    sim: &Rc<RefCell<SimNic>>,
    max_cycles: u64,
    what: &str,
    mut done: impl FnMut() -> bool,
) -> Result<u64> {
    let start = sim.borrow().tb.cycle();
    while !done() {
        let now = sim.borrow().tb.cycle();
        if now - start >= max_cycles {
            return Err(SimError::Timeout {
                cycles: max_cycles,
                what: what.to_string(),
            });
        }
        sim.borrow_mut().step()?;
    }
    Ok(sim.borrow().tb.cycle() - start)
}

/// The XGMII face's fault counters (`ferroce_nic_10g` only).
pub const XGMII_FAULT_COUNTERS: &[&str] = &["xgmii_tx_underrun", "xgmii_rx_code_err"];

/// Every counter of the NIC that counts a fault: all must stay zero in clean traffic.
/// (`req_pool_waits` is not one: a QP waiting for its share of the completion pool is the
/// share doing its work, a wait, not a drop.)
pub const FAULT_COUNTERS: &[&str] = &[
    "req_bad_db",
    "req_bad_qp",
    "req_bad_wqe",
    "req_dma_err",
    "req_prot_err",
    "rd_bad_cpl",
    "rd_timeouts",
    "tx_bad_len",
    "tx_bad_opcode",
    "tx_self_check",
    "rx_fcs_err",
    "rx_runt",
    "rx_code_err",
    "rx_too_long",
    "rx_not_roce",
    "rx_frame_len_err",
    "rx_icrc_err",
    "rx_overflow",
    "rx_self_check",
    "rx_unsupported",
    "rx_bad_csum",
    "rx_bad_mac",
    "rx_bad_ip",
    "rx_bad_opcode",
    "rx_bad_len",
    "rx_truncated",
    "mac_ctrl_bad_dst",
    "mac_ctrl_bad_opcode",
    "mac_ctrl_bad_reserved",
    "mac_oversize",
    "mac_bad_frames",
    "mac_tx_held",
    "resp_bad_qp",
    "resp_unsupported",
    "resp_dup",
    "resp_seq_err",
    "resp_bad_req",
    "resp_bad_rkey",
    "resp_bad_pkey",
    "resp_bad_resp",
    "cpl_naks",
    "cpl_bad_cq",
    "cpl_timeouts",
    "cpl_seq_naks",
    "cpl_rnr_naks",
    "cpl_retry_exc",
    "cpl_ghosts",
    "fail_local",
    "req_rsp_refused",
    "resp_jobs_full",
    "req_retrans",
    "wr_bad_len",
    "cqe_bad_len",
];
