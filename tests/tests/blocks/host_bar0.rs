//! The BAR0 completer under Verilator, driven by the real driver through the root complex
//! model: device discovery, register access, QP/CQ contexts and the QP state machine,
//! object-command errors, refused TLPs, and doorbells, with random back-pressure on the
//! completion and doorbell streams.

use crate::bar0_fence::{add_fence, Fence};
use crate::object_commands::raw_command;
use anyhow::{ensure, Context, Result};
use ferroce_driver::{access, Bar, Device, DriverError, QpAttr, QpState, Vlan};
use ferroce_sim::designs::open_tb;
use ferroce_sim::host::{SimBar, SimMem, SimNic};
use ferroce_sim::model::{Model, Port};
use ferroce_sim::pcie::{PcieConfig, ReadResult};
use ferroce_sim::{BuildOptions, Component, PauseGenerator};
use ferroce_spec::queues::{MAX_RD_ATOMIC, QP_CTX, QP_RUNNING};
use ferroce_spec::regs::{self, BLOCKS};
use ferroce_spec::tlp::{self, Header};
use ferroce_tests::{rng, seed, soak};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::rc::Rc;

const DESIGN: &str = "ferroce_bar0_64";

/// Takes doorbells with a random ready.
pub(crate) struct Doorbells {
    qpn: Port,
    pi: Port,
    valid: Port,
    ready: Port,
    rng: ChaCha8Rng,
    ready_now: bool,
    got: Vec<(u32, u16)>,
}

impl Component for Doorbells {
    fn sample(&mut self, m: &Model) {
        if self.ready_now && m.get(self.valid) == 1 {
            self.got
                .push((m.get(self.qpn) as u32, m.get(self.pi) as u16));
        }
    }
    fn drive(&mut self, m: &mut Model) -> ferroce_sim::Result<()> {
        self.ready_now = self.rng.gen_bool(0.3);
        m.set(self.ready, self.ready_now.into())
    }
}

/// Takes receive doorbells: one-cycle pulses, no handshake (the receive queues take one every
/// cycle).
struct RqDoorbells {
    en: Port,
    qpn: Port,
    pi: Port,
    got: Vec<(u32, u16)>,
}

impl Component for RqDoorbells {
    fn sample(&mut self, m: &Model) {
        if m.get(self.en) == 1 {
            self.got
                .push((m.get(self.qpn) as u32, m.get(self.pi) as u16));
        }
    }
    fn drive(&mut self, _: &mut Model) -> ferroce_sim::Result<()> {
        Ok(())
    }
}

/// The transport engines' running state of each QP, as they show it to BAR0: `m_peek_index`
/// read back one cycle later (a registered RAM read), as the requester, responder and
/// completer do.
struct Engines {
    index: Port,
    sq: Port,
    rq: Port,
    una: Port,
    rci: Port,
    /// Per QP: (sq_psn, sq_ci, sq_pkts, una_psn, epsn, msn).
    state: Vec<(u32, u16, u32, u32, u32, u32)>,
    /// Per QP: the receive queues' consumer index.
    rq_ci: Vec<u16>,
    /// The QP the completer has failed (a fatal NAK), with its status.
    failed: (usize, u8),
    seen: usize,
}

impl Component for Engines {
    fn sample(&mut self, m: &Model) {
        self.seen = m.get(self.index) as usize;
    }
    fn drive(&mut self, m: &mut Model) -> ferroce_sim::Result<()> {
        let (psn, ci, pkts, una, epsn, msn) = self.state[self.seen];
        m.set(
            self.sq,
            u64::from(psn) | u64::from(ci) << 24 | u64::from(pkts) << 40,
        )?;
        m.set(self.rq, u64::from(epsn) | u64::from(msn) << 24)?;
        m.set(self.rci, self.rq_ci[self.seen].into())?;
        let err = if self.seen == self.failed.0 {
            self.failed.1
        } else {
            0
        };
        m.set(self.una, u64::from(una) | u64::from(err) << 24)
    }
}

type SimDevice = Device<SimBar, SimMem>;
pub(crate) type Opened = (SimDevice, Rc<RefCell<SimNic>>, Rc<RefCell<Doorbells>>);

pub(crate) fn open(seed: u64) -> Result<Opened> {
    Ok(open_fenced(seed, rng(seed + 2).gen_range(1..40))?.0)
}

/// `open`, the datapath's fence answering after `delay` cycles.
pub(crate) fn open_fenced(seed: u64, delay: u64) -> Result<(Opened, Rc<RefCell<Fence>>)> {
    let tb = open_tb(DESIGN, &BuildOptions::default())?;
    let m = tb.model_ref();
    let db = Rc::new(RefCell::new(Doorbells {
        qpn: m.port("m_db_qpn")?,
        pi: m.port("m_db_pi")?,
        valid: m.port("m_db_tvalid")?,
        ready: m.port("m_db_tready")?,
        rng: rng(seed),
        ready_now: false,
        got: vec![],
    }));
    let nic = SimNic::new(tb, PcieConfig::default())?;
    nic.borrow()
        .rc
        .borrow_mut()
        .set_backpressure_generator(PauseGenerator::random(seed + 1, 0.3));
    nic.borrow_mut().tb.add(db.clone());
    let fence = add_fence(&nic, delay)?;
    // The context tables clear themselves after reset (256 cycles).
    nic.borrow_mut().run(300)?;
    let dev = Device::open(SimBar(nic.clone()), SimMem(nic.clone())).context("opening")?;
    Ok(((dev, nic, db), fence))
}

#[test]
fn the_driver_discovers_the_device_and_its_blocks() -> Result<()> {
    let (mut dev, _, _) = open(1)?;
    ensure!(dev.info.datapath_width == 64 && dev.info.num_qps == 256 && dev.info.num_cqs == 256);
    ensure!(dev.info.clock_khz == 156_250);
    ensure!(dev.info.max_rd_atomic == MAX_RD_ATOMIC as u32);
    ensure!((dev.info.db_offset, dev.info.db_stride) == (regs::DB_OFFSET, regs::DB_STRIDE));
    // Every register of every block reads its table reset value.
    for b in BLOCKS {
        for r in b.all_regs() {
            if let regs::Reset::Value(v) = r.reset {
                let got = dev.bar.read32(b.base + r.offset)?;
                ensure!(
                    got == v,
                    "{}.{} = {got:#x}, table says {v:#x}",
                    b.name,
                    r.name
                );
            }
        }
    }
    Ok(())
}

#[test]
fn registers_hold_what_is_written() -> Result<()> {
    let s = seed("registers_hold_what_is_written");
    let mut r = rng(s);
    let (mut dev, nic, _) = open(s)?;
    for _ in 0..50 {
        let (a, b, c) = (r.gen::<u32>(), r.gen::<u32>(), r.gen::<u32>());
        dev.bar.write32(regs::addr("ID", "SCRATCH"), a)?;
        dev.bar.write32(regs::addr("PORT", "MAC_LO"), b)?;
        dev.bar.write32(regs::addr("PORT", "IPV4"), c)?;
        ensure!(dev.bar.read32(regs::addr("ID", "SCRATCH"))? == a);
        ensure!(dev.bar.read32(regs::addr("PORT", "MAC_LO"))? == b);
        ensure!(dev.bar.read32(regs::addr("PORT", "IPV4"))? == c);
        ensure!(nic.borrow().tb.get("local_ipv4")? == u64::from(c));
    }
    // A 2-DW write lands in two registers; a 2-DW read returns both.
    let v: u64 = r.gen();
    nic.borrow()
        .rc
        .borrow_mut()
        .write64(regs::addr("PORT", "MAC_LO"), v);
    let tag = nic
        .borrow()
        .rc
        .borrow_mut()
        .read(regs::addr("PORT", "MAC_LO"), 2);
    let mut n = nic.borrow_mut();
    let rc = n.rc.clone();
    let mut res = ReadResult::Pending;
    n.tb.run_until(1000, "2-DW read", |_| {
        res = rc.borrow_mut().result(tag);
        res != ReadResult::Pending
    })?;
    ensure!(res == ReadResult::Done(v), "{res:?} != {v:#x}");
    ensure!(n.tb.get("local_mac")? == v & 0xFFFF_FFFF_FFFF);
    ensure!(rc.borrow().errors.is_empty(), "{:?}", rc.borrow().errors);
    Ok(())
}

#[test]
fn qps_walk_reset_init_rtr_rts_and_read_back() -> Result<()> {
    let s = seed("qps_walk_reset_init_rtr_rts_and_read_back");
    let mut r = rng(s);
    let (mut dev, nic, _) = open(s)?;
    let cq = dev.create_cq(64)?;
    let pd = dev.alloc_pd()?;
    let mut qps = Vec::new();
    for _ in 0..8 {
        let mut qp = dev.create_qp(&pd, &cq, r.gen_range(1..1024))?;
        ensure!(dev.query_qp(&qp)?.state == Some(QpState::Reset));
        // RTR before INIT is refused by the driver; RTR without its attributes too.
        ensure!(matches!(
            dev.modify_qp(&mut qp, QpState::Rtr, QpAttr::default()),
            Err(DriverError::BadTransition { .. })
        ));
        dev.modify_qp(&mut qp, QpState::Init, QpAttr::default())?;
        ensure!(matches!(
            dev.modify_qp(&mut qp, QpState::Rtr, QpAttr::default()),
            Err(DriverError::MissingAttr { .. })
        ));
        let attr = QpAttr {
            path_mtu: Some(256 << r.gen_range(0..5)),
            dest_qpn: Some(r.gen_range(0..1 << 24)),
            rq_psn: Some(r.gen_range(0..1 << 24)),
            sq_psn: Some(r.gen_range(0..1 << 24)),
            remote_mac: Some(r.gen()),
            remote_ipv4: Some(r.gen()),
            vlan: r.gen::<bool>().then(|| Vlan {
                pcp: r.gen_range(0..8),
                vid: r.gen_range(0..4095),
            }),
            // Reliability: the send side's on RTR -> RTS, min_rnr_timer on INIT -> RTR.
            timeout: Some(r.gen_range(0..32)),
            retry_cnt: Some(r.gen_range(0..8)),
            rnr_retry: Some(r.gen_range(0..8)),
            min_rnr_timer: Some(r.gen_range(0..32)),
            max_rd_atomic: Some(r.gen_range(1..=MAX_RD_ATOMIC as u8)),
            access: Some(r.gen_range(0..8) << 1),
        };
        let send_side = QpAttr {
            sq_psn: attr.sq_psn,
            timeout: attr.timeout,
            retry_cnt: attr.retry_cnt,
            rnr_retry: attr.rnr_retry,
            max_rd_atomic: attr.max_rd_atomic,
            ..QpAttr::default()
        };
        // Out of range, or on a transition that does not take it: refused.
        for wrong in [
            QpAttr {
                timeout: Some(32),
                ..send_side
            },
            QpAttr {
                retry_cnt: Some(8),
                ..send_side
            },
            QpAttr {
                rnr_retry: Some(8),
                ..send_side
            },
            QpAttr {
                max_rd_atomic: Some(MAX_RD_ATOMIC as u8 + 1),
                ..send_side
            },
        ] {
            ensure!(matches!(
                dev.modify_qp(
                    &mut qp,
                    QpState::Init,
                    QpAttr {
                        sq_psn: None,
                        ..wrong
                    }
                ),
                Err(DriverError::Invalid(_))
            ));
        }
        ensure!(matches!(
            dev.modify_qp(
                &mut qp,
                QpState::Init,
                QpAttr {
                    min_rnr_timer: Some(1),
                    ..QpAttr::default()
                }
            ),
            Err(DriverError::Invalid(_))
        ));
        // An 802.1Q tag out of range is refused before anything is written.
        for bad in [Vlan { pcp: 8, vid: 1 }, Vlan { pcp: 3, vid: 4095 }] {
            let wrong = QpAttr {
                vlan: Some(bad),
                ..attr
            };
            ensure!(matches!(
                dev.modify_qp(&mut qp, QpState::Rtr, wrong),
                Err(DriverError::Invalid(_))
            ));
        }
        // rq_psn belongs to INIT -> RTR, sq_psn to RTR -> RTS: the driver refuses them elsewhere.
        ensure!(matches!(
            dev.modify_qp(&mut qp, QpState::Rtr, attr),
            Err(DriverError::Invalid(_))
        ));
        dev.modify_qp(
            &mut qp,
            QpState::Rtr,
            QpAttr {
                sq_psn: None,
                timeout: None,
                retry_cnt: None,
                rnr_retry: None,
                max_rd_atomic: None,
                ..attr
            },
        )?;
        let rts = send_side;
        ensure!(matches!(
            dev.modify_qp(
                &mut qp,
                QpState::Rts,
                QpAttr {
                    rq_psn: Some(1),
                    ..rts
                }
            ),
            Err(DriverError::Invalid(_))
        ));
        for wrong in [
            QpAttr {
                timeout: Some(32),
                ..rts
            },
            QpAttr {
                rnr_retry: Some(8),
                ..rts
            },
            QpAttr {
                max_rd_atomic: Some(0),
                ..rts
            },
            QpAttr {
                access: Some(access::LOCAL_WRITE),
                ..rts
            },
        ] {
            ensure!(matches!(
                dev.modify_qp(&mut qp, QpState::Rts, wrong),
                Err(DriverError::Invalid(_))
            ));
        }
        dev.modify_qp(&mut qp, QpState::Rts, rts)?;
        qps.push((qp, attr));
    }
    // A query returns the host's fields as written (the driver's) and the engines' running
    // state in place of the start values (the NIC's).
    let state: Vec<(u32, u16, u32, u32, u32, u32)> = (0..256)
        .map(|_| {
            let ci: u16 = r.gen();
            let mut p = || r.gen_range(0..1 << 24);
            (p(), ci, p(), p(), p(), p())
        })
        .collect();
    let rq_ci: Vec<u16> = (0..256).map(|_| r.gen()).collect();
    let engines = {
        let n = nic.borrow();
        let m = n.tb.model_ref();
        Rc::new(RefCell::new(Engines {
            index: m.port("m_peek_index")?,
            sq: m.port("s_peek_sq")?,
            rq: m.port("s_peek_rq")?,
            una: m.port("s_peek_cpl")?,
            rci: m.port("s_peek_rci")?,
            state: state.clone(),
            rq_ci: rq_ci.clone(),
            failed: (qps[3].0.qpn as usize, 10),
            seen: 0,
        }))
    };
    nic.borrow_mut().tb.add(engines);
    for (i, (qp, attr)) in qps.iter().enumerate() {
        let c = dev.query_qp(qp)?;
        // The QP the NIC failed reads as ERR, whatever the host last wrote.
        let want = if i == 3 { QpState::Err } else { QpState::Rts };
        ensure!(c.state == Some(want), "QP {}: {c:?}", qp.qpn);
        ensure!(c.remote_qpn == attr.dest_qpn.unwrap_or(0));
        let (psn, ci, _, una, epsn, msn) = state[qp.qpn as usize];
        ensure!(
            (c.sq_psn, c.sq_ci, c.una_psn, c.epsn, c.msn, c.rq_ci)
                == (psn, ci, una, epsn, msn, rq_ci[qp.qpn as usize]),
            "QP {}: {c:?}, the engines say {:?}",
            qp.qpn,
            state[qp.qpn as usize]
        );
        ensure!(c.sq_base == qp.sq.addr);
        ensure!(ferroce_spec::queues::mtu_bytes(c.pmtu) == attr.path_mtu);
        let mac = attr.remote_mac.unwrap_or_default();
        ensure!(c.remote_mac == mac.iter().fold(0u64, |a, b| a << 8 | u64::from(*b)));
        ensure!(c.remote_ip == u32::from_be_bytes(attr.remote_ipv4.unwrap_or_default()).into());
        ensure!(c.vlan == attr.vlan, "QP {}: {c:?}", qp.qpn);
        ensure!(
            Some((c.timeout, c.retry_cnt, c.rnr_retry, c.min_rnr_timer))
                == attr
                    .timeout
                    .zip(attr.retry_cnt)
                    .zip(attr.rnr_retry)
                    .zip(attr.min_rnr_timer)
                    .map(|(((a, b), c), d)| (a, b, c, d)),
            "QP {}: {c:?}",
            qp.qpn
        );
        ensure!(
            (Some(c.max_rd_atomic), Some(c.access)) == (attr.max_rd_atomic, attr.access),
            "QP {}: {c:?}",
            qp.qpn
        );
    }
    // Bits no field names are not stored: all-ones in, only field bits out (the running
    // state's fields from the engines).
    let ones = vec![0xFFu8; QP_CTX.len];
    dev.write_context(regs::TABLE_QP, 200, &ones)?;
    let back = dev.read_context(regs::TABLE_QP, 200, QP_CTX.len)?;
    let mut expect = vec![0u8; QP_CTX.len];
    for f in QP_CTX.fields {
        QP_CTX.set(f, &mut expect, u128::MAX);
    }
    let (psn, ci, pkts, una, epsn, msn) = state[200];
    for (name, v) in [
        ("sq_psn", psn),
        ("sq_ci", ci.into()),
        ("sq_pkts", pkts),
        ("una_psn", una),
        ("epsn", epsn),
        ("msn", msn),
        ("rq_ci", rq_ci[200].into()),
    ] {
        QP_CTX.set(&QP_CTX.field(name), &mut expect, v.into());
    }
    ensure!(back == expect, "reserved context bits were stored");
    // The NIC itself returns the running state only: the host's fields are the driver's.
    let (err, raw) = raw_command(&mut dev, regs::OP_READ, regs::TABLE_QP, 200)?;
    let mut running = vec![0u8; QP_CTX.len];
    for name in QP_RUNNING {
        let f = QP_CTX.field(name);
        QP_CTX.set(&f, &mut running, QP_CTX.get(&f, &expect));
    }
    ensure!(
        err == regs::ERR_NONE && raw[..QP_CTX.len] == running[..],
        "{raw:02x?}"
    );
    Ok(())
}

#[test]
fn refused_requests_are_counted_and_reads_get_completer_abort() -> Result<()> {
    let (mut dev, nic, _) = open(3)?;
    let scratch = regs::addr("ID", "SCRATCH");
    dev.bar.write32(scratch, 0x1234_5678)?;
    let base = Header {
        ty: tlp::TYPE_MEM,
        requester_id: 0x42,
        addr: scratch.into(),
        ..Header::default()
    };
    let bad = [
        // 3-DW read, read with partial byte enables, 3-DW write, write with partial enables.
        Header {
            fmt: tlp::FMT_3DW_NO_DATA,
            length: 3,
            be: 0xFF,
            tag: 0xA0,
            ..base
        },
        Header {
            fmt: tlp::FMT_3DW_NO_DATA,
            length: 1,
            be: 0x03,
            tag: 0xA1,
            ..base
        },
        Header {
            fmt: tlp::FMT_3DW_DATA,
            length: 3,
            be: 0xFF,
            ..base
        },
        Header {
            fmt: tlp::FMT_3DW_DATA,
            length: 1,
            be: 0x01,
            ..base
        },
    ];
    {
        let n = nic.borrow();
        let mut rc = n.rc.borrow_mut();
        for h in bad {
            rc.raw(h, [0xDEAD_BEEF, 0xDEAD_BEEF]);
        }
    }
    for tag in [0xA0, 0xA1] {
        let mut n = nic.borrow_mut();
        let rc = n.rc.clone();
        let mut res = ReadResult::Pending;
        n.tb.run_until(1000, "completer abort", |_| {
            res = rc.borrow_mut().result(tag);
            res != ReadResult::Pending
        })?;
        ensure!(
            res == ReadResult::Failed(tlp::CPL_CA),
            "tag {tag:#x}: {res:?}"
        );
    }
    ensure!(
        dev.bar.read32(scratch)? == 0x1234_5678,
        "a refused write changed a register"
    );
    ensure!(dev.bar.read32(regs::addr("COUNTERS", "MMIO_BAD"))? == 4);
    ensure!(nic.borrow().rc.borrow().errors.is_empty());
    Ok(())
}

#[test]
fn doorbells_come_out_in_order_under_back_pressure() -> Result<()> {
    let s = seed("doorbells_come_out_in_order_under_back_pressure");
    let mut r = rng(s);
    let (mut dev, nic, db) = open(s)?;
    let rdb = {
        let n = nic.borrow();
        let m = n.tb.model_ref();
        Rc::new(RefCell::new(RqDoorbells {
            en: m.port("m_rdb_en")?,
            qpn: m.port("m_rdb_qpn")?,
            pi: m.port("m_rdb_pi")?,
            got: vec![],
        }))
    };
    nic.borrow_mut().tb.add(rdb.clone());
    // Send and receive doorbells mixed: each comes out on its own port, in order, with its
    // QP and producer index (a receive doorbell behind a send doorbell waiting for its ready
    // does not overwrite it).
    let (mut want_sq, mut want_rq) = (vec![], vec![]);
    for _ in 0..soak(200) {
        let (qpn, pi) = (r.gen_range(0..256), r.gen());
        if r.gen_bool(0.5) {
            dev.ring_sq_doorbell(qpn, pi)?;
            want_sq.push((qpn, pi));
        } else {
            dev.ring_rq_doorbell(qpn, pi)?;
            want_rq.push((qpn, pi));
        }
    }
    nic.borrow_mut().flush()?;
    nic.borrow_mut().run(50)?;
    ensure!(
        db.borrow().got == want_sq,
        "seed {s}: send doorbells differ"
    );
    ensure!(
        rdb.borrow().got == want_rq,
        "seed {s}: receive doorbells differ"
    );
    Ok(())
}
