//! `TxQueues`: the MAC's transmit queues (2^`RA - QA`: one, two, four or eight; the eight
//! priorities share them), with a strict-priority scheduler that honours pause, and MAC
//! control frames sent ahead of everything.
//!
//! Ports:
//! - `s_axis_*`: frames without FCS. A frame's priority is the PCP of its VLAN tag (TPID
//!   0x8100 at bytes 12-13, PCP the top three bits of byte 14); an untagged frame is priority 0.
//!   Priority p goes to queue `queue_of(p, queues)` (`p >> (3 - log2 queues)`: IEEE 802.1Q's
//!   recommended traffic classes for two and four; queue q above q - 1).
//! - `s_ctrl_{tdata,tvalid,tready}`: a MAC control frame to send, as its 20 parameter bytes
//!   after the Ethernet header (`spec::mac_ctrl::PFC`'s layout; `PAUSE` is its first four), in
//!   lane order. The frame (to 01-80-C2-00-00-01 from `local_mac`, EtherType 0x8808, zero
//!   padding to 60 bytes) goes out at the next frame boundary, ahead of every queue, paused or
//!   not.
//! - `local_mac`: the port's address (48-bit big-endian value, first byte on top).
//! - `paused`: bit p set: no new frame of priority p starts (`MacCtrlRx`'s output). A frame
//!   already started finishes. A queue holds while any of its priorities is paused (its
//!   frames are in arrival order, so one of the other priority may be behind a paused one).
//! - `m_axis_*`: frames out, without FCS.
//! - `q_ready`: bit p set while priority p's queue is at most half full (room for RoCE's
//!   largest frame: the cue for whatever schedules work upstream).
//! - `s_axis_tuser` on a frame's last beat: the frame is bad (its payload's read from host
//!   memory failed): it is dropped here, its beats given back, and counted in `bad_frames`.
//!   No byte of it reaches the wire (the frame is stored whole before it starts).
//! - counters: `oversize` (frames dropped because they cannot fit a queue), `ctrl_sent`, and
//!   `frames_sent` (eight 32-bit counters, priority p at bits 32p).
//! - `held`: cycles a frame waited in B for room in its queue (the input held for every
//!   priority); with credits it stays zero.
//! - `rsv_a`, `rsv_b`: reservations from two senders (`RSV_W` bits: beats at 0..15, priority
//!   at 16..18, valid at 19); `used`: per priority (16 bits, priority p at bits 16p), the beats
//!   reserved in its queue and not yet sent or given back (priorities sharing a queue show the
//!   same figure).
//!
//! Credits: a sender that reserves a frame's beats (`spec::meta::tx_frame_len`) in the queue
//! of its priority before it sends the frame, and sends only while `used` plus the frame
//! stays within the queue (`2^QA` beats), never finds the queue full: its frame is taken
//! whole whatever the other queues hold, so a paused priority never holds up the others, in
//! this block or in front of it (the requester and the responder reserve; the NIC shares
//! each queue between them; a priority sharing a queue with a paused one waits with it). `used` falls by one per beat sent and by the beats of a frame
//! dropped here.
//!
//! How: store and forward (a frame starts on the wire only when all of it is here, so the wire
//! never runs dry mid-frame). Beats pass two registers: A learns the frame's priority (at 64
//! bits the tag is in the second beat, so the first waits for it), B writes into its queue's
//! region of one block RAM (`2^QA` beats per queue, `RA` address bits), each beat with its
//! `last` and the frame's priority (for the per-priority counts), and a frame is committed
//! when its last beat is written. The scheduler, at every frame boundary, sends a pending
//! control frame, else the oldest frame of the highest queue with a committed frame and none
//! of its priorities paused; frames go out back to back. A frame that alone fills its
//! queue is dropped (its beats given back) and counted: never a hang. A queue that is full of
//! paused frames holds the input until it drains; credits (below) keep it from getting there
//! in the NIC, and `q_ready` stays as a status bit.
//! All outputs come from registers (a `Skid`); `s_axis_tready` and `s_ctrl_tready` depend on
//! registers only.

use crate::host::k;
use crate::net::mac_ctrl_rx::PRIO_COUNTERS_W;
use crate::net::vlan_tag::tag_match;
use crate::prelude::*;
use crate::stream::{keep_of_count, ones, Skid};
use ferroce_spec::headers::{ETH, ETH_HDR_LEN, ETH_MIN_FRAME_NO_FCS};
use ferroce_spec::mac_ctrl::{queue_of, ETHERTYPE_MAC_CTRL, MAC_CTRL_DST, PFC, PRIORITIES};

/// Width of a control-frame record: the PFC parameters.
pub const CTRL_W: usize = PFC.len * 8;
/// Width of a reservation (`rsv_a`, `rsv_b`): beats 0..15, priority 16..18, valid 19.
pub const RSV_W: usize = 20;
/// Width of `used`: 16 bits per priority.
pub const USED_W: usize = 16 * PRIORITIES;
const P: usize = PRIORITIES;
/// The control frame image: 64 bytes in lane order.
const IMG: usize = 512;
/// What the tail RAM keeps per beat: `last` at bit 0, the frame's priority above it.
const TAIL_W: usize = 4;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum TxqState {
    Idle,
    Data,
    Ctrl,
}

#[derive(LogicBlock)]
pub struct TxQueues<const DW: usize, const KW: usize, const QA: usize, const RA: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub s_ctrl_tdata: Signal<In, Bits<CTRL_W>>,
    pub s_ctrl_tvalid: Signal<In, Bit>,
    pub s_ctrl_tready: Signal<Out, Bit>,
    pub local_mac: Signal<In, Bits<48>>,
    pub paused: Signal<In, Bits<8>>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub q_ready: Signal<Out, Bits<8>>,
    pub oversize: Signal<Out, Bits<32>>,
    pub bad_frames: Signal<Out, Bits<32>>,
    pub ctrl_sent: Signal<Out, Bits<32>>,
    pub frames_sent: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub rsv_a: Signal<In, Bits<RSV_W>>,
    pub rsv_b: Signal<In, Bits<RSV_W>>,
    pub used: Signal<Out, Bits<USED_W>>,
    pub held: Signal<Out, Bits<32>>,
    ram: RAM<Bits<DW>, RA>,
    ram_keep: RAM<Bits<KW>, RA>,
    ram_tail: RAM<Bits<TAIL_W>, RA>,
    out: Skid<DW, KW>,
    // A: the frame's priority being learnt (a_q, fq and b_q are priorities).
    a_valid: DFF<Bit>,
    a_data: DFF<Bits<DW>>,
    a_keep: DFF<Bits<KW>>,
    a_last: DFF<Bit>,
    a_user: DFF<Bit>,
    a_q: DFF<Bits<3>>,
    a_known: DFF<Bit>,
    wbi: DFF<Bits<8>>,
    fq: DFF<Bits<3>>,
    // B: into the queue.
    b_valid: DFF<Bit>,
    b_data: DFF<Bits<DW>>,
    b_keep: DFF<Bits<KW>>,
    b_last: DFF<Bit>,
    b_user: DFF<Bit>,
    /// B holds the last beat of a frame marked bad: the frame is dropped, not committed.
    bad_b: Signal<Local, Bit>,
    b_q: DFF<Bits<3>>,
    /// B's queue.
    b_qn: Signal<Local, Bits<3>>,
    dropping: DFF<Bit>,
    // Queues: write, committed write, read pointers; committed frames. `cur` is a queue.
    wp: Vec<DFF<Bits<16>>>,
    cwp: Vec<DFF<Bits<16>>>,
    rp: Vec<DFF<Bits<16>>>,
    nf: Vec<DFF<Bits<16>>>,
    // Credits: beats reserved and not yet sent or given back.
    res: Vec<DFF<Bits<16>>>,
    // Control frame.
    c_valid: DFF<Bit>,
    c_params: DFF<Bits<CTRL_W>>,
    c_img: DFF<Bits<IMG>>,
    cbi: DFF<Bits<8>>,
    // Scheduler.
    state: DFF<TxqState>,
    cur: DFF<Bits<3>>,
    // Counters.
    n_tx: Vec<DFF<Bits<32>>>,
    n_over: DFF<Bits<32>>,
    n_bad: DFF<Bits<32>>,
    n_ctrl: DFF<Bits<32>>,
    n_held: DFF<Bits<32>>,
    // Locals.
    q_in: Signal<Local, Bits<3>>,
    wa: Signal<Local, Bits<RA>>,
    ra: Signal<Local, Bits<RA>>,
    b_wp: Signal<Local, Bits<16>>,
    b_rp: Signal<Local, Bits<16>>,
    b_nf: Signal<Local, Bits<16>>,
    room_b: Signal<Local, Bit>,
    over_b: Signal<Local, Bit>,
    can_move: Signal<Local, Bit>,
    rdy: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    a_moves: Signal<Local, Bit>,
    mq: Signal<Local, Bits<3>>,
    wr: Signal<Local, Bit>,
    start_drop: Signal<Local, Bit>,
    step: Signal<Local, Bit>,
    adv: Signal<Local, Bit>,
    end_data: Signal<Local, Bit>,
    end_ctrl: Signal<Local, Bit>,
    free: Signal<Local, Bit>,
    el: Signal<Local, Bit>,
    pick_v: Signal<Local, Bit>,
    pick_q: Signal<Local, Bits<3>>,
    pick_c: Signal<Local, Bit>,
    rp_cur: Signal<Local, Bits<16>>,
    rp_pick: Signal<Local, Bits<16>>,
    rd_q: Signal<Local, Bits<3>>,
    rd_ptr: Signal<Local, Bits<16>>,
    inc: Signal<Local, Bit>,
    dec: Signal<Local, Bit>,
    tail_w: Signal<Local, Bits<TAIL_W>>,
    out_p: Signal<Local, Bits<3>>,
    rsv_qa: Signal<Local, Bits<3>>,
    rsv_qb: Signal<Local, Bits<3>>,
    qr: Signal<Local, Bits<8>>,
    m8: Signal<Local, Bits<8>>,
    src_le: Signal<Local, Bits<48>>,
    img_now: Signal<Local, Bits<IMG>>,
    c32: Signal<Local, Bits<32>>,
    pack: Signal<Local, Bits<PRIO_COUNTERS_W>>,
    b_cwp: Signal<Local, Bits<16>>,
    dropped: Signal<Local, Bits<16>>,
    add_a: Signal<Local, Bits<16>>,
    add_b: Signal<Local, Bits<16>>,
    gone: Signal<Local, Bits<16>>,
    upack: Signal<Local, Bits<USED_W>>,
    r16: Signal<Local, Bits<16>>,
    // Constants.
    pc: Vec<Constant<Bits<3>>>,
    /// Each priority's queue.
    qof: Vec<Constant<Bits<3>>>,
    /// Each queue's priorities, as a mask of `paused`.
    qmask: Vec<Constant<Bits<8>>>,
    qsh: Constant<Bits<3>>,
    sh32: Vec<Constant<Bits<16>>>,
    sh16: Vec<Constant<Bits<16>>>,
    mac_at: Vec<Constant<Bits<6>>>,
    sh8: Vec<Constant<Bits<16>>>,
    tagb: Constant<Bits<8>>,
    tag_first: Constant<Bit>,
    tpid_mask: Constant<Bits<DW>>,
    tpid_val: Constant<Bits<DW>>,
    pcp_mask: Constant<Bits<DW>>,
    pcp_val: Vec<Constant<Bits<DW>>>,
    qsize: Constant<Bits<16>>,
    qhalf: Constant<Bits<16>>,
    offmask: Constant<Bits<16>>,
    qa_sh: Constant<Bits<8>>,
    ctrl_base: Constant<Bits<IMG>>,
    sh_src: Constant<Bits<16>>,
    sh_params: Constant<Bits<16>>,
    sh_beat: Constant<Bits<16>>,
    nc_m1: Constant<Bits<8>>,
    c_keep_last: Constant<Bits<KW>>,
    full_keep: Constant<Bits<KW>>,
}

impl<const DW: usize, const KW: usize, const QA: usize, const RA: usize> TxQueues<DW, KW, QA, RA> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert!(RA >= QA && RA <= QA + 3, "one to eight queue regions");
        let queues = 1 << (RA - QA);
        assert!(QA < 15, "pointers are 16 bits with a wrap bit to spare");
        assert!(DW <= IMG && IMG.is_multiple_of(DW));
        let tpid_at = ETH.field("ethertype").byte();
        let tag = tag_match::<DW>();
        let ctrl_bytes = ETH_MIN_FRAME_NO_FCS;
        let nc = ctrl_bytes.div_ceil(KW);
        let mut base = vec![0u8; IMG / 8];
        base[..6].copy_from_slice(&MAC_CTRL_DST);
        base[tpid_at..tpid_at + 2].copy_from_slice(&ETHERTYPE_MAC_CTRL.to_be_bytes());
        let base_bits = crate::util::bools_from_bytes(&base);
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tuser: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_ctrl_tdata: Default::default(),
            s_ctrl_tvalid: Default::default(),
            s_ctrl_tready: Default::default(),
            local_mac: Default::default(),
            paused: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            q_ready: Default::default(),
            oversize: Default::default(),
            bad_frames: Default::default(),
            ctrl_sent: Default::default(),
            frames_sent: Default::default(),
            rsv_a: Default::default(),
            rsv_b: Default::default(),
            used: Default::default(),
            held: Default::default(),
            ram: RAM::default(),
            ram_keep: RAM::default(),
            ram_tail: RAM::default(),
            out: Skid::new(),
            a_valid: Default::default(),
            a_data: Default::default(),
            a_keep: Default::default(),
            a_last: Default::default(),
            a_user: Default::default(),
            a_q: Default::default(),
            a_known: Default::default(),
            wbi: Default::default(),
            fq: Default::default(),
            b_valid: Default::default(),
            b_data: Default::default(),
            b_keep: Default::default(),
            b_last: Default::default(),
            b_user: Default::default(),
            bad_b: Default::default(),
            b_q: Default::default(),
            b_qn: Default::default(),
            dropping: Default::default(),
            wp: (0..queues).map(|_| Default::default()).collect(),
            cwp: (0..queues).map(|_| Default::default()).collect(),
            rp: (0..queues).map(|_| Default::default()).collect(),
            nf: (0..queues).map(|_| Default::default()).collect(),
            res: (0..queues).map(|_| Default::default()).collect(),
            c_valid: Default::default(),
            c_params: Default::default(),
            c_img: Default::default(),
            cbi: Default::default(),
            state: Default::default(),
            cur: Default::default(),
            n_tx: (0..P).map(|_| Default::default()).collect(),
            n_over: Default::default(),
            n_bad: Default::default(),
            n_ctrl: Default::default(),
            n_held: Default::default(),
            q_in: Default::default(),
            wa: Default::default(),
            ra: Default::default(),
            b_wp: Default::default(),
            b_rp: Default::default(),
            b_nf: Default::default(),
            room_b: Default::default(),
            over_b: Default::default(),
            can_move: Default::default(),
            rdy: Default::default(),
            take: Default::default(),
            a_moves: Default::default(),
            mq: Default::default(),
            wr: Default::default(),
            start_drop: Default::default(),
            step: Default::default(),
            adv: Default::default(),
            end_data: Default::default(),
            end_ctrl: Default::default(),
            free: Default::default(),
            el: Default::default(),
            pick_v: Default::default(),
            pick_q: Default::default(),
            pick_c: Default::default(),
            rp_cur: Default::default(),
            rp_pick: Default::default(),
            rd_q: Default::default(),
            rd_ptr: Default::default(),
            inc: Default::default(),
            dec: Default::default(),
            tail_w: Default::default(),
            out_p: Default::default(),
            rsv_qa: Default::default(),
            rsv_qb: Default::default(),
            qr: Default::default(),
            m8: Default::default(),
            src_le: Default::default(),
            img_now: Default::default(),
            c32: Default::default(),
            pack: Default::default(),
            b_cwp: Default::default(),
            dropped: Default::default(),
            add_a: Default::default(),
            add_b: Default::default(),
            gone: Default::default(),
            upack: Default::default(),
            r16: Default::default(),
            pc: (0..P).map(|p| k(p as u64)).collect(),
            qof: (0..P).map(|p| k(queue_of(p, queues) as u64)).collect(),
            qmask: (0..queues)
                .map(|q| {
                    let m = (0..P).filter(|&p| queue_of(p, queues) == q);
                    k(m.fold(0, |m, p| m | 1 << p))
                })
                .collect(),
            qsh: k((3 - (RA - QA)) as u64),
            sh32: (0..P).map(|p| k((32 * p) as u64)).collect(),
            sh16: (0..P).map(|p| k((16 * p) as u64)).collect(),
            mac_at: (0..6).map(|i| k((40 - 8 * i) as u64)).collect(),
            sh8: (0..6).map(|i| k((8 * i) as u64)).collect(),
            tagb: k(tag.beat),
            tag_first: Constant::new(tag.beat == 0),
            tpid_mask: tag.tpid_mask,
            tpid_val: tag.tpid_val,
            pcp_mask: tag.pcp_mask,
            pcp_val: tag.pcp_val,
            qsize: k(1 << QA),
            qhalf: k(1 << (QA - 1)),
            offmask: k((1 << QA) - 1),
            qa_sh: k(QA as u64),
            ctrl_base: Constant::new(crate::util::bits_from_bools::<IMG>(&base_bits)),
            sh_src: k((8 * ETH.field("src").byte()) as u64),
            sh_params: k((8 * ETH_HDR_LEN) as u64),
            sh_beat: k(DW as u64),
            nc_m1: k((nc - 1) as u64),
            c_keep_last: keep_of_count::<KW>()[ctrl_bytes - (nc - 1) * KW],
            full_keep: ones::<KW>(),
        }
    }
}

impl<const DW: usize, const KW: usize, const QA: usize, const RA: usize> Default
    for TxQueues<DW, KW, QA, RA>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize, const QA: usize, const RA: usize> Logic
    for TxQueues<DW, KW, QA, RA>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, a_valid, a_data, a_keep, a_last, a_user, a_q, a_known, wbi, fq, b_valid,
            b_data, b_keep, b_last, b_user, b_q, dropping, c_valid, c_params, c_img, cbi, state,
            cur, n_over, n_bad, n_ctrl, n_held
        );
        for q in 0..self.wp.len() {
            self.wp[q].clock.next = self.clk.val();
            self.cwp[q].clock.next = self.clk.val();
            self.rp[q].clock.next = self.clk.val();
            self.nf[q].clock.next = self.clk.val();
            self.res[q].clock.next = self.clk.val();
            self.wp[q].d.next = self.wp[q].q.val();
            self.cwp[q].d.next = self.cwp[q].q.val();
            self.rp[q].d.next = self.rp[q].q.val();
            self.nf[q].d.next = self.nf[q].q.val();
        }
        for p in 0..P {
            self.n_tx[p].clock.next = self.clk.val();
            self.n_tx[p].d.next = self.n_tx[p].q.val();
        }
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.out.s_axis_tuser.next = false;
        self.ram.read_clock.next = self.clk.val();
        self.ram.write_clock.next = self.clk.val();
        self.ram_keep.read_clock.next = self.clk.val();
        self.ram_keep.write_clock.next = self.clk.val();
        self.ram_tail.read_clock.next = self.clk.val();
        self.ram_tail.write_clock.next = self.clk.val();

        // B's queue, as B sees it.
        self.b_qn.next = self.b_q.q.val() >> self.qsh.val();
        self.b_wp.next = bits::<16>(0);
        self.b_rp.next = bits::<16>(0);
        self.b_nf.next = bits::<16>(0);
        self.b_cwp.next = bits::<16>(0);
        for q in 0..self.wp.len() {
            if self.b_qn.val() == self.pc[q].val() {
                self.b_cwp.next = self.cwp[q].q.val();
                self.b_wp.next = self.wp[q].q.val();
                self.b_rp.next = self.rp[q].q.val();
                self.b_nf.next = self.nf[q].q.val();
            }
        }
        self.room_b.next = (self.b_wp.val() - self.b_rp.val()) < self.qsize.val();
        // Full with no whole frame in it: the frame in B can never fit.
        self.over_b.next = !self.room_b.val() & (self.b_nf.val() == bits::<16>(0));
        self.bad_b.next = self.b_valid.q.val()
            & self.b_last.q.val()
            & self.b_user.q.val()
            & !self.dropping.q.val();
        self.can_move.next = !self.b_valid.q.val()
            | self.room_b.val()
            | self.over_b.val()
            | self.dropping.q.val()
            | self.bad_b.val();
        self.rdy.next = !self.a_valid.q.val() | self.can_move.val();
        self.s_axis_tready.next = self.rdy.val();
        self.take.next = self.rdy.val() & self.s_axis_tvalid.val();

        // The input beat's priority: the PCP of a VLAN tag in the tag beat; later beats follow it.
        self.q_in.next = bits::<3>(0);
        if self.wbi.q.val() == self.tagb.val() {
            if (self.s_axis_tdata.val() & self.tpid_mask.val()) == self.tpid_val.val() {
                for v in 0..P {
                    if (self.s_axis_tdata.val() & self.pcp_mask.val()) == self.pcp_val[v].val() {
                        self.q_in.next = self.pc[v].val();
                    }
                }
            }
        } else if self.wbi.q.val() > self.tagb.val() {
            self.q_in.next = self.fq.q.val();
        }

        // A -> B once A's priority is known (at 64 bits, the first beat learns it from the next).
        self.a_moves.next =
            self.a_valid.q.val() & self.can_move.val() & (self.a_known.q.val() | self.take.val());
        self.mq.next = self.a_q.q.val();
        if !self.a_known.q.val() {
            self.mq.next = self.q_in.val();
        }
        if self.a_moves.val() {
            self.a_valid.d.next = false;
        }
        if self.take.val() {
            self.a_valid.d.next = true;
            self.a_data.d.next = self.s_axis_tdata.val();
            self.a_keep.d.next = self.s_axis_tkeep.val();
            self.a_last.d.next = self.s_axis_tlast.val();
            self.a_user.d.next = self.s_axis_tuser.val();
            self.a_q.d.next = self.q_in.val();
            self.a_known.d.next =
                (self.wbi.q.val() != bits::<8>(0)) | self.tag_first.val() | self.s_axis_tlast.val();
            if self.wbi.q.val() == self.tagb.val() {
                self.fq.d.next = self.q_in.val();
            }
            if self.wbi.q.val() <= self.tagb.val() {
                self.wbi.d.next = self.wbi.q.val() + bits::<8>(1);
            }
            if self.s_axis_tlast.val() {
                self.wbi.d.next = bits::<8>(0);
            }
        }

        // B -> the queue's region; a frame that can never fit, or marked bad, is given back
        // and counted.
        self.wr.next =
            self.b_valid.q.val() & self.room_b.val() & !self.dropping.q.val() & !self.bad_b.val();
        self.start_drop.next = (self.b_valid.q.val()
            & !self.room_b.val()
            & self.over_b.val()
            & !self.dropping.q.val())
            | self.bad_b.val();
        self.wa.next = (bit_cast::<RA, 3>(self.b_qn.val()) << self.qa_sh.val())
            | bit_cast::<RA, 16>(self.b_wp.val() & self.offmask.val());
        self.ram.write_address.next = self.wa.val();
        self.ram_keep.write_address.next = self.wa.val();
        self.ram_tail.write_address.next = self.wa.val();
        self.ram.write_data.next = self.b_data.q.val();
        self.ram_keep.write_data.next = self.b_keep.q.val();
        self.tail_w.next = bit_cast::<TAIL_W, 3>(self.b_q.q.val()) << bits::<TAIL_W>(1);
        if self.b_last.q.val() {
            self.tail_w.next = self.tail_w.val() | bits::<TAIL_W>(1);
        }
        self.ram_tail.write_data.next = self.tail_w.val();
        self.ram.write_enable.next = self.wr.val();
        self.ram_keep.write_enable.next = self.wr.val();
        self.ram_tail.write_enable.next = self.wr.val();
        if self.b_valid.q.val() & !self.room_b.val() & !self.over_b.val() & !self.dropping.q.val() {
            self.n_held.d.next = self.n_held.q.val() + bits::<32>(1);
        }
        if self.start_drop.val() {
            self.dropping.d.next = !self.b_last.q.val();
            if self.bad_b.val() {
                self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
            } else {
                self.n_over.d.next = self.n_over.q.val() + bits::<32>(1);
            }
        }
        if self.b_valid.q.val() & self.dropping.q.val() & self.b_last.q.val() {
            self.dropping.d.next = false;
        }
        if self.b_valid.q.val() & self.can_move.val() {
            self.b_valid.d.next = false;
        }
        if self.a_moves.val() {
            self.b_valid.d.next = true;
            self.b_data.d.next = self.a_data.q.val();
            self.b_keep.d.next = self.a_keep.q.val();
            self.b_last.d.next = self.a_last.q.val();
            self.b_user.d.next = self.a_user.q.val();
            self.b_q.d.next = self.mq.val();
        }

        // Control frame records: one held at a time.
        self.s_ctrl_tready.next = !self.c_valid.q.val();
        if !self.c_valid.q.val() & self.s_ctrl_tvalid.val() {
            self.c_valid.d.next = true;
            self.c_params.d.next = self.s_ctrl_tdata.val();
        }
        self.src_le.next = bits::<48>(0);
        for i in 0..6 {
            self.m8.next = self
                .local_mac
                .val()
                .get_bits::<8>(self.mac_at[i].val().index());
            self.src_le.next =
                self.src_le.val() | (bit_cast::<48, 8>(self.m8.val()) << self.sh8[i].val());
        }
        self.img_now.next = self.ctrl_base.val()
            | (bit_cast::<IMG, 48>(self.src_le.val()) << self.sh_src.val())
            | (bit_cast::<IMG, CTRL_W>(self.c_params.q.val()) << self.sh_params.val());

        // The scheduler: a beat out per clock while the output takes it.
        self.step.next = (self.state.q.val() != TxqState::Idle) & self.out.s_axis_tready.val();
        self.adv.next = self.step.val() & (self.state.q.val() == TxqState::Data);
        self.end_data.next = self.adv.val() & self.ram_tail.read_data.val().get_bit(0);
        self.out_p.next = self.ram_tail.read_data.val().get_bits::<3>(1);
        self.end_ctrl.next = self.step.val()
            & (self.state.q.val() == TxqState::Ctrl)
            & (self.cbi.q.val() == self.nc_m1.val());
        self.free.next =
            (self.state.q.val() == TxqState::Idle) | self.end_data.val() | self.end_ctrl.val();
        self.out.s_axis_tvalid.next = self.step.val();
        self.out.s_axis_tdata.next = self.ram.read_data.val();
        self.out.s_axis_tkeep.next = self.ram_keep.read_data.val();
        self.out.s_axis_tlast.next = self.ram_tail.read_data.val().get_bit(0);
        if self.state.q.val() == TxqState::Ctrl {
            self.out.s_axis_tdata.next = bit_cast::<DW, IMG>(self.c_img.q.val());
            self.out.s_axis_tkeep.next = self.full_keep.val();
            self.out.s_axis_tlast.next = self.cbi.q.val() == self.nc_m1.val();
            if self.cbi.q.val() == self.nc_m1.val() {
                self.out.s_axis_tkeep.next = self.c_keep_last.val();
            }
        }
        if self.step.val() & (self.state.q.val() == TxqState::Ctrl) {
            self.cbi.d.next = self.cbi.q.val() + bits::<8>(1);
            self.c_img.d.next = self.c_img.q.val() >> self.sh_beat.val();
        }
        if self.end_ctrl.val() {
            self.c_valid.d.next = false;
            self.n_ctrl.d.next = self.n_ctrl.q.val() + bits::<32>(1);
        }

        // Highest eligible queue: a whole frame waiting (not counting the one ending now)
        // and none of its priorities paused.
        self.pick_v.next = false;
        self.pick_q.next = bits::<3>(0);
        for q in 0..self.wp.len() {
            self.el.next = self.nf[q].q.val() != bits::<16>(0);
            if (self.cur.q.val() == self.pc[q].val()) & self.end_data.val() {
                self.el.next = self.nf[q].q.val() > bits::<16>(1);
            }
            if self.el.val() & ((self.paused.val() & self.qmask[q].val()) == bits::<8>(0)) {
                self.pick_v.next = true;
                self.pick_q.next = self.pc[q].val();
            }
        }
        self.pick_c.next = self.c_valid.q.val() & (self.state.q.val() != TxqState::Ctrl);
        self.rp_cur.next = bits::<16>(0);
        self.rp_pick.next = bits::<16>(0);
        for q in 0..self.wp.len() {
            if self.cur.q.val() == self.pc[q].val() {
                self.rp_cur.next = self.rp[q].q.val();
            }
            if self.pick_q.val() == self.pc[q].val() {
                self.rp_pick.next = self.rp[q].q.val();
            }
        }
        self.rd_q.next = self.cur.q.val();
        self.rd_ptr.next = self.rp_cur.val();
        if self.adv.val() {
            self.rd_ptr.next = self.rp_cur.val() + bits::<16>(1);
        }
        if self.free.val() {
            self.state.d.next = TxqState::Idle;
            if self.pick_c.val() {
                self.state.d.next = TxqState::Ctrl;
                self.cbi.d.next = bits::<8>(0);
                self.c_img.d.next = self.img_now.val();
            } else if self.pick_v.val() {
                self.state.d.next = TxqState::Data;
                self.cur.d.next = self.pick_q.val();
                self.rd_q.next = self.pick_q.val();
                self.rd_ptr.next = self.rp_pick.val();
                if (self.pick_q.val() == self.cur.q.val()) & self.adv.val() {
                    self.rd_ptr.next = self.rp_pick.val() + bits::<16>(1);
                }
            }
        }
        self.ra.next = (bit_cast::<RA, 3>(self.rd_q.val()) << self.qa_sh.val())
            | bit_cast::<RA, 16>(self.rd_ptr.val() & self.offmask.val());
        self.ram.read_address.next = self.ra.val();
        self.ram_keep.read_address.next = self.ra.val();
        self.ram_tail.read_address.next = self.ra.val();

        // Per queue: pointers, committed frames, readiness.
        self.qr.next = bits::<8>(0);
        for q in 0..self.wp.len() {
            self.inc.next =
                self.wr.val() & self.b_last.q.val() & (self.b_qn.val() == self.pc[q].val());
            self.dec.next = self.end_data.val() & (self.cur.q.val() == self.pc[q].val());
            if self.wr.val() & (self.b_qn.val() == self.pc[q].val()) {
                self.wp[q].d.next = self.wp[q].q.val() + bits::<16>(1);
                if self.b_last.q.val() {
                    self.cwp[q].d.next = self.wp[q].q.val() + bits::<16>(1);
                }
            }
            if self.start_drop.val() & (self.b_qn.val() == self.pc[q].val()) {
                self.wp[q].d.next = self.cwp[q].q.val();
            }
            if self.adv.val() & (self.cur.q.val() == self.pc[q].val()) {
                self.rp[q].d.next = self.rp[q].q.val() + bits::<16>(1);
            }
            if self.inc.val() & !self.dec.val() {
                self.nf[q].d.next = self.nf[q].q.val() + bits::<16>(1);
            }
            if self.dec.val() & !self.inc.val() {
                self.nf[q].d.next = self.nf[q].q.val() - bits::<16>(1);
            }
            if (self.wp[q].q.val() - self.rp[q].q.val()) <= self.qhalf.val() {
                self.qr.next = self.qr.val() | self.qmask[q].val();
            }
        }
        // Per priority: frames sent (the priority kept with the frame's last beat).
        self.pack.next = bits::<PRIO_COUNTERS_W>(0);
        for p in 0..P {
            if self.end_data.val() & (self.out_p.val() == self.pc[p].val()) {
                self.n_tx[p].d.next = self.n_tx[p].q.val() + bits::<32>(1);
            }
            self.c32.next = self.n_tx[p].q.val();
            self.pack.next = self.pack.val()
                | (bit_cast::<PRIO_COUNTERS_W, 32>(self.c32.val()) << self.sh32[p].val());
        }
        // Credits: reservations in, beats sent and beats given back (a dropped frame's
        // written beats and the one in B when it is dropped, then each beat after it) out.
        self.dropped.next = bits::<16>(0);
        if self.start_drop.val() {
            self.dropped.next = self.b_wp.val() - self.b_cwp.val() + bits::<16>(1);
        } else if self.b_valid.q.val() & self.dropping.q.val() {
            self.dropped.next = bits::<16>(1);
        }
        self.rsv_qa.next = self.rsv_a.val().get_bits::<3>(16) >> self.qsh.val();
        self.rsv_qb.next = self.rsv_b.val().get_bits::<3>(16) >> self.qsh.val();
        for q in 0..self.wp.len() {
            self.add_a.next = bits::<16>(0);
            if self.rsv_a.val().get_bit(19) & (self.rsv_qa.val() == self.pc[q].val()) {
                self.add_a.next = self.rsv_a.val().get_bits::<16>(0);
            }
            self.add_b.next = bits::<16>(0);
            if self.rsv_b.val().get_bit(19) & (self.rsv_qb.val() == self.pc[q].val()) {
                self.add_b.next = self.rsv_b.val().get_bits::<16>(0);
            }
            self.gone.next = bits::<16>(0);
            if self.b_qn.val() == self.pc[q].val() {
                self.gone.next = self.dropped.val();
            }
            if self.adv.val() & (self.cur.q.val() == self.pc[q].val()) {
                self.gone.next = self.gone.val() + bits::<16>(1);
            }
            self.res[q].d.next =
                self.res[q].q.val() + self.add_a.val() + self.add_b.val() - self.gone.val();
        }
        // Each priority sees its queue's reservations.
        self.upack.next = bits::<USED_W>(0);
        for p in 0..P {
            self.r16.next = bits::<16>(0);
            for q in 0..self.wp.len() {
                if self.qof[p].val() == self.pc[q].val() {
                    self.r16.next = self.res[q].q.val();
                }
            }
            self.upack.next =
                self.upack.val() | (bit_cast::<USED_W, 16>(self.r16.val()) << self.sh16[p].val());
        }
        self.used.next = self.upack.val();
        self.held.next = self.n_held.q.val();
        self.q_ready.next = self.qr.val();
        self.frames_sent.next = self.pack.val();
        self.oversize.next = self.n_over.q.val();
        self.bad_frames.next = self.n_bad.q.val();
        self.ctrl_sent.next = self.n_ctrl.q.val();
        self.m_axis_tdata.next = self.out.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.out.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.out.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.out.m_axis_tvalid.val();
        self.out.m_axis_tready.next = self.m_axis_tready.val();

        if self.rst.val() {
            self.a_valid.d.next = false;
            self.b_valid.d.next = false;
            self.wbi.d.next = bits::<8>(0);
            self.dropping.d.next = false;
            self.c_valid.d.next = false;
            self.state.d.next = TxqState::Idle;
            self.n_over.d.next = bits::<32>(0);
            self.n_bad.d.next = bits::<32>(0);
            self.n_ctrl.d.next = bits::<32>(0);
            self.n_held.d.next = bits::<32>(0);
            for q in 0..self.wp.len() {
                self.wp[q].d.next = bits::<16>(0);
                self.cwp[q].d.next = bits::<16>(0);
                self.rp[q].d.next = bits::<16>(0);
                self.nf[q].d.next = bits::<16>(0);
                self.res[q].d.next = bits::<16>(0);
            }
            for p in 0..P {
                self.n_tx[p].d.next = bits::<32>(0);
            }
        }
    }
}
