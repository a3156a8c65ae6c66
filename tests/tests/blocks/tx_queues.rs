//! The MAC's transmit queues (`TxQueues`) at 64 and 512 bits, rust-hdl's simulator and the
//! Verilator model side by side on the same stimulus (every output compared every cycle).
//!
//! - Random traffic: VLAN-tagged frames of every priority and untagged ones (priority 0),
//!   60 B to 4.2 KB and now and then one too big for a queue (over 8 KiB), random idle cycles
//!   on the input, random back-pressure on the output, the pause vector flipping at random,
//!   PFC and PAUSE records now and then. Every frame comes out byte-exact and in order within
//!   its priority, the oversize ones are dropped and counted, one in twenty is marked bad
//!   (`tuser` on its last beat) and is dropped and counted (`bad_frames`) with none of its
//!   bytes out, and every control frame is the one `spec::mac_ctrl`'s builders make
//!   (byte-identical to scapy's) from the NIC's address. Every frame's beats are reserved on
//!   the two credit ports (`rsv_a`, `rsv_b`) as it is queued for input, and at the end `used`
//!   is zero for every priority: each beat came back when sent, and a dropped one's when dropped.
//! - Gating: with the output never stalled, a frame of priority p starts two cycles after the
//!   scheduler chose it, so `paused` must have been low then for p and for every priority
//!   sharing p's queue (`spec::mac_ctrl::queue_of`; the 10g block has four queues, the 100g
//!   eight); frames of the other queues keep going while p is paused.
//! - Strict priority: with every priority paused and frames of all eight queued, control
//!   frames still go out; when all resume at once the queues drain highest first, each in
//!   arrival order (its priorities interleaved as they came).

use anyhow::{ensure, Context, Result};
use ferroce_hdl::config::{hundred_g, ten_g};
use ferroce_hdl::net::tx_queues::CTRL_W;
use ferroce_hdl::net::TxQueues;
use ferroce_hdl::prelude::*;
use ferroce_sim::designs::open_tb;
use ferroce_sim::model::Port;
use ferroce_sim::{BuildOptions, Tb};
use ferroce_spec::mac_ctrl::{self, queue_of, PAUSE, PFC, PRIORITIES};
use ferroce_tests::diff::Outputs;
use ferroce_tests::{budget, full_keep, hdl_edge, rng, seed, soak, wide};
use rand::Rng;
use std::collections::VecDeque;

const MAC: [u8; 6] = [0x02, 0x00, 0x5e, 0x10, 0x20, 0x30];
const QUEUE_BYTES: usize = 8192;

/// One cycle of inputs.
#[derive(Clone, Default)]
struct In {
    data: Vec<u8>,
    keep: u64,
    last: bool,
    user: bool,
    valid: bool,
    ctrl: Vec<u8>,
    ctrl_valid: bool,
    paused: u8,
    ready: bool,
    rsv_a: u64,
    rsv_b: u64,
}

/// The outputs the checks read, as Verilator gives them (every output of rust-hdl's is checked
/// equal to Verilator's every cycle).
#[derive(Clone, Default, Debug)]
struct Out {
    s_ready: bool,
    c_ready: bool,
    data: Vec<u8>,
    keep: u64,
    last: bool,
    valid: bool,
    q_ready: u8,
    oversize: u64,
    ctrl_sent: u64,
    frames_sent: Vec<u8>,
    used: Vec<u8>,
    held: u64,
    bad_frames: u64,
}

struct Duo<const DW: usize, const KW: usize, const QA: usize, const RA: usize> {
    name: String,
    hdl: TxQueues<DW, KW, QA, RA>,
    tb: Tb,
    ports: Vec<Port>,
    outs: Outputs,
    cycle: u64,
    out: Out,
}

const PORTS: [&str; 13] = [
    "s_axis_tready",
    "s_ctrl_tready",
    "m_axis_tdata",
    "m_axis_tkeep",
    "m_axis_tlast",
    "m_axis_tvalid",
    "q_ready",
    "oversize",
    "ctrl_sent",
    "frames_sent",
    "used",
    "held",
    "bad_frames",
];

impl<const DW: usize, const KW: usize, const QA: usize, const RA: usize> Duo<DW, KW, QA, RA> {
    fn open(name: &str) -> Result<Self> {
        let mut hdl = TxQueues::<DW, KW, QA, RA>::new();
        hdl.connect_all();
        let mut tb = open_tb(name, &BuildOptions::default())?;
        let ports = PORTS
            .iter()
            .map(|p| tb.model_ref().port(p))
            .collect::<Result<Vec<_>, _>>()?;
        let mac = MAC.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
        hdl.local_mac.next = ferroce_hdl::util::bits_from_u64(mac);
        tb.set("local_mac", mac)?;
        let mut d = Duo {
            name: name.to_string(),
            outs: Outputs::new(&hdl, tb.model_ref())?,
            hdl,
            tb,
            ports,
            cycle: 0,
            out: Out::default(),
        };
        d.hdl.rst.next = true;
        d.tb.set("rst", 1)?;
        for _ in 0..3 {
            d.step(&In::default())?;
        }
        d.hdl.rst.next = false;
        d.tb.set("rst", 0)?;
        d.step(&In::default())?;
        Ok(d)
    }

    /// Drive `i` on both, one clock edge, compare, and keep the outputs.
    fn step(&mut self, i: &In) -> Result<()> {
        let mut data = i.data.clone();
        data.resize(DW / 8, 0);
        let mut ctrl = i.ctrl.clone();
        ctrl.resize(CTRL_W / 8, 0);
        let h = &mut self.hdl;
        h.s_axis_tdata.next = wide::<DW>(&data);
        h.s_axis_tkeep.next = ferroce_hdl::util::bits_from_u64(i.keep);
        h.s_axis_tlast.next = i.last;
        h.s_axis_tuser.next = i.user;
        h.s_axis_tvalid.next = i.valid;
        h.s_ctrl_tdata.next = wide::<CTRL_W>(&ctrl);
        h.s_ctrl_tvalid.next = i.ctrl_valid;
        h.paused.next = ferroce_hdl::util::bits_from_u64(u64::from(i.paused));
        h.m_axis_tready.next = i.ready;
        h.rsv_a.next = ferroce_hdl::util::bits_from_u64(i.rsv_a);
        h.rsv_b.next = ferroce_hdl::util::bits_from_u64(i.rsv_b);
        hdl_edge(h, |b, c| b.clk.next = c.into());
        let t = &mut self.tb;
        let dp = t.model_ref().port("s_axis_tdata")?;
        t.model().set_bytes(dp, &data)?;
        t.set("s_axis_tkeep", i.keep)?;
        t.set("s_axis_tlast", i.last.into())?;
        t.set("s_axis_tuser", i.user.into())?;
        t.set("s_axis_tvalid", i.valid.into())?;
        let cp = t.model_ref().port("s_ctrl_tdata")?;
        t.model().set_bytes(cp, &ctrl)?;
        t.set("s_ctrl_tvalid", i.ctrl_valid.into())?;
        t.set("paused", i.paused.into())?;
        t.set("m_axis_tready", i.ready.into())?;
        t.set("rsv_a", i.rsv_a)?;
        t.set("rsv_b", i.rsv_b)?;
        t.rising_edge()?;
        self.cycle += 1;
        let m = t.model_ref();
        let g = |n: usize| m.get(self.ports[n]);
        let got = Out {
            s_ready: g(0) == 1,
            c_ready: g(1) == 1,
            data: m.get_bytes(self.ports[2]),
            keep: g(3),
            last: g(4) == 1,
            valid: g(5) == 1,
            q_ready: g(6) as u8,
            oversize: g(7),
            ctrl_sent: g(8),
            frames_sent: m.get_bytes(self.ports[9]),
            used: m.get_bytes(self.ports[10]),
            held: g(11),
            bad_frames: g(12),
        };
        self.outs
            .check(&self.hdl, m, self.cycle)
            .with_context(|| format!("{}: Verilator vs rust-hdl", self.name))?;
        self.out = got;
        Ok(())
    }
}

/// A frame of priority `p` (tagged), or untagged (priority 0), `len` bytes.
fn frame(r: &mut impl Rng, p: Option<u8>, len: usize) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len).map(|_| r.gen()).collect();
    match p {
        Some(p) => {
            let tci = (u16::from(p) << 13) | r.gen_range(1..4095);
            f[12..14].copy_from_slice(&[0x81, 0x00]);
            f[14..16].copy_from_slice(&tci.to_be_bytes());
            f[16..18].copy_from_slice(&[0x08, 0x00]);
        }
        None => f[12..14].copy_from_slice(&[0x08, 0x00]),
    }
    f
}

fn prio_of(f: &[u8]) -> usize {
    if f[12..14] == [0x81, 0x00] {
        usize::from(f[14] >> 5)
    } else {
        0
    }
}

/// The `paused` bits of the priorities sharing priority `p`'s queue (of 2^(RA - QA)).
fn sharing<const QA: usize, const RA: usize>(p: usize) -> u8 {
    let q = |o| queue_of(o, 1 << (RA - QA));
    (0..PRIORITIES)
        .filter(|&o| q(o) == q(p))
        .fold(0, |m, o| m | 1 << o)
}

/// A random control record (PFC or PAUSE) and the frame `spec::mac_ctrl` makes of it.
fn ctrl_record(r: &mut impl Rng) -> (Vec<u8>, Vec<u8>) {
    let mut params = vec![0u8; PFC.len];
    if r.gen_bool(0.8) {
        let enable: u8 = r.gen();
        let times: [u16; PRIORITIES] = std::array::from_fn(|_| r.gen());
        PFC.set(
            &PFC.field("opcode"),
            &mut params,
            mac_ctrl::OPCODE_PFC.into(),
        );
        PFC.set(&PFC.field("class_enable"), &mut params, enable.into());
        for (p, t) in times.iter().enumerate() {
            PFC.set(&PFC.field(&format!("time{p}")), &mut params, (*t).into());
        }
        (params, mac_ctrl::pfc_frame(MAC, enable, times))
    } else {
        let time: u16 = r.gen();
        PAUSE.set(
            &PAUSE.field("opcode"),
            &mut params,
            mac_ctrl::OPCODE_PAUSE.into(),
        );
        PAUSE.set(&PAUSE.field("time"), &mut params, time.into());
        (params, mac_ctrl::pause_frame(MAC, time))
    }
}

/// Stimulus and bookkeeping around a `Duo`.
struct Run<const DW: usize, const KW: usize, const QA: usize, const RA: usize> {
    d: Duo<DW, KW, QA, RA>,
    /// Beats: data, keep, last, tuser (on the last beat of a frame marked bad).
    beats: VecDeque<(Vec<u8>, u64, bool, bool)>,
    ctrls: VecDeque<Vec<u8>>,
    /// Reservations (`rsv_a`/`rsv_b` values) for the frames sent, driven ahead of them.
    rsvs: VecDeque<u64>,
    rx: Vec<u8>,
    /// Frames out: (bytes, cycle of the first beat).
    out: Vec<(Vec<u8>, u64)>,
    start: Option<u64>,
    /// The pause vector driven in each cycle.
    paused_at: Vec<u8>,
}

impl<const DW: usize, const KW: usize, const QA: usize, const RA: usize> Run<DW, KW, QA, RA> {
    fn new(name: &str) -> Result<Self> {
        let d = Duo::open(name)?;
        // Indexed by cycle: the reset cycles drove no pause.
        let paused_at = vec![0; d.cycle as usize];
        Ok(Run {
            d,
            beats: VecDeque::new(),
            ctrls: VecDeque::new(),
            rsvs: VecDeque::new(),
            rx: Vec::new(),
            out: Vec::new(),
            start: None,
            paused_at,
        })
    }

    fn send(&mut self, f: &[u8], bad: bool) {
        let lanes = DW / 8;
        let n = f.len().div_ceil(lanes);
        self.rsvs
            .push_back(n as u64 | (prio_of(f) as u64) << 16 | 1 << 19);
        for i in 0..n {
            let chunk = &f[i * lanes..((i + 1) * lanes).min(f.len())];
            let last = i + 1 == n;
            self.beats
                .push_back((chunk.to_vec(), full_keep(chunk.len()), last, last && bad));
        }
    }

    /// One cycle: offer the head beat (unless `idle`), the head control record, `paused`,
    /// `ready`; collect what comes out.
    fn cycle(&mut self, idle: bool, paused: u8, ready: bool) -> Result<()> {
        let o = self.d.out.clone();
        let beat = if idle {
            None
        } else {
            self.beats.front().cloned()
        };
        let (data, keep, last, user) = beat.clone().unwrap_or_default();
        let i = In {
            data,
            keep,
            last,
            user,
            valid: beat.is_some(),
            ctrl: self.ctrls.front().cloned().unwrap_or_default(),
            ctrl_valid: !self.ctrls.is_empty(),
            paused,
            ready,
            rsv_a: if !self.d.cycle.is_multiple_of(3) {
                self.rsvs.pop_front().unwrap_or(0)
            } else {
                0
            },
            rsv_b: if self.d.cycle.is_multiple_of(2) {
                self.rsvs.pop_front().unwrap_or(0)
            } else {
                0
            },
        };
        if beat.is_some() && o.s_ready {
            self.beats.pop_front();
        }
        if i.ctrl_valid && o.c_ready {
            self.ctrls.pop_front();
        }
        if o.valid && ready {
            if self.start.is_none() {
                self.start = Some(self.d.cycle);
            }
            let n = (o.keep.count_ones() as usize).min(o.data.len());
            self.rx.extend_from_slice(&o.data[..n]);
            if o.last {
                let f = std::mem::take(&mut self.rx);
                self.out.push((f, self.start.take().unwrap_or(0)));
            }
        }
        self.paused_at.push(paused);
        self.d.step(&i)
    }
}

fn random_traffic<const DW: usize, const KW: usize, const QA: usize, const RA: usize>(
    name: &str,
    frames: usize,
) -> Result<()> {
    let mut r = rng(seed(name));
    let mut run = Run::<DW, KW, QA, RA>::new(name)?;
    let mut sent: Vec<Vec<Vec<u8>>> = vec![Vec::new(); PRIORITIES];
    let mut ctrl_want = Vec::new();
    let mut oversize = 0;
    let mut bad = 0;
    let mut paused = 0u8;
    let mut queued = 0;
    while queued < frames || !run.beats.is_empty() || !run.ctrls.is_empty() {
        if run.beats.len() < 64 && queued < frames {
            let tagged = r.gen_bool(0.85);
            let p = tagged.then(|| r.gen_range(0..8u8));
            let len = match r.gen_range(0..100) {
                0..=49 => r.gen_range(60..200),
                50..=84 => r.gen_range(200..1500),
                85..=97 => r.gen_range(1500..4200),
                _ => r.gen_range(QUEUE_BYTES + 1..9100),
            };
            let f = frame(&mut r, p, len);
            let is_bad = len <= QUEUE_BYTES && r.gen_ratio(1, 20);
            run.send(&f, is_bad);
            if len > QUEUE_BYTES {
                oversize += 1;
            } else if is_bad {
                bad += 1;
            } else {
                sent[prio_of(&f)].push(f);
            }
            queued += 1;
        }
        if r.gen_ratio(1, 400) {
            let (params, want) = ctrl_record(&mut r);
            run.ctrls.push_back(params);
            ctrl_want.push(want);
        }
        if r.gen_ratio(1, 60) {
            paused ^= 1 << r.gen_range(0..8);
        }
        run.cycle(r.gen_bool(0.2), paused, r.gen_bool(0.7))?;
        ensure!(
            run.d.cycle < budget(3_000_000),
            "{name}: input never drained"
        );
    }
    // Let everything out.
    let total: usize = sent.iter().map(Vec::len).sum::<usize>() + ctrl_want.len();
    let mut idle = 0;
    while run.out.len() < total {
        run.cycle(true, 0, r.gen_bool(0.7))?;
        idle += 1;
        ensure!(
            idle < 200_000,
            "{name}: {} of {total} frames out, queues never drained",
            run.out.len()
        );
    }
    for _ in 0..50 {
        run.cycle(true, 0, true)?;
    }
    ensure!(run.out.len() == total, "{name}: extra frames out");
    let mut got: Vec<Vec<Vec<u8>>> = vec![Vec::new(); PRIORITIES];
    let mut ctrl_got = Vec::new();
    for (f, _) in &run.out {
        if f.len() >= 14 && f[12..14] == [0x88, 0x08] {
            ctrl_got.push(f.clone());
        } else {
            got[prio_of(f)].push(f.clone());
        }
    }
    for p in 0..PRIORITIES {
        ensure!(
            got[p] == sent[p],
            "{name}: priority {p}: {} frames out, {} sent, first difference at {:?}",
            got[p].len(),
            sent[p].len(),
            got[p].iter().zip(&sent[p]).position(|(a, b)| a != b)
        );
    }
    ensure!(ctrl_got == ctrl_want, "{name}: control frames differ");
    ensure!(run.d.out.oversize == oversize, "{name}: oversize counter");
    ensure!(
        run.d.out.bad_frames == bad,
        "{name}: bad_frames {} for {bad} frames marked bad",
        run.d.out.bad_frames
    );
    // Every frame's beats were reserved, and all came back: sent, or given back by a drop.
    ensure!(
        run.rsvs.is_empty() && run.d.out.used.iter().all(|&b| b == 0),
        "{name}: credits not all returned: {:?}",
        run.d.out.used
    );
    ensure!(run.d.out.ctrl_sent == ctrl_want.len() as u64);
    for (p, s) in sent.iter().enumerate() {
        let n = u32::from_le_bytes(
            run.d.out.frames_sent[4 * p..4 * p + 4]
                .try_into()
                .context("counter bytes")?,
        );
        ensure!(n as usize == s.len(), "{name}: frames_sent[{p}] {n}");
    }
    println!(
        "{name}: {} frames by priority {:?}, {oversize} oversize and {bad} bad dropped, {} control frames, \
         {} cycles, input held {} cycles by a full queue (no sender here minds the credits)",
        total,
        sent.iter().map(Vec::len).collect::<Vec<_>>(),
        ctrl_want.len(),
        run.d.cycle,
        run.d.out.held
    );
    ensure!(oversize > 0 && ctrl_want.len() > 3 && sent.iter().all(|s| s.len() > 10));
    Ok(())
}

fn gating<const DW: usize, const KW: usize, const QA: usize, const RA: usize>(
    name: &str,
) -> Result<()> {
    let mut r = rng(seed(name));
    let mut run = Run::<DW, KW, QA, RA>::new(name)?;
    let mut paused = 0u8;
    let mut queued = 0;
    while queued < 1500 || !run.beats.is_empty() {
        if run.beats.len() < 32 && queued < 1500 {
            let p = r.gen_range(0..8u8);
            // Keep each queue under half full: a paused queue never holds the input.
            if run.d.out.q_ready & (1 << p) != 0 {
                let len = r.gen_range(60..600);
                let f = frame(&mut r, Some(p), len);
                run.send(&f, false);
                queued += 1;
            }
        }
        if r.gen_ratio(1, 40) {
            paused ^= 1 << r.gen_range(0..8);
        }
        run.cycle(r.gen_bool(0.1), paused, true)?;
        ensure!(run.d.cycle < 1_000_000, "{name}: stuck");
    }
    for _ in 0..20_000 {
        run.cycle(true, 0, true)?;
    }
    ensure!(
        run.out.len() == 1500,
        "{name}: {} frames out",
        run.out.len()
    );
    let mut flowing = 0;
    for (f, t) in &run.out {
        let p = prio_of(f);
        let chosen = (*t as usize)
            .checked_sub(2)
            .context("a frame before the scheduler ran")?;
        let pz = run.paused_at[chosen];
        let queue = sharing::<QA, RA>(p);
        ensure!(
            pz & queue == 0,
            "{name}: a frame of priority {p} started at cycle {t}, chosen at {chosen} while \
             its queue's priorities ({queue:08b}) were paused ({pz:08b})"
        );
        if pz != 0 {
            flowing += 1;
        }
    }
    println!(
        "{name}: 1500 frames, none started while a priority of its queue was paused; {flowing} \
         started while another priority was"
    );
    ensure!(flowing > 500, "other priorities kept flowing");
    Ok(())
}

fn strict<const DW: usize, const KW: usize, const QA: usize, const RA: usize>(
    name: &str,
) -> Result<()> {
    let mut r = rng(seed(name));
    let mut run = Run::<DW, KW, QA, RA>::new(name)?;
    let mut order = Vec::new();
    for _ in 0..3 {
        for p in 0..8u8 {
            let len = r.gen_range(60..300);
            let f = frame(&mut r, Some(p), len);
            run.send(&f, false);
            order.push(f);
        }
    }
    while !run.beats.is_empty() {
        run.cycle(false, 0xff, true)?;
    }
    (0..20).try_for_each(|_| run.cycle(false, 0xff, true))?;
    ensure!(
        run.out.is_empty(),
        "{name}: a frame left while all were paused"
    );
    // Control frames go out though every priority is paused.
    let (params, want) = ctrl_record(&mut r);
    run.ctrls.push_back(params);
    (0..30).try_for_each(|_| run.cycle(false, 0xff, true))?;
    ensure!(
        run.out.len() == 1 && run.out[0].0 == want,
        "{name}: the control frame did not go out while paused"
    );
    for _ in 0..3000 {
        run.cycle(false, 0, true)?;
    }
    // Highest queue first; within a queue, the order the frames came in.
    let queues = 1 << (RA - QA);
    let in_queue = |q: usize| {
        order
            .iter()
            .filter(move |f| queue_of(prio_of(f), queues) == q)
    };
    let want: Vec<&Vec<u8>> = (0..queues).rev().flat_map(in_queue).collect();
    let got: Vec<&Vec<u8>> = run.out[1..].iter().map(|(f, _)| f).collect();
    ensure!(
        got == want,
        "{name}: order by priority {:?}, want {:?}",
        got.iter().map(|f| prio_of(f)).collect::<Vec<_>>(),
        want.iter().map(|f| prio_of(f)).collect::<Vec<_>>()
    );
    Ok(())
}

/// Each check at both configurations' lone transmit-queue parameters.
macro_rules! at_both_widths {
    ($($t64:ident, $t512:ident: $f:ident($($arg:expr),*);)*) => {$(
        #[test]
        fn $t64() -> Result<()> {
            use ten_g::{BLOCK_TXQ_A as QA, BLOCK_TXQ_RA as RA, DW, KW};
            $f::<DW, KW, QA, RA>("ferroce_tx_queues_64" $(, $arg)*)
        }

        #[test]
        fn $t512() -> Result<()> {
            use hundred_g::{BLOCK_TXQ_A as QA, BLOCK_TXQ_RA as RA, DW, KW};
            $f::<DW, KW, QA, RA>("ferroce_tx_queues_512" $(, $arg)*)
        }
    )*};
}

at_both_widths! {
    tx_queues_64_random_traffic, tx_queues_512_random_traffic: random_traffic(soak(1200));
    tx_queues_64_pause_gates_frame_starts, tx_queues_512_pause_gates_frame_starts: gating();
    tx_queues_64_strict_priority_and_control_first,
        tx_queues_512_strict_priority_and_control_first: strict();
}
