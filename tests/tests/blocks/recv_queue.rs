//! The receive queues on their Verilator model, rust-hdl's simulator beside them on the same
//! stimulus with every output compared every cycle. Three QPs with receive rings (one starting
//! just below the 16-bit index wrap, one with no ring), memory regions of two PDs with and
//! without local write access, receive WQEs posted by doorbell between requests: 0 to 5 SGEs,
//! keys right, stale, of the other PD, without the right, ranges around the regions' ends,
//! lengths adding up past 2^31; the WQE fetches answered by a DMA model after a random delay,
//! some failed. Each answer must be what IBA's rules (written out here) say of the WQE at the
//! QP's consumer index: NONE with nothing posted (nothing consumed), else the WQE's wr_id and
//! scatter list, or the completion status of a WQE consumed in error; `m_peek_ci` reads the
//! consumer index back. Atomic reads (8 bytes at an address, nothing consumed) between them.

use anyhow::{ensure, Context, Result};
use ferroce_hdl::config::ten_g;
use ferroce_hdl::prelude::*;
use ferroce_hdl::rc::recv_queue::{ANS_NONE, ANS_SGE_W};
use ferroce_hdl::util::bits_from_u64;
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_spec::queues::{
    ACCESS_LOCAL_WRITE, MR_CTX, QP_CTX, RECV_WQE, SGE, WC_GENERAL_ERR, WC_LOC_LEN_ERR,
    WC_LOC_PROT_ERR, WC_LOC_QP_OP_ERR,
};
use ferroce_tests::diff::Outputs;
use ferroce_tests::{hdl_edge, rng, seed, soak, wide};
use rand::Rng;
use std::collections::{HashMap, VecDeque};

const KW: usize = 8;

#[derive(Clone, Copy, Default, Debug)]
struct Region {
    va: u64,
    len: u64,
    key: u32,
    pdn: u16,
    access: u8,
}

#[derive(Clone, Copy, Debug)]
struct Sge {
    addr: u64,
    len: u32,
    key: u32,
}

struct Qp {
    qpn: u64,
    base: u64,
    log: u32,
    cqn: u16,
    pdn: u16,
    ci: u16,
    pi: u16,
}

fn mr_image(e: &Region) -> Vec<u8> {
    let mut img = vec![0u8; 32];
    let mut put = |name: &str, v: u128| MR_CTX.set(&MR_CTX.field(name), &mut img, v);
    put("va", e.va.into());
    put("len", e.len.into());
    put("key", e.key.into());
    put("pdn", e.pdn.into());
    put("access", e.access.into());
    img
}

fn qp_image(q: &Qp) -> Vec<u8> {
    let mut img = vec![0u8; 80];
    let mut put = |name: &str, v: u128| QP_CTX.set(&QP_CTX.field(name), &mut img, v);
    put("state", 1);
    put("init_rq", 1);
    put("pdn", q.pdn.into());
    put("rq_base", q.base.into());
    put("rq_log_size", q.log.into());
    put("rq_cqn", q.cqn.into());
    put("rq_ci", q.ci.into());
    img
}

/// A receive WQE's bytes: `num_sge` at byte 2, `wr_id` at 8, SGE i at 64 + 16 i.
fn wqe_image(wr_id: u64, nsge: u8, sges: &[Sge]) -> Vec<u8> {
    let mut img = vec![0u8; 128];
    RECV_WQE.set(&RECV_WQE.field("num_sge"), &mut img, nsge.into());
    RECV_WQE.set(&RECV_WQE.field("wr_id"), &mut img, wr_id.into());
    for (i, g) in sges.iter().enumerate() {
        let e = &mut img[64 + 16 * i..80 + 16 * i];
        SGE.set(&SGE.field("addr"), e, g.addr.into());
        SGE.set(&SGE.field("length"), e, g.len.into());
        SGE.set(&SGE.field("lkey"), e, g.key.into());
    }
    img
}

/// IBA's rules for one local buffer the NIC writes (local write access).
fn allowed(table: &[Region], pdn: u16, g: &Sge) -> bool {
    if g.len == 0 {
        return true;
    }
    let e = &table[(g.key >> 8 & 0xFF) as usize];
    let end = u128::from(g.addr) + u128::from(g.len);
    e.key == g.key
        && g.key & 0xFF != 0
        && e.pdn == pdn
        && u32::from(e.access) & ACCESS_LOCAL_WRITE != 0
        && g.addr >= e.va
        && end <= u128::from(e.va) + u128::from(e.len)
}

/// What the block must answer for a posted WQE: status, and on success the list and length.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u32,
    wr_id: u64,
    sges: Vec<(u64, u32)>,
    len: u32,
    cqn: u16,
}

fn random_sge(r: &mut impl Rng, table: &[Region]) -> Sge {
    let e = table[r.gen_range(1..=4)];
    let mut g = Sge {
        addr: e.va + r.gen_range(0..e.len.min(1 << 20)),
        len: r.gen_range(0..5000),
        key: e.key,
    };
    match r.gen_range(0..14) {
        0 => g.key ^= r.gen_range(1..=255),
        1 => g.addr = e.va.wrapping_sub(1),
        2 => {
            g.len = r.gen_range(1..5000);
            g.addr = e.va + e.len - u64::from(g.len) + r.gen_range(0..2);
        }
        3 => g.len = 0,
        4 => {
            g.addr = e.va;
            g.len = (1 << 31) - r.gen_range(0..3);
        }
        _ => {}
    }
    g
}

#[test]
fn receive_wqes_are_fetched_checked_and_consumed_and_rust_hdl_matches_verilator() -> Result<()> {
    let s = seed("receive_wqes_are_fetched_checked_and_consumed_and_rust_hdl_matches_verilator");
    let mut r = rng(s);
    let mut tb = open_tb("ferroce_recv_queue_64", &BuildOptions::default())?;
    let mut hdl = ten_g::RecvQueue::new();
    hdl.connect_all();
    let edge = |b: &mut ten_g::RecvQueue| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    tb.set("rst", 1)?;
    for _ in 0..3 {
        edge(&mut hdl);
        tb.rising_edge()?;
    }
    hdl.rst.next = false;
    tb.set("rst", 0)?;
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let p_mrw = tb.model_ref().port("s_mrw_data")?;
    let p_qpw = tb.model_ref().port("s_qpw_data")?;
    let p_sges = tb.model_ref().port("m_ans_sges")?;
    // Regions 1..=4: two of PD 1 with local write, one without, one of PD 2 (4 GiB each).
    let mut table = vec![Region::default(); 256];
    for (i, (pdn, access)) in [(1, 1), (1, 3), (1, 2), (2, 1)].into_iter().enumerate() {
        table[i + 1] = Region {
            va: (i as u64 + 1) << 40,
            len: 1 << 32,
            key: ((i as u32 + 1) << 8) | r.gen_range(1..=255),
            pdn,
            access,
        };
    }
    let mut qps = [
        Qp {
            qpn: 3,
            base: 0x1000_0000,
            log: 3,
            cqn: 5,
            pdn: 1,
            ci: 0,
            pi: 0,
        },
        Qp {
            qpn: 7,
            base: 0x2000_0000,
            log: 2,
            cqn: 9,
            pdn: 1,
            ci: 0xFFFD,
            pi: 0xFFFD,
        },
        Qp {
            qpn: 9,
            base: 0x3000_0000,
            log: 4,
            cqn: 1,
            pdn: 2,
            ci: 0,
            pi: 0,
        },
    ];
    // Host memory: ring slots by address; WQEs whose fetch fails.
    let mut mem: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut fails: HashMap<u64, bool> = HashMap::new();
    // Per QP, the answers its posted WQEs must give, in order.
    let mut posted: Vec<VecDeque<Answer>> = qps.iter().map(|_| VecDeque::new()).collect();
    // Setup writes: the four regions, then the three QPs.
    let mut setup: VecDeque<(bool, u64, Vec<u8>)> = (1..=4)
        .map(|i| (false, i as u64, mr_image(&table[i])))
        .chain(qps.iter().map(|q| (true, q.qpn, qp_image(q))))
        .collect();
    let mut in_flight: Option<usize> = None;
    let mut req: Option<usize> = None;
    // An atomic's read (its address) asked for, and in flight: answered with the 8 bytes
    // read there (or GENERAL_ERR), nothing consumed.
    let (mut at_req, mut at_flight): (Option<u64>, Option<u64>) = (None, None);
    let mut atomics = 0usize;
    // DMA: the read command taken, and the beats of the answer after its delay.
    let mut dma: VecDeque<(u64, Vec<u8>, bool)> = VecDeque::new();
    let mut beats: VecDeque<(u64, bool, bool)> = VecDeque::new();
    let mut dma_wait = 0u32;
    // QP 7's producer index starts where its consumer index does.
    let mut doorbell: Option<(u64, u16)> = Some((7, 0xFFFD));
    let (mut answers, mut nones, mut errors) = (0usize, 0usize, 0usize);
    let target = soak(300);
    let mut cycle = 0u64;
    let mut wr_id = 1u64;
    while answers < target {
        ensure!(cycle < 2_000_000, "seed {s}: stuck after {answers} answers");
        // Stimulus for this cycle.
        let (mut qpw, mut mrw) = (None, None);
        if let Some((is_qp, index, img)) = setup.pop_front() {
            if is_qp {
                qpw = Some((index, img));
            } else {
                mrw = Some((index, img));
            }
        } else if in_flight.is_none() && req.is_none() && doorbell.is_none() && r.gen_ratio(1, 6) {
            // Post 1 to 3 WQEs on a QP with a ring, between requests.
            let k = r.gen_range(0..2);
            let q = &mut qps[k];
            for _ in 0..r.gen_range(1..=3) {
                if q.pi.wrapping_sub(q.ci) >= 1 << q.log {
                    break;
                }
                let nsge: u8 = if r.gen_ratio(1, 12) {
                    5
                } else {
                    r.gen_range(0..=4)
                };
                let sges: Vec<Sge> = (0..nsge.min(4))
                    .map(|_| random_sge(&mut r, &table))
                    .collect();
                let addr = q.base + 128 * u64::from(q.pi & ((1 << q.log) - 1));
                let fail = r.gen_ratio(1, 20);
                mem.insert(addr, wqe_image(wr_id, nsge, &sges));
                fails.insert(addr, fail);
                let list: Vec<(u64, u32)> = sges.iter().map(|g| (g.addr, g.len)).collect();
                let total: u64 = sges.iter().map(|g| u64::from(g.len)).sum();
                let status = if fail {
                    WC_GENERAL_ERR
                } else if nsge > 4 {
                    WC_LOC_QP_OP_ERR
                } else if !sges.iter().all(|g| allowed(&table, q.pdn, g)) {
                    WC_LOC_PROT_ERR
                } else if total > 1 << 31 {
                    WC_LOC_LEN_ERR
                } else {
                    0
                };
                posted[k].push_back(Answer {
                    status,
                    wr_id,
                    sges: list,
                    len: total as u32,
                    cqn: q.cqn,
                });
                wr_id += 1;
                q.pi = q.pi.wrapping_add(1);
            }
            doorbell = Some((q.qpn, q.pi));
        } else if in_flight.is_none() && req.is_none() && r.gen_ratio(1, 4) {
            req = Some(r.gen_range(0..qps.len()));
            if r.gen_ratio(1, 5) {
                let addr = r.gen::<u64>() & !7;
                mem.insert(addr, (0..8).map(|_| r.gen()).collect());
                fails.insert(addr, r.gen_ratio(1, 10));
                at_req = Some(addr);
            }
        }
        let rdb = doorbell.take();
        // The request is held until taken.
        let s_req_ready = tb.get("s_req_ready")? == 1;
        let req_now = req;
        let at_now = at_req;
        if let (Some(k), true) = (req, s_req_ready) {
            in_flight = Some(k);
            at_flight = at_req.take();
            req = None;
        }
        // The DMA model: a command when it has none, its beats after a delay.
        let rd_ready = dma.is_empty() && r.gen_bool(0.7);
        if tb.get("m_rd_tvalid")? == 1 && rd_ready {
            let addr = tb.get("m_rd_addr")?;
            let want = if at_flight.is_some() { 8 } else { 128 };
            ensure!(
                tb.get("m_rd_len")? == want,
                "seed {s}: read length, want {want}"
            );
            if let Some(a) = at_flight {
                ensure!(addr == a, "seed {s}: atomic read at {addr:#x}, want {a:#x}");
            }
            let img = mem.get(&addr).cloned().unwrap_or_else(|| vec![0xEE; 128]);
            let fail = *fails.get(&addr).unwrap_or(&true);
            dma.push_back((addr, img, fail));
            dma_wait = r.gen_range(5..60);
        }
        if beats.is_empty() && !dma.is_empty() {
            if dma_wait == 0 {
                let (_, img, fail) = dma.pop_front().context("a read")?;
                let n = img.len() / KW;
                for i in 0..n {
                    let w = u64::from_le_bytes(img[i * KW..(i + 1) * KW].try_into()?);
                    let last = i + 1 == n;
                    beats.push_back((w, last, last && fail));
                }
            } else {
                dma_wait -= 1;
            }
        }
        let beat = if r.gen_bool(0.8) {
            beats.pop_front()
        } else {
            None
        };
        let (bd, bl, bu) = beat.unwrap_or((r.gen(), false, false));
        // The answer, taken at random.
        let ans_ready = r.gen_bool(0.6);
        if tb.get("m_ans_valid")? == 1 && ans_ready {
            let k = in_flight.take().context("an answer with no request")?;
            let status = tb.get("m_ans_status")? as u32;
            let q = &mut qps[k];
            if let Some(a) = at_flight.take() {
                let want = if fails[&a] { WC_GENERAL_ERR } else { 0 };
                ensure!(status == want, "seed {s}: atomic read status {status}");
                if status == 0 {
                    let v = u64::from_le_bytes(mem[&a][..8].try_into()?);
                    ensure!(
                        tb.get("m_ans_data")? == v,
                        "seed {s}: atomic read data {:#x}, want {v:#x}",
                        tb.get("m_ans_data")?
                    );
                }
                atomics += 1;
            } else if q.ci == q.pi {
                ensure!(
                    status == ANS_NONE,
                    "seed {s}: QP {} has none posted, answer {status:#x}",
                    q.qpn
                );
                nones += 1;
            } else {
                let w = posted[k].pop_front().context("a posted WQE")?;
                ensure!(
                    status == w.status,
                    "seed {s}: QP {} WQE {}: status {status}, want {w:?}",
                    q.qpn,
                    w.wr_id
                );
                if status == 0 {
                    let got = tb.get("m_ans_wrid")?;
                    let n = tb.get("m_ans_nsge")? as usize;
                    let bytes = tb.model_ref().get_bytes(p_sges);
                    let list: Vec<(u64, u32)> = (0..n)
                        .map(|i| {
                            let at = i * ANS_SGE_W / 8;
                            (
                                u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()),
                                u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()),
                            )
                        })
                        .collect();
                    let got = Answer {
                        status,
                        wr_id: got,
                        sges: list,
                        len: tb.get("m_ans_len")? as u32,
                        cqn: tb.get("m_ans_cqn")? as u16,
                    };
                    ensure!(
                        got == w,
                        "seed {s}: QP {}: answer {got:?}, want {w:?}",
                        q.qpn
                    );
                } else {
                    errors += 1;
                }
                q.ci = q.ci.wrapping_add(1);
            }
            answers += 1;
        }
        // Drive both models.
        let (qw_en, qw_i, qw_img) = match &qpw {
            Some((i, img)) => (true, *i, img.clone()),
            None => (false, 0, vec![0u8; 80]),
        };
        let (mw_en, mw_i, mw_img) = match &mrw {
            Some((i, img)) => (true, *i, img.clone()),
            None => (false, 0, vec![0u8; 32]),
        };
        let (db_en, db_q, db_pi) = rdb.map_or((false, 0, 0), |(q, p)| (true, q, p));
        let rq = req_now.map_or(0, |k| qps[k].qpn);
        let peek = qps[r.gen_range(0..qps.len())].qpn;
        hdl.s_qpw_en.next = qw_en;
        hdl.s_qpw_index.next = bits_from_u64(qw_i);
        hdl.s_qpw_data.next = wide(&qw_img);
        hdl.s_mrw_en.next = mw_en;
        hdl.s_mrw_index.next = bits_from_u64(mw_i);
        hdl.s_mrw_data.next = wide(&mw_img);
        hdl.s_rdb_en.next = db_en;
        hdl.s_rdb_qpn.next = bits_from_u64(db_q);
        hdl.s_rdb_pi.next = bits_from_u64(db_pi.into());
        hdl.s_req_valid.next = req_now.is_some();
        hdl.s_req_qpn.next = bits_from_u64(rq);
        hdl.s_req_at.next = at_now.is_some();
        hdl.s_req_addr.next = bits_from_u64(at_now.unwrap_or(0));
        hdl.m_ans_ready.next = ans_ready;
        hdl.m_rd_tready.next = rd_ready;
        hdl.s_rd_tdata.next = bits_from_u64(bd);
        hdl.s_rd_tlast.next = bl;
        hdl.s_rd_tuser.next = bu;
        hdl.s_rd_tvalid.next = beat.is_some();
        hdl.s_peek_index.next = bits_from_u64(peek);
        edge(&mut hdl);
        tb.set("s_qpw_en", qw_en.into())?;
        tb.set("s_qpw_index", qw_i)?;
        tb.model().set_bytes(p_qpw, &qw_img)?;
        tb.set("s_mrw_en", mw_en.into())?;
        tb.set("s_mrw_index", mw_i)?;
        tb.model().set_bytes(p_mrw, &mw_img)?;
        tb.set("s_rdb_en", db_en.into())?;
        tb.set("s_rdb_qpn", db_q)?;
        tb.set("s_rdb_pi", db_pi.into())?;
        tb.set("s_req_valid", req_now.is_some().into())?;
        tb.set("s_req_qpn", rq)?;
        tb.set("s_req_at", at_now.is_some().into())?;
        tb.set("s_req_addr", at_now.unwrap_or(0))?;
        tb.set("m_ans_ready", ans_ready.into())?;
        tb.set("m_rd_tready", rd_ready.into())?;
        tb.set("s_rd_tdata", bd)?;
        tb.set("s_rd_tlast", bl.into())?;
        tb.set("s_rd_tuser", bu.into())?;
        tb.set("s_rd_tvalid", beat.is_some().into())?;
        tb.set("s_peek_index", peek)?;
        tb.rising_edge()?;
        outs.check(&hdl, tb.model_ref(), cycle)?;
        cycle += 1;
    }
    // The consumer indices, read back.
    for _ in 0..4 {
        hdl.s_peek_index.next = bits_from_u64(qps[0].qpn);
        edge(&mut hdl);
        tb.set("s_peek_index", qps[0].qpn)?;
        tb.rising_edge()?;
    }
    ensure!(
        tb.get("m_peek_ci")? == u64::from(qps[0].ci),
        "seed {s}: peek ci {} want {}",
        tb.get("m_peek_ci")?,
        qps[0].ci
    );
    ensure!(
        nones > 0 && errors > 0 && atomics > 10,
        "seed {s}: {nones} NONE, {errors} errors, {atomics} atomic reads: too few"
    );
    ensure!(
        tb.get("bad_wqe")? == errors as u64 && tb.get("empty")? == nones as u64,
        "seed {s}: counters"
    );
    println!(
        "seed {s}: {answers} answers ({nones} none, {errors} errors), {cycle} cycles, all {} outputs equal",
        outs.len()
    );
    Ok(())
}
