//! `MacRx`: the receive side of the MAC at the frame level, store and forward. A frame from
//! the wire (FCS included, no back-pressure: the wire does not wait) is written into a block
//! RAM buffer while a `Crc32` tap checks its FCS and an `Icrc` tap checks its ICRC;
//! [`ICRC_LATENCY`] cycles after its last beat both verdicts are in (the FCS's, two cycles after
//! it, waits for the ICRC's) and the frame is either released to `m_axis_*`
//! (without its FCS) or dropped and counted by reason. So nothing downstream (the parser, the
//! responder, host memory) ever sees a byte of a corrupted frame.
//!
//! Ports:
//! - `s_axis_{tdata,tkeep,tlast,tvalid,tuser}`: frames from the wire, FCS last; `tuser` on a
//!   last beat: the PHY saw a code error in the frame (`XgmiiRx`), drop it.
//! - `m_axis_*`: good RoCEv2 frames without FCS (Ethernet padding, if any, stays).
//! - counters, each a frame dropped for that reason (first reason that applies, in this
//!   order): `code_err` (`tuser`: an XGMII error inside), `fcs_err` (FCS wrong), `runt`
//!   (under 64 bytes with FCS), `too_long` (over `spec::headers::ETH_MAX_FRAME`, 9,022 bytes
//!   with FCS: a 9,000-byte jumbo payload tagged; longer than the buffer is `overflow`),
//!   `not_roce` (not IPv4/6 +
//!   UDP 4791, or IPv4 options), `bad_len` (IP length disagrees with the frame, or bad
//!   `tkeep`), `icrc_err` (ICRC wrong), `overflow` (no room: buffer or frame records full).
//! - `self_check`: cycles where a tap's verdict did not come exactly when due after a last
//!   beat (two cycles for the FCS, [`ICRC_LATENCY`] for the ICRC; a bug counter, the tests
//!   assert it stays zero).
//! - MAC control (a `MacCtrlRx` tap, see its docs): MAC control frames (EtherType 0x8808) with
//!   a good FCS are consumed, never forwarded and never counted above; `paused` (one bit per
//!   priority), `pause_rx`, `pfc_rx`, `paused_cycles`, `ctrl_bad_dst`, `ctrl_bad_opcode`,
//!   `ctrl_bad_reserved`.
//! - PFC generation's input: `xoff` (bit p: the frames of priority p, by VLAN PCP, untagged 0,
//!   held in the buffer exceed `xoff_bytes`; it clears when they are at or under `xon_bytes`).
//!   Occupancy counts a frame's whole beats from its record until it has been read out.
//! - `pfc_enable` (bit p: priority p is lossless, PFC on): while any bit is set, a frame of a
//!   priority without it (lossy) is taken only while the whole buffer holds under
//!   `xoff_bytes`; otherwise it is dropped as `overflow` (decided at the beat with the tag, so
//!   it never holds more than that beat). The buffer above the mark is the lossless
//!   priorities' headroom, which lossy traffic cannot eat (docs/ARCHITECTURE.md, "MAC receive").
//!
//! How: beats go to RAM at the write pointer; a frame that runs out of room is rolled back
//! (the write pointer returns to its first beat) and counted, so a partial frame never
//! occupies the buffer. The frame's beat and byte counts travel alongside the taps'
//! pipelines and become a record (beats, bytes, drop, priority) in a 512-entry record queue
//! in block RAM (one record per 64 bytes of a 32 KiB buffer: minimum-size frames fill the
//! buffer, and so raise XOFF, before they run out of records; with a larger buffer, as the
//! 100G MAC's 64 KiB, the records bind first and XOFF must sit low enough for them, see
//! docs/ARCHITECTURE.md, "The MAC as one block"; a record is readable the cycle after its
//! write lands); the reader
//! takes records in order, reads RAM ahead (its address is the next read pointer, so the head
//! beat is always in the RAM's output register), sends `bytes - 4` bytes with their `tkeep`
//! and skips the rest; a frame to be dropped is skipped in one cycle (the read pointer jumps
//! past it). All outputs are
//! registered (a `Skid`); see docs/ARCHITECTURE.md, "MAC receive".
//!
//! Throughput: one beat per clock in and out, frames back to back on the way out except
//! after a dropped one (one cycle). The wire does not wait: when the reader is slower than the
//! wire for longer than the buffer lasts, whole frames are dropped and counted.

use crate::crc::{Crc32, Icrc, ICRC_LATENCY};
use crate::host::k;
use crate::net::mac_ctrl_rx::{line_bits_per_cycle, MacCtrlRx, PRIO_COUNTERS_W};
use crate::net::vlan_tag::tag_match;
use crate::prelude::*;
use crate::stream::{counts, keep_of_count, ones, Skid};
use ferroce_spec::headers::{ETH_MAX_FRAME, ETH_MIN_FRAME_NO_FCS, FCS_LEN};
use ferroce_spec::icrc::flags;

/// Frame records the buffer holds: one per 64 bytes of the NIC's 32 KiB buffer, so a stream of
/// minimum-size frames fills that buffer (and raises XOFF) before it runs out of records; a
/// larger buffer (`AW` 10 at 512 bits: 64 KiB) runs out of records first.
const RECS: usize = 512;
/// Bits of a record in its RAM: beats (16), bytes (16), drop (1), priority (3).
const REC_W: usize = 36;
/// The CRC-32 of a frame followed by its correct FCS (the CRC-32 residue).
const FCS_RESIDUE: u64 = 0x2144_DF1C;
/// Cycles the FCS side of a frame's verdict waits for the ICRC tap's: `Crc32` answers two
/// cycles after the last beat, `Icrc` [`ICRC_LATENCY`].
const VD: usize = ICRC_LATENCY - 2;
/// The FCS side of a verdict as it waits: flags (bit 0 valid, 1 overflow, 2 code error, 3 FCS
/// bad, 4 runt, 5 too long, 6 MAC control, 7 consumed, 8 the FCS tap's keep error, 9-11 the
/// priority), the frame's beats and bytes.
const VW: usize = 12;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum MacRxRead {
    Idle,
    Run,
}

#[derive(LogicBlock)]
pub struct MacRx<const DW: usize, const KW: usize, const SW: usize, const AW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tuser: Signal<In, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub fcs_err: Signal<Out, Bits<32>>,
    pub runt: Signal<Out, Bits<32>>,
    pub not_roce: Signal<Out, Bits<32>>,
    pub bad_len: Signal<Out, Bits<32>>,
    pub icrc_err: Signal<Out, Bits<32>>,
    pub overflow: Signal<Out, Bits<32>>,
    pub self_check: Signal<Out, Bits<32>>,
    pub code_err: Signal<Out, Bits<32>>,
    pub too_long: Signal<Out, Bits<32>>,
    pub paused: Signal<Out, Bits<8>>,
    pub pause_rx: Signal<Out, Bits<32>>,
    pub pfc_rx: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub paused_cycles: Signal<Out, Bits<PRIO_COUNTERS_W>>,
    pub ctrl_bad_dst: Signal<Out, Bits<32>>,
    pub ctrl_bad_opcode: Signal<Out, Bits<32>>,
    pub ctrl_bad_reserved: Signal<Out, Bits<32>>,
    pub xoff_bytes: Signal<In, Bits<16>>,
    pub xon_bytes: Signal<In, Bits<16>>,
    pub xoff: Signal<Out, Bits<8>>,
    pub pfc_enable: Signal<In, Bits<8>>,
    fcs: Crc32<DW, KW>,
    pause: MacCtrlRx<DW>,
    icrc_check: Icrc<DW, KW, SW>,
    ram: RAM<Bits<DW>, AW>,
    out: Skid<DW, KW>,
    // Write side.
    wp: DFF<Bits<16>>,
    start: DFF<Bits<16>>,
    in_frame: DFF<Bit>,
    ovf: DFF<Bit>,
    beats: DFF<Bits<16>>,
    bytes: DFF<Bits<16>>,
    // The frame's counts beside the taps' two-cycle pipelines.
    p1_valid: DFF<Bit>,
    p1_beats: DFF<Bits<16>>,
    p1_bytes: DFF<Bits<16>>,
    p1_ovf: DFF<Bit>,
    p1_code: DFF<Bit>,
    p2_valid: DFF<Bit>,
    p2_beats: DFF<Bits<16>>,
    p2_bytes: DFF<Bits<16>>,
    p2_ovf: DFF<Bit>,
    p2_code: DFF<Bit>,
    /// The FCS side of the verdict, waiting for the ICRC's.
    vd: [DFF<Bits<VW>>; VD],
    vd_beats: [DFF<Bits<16>>; VD],
    vd_bytes: [DFF<Bits<16>>; VD],
    // Records (beats, bytes, drop, priority) in block RAM; `r_wp_d` is the write pointer one
    // cycle late (a record is read the cycle after its write lands).
    rec_ram: RAM<Bits<REC_W>, 9>,
    r_wp_d: DFF<Bits<16>>,
    // Buffer occupancy per priority (beats), and the XOFF wish with hysteresis.
    occ: Vec<DFF<Bits<16>>>,
    xo: DFF<Bits<8>>,
    cur_prio: DFF<Bits<3>>,
    cur_beats: DFF<Bits<16>>,
    r_wp: DFF<Bits<16>>,
    r_rp: DFF<Bits<16>>,
    // Read side.
    state: DFF<MacRxRead>,
    rp: DFF<Bits<16>>,
    left_beats: DFF<Bits<16>>,
    left_bytes: DFF<Bits<16>>,
    // Counters.
    n_fcs: DFF<Bits<32>>,
    n_code: DFF<Bits<32>>,
    n_long: DFF<Bits<32>>,
    n_runt: DFF<Bits<32>>,
    n_not_roce: DFF<Bits<32>>,
    n_len: DFF<Bits<32>>,
    n_icrc: DFF<Bits<32>>,
    n_ovf: DFF<Bits<32>>,
    n_check: DFF<Bits<32>>,
    // Locals.
    n_in: Signal<Local, Bits<16>>,
    used: Signal<Local, Bits<16>>,
    room: Signal<Local, Bit>,
    recs: Signal<Local, Bits<16>>,
    rec_w: Signal<Local, Bits<REC_W>>,
    r_rp_nx: Signal<Local, Bits<16>>,
    first: Signal<Local, Bit>,
    ovf_now: Signal<Local, Bit>,
    write: Signal<Local, Bit>,
    wp_next: Signal<Local, Bits<16>>,
    rp_next: Signal<Local, Bits<16>>,
    fcs_ok: Signal<Local, Bit>,
    v_now: Signal<Local, Bits<VW>>,
    v: Signal<Local, Bits<VW>>,
    v_beats: Signal<Local, Bits<16>>,
    v_bytes: Signal<Local, Bits<16>>,
    v_pcp: Signal<Local, Bits<3>>,
    is_runt: Signal<Local, Bit>,
    is_long: Signal<Local, Bit>,
    nr: Signal<Local, Bit>,
    bl: Signal<Local, Bit>,
    ic: Signal<Local, Bit>,
    bad: Signal<Local, Bit>,
    consumed: Signal<Local, Bit>,
    h_beats: Signal<Local, Bits<16>>,
    h_bytes: Signal<Local, Bits<16>>,
    h_drop: Signal<Local, Bit>,
    step: Signal<Local, Bit>,
    at_end: Signal<Local, Bit>,
    have: Signal<Local, Bit>,
    send: Signal<Local, Bit>,
    keep_o: Signal<Local, Bits<KW>>,
    h_prio: Signal<Local, Bits<3>>,
    fin: Signal<Local, Bit>,
    o_inc: Signal<Local, Bits<16>>,
    o_dec: Signal<Local, Bits<16>>,
    o_dec2: Signal<Local, Bits<16>>,
    xoff_beats: Signal<Local, Bits<16>>,
    xon_beats: Signal<Local, Bits<16>>,
    xv: Signal<Local, Bits<8>>,
    tag_beat: Signal<Local, Bit>,
    q_in: Signal<Local, Bits<3>>,
    lossy: Signal<Local, Bit>,
    cap_hit: Signal<Local, Bit>,
    tagb: Constant<Bits<16>>,
    tag_first: Constant<Bit>,
    tpid_mask: Constant<Bits<DW>>,
    tpid_val: Constant<Bits<DW>>,
    pcp_mask: Constant<Bits<DW>>,
    pcp_val: Vec<Constant<Bits<DW>>>,
    pc: Vec<Constant<Bits<3>>>,
    onehot: Vec<Constant<Bits<8>>>,
    kw_sh: Constant<Bits<8>>,
    // Constants.
    keepc: Vec<Constant<Bits<KW>>>,
    nc16: Vec<Constant<Bits<16>>>,
    rec_drop: Constant<Bits<REC_W>>,
    kw: Constant<Bits<16>>,
    depth: Constant<Bits<16>>,
    rec_limit: Constant<Bits<16>>,
    min_len: Constant<Bits<16>>,
    max_len: Constant<Bits<16>>,
    fcs_len: Constant<Bits<16>>,
    residue: Constant<Bits<32>>,
    f_not_roce: Constant<Bits<8>>,
    f_len: Constant<Bits<8>>,
    f_icrc: Constant<Bits<8>>,
    full_keep: Constant<Bits<KW>>,
}

impl<const DW: usize, const KW: usize, const SW: usize, const AW: usize> MacRx<DW, KW, SW, AW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert!(AW < 15, "pointers are 16 bits with a wrap bit to spare");
        let tag = tag_match::<DW>();
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tuser: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            fcs_err: Default::default(),
            runt: Default::default(),
            not_roce: Default::default(),
            bad_len: Default::default(),
            icrc_err: Default::default(),
            overflow: Default::default(),
            self_check: Default::default(),
            code_err: Default::default(),
            too_long: Default::default(),
            paused: Default::default(),
            pause_rx: Default::default(),
            pfc_rx: Default::default(),
            paused_cycles: Default::default(),
            ctrl_bad_dst: Default::default(),
            ctrl_bad_opcode: Default::default(),
            ctrl_bad_reserved: Default::default(),
            xoff_bytes: Default::default(),
            xon_bytes: Default::default(),
            xoff: Default::default(),
            pfc_enable: Default::default(),
            fcs: Crc32::new(),
            pause: MacCtrlRx::new(line_bits_per_cycle(DW)),
            icrc_check: Icrc::new(),
            ram: RAM::default(),
            out: Skid::new(),
            wp: Default::default(),
            start: Default::default(),
            in_frame: Default::default(),
            ovf: Default::default(),
            beats: Default::default(),
            bytes: Default::default(),
            p1_valid: Default::default(),
            p1_beats: Default::default(),
            p1_bytes: Default::default(),
            p1_ovf: Default::default(),
            p1_code: Default::default(),
            p2_valid: Default::default(),
            p2_beats: Default::default(),
            p2_bytes: Default::default(),
            p2_ovf: Default::default(),
            p2_code: Default::default(),
            vd: Default::default(),
            vd_beats: Default::default(),
            vd_bytes: Default::default(),
            rec_ram: RAM::default(),
            r_wp_d: Default::default(),
            occ: (0..8).map(|_| Default::default()).collect(),
            xo: Default::default(),
            cur_prio: Default::default(),
            cur_beats: Default::default(),
            r_wp: Default::default(),
            r_rp: Default::default(),
            state: Default::default(),
            rp: Default::default(),
            left_beats: Default::default(),
            left_bytes: Default::default(),
            n_fcs: Default::default(),
            n_code: Default::default(),
            n_long: Default::default(),
            n_runt: Default::default(),
            n_not_roce: Default::default(),
            n_len: Default::default(),
            n_icrc: Default::default(),
            n_ovf: Default::default(),
            n_check: Default::default(),
            n_in: Default::default(),
            used: Default::default(),
            room: Default::default(),
            recs: Default::default(),
            rec_w: Default::default(),
            r_rp_nx: Default::default(),
            first: Default::default(),
            ovf_now: Default::default(),
            write: Default::default(),
            wp_next: Default::default(),
            rp_next: Default::default(),
            fcs_ok: Default::default(),
            v_now: Default::default(),
            v: Default::default(),
            v_beats: Default::default(),
            v_bytes: Default::default(),
            v_pcp: Default::default(),
            is_runt: Default::default(),
            is_long: Default::default(),
            nr: Default::default(),
            bl: Default::default(),
            ic: Default::default(),
            bad: Default::default(),
            consumed: Default::default(),
            h_beats: Default::default(),
            h_bytes: Default::default(),
            h_drop: Default::default(),
            step: Default::default(),
            at_end: Default::default(),
            have: Default::default(),
            send: Default::default(),
            keep_o: Default::default(),
            h_prio: Default::default(),
            fin: Default::default(),
            o_inc: Default::default(),
            o_dec: Default::default(),
            o_dec2: Default::default(),
            xoff_beats: Default::default(),
            xon_beats: Default::default(),
            xv: Default::default(),
            tag_beat: Default::default(),
            q_in: Default::default(),
            lossy: Default::default(),
            cap_hit: Default::default(),
            tagb: k(tag.beat),
            tag_first: Constant::new(tag.beat == 0),
            tpid_mask: tag.tpid_mask,
            tpid_val: tag.tpid_val,
            pcp_mask: tag.pcp_mask,
            pcp_val: tag.pcp_val,
            pc: (0..8).map(|p| k(p as u64)).collect(),
            onehot: (0..8).map(|p| k(1 << p)).collect(),
            kw_sh: k(KW.trailing_zeros().into()),
            keepc: keep_of_count::<KW>(),
            nc16: counts(KW),
            rec_drop: k(1 << 32),
            kw: k(KW as u64),
            depth: k(1 << AW),
            rec_limit: k((RECS - 3) as u64),
            min_len: k((ETH_MIN_FRAME_NO_FCS + FCS_LEN) as u64),
            max_len: k(ETH_MAX_FRAME as u64),
            fcs_len: k(FCS_LEN as u64),
            residue: k(FCS_RESIDUE),
            f_not_roce: k((flags::NOT_IP | flags::NOT_ROCE | flags::IP_OPTIONS).into()),
            f_len: k((flags::BAD_LENGTH | flags::TRUNCATED | flags::BAD_KEEP).into()),
            f_icrc: k(flags::MISMATCH.into()),
            full_keep: ones::<KW>(),
        }
    }
}

impl<const DW: usize, const KW: usize, const SW: usize, const AW: usize> Default
    for MacRx<DW, KW, SW, AW>
{
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize, const SW: usize, const AW: usize> Logic
    for MacRx<DW, KW, SW, AW>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, wp, start, in_frame, ovf, beats, bytes, p1_valid, p1_beats, p1_bytes,
            p1_ovf, p2_valid, p2_beats, p2_bytes, p2_ovf, p1_code, p2_code, n_code, n_long, r_wp,
            r_wp_d, r_rp, state, rp, left_beats, left_bytes, n_fcs, n_runt, n_not_roce, n_len,
            n_icrc, n_ovf, n_check, xo, cur_prio, cur_beats
        );
        for p in 0..8 {
            self.occ[p].clock.next = self.clk.val();
            self.occ[p].d.next = self.occ[p].q.val();
        }
        for i in 0..VD {
            self.vd[i].clock.next = self.clk.val();
            self.vd_beats[i].clock.next = self.clk.val();
            self.vd_bytes[i].clock.next = self.clk.val();
        }
        self.rec_ram.read_clock.next = self.clk.val();
        self.rec_ram.write_clock.next = self.clk.val();
        self.r_wp_d.d.next = self.r_wp.q.val();
        self.fcs.clk.next = self.clk.val();
        self.fcs.rst.next = self.rst.val();
        self.pause.clk.next = self.clk.val();
        self.pause.rst.next = self.rst.val();
        self.paused.next = self.pause.paused.val();
        self.pause_rx.next = self.pause.pause_rx.val();
        self.pfc_rx.next = self.pause.pfc_rx.val();
        self.paused_cycles.next = self.pause.paused_cycles.val();
        self.ctrl_bad_dst.next = self.pause.bad_dst.val();
        self.ctrl_bad_opcode.next = self.pause.bad_opcode.val();
        self.ctrl_bad_reserved.next = self.pause.bad_reserved.val();
        self.icrc_check.clk.next = self.clk.val();
        self.icrc_check.rst.next = self.rst.val();
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.out.s_axis_tuser.next = false;
        self.ram.read_clock.next = self.clk.val();
        self.ram.write_clock.next = self.clk.val();
        self.fcs_err.next = self.n_fcs.q.val();
        self.code_err.next = self.n_code.q.val();
        self.too_long.next = self.n_long.q.val();
        self.runt.next = self.n_runt.q.val();
        self.not_roce.next = self.n_not_roce.q.val();
        self.bad_len.next = self.n_len.q.val();
        self.icrc_err.next = self.n_icrc.q.val();
        self.overflow.next = self.n_ovf.q.val();
        self.self_check.next = self.n_check.q.val();
        if (self.fcs.m_crc_tvalid.val() != self.p2_valid.q.val())
            | (self.icrc_check.m_icrc_tvalid.val() != self.vd[0].q.val().get_bit(0))
        {
            self.n_check.d.next = self.n_check.q.val() + bits::<32>(1);
        }
        self.m_axis_tdata.next = self.out.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.out.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.out.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.out.m_axis_tvalid.val();
        self.out.m_axis_tready.next = self.m_axis_tready.val();

        // The taps watch the wire; nothing stalls it.
        self.fcs.s_axis_tdata.next = self.s_axis_tdata.val();
        self.fcs.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.fcs.s_axis_tlast.next = self.s_axis_tlast.val();
        self.fcs.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.fcs.s_axis_tready.next = true;
        self.icrc_check.s_axis_tdata.next = self.s_axis_tdata.val();
        self.icrc_check.s_axis_tkeep.next = self.s_axis_tkeep.val();
        self.icrc_check.s_axis_tlast.next = self.s_axis_tlast.val();
        self.icrc_check.s_axis_tvalid.next = self.s_axis_tvalid.val();
        self.icrc_check.s_axis_tready.next = true;
        self.pause.s_axis_tdata.next = self.s_axis_tdata.val();
        self.pause.s_axis_tlast.next = self.s_axis_tlast.val();
        self.pause.s_axis_tvalid.next = self.s_axis_tvalid.val();

        // Write side.
        self.n_in.next = self.kw.val();
        if self.s_axis_tlast.val() {
            self.n_in.next = bits::<16>(0);
            for i in 0..(KW + 1) {
                if self.s_axis_tkeep.val() == self.keepc[i].val() {
                    self.n_in.next = self.nc16[i].val();
                }
            }
        }
        self.used.next = self.wp.q.val() - self.rp.q.val();
        self.room.next = self.used.val() < self.depth.val();
        self.xoff_beats.next = self.xoff_bytes.val() >> self.kw_sh.val();
        self.xon_beats.next = self.xon_bytes.val() >> self.kw_sh.val();
        self.recs.next = self.r_wp.q.val() - self.r_rp.q.val();
        self.first.next = !self.in_frame.q.val();
        // A frame starts in overflow when the record queue could not take it.
        self.ovf_now.next = self.ovf.q.val();
        if self.first.val() {
            self.ovf_now.next = self.recs.val() >= self.rec_limit.val();
        }
        // A lossy frame (its priority without PFC while some priority has it) is refused at
        // the beat with its tag when the buffer holds the XOFF mark or more.
        self.tag_beat.next = (self.first.val() & self.tag_first.val())
            | (!self.first.val() & (self.beats.q.val() == self.tagb.val()));
        self.q_in.next = bits::<3>(0);
        if (self.s_axis_tdata.val() & self.tpid_mask.val()) == self.tpid_val.val() {
            for v in 0..8 {
                if (self.s_axis_tdata.val() & self.pcp_mask.val()) == self.pcp_val[v].val() {
                    self.q_in.next = self.pc[v].val();
                }
            }
        }
        self.lossy.next = (self.pfc_enable.val() != bits::<8>(0))
            & ((self.pfc_enable.val() & (bits::<8>(1) << self.q_in.val())) == bits::<8>(0));
        self.cap_hit.next =
            self.tag_beat.val() & self.lossy.val() & (self.used.val() >= self.xoff_beats.val());
        self.write.next = false;
        self.wp_next.next = self.wp.q.val();
        self.ram.write_address.next = bit_cast::<AW, 16>(self.wp.q.val());
        self.ram.write_data.next = self.s_axis_tdata.val();
        if self.s_axis_tvalid.val() {
            self.in_frame.d.next = !self.s_axis_tlast.val();
            if self.first.val() {
                self.start.d.next = self.wp.q.val();
                self.beats.d.next = bits::<16>(0);
                self.bytes.d.next = bits::<16>(0);
            }
            if !self.ovf_now.val() & self.room.val() & !self.cap_hit.val() {
                self.write.next = true;
                self.wp_next.next = self.wp.q.val() + bits::<16>(1);
                if self.first.val() {
                    self.beats.d.next = bits::<16>(1);
                    self.bytes.d.next = self.n_in.val();
                } else {
                    self.beats.d.next = self.beats.q.val() + bits::<16>(1);
                    self.bytes.d.next = self.bytes.q.val() + self.n_in.val();
                }
                self.ovf.d.next = false;
            } else {
                // Out of room: the frame's beats so far are given back.
                self.ovf.d.next = true;
                if !self.first.val() {
                    self.wp_next.next = self.start.q.val();
                }
            }
            if self.s_axis_tlast.val() {
                self.ovf.d.next = false;
            }
        }
        self.ram.write_enable.next = self.write.val();
        self.wp.d.next = self.wp_next.val();
        self.p1_valid.d.next = self.s_axis_tvalid.val() & self.s_axis_tlast.val();
        self.p1_beats.d.next = self.beats.q.val() + bits::<16>(1);
        self.p1_bytes.d.next = self.bytes.q.val() + self.n_in.val();
        if self.first.val() {
            self.p1_beats.d.next = bits::<16>(1);
            self.p1_bytes.d.next = self.n_in.val();
        }
        self.p1_ovf.d.next = self.ovf_now.val() | !self.room.val() | self.cap_hit.val();
        self.p1_code.d.next =
            self.s_axis_tvalid.val() & self.s_axis_tlast.val() & self.s_axis_tuser.val();
        self.p2_code.d.next = self.p1_code.q.val();
        self.p2_valid.d.next = self.p1_valid.q.val();
        self.p2_beats.d.next = self.p1_beats.q.val();
        self.p2_bytes.d.next = self.p1_bytes.q.val();
        self.p2_ovf.d.next = self.p1_ovf.q.val();

        // The FCS side of the verdict, two cycles after the last beat; it waits for the ICRC's.
        self.fcs_ok.next = self.fcs.m_crc_tdata.val() == self.residue.val();
        self.is_runt.next = self.p2_bytes.q.val() < self.min_len.val();
        self.is_long.next = self.p2_bytes.q.val() > self.max_len.val();
        self.pause.good.next = self.fcs_ok.val() & !self.is_runt.val() & !self.p2_code.q.val();
        self.consumed.next =
            self.fcs_ok.val() & !self.is_runt.val() & !self.p2_code.q.val() & self.pause.ctrl.val();
        self.v_now.next = bit_cast::<VW, 3>(self.pause.pcp.val()) << 9;
        if self.p2_valid.q.val() {
            self.v_now.next = self.v_now.val() | bits::<VW>(1);
        }
        if self.p2_ovf.q.val() {
            self.v_now.next = self.v_now.val() | bits::<VW>(2);
        }
        if self.p2_code.q.val() {
            self.v_now.next = self.v_now.val() | bits::<VW>(4);
        }
        if !self.fcs_ok.val() {
            self.v_now.next = self.v_now.val() | bits::<VW>(8);
        }
        if self.is_runt.val() {
            self.v_now.next = self.v_now.val() | bits::<VW>(16);
        }
        if self.is_long.val() {
            self.v_now.next = self.v_now.val() | bits::<VW>(32);
        }
        if self.pause.ctrl.val() {
            self.v_now.next = self.v_now.val() | bits::<VW>(64);
        }
        if self.consumed.val() {
            self.v_now.next = self.v_now.val() | bits::<VW>(128);
        }
        if self.fcs.m_crc_tuser.val() {
            self.v_now.next = self.v_now.val() | bits::<VW>(256);
        }
        // A delay line: in at the top index, out at 0. hdl_gen indexes arrays with literals and
        // loop variables only, so a one-pass loop names the top index `VD - 1`.
        for i in (VD - 1)..VD {
            self.vd[i].d.next = self.v_now.val();
            self.vd_beats[i].d.next = self.p2_beats.q.val();
            self.vd_bytes[i].d.next = self.p2_bytes.q.val();
        }
        for i in 0..(VD - 1) {
            self.vd[i].d.next = self.vd[i + 1].q.val();
            self.vd_beats[i].d.next = self.vd_beats[i + 1].q.val();
            self.vd_bytes[i].d.next = self.vd_bytes[i + 1].q.val();
        }
        // The verdict, with the ICRC tap's result.
        self.v.next = self.vd[0].q.val();
        self.v_beats.next = self.vd_beats[0].q.val();
        self.v_bytes.next = self.vd_bytes[0].q.val();
        self.v_pcp.next = self.v.val().get_bits::<3>(9);
        // A MAC control frame is consumed (MacCtrlRx counts it), not judged as RoCEv2.
        self.nr.next = ((self.icrc_check.m_icrc_tuser.val() & self.f_not_roce.val())
            != bits::<8>(0))
            & !self.v.val().get_bit(6);
        self.bl.next = (((self.icrc_check.m_icrc_tuser.val() & self.f_len.val()) != bits::<8>(0))
            | self.v.val().get_bit(8))
            & !self.v.val().get_bit(6);
        self.ic.next = ((self.icrc_check.m_icrc_tuser.val() & self.f_icrc.val()) != bits::<8>(0))
            & !self.v.val().get_bit(6);
        self.bad.next = self.v.val().get_bit(3)
            | self.v.val().get_bit(2)
            | self.v.val().get_bit(4)
            | self.v.val().get_bit(5)
            | self.v.val().get_bit(6)
            | self.nr.val()
            | self.bl.val()
            | self.ic.val();
        self.rec_w.next = bit_cast::<REC_W, 16>(self.v_beats.val())
            | (bit_cast::<REC_W, 16>(self.v_bytes.val()) << 16)
            | (bit_cast::<REC_W, 3>(self.v_pcp.val()) << 33);
        self.rec_ram.write_address.next = self.r_wp.q.val().get_bits::<9>(0);
        self.rec_ram.write_data.next = self.rec_w.val();
        self.rec_ram.write_enable.next = false;
        if self.v.val().get_bit(0) {
            if self.v.val().get_bit(1) {
                if !self.v.val().get_bit(7) {
                    self.n_ovf.d.next = self.n_ovf.q.val() + bits::<32>(1);
                }
            } else {
                self.rec_ram.write_enable.next = true;
                if self.bad.val() {
                    self.rec_ram.write_data.next = self.rec_w.val() | self.rec_drop.val();
                }
                self.r_wp.d.next = self.r_wp.q.val() + bits::<16>(1);
                if self.v.val().get_bit(2) {
                    self.n_code.d.next = self.n_code.q.val() + bits::<32>(1);
                } else if self.v.val().get_bit(3) {
                    self.n_fcs.d.next = self.n_fcs.q.val() + bits::<32>(1);
                } else if self.v.val().get_bit(4) {
                    self.n_runt.d.next = self.n_runt.q.val() + bits::<32>(1);
                } else if self.v.val().get_bit(5) {
                    self.n_long.d.next = self.n_long.q.val() + bits::<32>(1);
                } else if self.nr.val() {
                    self.n_not_roce.d.next = self.n_not_roce.q.val() + bits::<32>(1);
                } else if self.bl.val() {
                    self.n_len.d.next = self.n_len.q.val() + bits::<32>(1);
                } else if self.ic.val() {
                    self.n_icrc.d.next = self.n_icrc.q.val() + bits::<32>(1);
                }
            }
        }

        // Read side: the head record, then its beats from RAM (read one ahead).
        self.h_beats.next = self.rec_ram.read_data.val().get_bits::<16>(0);
        self.h_bytes.next = self.rec_ram.read_data.val().get_bits::<16>(16);
        self.h_drop.next = (self.rec_ram.read_data.val() & self.rec_drop.val()) != bits::<REC_W>(0);
        self.h_prio.next = self.rec_ram.read_data.val().get_bits::<3>(33);
        self.keep_o.next = self.full_keep.val();
        for i in 0..(KW + 1) {
            if self.left_bytes.q.val() == self.nc16[i].val() {
                self.keep_o.next = self.keepc[i].val();
            }
        }
        self.send.next = self.left_bytes.q.val() != bits::<16>(0);
        self.step.next = (self.state.q.val() == MacRxRead::Run)
            & (!self.send.val() | self.out.s_axis_tready.val());
        self.out.s_axis_tvalid.next = self.step.val() & self.send.val();
        self.out.s_axis_tdata.next = self.ram.read_data.val();
        self.out.s_axis_tkeep.next = self.keep_o.val();
        self.out.s_axis_tlast.next = self.left_bytes.q.val() <= self.kw.val();
        // Where the read pointer goes: one beat on a step, then past a dropped frame's beats
        // when the next record is one (skipped in a cycle, never read out).
        self.rp_next.next = self.rp.q.val();
        if self.step.val() {
            self.rp_next.next = self.rp.q.val() + bits::<16>(1);
        }
        self.at_end.next = (self.state.q.val() == MacRxRead::Idle)
            | (self.step.val() & (self.left_beats.q.val() == bits::<16>(1)));
        self.have.next = self.r_rp.q.val() != self.r_wp_d.q.val();
        // The record RAM is read at the pointer this cycle ends with: the head record next.
        self.r_rp_nx.next = self.r_rp.q.val();
        if self.at_end.val() & self.have.val() {
            self.r_rp_nx.next = self.r_rp.q.val() + bits::<16>(1);
        }
        self.rec_ram.read_address.next = self.r_rp_nx.val().get_bits::<9>(0);
        if self.step.val() {
            self.left_beats.d.next = self.left_beats.q.val() - bits::<16>(1);
            if self.left_bytes.q.val() > self.kw.val() {
                self.left_bytes.d.next = self.left_bytes.q.val() - self.kw.val();
            } else {
                self.left_bytes.d.next = bits::<16>(0);
            }
        }
        if self.at_end.val() {
            self.state.d.next = MacRxRead::Idle;
            if self.have.val() {
                self.r_rp.d.next = self.r_rp_nx.val();
                if self.h_drop.val() {
                    self.rp_next.next = self.rp_next.val() + self.h_beats.val();
                } else {
                    self.left_beats.d.next = self.h_beats.val();
                    self.left_bytes.d.next = self.h_bytes.val() - self.fcs_len.val();
                    self.state.d.next = MacRxRead::Run;
                }
            }
        }
        // Occupancy per priority, in beats: a frame counts from its record until it has been
        // read out (or skipped); the XOFF wish follows it with hysteresis.
        self.fin.next = (self.state.q.val() == MacRxRead::Run)
            & self.step.val()
            & (self.left_beats.q.val() == bits::<16>(1));
        if self.at_end.val() & self.have.val() & !self.h_drop.val() {
            self.cur_prio.d.next = self.h_prio.val();
            self.cur_beats.d.next = self.h_beats.val();
        }
        self.xv.next = self.xo.q.val();
        for p in 0..8 {
            self.o_inc.next = bits::<16>(0);
            self.o_dec.next = bits::<16>(0);
            self.o_dec2.next = bits::<16>(0);
            if self.v.val().get_bit(0)
                & !self.v.val().get_bit(1)
                & (self.v_pcp.val() == self.pc[p].val())
            {
                self.o_inc.next = self.v_beats.val();
            }
            if self.fin.val() & (self.cur_prio.q.val() == self.pc[p].val()) {
                self.o_dec.next = self.cur_beats.q.val();
            }
            if self.at_end.val()
                & self.have.val()
                & self.h_drop.val()
                & (self.h_prio.val() == self.pc[p].val())
            {
                self.o_dec2.next = self.h_beats.val();
            }
            self.occ[p].d.next =
                self.occ[p].q.val() + self.o_inc.val() - self.o_dec.val() - self.o_dec2.val();
            if self.occ[p].q.val() > self.xoff_beats.val() {
                self.xv.next = self.xv.val() | self.onehot[p].val();
            }
            if self.occ[p].q.val() <= self.xon_beats.val() {
                self.xv.next = self.xv.val() & !self.onehot[p].val();
            }
        }
        self.xo.d.next = self.xv.val();
        self.xoff.next = self.xo.q.val();
        self.rp.d.next = self.rp_next.val();
        self.ram.read_address.next = bit_cast::<AW, 16>(self.rp_next.val());
        if self.rst.val() {
            self.wp.d.next = bits::<16>(0);
            self.rp.d.next = bits::<16>(0);
            self.in_frame.d.next = false;
            self.ovf.d.next = false;
            self.p1_valid.d.next = false;
            self.p2_valid.d.next = false;
            for i in 0..VD {
                self.vd[i].d.next = bits::<VW>(0);
            }
            self.r_wp.d.next = bits::<16>(0);
            self.r_wp_d.d.next = bits::<16>(0);
            self.r_rp.d.next = bits::<16>(0);
            self.state.d.next = MacRxRead::Idle;
            self.n_fcs.d.next = bits::<32>(0);
            self.n_code.d.next = bits::<32>(0);
            self.n_long.d.next = bits::<32>(0);
            self.n_runt.d.next = bits::<32>(0);
            self.n_not_roce.d.next = bits::<32>(0);
            self.n_len.d.next = bits::<32>(0);
            self.n_icrc.d.next = bits::<32>(0);
            self.n_ovf.d.next = bits::<32>(0);
            self.n_check.d.next = bits::<32>(0);
            self.xo.d.next = bits::<8>(0);
            for p in 0..8 {
                self.occ[p].d.next = bits::<16>(0);
            }
        }
    }
}
