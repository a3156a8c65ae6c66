//! `DmaRead`: the DMA read engine. Takes read commands (host address, length), issues memory
//! read requests with tags, many outstanding, writes their completions (split, in any order
//! across tags) into a reorder buffer, and streams each command's bytes out in command order,
//! realigned so the first byte is in lane 0.
//!
//! Ports:
//! - `s_cmd_{addr,len,tvalid,tready}`: a read of `len` bytes (0..=`DMA_MAX_LEN`) at `addr`.
//! - `m_rq_*`: memory read requests (header only; `tlast` high, no payload).
//! - `s_rc_*`: completions, address-aligned (`spec::tlp`), placed by their headers (so no
//!   `tkeep`: the bytes of a beat outside the piece land where no reader looks). `s_rc_tready` is always high:
//!   every request has its buffer space reserved when it is issued, as PCIe requires of an
//!   endpoint that advertises infinite completion credits.
//! - `m_data_*`: each command's bytes as one packet, `tlast` on its last beat (a zero-length
//!   command gives one beat with `tkeep` 0). `tuser` is high on the last beat if any of its
//!   completions failed (UR/CA status) or timed out: the data is then not to be trusted.
//! - `bad_cpl`, `timeouts`: counters of dropped completions and of completion timeouts.
//!
//! ```text
//!  s_cmd -> issuer: cut at MRRS-aligned boundaries, one tag per piece --> m_rq (MRd)
//!             | per-tag table: end offset; command length/start/tags on its first tag
//!  s_rc --> place by (tag, end offset - byte count) --> reorder buffer: 2 banks of words
//!                                                  (tag t owns words t*S .. t*S+S-1)
//!  reader: tags in issue order; beat k needs words p+k and p+k+1, one from each bank,
//!          read together and funnel-shifted --> R stage --> output register --> m_data
//! ```
//!
//! A piece never crosses a boundary aligned to the read request size (`DMA_READ_REQUEST`), so
//! the byte at host address `A` of the piece with tag `t` lives at buffer byte
//! `t * MRRS + A mod MRRS`, and a command's bytes are consecutive in the buffer (modulo its
//! size) whatever tags it got. Tags are handed out and given back in order, a command's all at
//! once when its last beat is read, so a command may need at most `DMA_TAGS - 1` tags: with
//! `DMA_MAX_LEN` = 4 KiB and 512-byte requests, 9.
//!
//! Bad inputs: a completion whose tag is not outstanding, that is not a completion, whose byte
//! count or lower address does not fit its request, that names another requester, or whose
//! data would run past its tag's part of the buffer, is dropped (the rest of it too) and
//! counted in `bad_cpl`; no byte of it reaches the buffer. A completion with UR or CA status,
//! or poisoned (EP), ends its request with an error and its data is not used. If
//! the reader waits on one command for `2^TIMEOUT_W` cycles, the command completes with the
//! error flag and `timeouts` counts it (a completion that comes later finds its tag no longer
//! outstanding, unless the tag was reissued). A command longer than `DMA_MAX_LEN` reads
//! nothing: it gives one empty beat with `tuser` high.
//!
//! Throughput: one beat per clock out while data is there, plus one idle cycle between
//! commands; completions are taken one beat per clock. Latency: a piece goes out once all of
//! it is in the buffer (its done bit), so the first beat of a command leaves 3 cycles after
//! the last completion beat of its first piece.

use crate::host::req_header::ReqHeader;
use crate::host::{k, lsb};
use crate::prelude::*;
use crate::stream::ones;
use crate::util::log2_exact;
use ferroce_spec::tlp::{self, COMPLETION, DMA_MAX_LEN, DMA_READ_REQUEST, DMA_TAGS};

/// Command length width (bytes, up to `DMA_MAX_LEN`).
pub const LEN_W: usize = 13;
/// Tag bits used (`DMA_TAGS` = 16).
const TB: usize = 4;
/// Cycles the reader waits on a command before it gives up: 2^18 = 1.7 ms at 156.25 MHz
/// (inside PCIe's 50 us..50 ms completion timeout range).
const TIMEOUT_W: usize = 18;

/// `DW`-bit beats, `KW` keep bits, each of the two buffer banks `2^BB` words deep, so the
/// buffer is `2^(BB+1)` words = `DMA_TAGS * DMA_READ_REQUEST` bytes.
#[derive(LogicBlock)]
pub struct DmaRead<const DW: usize, const KW: usize, const BB: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_cmd_addr: Signal<In, Bits<64>>,
    pub s_cmd_len: Signal<In, Bits<LEN_W>>,
    pub s_cmd_tvalid: Signal<In, Bit>,
    pub s_cmd_tready: Signal<Out, Bit>,
    pub m_rq_hdr: Signal<Out, Bits<128>>,
    pub m_rq_tdata: Signal<Out, Bits<DW>>,
    pub m_rq_tkeep: Signal<Out, Bits<KW>>,
    pub m_rq_tlast: Signal<Out, Bit>,
    pub m_rq_tvalid: Signal<Out, Bit>,
    pub m_rq_tready: Signal<In, Bit>,
    pub s_rc_hdr: Signal<In, Bits<128>>,
    pub s_rc_tdata: Signal<In, Bits<DW>>,
    pub s_rc_tlast: Signal<In, Bit>,
    pub s_rc_tvalid: Signal<In, Bit>,
    pub s_rc_tready: Signal<Out, Bit>,
    pub m_data_tdata: Signal<Out, Bits<DW>>,
    pub m_data_tkeep: Signal<Out, Bits<KW>>,
    pub m_data_tlast: Signal<Out, Bit>,
    pub m_data_tuser: Signal<Out, Bit>,
    pub m_data_tvalid: Signal<Out, Bit>,
    pub m_data_tready: Signal<In, Bit>,
    pub bad_cpl: Signal<Out, Bits<32>>,
    pub timeouts: Signal<Out, Bits<32>>,
    rqh: ReqHeader,
    ram_e: RAM<Bits<DW>, BB>,
    ram_o: RAM<Bits<DW>, BB>,
    // Issuer.
    c_active: DFF<Bit>,
    c_first: DFF<Bit>,
    c_addr: DFF<Bits<64>>,
    c_rem: DFF<Bits<16>>,
    c_len: DFF<Bits<16>>,
    c_ntags: DFF<Bits<8>>,
    c_bad: DFF<Bit>,
    iss: DFF<Bits<5>>,
    ret: DFF<Bits<5>>,
    rq_valid: DFF<Bit>,
    // Per tag: end of its piece (byte offset in its part of the buffer); for the first tag of
    // a command, the command's length, start offset and tag count.
    t_end: Vec<DFF<Bits<16>>>,
    t_len: Vec<DFF<Bits<16>>>,
    t_start: Vec<DFF<Bits<16>>>,
    t_ntags: Vec<DFF<Bits<8>>>,
    done: DFF<Bits<DMA_TAGS>>,
    err: DFF<Bits<DMA_TAGS>>,
    // Completion intake, then the write stage (RAM write and done/err update together).
    k_active: DFF<Bit>,
    k_drop: DFF<Bit>,
    k_final: DFF<Bit>,
    k_tag: DFF<Bits<TB>>,
    k_q: DFF<Bits<16>>,
    w_we: DFF<Bit>,
    w_bank: DFF<Bit>,
    w_idx: DFF<Bits<BB>>,
    w_data: DFF<Bits<DW>>,
    w_done: DFF<Bits<DMA_TAGS>>,
    w_err: DFF<Bits<DMA_TAGS>>,
    n_bad: DFF<Bits<32>>,
    // Reader, R stage, output register.
    r_busy: DFF<Bit>,
    r_p: DFF<Bits<16>>,
    r_rem: DFF<Bits<16>>,
    r_s: DFF<Bits<16>>,
    r_ntags: DFF<Bits<8>>,
    r_err: DFF<Bit>,
    r_force: DFF<Bit>,
    r_wait: DFF<Bits<TIMEOUT_W>>,
    n_timeouts: DFF<Bits<32>>,
    ra_e: DFF<Bits<BB>>,
    ra_o: DFF<Bits<BB>>,
    rv: DFF<Bit>,
    rs: DFF<Bits<16>>,
    r_odd: DFF<Bit>,
    r_keep: DFF<Bits<KW>>,
    r_last: DFF<Bit>,
    r_user: DFF<Bit>,
    o_valid: DFF<Bit>,
    o_data: DFF<Bits<DW>>,
    o_keep: DFF<Bits<KW>>,
    o_last: DFF<Bit>,
    o_user: DFF<Bit>,
    // Issuer locals.
    nfl: Signal<Local, Bits<5>>,
    i_tag: Signal<Local, Bits<TB>>,
    i_go: Signal<Local, Bit>,
    i_off: Signal<Local, Bits<16>>,
    i_room: Signal<Local, Bits<16>>,
    i_chunk: Signal<Local, Bits<16>>,
    i_rem_after: Signal<Local, Bits<16>>,
    i_tmask: Signal<Local, Bits<DMA_TAGS>>,
    i_done_set: Signal<Local, Bits<DMA_TAGS>>,
    i_err_set: Signal<Local, Bits<DMA_TAGS>>,
    a_off: Signal<Local, Bits<16>>,
    a_sum: Signal<Local, Bits<16>>,
    a_nt: Signal<Local, Bits<16>>,
    // Completion locals.
    h_fmt: Signal<Local, Bits<3>>,
    h_type: Signal<Local, Bits<5>>,
    h_status: Signal<Local, Bits<3>>,
    h_len: Signal<Local, Bits<10>>,
    h_bc: Signal<Local, Bits<12>>,
    h_la: Signal<Local, Bits<7>>,
    h_tag8: Signal<Local, Bits<8>>,
    h_rid: Signal<Local, Bits<16>>,
    h_ep: Signal<Local, Bit>,
    h_tag: Signal<Local, Bits<TB>>,
    h_rel: Signal<Local, Bits<TB>>,
    h_end: Signal<Local, Bits<16>>,
    h_bc16: Signal<Local, Bits<16>>,
    h_start: Signal<Local, Bits<16>>,
    h_len16: Signal<Local, Bits<16>>,
    h_pay: Signal<Local, Bits<16>>,
    h_q: Signal<Local, Bits<16>>,
    h_done_bit: Signal<Local, Bit>,
    h_is_cpl: Signal<Local, Bit>,
    h_tag_ok: Signal<Local, Bit>,
    h_fits: Signal<Local, Bit>,
    k_tmask: Signal<Local, Bits<DMA_TAGS>>,
    k_in_slot: Signal<Local, Bit>,
    k_q_tag: Signal<Local, Bits<16>>,
    // Reader locals.
    s_tag: Signal<Local, Bits<TB>>,
    s_start: Signal<Local, Bits<16>>,
    s_len: Signal<Local, Bits<16>>,
    s_ntags: Signal<Local, Bits<8>>,
    b_take: Signal<Local, Bits<16>>,
    b_need2: Signal<Local, Bit>,
    b_p1: Signal<Local, Bits<16>>,
    b_ta: Signal<Local, Bits<16>>,
    b_tb: Signal<Local, Bits<16>>,
    b_da: Signal<Local, Bit>,
    b_db: Signal<Local, Bit>,
    b_ea: Signal<Local, Bit>,
    b_eb: Signal<Local, Bit>,
    b_ready: Signal<Local, Bit>,
    b_err: Signal<Local, Bit>,
    b_last: Signal<Local, Bit>,
    b_keep: Signal<Local, Bits<KW>>,
    b_go: Signal<Local, Bit>,
    o_take: Signal<Local, Bit>,
    r_free: Signal<Local, Bit>,
    f_lo: Signal<Local, Bits<DW>>,
    f_e: Signal<Local, Bits<DW>>,
    f_o: Signal<Local, Bits<DW>>,
    r_hold: DFF<Bit>,
    h_e: DFF<Bits<DW>>,
    h_o: DFF<Bits<DW>>,
    f_hi: Signal<Local, Bits<DW>>,
    f_sh: Signal<Local, Bits<16>>,
    f_shi: Signal<Local, Bits<16>>,
    // Constants.
    tagc: Vec<Constant<Bits<TB>>>,
    keepc: Vec<Constant<Bits<KW>>>,
    takec: Vec<Constant<Bits<16>>>,
    mrrs: Constant<Bits<16>>,
    mrrs_m1: Constant<Bits<16>>,
    mrrs_m1_64: Constant<Bits<64>>,
    mrrs_b: Constant<Bits<16>>,
    kw: Constant<Bits<16>>,
    lane_m1: Constant<Bits<16>>,
    lw: Constant<Bits<16>>,
    swb: Constant<Bits<16>>,
    wmask: Constant<Bits<16>>,
    dw: Constant<Bits<16>>,
    full_keep: Constant<Bits<KW>>,
    rid: Constant<Bits<16>>,
    fmt_cpl: Constant<Bits<3>>,
    fmt_cpld: Constant<Bits<3>>,
    type_cpl: Constant<Bits<5>>,
    wait_max: Constant<Bits<TIMEOUT_W>>,
    ntags_max: Constant<Bits<5>>,
    max_len: Constant<Bits<LEN_W>>,
    cl_fmt: Constant<Bits<7>>,
    cl_type: Constant<Bits<7>>,
    cl_len: Constant<Bits<7>>,
    cl_status: Constant<Bits<7>>,
    cl_bc: Constant<Bits<7>>,
    cl_tag: Constant<Bits<7>>,
    cl_la: Constant<Bits<7>>,
    cl_rid: Constant<Bits<7>>,
    cl_ep: Constant<Bits<7>>,
}

impl<const DW: usize, const KW: usize, const BB: usize> DmaRead<DW, KW, BB> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert_eq!(DMA_TAGS, 1 << TB);
        let lw = log2_exact(KW);
        let words = 1usize << (BB + 1);
        assert!(words > DMA_TAGS, "buffer too small for {DMA_TAGS} tags");
        let swb = log2_exact(words / DMA_TAGS);
        let mrrs = (words / DMA_TAGS) * KW;
        assert_eq!(
            mrrs, DMA_READ_REQUEST,
            "the buffer holds one read request per tag"
        );
        assert!(
            DMA_MAX_LEN.div_ceil(mrrs) < DMA_TAGS,
            "a command must fit in the tags"
        );
        assert!(DMA_MAX_LEN < 1 << LEN_W && words <= 1 << 15);
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_cmd_addr: Default::default(),
            s_cmd_len: Default::default(),
            s_cmd_tvalid: Default::default(),
            s_cmd_tready: Default::default(),
            m_rq_hdr: Default::default(),
            m_rq_tdata: Default::default(),
            m_rq_tkeep: Default::default(),
            m_rq_tlast: Default::default(),
            m_rq_tvalid: Default::default(),
            m_rq_tready: Default::default(),
            s_rc_hdr: Default::default(),
            s_rc_tdata: Default::default(),
            s_rc_tlast: Default::default(),
            s_rc_tvalid: Default::default(),
            s_rc_tready: Default::default(),
            m_data_tdata: Default::default(),
            m_data_tkeep: Default::default(),
            m_data_tlast: Default::default(),
            m_data_tuser: Default::default(),
            m_data_tvalid: Default::default(),
            m_data_tready: Default::default(),
            bad_cpl: Default::default(),
            timeouts: Default::default(),
            rqh: ReqHeader::default(),
            ram_e: RAM::default(),
            ram_o: RAM::default(),
            c_active: Default::default(),
            c_first: Default::default(),
            c_addr: Default::default(),
            c_rem: Default::default(),
            c_len: Default::default(),
            c_ntags: Default::default(),
            c_bad: Default::default(),
            iss: Default::default(),
            ret: Default::default(),
            rq_valid: Default::default(),
            t_end: (0..DMA_TAGS).map(|_| DFF::default()).collect(),
            t_len: (0..DMA_TAGS).map(|_| DFF::default()).collect(),
            t_start: (0..DMA_TAGS).map(|_| DFF::default()).collect(),
            t_ntags: (0..DMA_TAGS).map(|_| DFF::default()).collect(),
            done: Default::default(),
            err: Default::default(),
            k_active: Default::default(),
            k_drop: Default::default(),
            k_final: Default::default(),
            k_tag: Default::default(),
            k_q: Default::default(),
            w_we: Default::default(),
            w_bank: Default::default(),
            w_idx: Default::default(),
            w_data: Default::default(),
            w_done: Default::default(),
            w_err: Default::default(),
            n_bad: Default::default(),
            r_busy: Default::default(),
            r_p: Default::default(),
            r_rem: Default::default(),
            r_s: Default::default(),
            r_ntags: Default::default(),
            r_err: Default::default(),
            r_force: Default::default(),
            r_wait: Default::default(),
            n_timeouts: Default::default(),
            ra_e: Default::default(),
            ra_o: Default::default(),
            rv: Default::default(),
            rs: Default::default(),
            r_odd: Default::default(),
            r_keep: Default::default(),
            r_last: Default::default(),
            r_user: Default::default(),
            o_valid: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            o_user: Default::default(),
            nfl: Default::default(),
            i_tag: Default::default(),
            i_go: Default::default(),
            i_off: Default::default(),
            i_room: Default::default(),
            i_chunk: Default::default(),
            i_rem_after: Default::default(),
            i_tmask: Default::default(),
            i_done_set: Default::default(),
            i_err_set: Default::default(),
            a_off: Default::default(),
            a_sum: Default::default(),
            a_nt: Default::default(),
            h_fmt: Default::default(),
            h_type: Default::default(),
            h_status: Default::default(),
            h_len: Default::default(),
            h_bc: Default::default(),
            h_la: Default::default(),
            h_tag8: Default::default(),
            h_rid: Default::default(),
            h_ep: Default::default(),
            h_tag: Default::default(),
            h_rel: Default::default(),
            h_end: Default::default(),
            h_bc16: Default::default(),
            h_start: Default::default(),
            h_len16: Default::default(),
            h_pay: Default::default(),
            h_q: Default::default(),
            h_done_bit: Default::default(),
            h_is_cpl: Default::default(),
            h_tag_ok: Default::default(),
            h_fits: Default::default(),
            k_tmask: Default::default(),
            k_in_slot: Default::default(),
            k_q_tag: Default::default(),
            s_tag: Default::default(),
            s_start: Default::default(),
            s_len: Default::default(),
            s_ntags: Default::default(),
            b_take: Default::default(),
            b_need2: Default::default(),
            b_p1: Default::default(),
            b_ta: Default::default(),
            b_tb: Default::default(),
            b_da: Default::default(),
            b_db: Default::default(),
            b_ea: Default::default(),
            b_eb: Default::default(),
            b_ready: Default::default(),
            b_err: Default::default(),
            b_last: Default::default(),
            b_keep: Default::default(),
            b_go: Default::default(),
            o_take: Default::default(),
            r_free: Default::default(),
            f_lo: Default::default(),
            f_e: Default::default(),
            f_o: Default::default(),
            r_hold: Default::default(),
            h_e: Default::default(),
            h_o: Default::default(),
            f_hi: Default::default(),
            f_sh: Default::default(),
            f_shi: Default::default(),
            tagc: (0..DMA_TAGS).map(|t| k(t as u64)).collect(),
            keepc: (0..KW)
                .map(|n| k(if n == 0 { 0 } else { u64::MAX >> (64 - n) }))
                .collect(),
            takec: (0..KW).map(|n| k(n as u64)).collect(),
            mrrs: k(mrrs as u64),
            mrrs_m1: k(mrrs as u64 - 1),
            mrrs_m1_64: k(mrrs as u64 - 1),
            mrrs_b: k(log2_exact(mrrs) as u64),
            kw: k(KW as u64),
            lane_m1: k(KW as u64 - 1),
            lw: k(lw as u64),
            swb: k(swb as u64),
            wmask: k(words as u64 - 1),
            dw: k(DW as u64),
            full_keep: ones::<KW>(),
            rid: k(tlp::NIC_REQUESTER_ID.into()),
            fmt_cpl: k(tlp::FMT_3DW_NO_DATA.into()),
            fmt_cpld: k(tlp::FMT_3DW_DATA.into()),
            type_cpl: k(tlp::TYPE_CPL.into()),
            wait_max: Constant::new(Bits::<TIMEOUT_W>::mask()),
            ntags_max: k(DMA_TAGS as u64),
            max_len: k(DMA_MAX_LEN as u64),
            cl_fmt: lsb(&COMPLETION, "fmt"),
            cl_type: lsb(&COMPLETION, "type"),
            cl_len: lsb(&COMPLETION, "length"),
            cl_status: lsb(&COMPLETION, "status"),
            cl_bc: lsb(&COMPLETION, "byte_count"),
            cl_tag: lsb(&COMPLETION, "tag"),
            cl_la: lsb(&COMPLETION, "lower_addr"),
            cl_rid: lsb(&COMPLETION, "requester_id"),
            cl_ep: lsb(&COMPLETION, "ep"),
        }
    }
}

impl<const DW: usize, const KW: usize, const BB: usize> Default for DmaRead<DW, KW, BB> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize, const BB: usize> Logic for DmaRead<DW, KW, BB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, c_active, c_bad, c_first, c_addr, c_rem, c_len, c_ntags, iss, ret, rq_valid,
            done, err, k_active, k_drop, k_final, k_tag, k_q, w_we, w_bank, w_idx, w_data, w_done,
            w_err, n_bad, r_busy, r_p, r_rem, r_s, r_ntags, r_err, r_force, r_wait, n_timeouts,
            ra_e, ra_o, rv, rs, r_odd, r_keep, r_last, r_user, o_valid, o_data, o_keep, o_last,
            o_user, r_hold, h_e, h_o
        );
        for i in 0..DMA_TAGS {
            self.t_end[i].clock.next = self.clk.val();
            self.t_end[i].d.next = self.t_end[i].q.val();
            self.t_len[i].clock.next = self.clk.val();
            self.t_len[i].d.next = self.t_len[i].q.val();
            self.t_start[i].clock.next = self.clk.val();
            self.t_start[i].d.next = self.t_start[i].q.val();
            self.t_ntags[i].clock.next = self.clk.val();
            self.t_ntags[i].d.next = self.t_ntags[i].q.val();
        }
        self.ram_e.read_clock.next = self.clk.val();
        self.ram_e.write_clock.next = self.clk.val();
        self.ram_o.read_clock.next = self.clk.val();
        self.ram_o.write_clock.next = self.clk.val();

        // Outputs straight from registers.
        self.m_rq_hdr.next = self.rqh.hdr.val();
        self.rqh.clk.next = self.clk.val();
        self.rqh.load.next = false;
        self.m_rq_tdata.next = bits::<DW>(0);
        self.m_rq_tkeep.next = bits::<KW>(0);
        self.m_rq_tlast.next = true;
        self.m_rq_tvalid.next = self.rq_valid.q.val();
        self.m_data_tdata.next = self.o_data.q.val();
        self.m_data_tkeep.next = self.o_keep.q.val();
        self.m_data_tlast.next = self.o_last.q.val();
        self.m_data_tuser.next = self.o_user.q.val();
        self.m_data_tvalid.next = self.o_valid.q.val();
        self.bad_cpl.next = self.n_bad.q.val();
        self.timeouts.next = self.n_timeouts.q.val();
        self.s_rc_tready.next = true;
        self.s_cmd_tready.next = !self.c_active.q.val();
        if self.rq_valid.q.val() & self.m_rq_tready.val() {
            self.rq_valid.d.next = false;
        }

        // ---- Issuer: one piece (one tag) per cycle. ----
        self.nfl.next = self.iss.q.val() - self.ret.q.val();
        self.i_tag.next = self.iss.q.val().get_bits::<TB>(0);
        self.i_off.next = bit_cast::<16, 64>(self.c_addr.q.val() & self.mrrs_m1_64.val());
        self.i_room.next = self.mrrs.val() - self.i_off.val();
        self.i_chunk.next = self.i_room.val();
        if self.c_rem.q.val() < self.i_room.val() {
            self.i_chunk.next = self.c_rem.q.val();
        }
        self.i_rem_after.next = self.c_rem.q.val() - self.i_chunk.val();
        self.rqh.addr.next = self.c_addr.q.val();
        self.rqh.bytes.next = self.i_chunk.val();
        self.rqh.write.next = false;
        self.rqh.tag.next = bit_cast::<8, TB>(self.i_tag.val());
        self.i_tmask.next = bits::<DMA_TAGS>(1) << self.i_tag.val();
        self.i_go.next = self.c_active.q.val()
            & (self.nfl.val() < self.ntags_max.val())
            & (!self.rq_valid.q.val() | self.m_rq_tready.val());
        self.i_done_set.next = bits::<DMA_TAGS>(0);
        self.i_err_set.next = bits::<DMA_TAGS>(0);
        // Tag count of a new command: the MRRS-aligned windows it touches, at least one.
        self.a_off.next = bit_cast::<16, 64>(self.s_cmd_addr.val() & self.mrrs_m1_64.val());
        self.a_sum.next =
            self.a_off.val() + bit_cast::<16, LEN_W>(self.s_cmd_len.val()) + self.mrrs_m1.val();
        self.a_nt.next = self.a_sum.val() >> self.mrrs_b.val();
        if self.a_nt.val() == bits::<16>(0) {
            self.a_nt.next = bits::<16>(1);
        }
        if !self.c_active.q.val() & self.s_cmd_tvalid.val() {
            self.c_active.d.next = true;
            self.c_first.d.next = true;
            self.c_addr.d.next = self.s_cmd_addr.val();
            self.c_rem.d.next = bit_cast::<16, LEN_W>(self.s_cmd_len.val());
            self.c_len.d.next = bit_cast::<16, LEN_W>(self.s_cmd_len.val());
            self.c_ntags.d.next = bit_cast::<8, 16>(self.a_nt.val());
            self.c_bad.d.next = false;
            if self.s_cmd_len.val() > self.max_len.val() {
                self.c_rem.d.next = bits::<16>(0);
                self.c_len.d.next = bits::<16>(0);
                self.c_ntags.d.next = bits::<8>(1);
                self.c_bad.d.next = true;
            }
        }
        if self.i_go.val() {
            for i in 0..DMA_TAGS {
                if self.i_tag.val() == self.tagc[i].val() {
                    self.t_end[i].d.next = self.i_off.val() + self.i_chunk.val();
                    if self.c_first.q.val() {
                        self.t_len[i].d.next = self.c_len.q.val();
                        self.t_start[i].d.next = self.i_off.val();
                        self.t_ntags[i].d.next = self.c_ntags.q.val();
                    }
                }
            }
            self.iss.d.next = self.iss.q.val() + bits::<5>(1);
            self.c_addr.d.next = self.c_addr.q.val() + bit_cast::<64, 16>(self.i_chunk.val());
            self.c_rem.d.next = self.i_rem_after.val();
            self.c_first.d.next = false;
            if self.i_rem_after.val() == bits::<16>(0) {
                self.c_active.d.next = false;
            }
            if self.i_chunk.val() == bits::<16>(0) {
                // A zero-length command holds a tag but reads nothing: done at once.
                self.i_done_set.next = self.i_tmask.val();
                if self.c_bad.q.val() {
                    self.i_err_set.next = self.i_tmask.val();
                }
            } else {
                self.rq_valid.d.next = true;
                self.rqh.load.next = true;
            }
        }

        // ---- Completions: place each beat by (tag, offset); checks on the first beat. ----
        self.h_fmt.next = self.s_rc_hdr.val().get_bits::<3>(self.cl_fmt.val().index());
        self.h_type.next = self
            .s_rc_hdr
            .val()
            .get_bits::<5>(self.cl_type.val().index());
        self.h_status.next = self
            .s_rc_hdr
            .val()
            .get_bits::<3>(self.cl_status.val().index());
        self.h_len.next = self
            .s_rc_hdr
            .val()
            .get_bits::<10>(self.cl_len.val().index());
        self.h_bc.next = self.s_rc_hdr.val().get_bits::<12>(self.cl_bc.val().index());
        self.h_la.next = self.s_rc_hdr.val().get_bits::<7>(self.cl_la.val().index());
        self.h_tag8.next = self.s_rc_hdr.val().get_bits::<8>(self.cl_tag.val().index());
        self.h_tag.next = self.h_tag8.val().get_bits::<TB>(0);
        self.h_rid.next = self
            .s_rc_hdr
            .val()
            .get_bits::<16>(self.cl_rid.val().index());
        self.h_ep.next = self.s_rc_hdr.val().get_bit(self.cl_ep.val().index());
        self.h_rel.next = self.h_tag.val() - self.ret.q.val().get_bits::<TB>(0);
        self.h_done_bit.next = (((self.done.q.val() | self.w_done.q.val()) >> self.h_tag.val())
            & bits::<DMA_TAGS>(1))
            != bits::<DMA_TAGS>(0);
        self.h_end.next = bits::<16>(0);
        for i in 0..DMA_TAGS {
            if self.h_tag.val() == self.tagc[i].val() {
                self.h_end.next = self.t_end[i].q.val();
            }
        }
        self.h_bc16.next = bit_cast::<16, 12>(self.h_bc.val());
        if self.h_bc.val() == bits::<12>(0) {
            self.h_bc16.next = bits::<16>(4096);
        }
        self.h_len16.next = bit_cast::<16, 10>(self.h_len.val());
        if self.h_len.val() == bits::<10>(0) {
            self.h_len16.next = bits::<16>(1024);
        }
        self.h_start.next = self.h_end.val() - self.h_bc16.val();
        self.h_pay.next =
            (self.h_len16.val() << 2) - (bit_cast::<16, 7>(self.h_la.val()) & bits::<16>(3));
        self.h_q.next = (bit_cast::<16, TB>(self.h_tag.val()) << self.swb.val())
            | (self.h_start.val() >> self.lw.val());
        self.h_is_cpl.next = (self.h_type.val() == self.type_cpl.val())
            & ((self.h_fmt.val() == self.fmt_cpl.val())
                | (self.h_fmt.val() == self.fmt_cpld.val()));
        self.h_tag_ok.next = ((self.h_tag8.val() >> 4) == bits::<8>(0))
            & (self.h_rid.val() == self.rid.val())
            & (bit_cast::<5, TB>(self.h_rel.val()) < self.nfl.val())
            & !self.h_done_bit.val();
        // Byte count within the piece, and the lower address where the offset puts it.
        self.h_fits.next = (self.h_bc16.val() <= self.h_end.val())
            & (bit_cast::<7, 16>(self.h_start.val() & bits::<16>(0x7F)) == self.h_la.val());
        self.k_tmask.next = bits::<DMA_TAGS>(1) << self.k_tag.q.val();
        self.k_q_tag.next = (self.k_q.q.val() & self.wmask.val()) >> self.swb.val();
        self.k_in_slot.next = self.k_q_tag.val() == bit_cast::<16, TB>(self.k_tag.q.val());
        self.w_we.d.next = false;
        self.w_done.d.next = bits::<DMA_TAGS>(0);
        self.w_err.d.next = bits::<DMA_TAGS>(0);
        self.w_data.d.next = self.s_rc_tdata.val();
        if self.s_rc_tvalid.val() & !self.k_active.q.val() {
            self.k_tag.d.next = self.h_tag.val();
            self.k_drop.d.next = true;
            self.k_active.d.next = !self.s_rc_tlast.val();
            if self.h_is_cpl.val() & self.h_tag_ok.val() {
                if (self.h_status.val() != bits::<3>(0)) | self.h_ep.val() {
                    // UR, CA or poisoned data ends the request with an error.
                    self.w_done.d.next = bits::<DMA_TAGS>(1) << self.h_tag.val();
                    self.w_err.d.next = bits::<DMA_TAGS>(1) << self.h_tag.val();
                } else if (self.h_fmt.val() == self.fmt_cpld.val()) & self.h_fits.val() {
                    self.k_drop.d.next = false;
                    self.k_final.d.next = self.h_bc16.val() <= self.h_pay.val();
                    self.k_q.d.next = self.h_q.val() + bits::<16>(1);
                    self.w_we.d.next = true;
                    self.w_bank.d.next = self.h_q.val().get_bit(0);
                    self.w_idx.d.next = self.h_q.val().get_bits::<BB>(1);
                    if self.s_rc_tlast.val() & (self.h_bc16.val() <= self.h_pay.val()) {
                        self.w_done.d.next = bits::<DMA_TAGS>(1) << self.h_tag.val();
                    }
                } else {
                    self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                }
            } else {
                self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
            }
        }
        if self.s_rc_tvalid.val() & self.k_active.q.val() {
            if self.s_rc_tlast.val() {
                self.k_active.d.next = false;
            }
            if !self.k_drop.q.val() {
                if self.k_in_slot.val() {
                    self.w_we.d.next = true;
                    self.w_bank.d.next = self.k_q.q.val().get_bit(0);
                    self.w_idx.d.next = self.k_q.q.val().get_bits::<BB>(1);
                    self.k_q.d.next = self.k_q.q.val() + bits::<16>(1);
                    if self.s_rc_tlast.val() & self.k_final.q.val() {
                        self.w_done.d.next = self.k_tmask.val();
                    }
                } else {
                    // Data past the tag's part of the buffer: the request ends in error.
                    self.k_drop.d.next = true;
                    self.n_bad.d.next = self.n_bad.q.val() + bits::<32>(1);
                    self.w_done.d.next = self.k_tmask.val();
                    self.w_err.d.next = self.k_tmask.val();
                }
            }
        }
        self.ram_e.write_address.next = self.w_idx.q.val();
        self.ram_o.write_address.next = self.w_idx.q.val();
        self.ram_e.write_data.next = self.w_data.q.val();
        self.ram_o.write_data.next = self.w_data.q.val();
        self.ram_e.write_enable.next = self.w_we.q.val() & !self.w_bank.q.val();
        self.ram_o.write_enable.next = self.w_we.q.val() & self.w_bank.q.val();

        // ---- Reader: commands in order, one beat per cycle. ----
        self.s_tag.next = self.ret.q.val().get_bits::<TB>(0);
        self.s_start.next = bits::<16>(0);
        self.s_len.next = bits::<16>(0);
        self.s_ntags.next = bits::<8>(0);
        for i in 0..DMA_TAGS {
            if self.s_tag.val() == self.tagc[i].val() {
                self.s_start.next = self.t_start[i].q.val();
                self.s_len.next = self.t_len[i].q.val();
                self.s_ntags.next = self.t_ntags[i].q.val();
            }
        }
        if !self.r_busy.q.val() & (self.ret.q.val() != self.iss.q.val()) {
            self.r_busy.d.next = true;
            self.r_p.d.next = (bit_cast::<16, TB>(self.s_tag.val()) << self.swb.val())
                | (self.s_start.val() >> self.lw.val());
            self.r_s.d.next = self.s_start.val() & self.lane_m1.val();
            self.r_rem.d.next = self.s_len.val();
            self.r_ntags.d.next = self.s_ntags.val();
            self.r_err.d.next = false;
            self.r_force.d.next = false;
            self.r_wait.d.next = bits::<TIMEOUT_W>(0);
        }
        self.b_take.next = self.r_rem.q.val();
        if self.r_rem.q.val() > self.kw.val() {
            self.b_take.next = self.kw.val();
        }
        self.b_need2.next = (self.r_s.q.val() + self.b_take.val()) > self.kw.val();
        self.b_p1.next = self.r_p.q.val() + bits::<16>(1);
        self.b_ta.next = (self.r_p.q.val() & self.wmask.val()) >> self.swb.val();
        self.b_tb.next = (self.b_p1.val() & self.wmask.val()) >> self.swb.val();
        self.b_da.next =
            ((self.done.q.val() >> self.b_ta.val()) & bits::<DMA_TAGS>(1)) != bits::<DMA_TAGS>(0);
        self.b_db.next =
            ((self.done.q.val() >> self.b_tb.val()) & bits::<DMA_TAGS>(1)) != bits::<DMA_TAGS>(0);
        self.b_ea.next =
            ((self.err.q.val() >> self.b_ta.val()) & bits::<DMA_TAGS>(1)) != bits::<DMA_TAGS>(0);
        self.b_eb.next =
            ((self.err.q.val() >> self.b_tb.val()) & bits::<DMA_TAGS>(1)) != bits::<DMA_TAGS>(0);
        self.b_ready.next =
            (self.b_da.val() & (!self.b_need2.val() | self.b_db.val())) | self.r_force.q.val();
        self.b_err.next = self.b_ea.val() | (self.b_need2.val() & self.b_eb.val());
        self.b_last.next = self.r_rem.q.val() <= self.kw.val();
        self.b_keep.next = self.full_keep.val();
        for i in 0..KW {
            if self.b_take.val() == self.takec[i].val() {
                self.b_keep.next = self.keepc[i].val();
            }
        }
        self.o_take.next = !self.o_valid.q.val() | self.m_data_tready.val();
        self.r_free.next = !self.rv.q.val() | self.o_take.val();
        self.b_go.next = self.r_busy.q.val() & self.r_free.val() & self.b_ready.val();
        // Bank addresses: word p and p+1, one even and one odd.
        self.ram_e.read_address.next = self.ra_e.q.val();
        self.ram_o.read_address.next = self.ra_o.q.val();
        if self.r_free.val() {
            self.rv.d.next = false;
        }
        if self.b_go.val() {
            self.ram_e.read_address.next = self.b_p1.val().get_bits::<BB>(1);
            self.ram_o.read_address.next = self.r_p.q.val().get_bits::<BB>(1);
            self.ra_e.d.next = self.b_p1.val().get_bits::<BB>(1);
            self.ra_o.d.next = self.r_p.q.val().get_bits::<BB>(1);
            self.rv.d.next = true;
            self.rs.d.next = self.r_s.q.val();
            self.r_odd.d.next = self.r_p.q.val().get_bit(0);
            self.r_keep.d.next = self.b_keep.val();
            self.r_last.d.next = self.b_last.val();
            self.r_user.d.next = self.b_last.val() & (self.r_err.q.val() | self.b_err.val());
            self.r_err.d.next = self.r_err.q.val() | self.b_err.val();
            self.r_p.d.next = self.b_p1.val();
            self.r_rem.d.next = self.r_rem.q.val() - self.b_take.val();
            if self.b_last.val() {
                self.r_busy.d.next = false;
                self.ret.d.next = self.ret.q.val() + bit_cast::<5, 8>(self.r_ntags.q.val());
            }
        }
        // Completion timeout: a command that waits too long completes with the error flag.
        if self.r_busy.q.val() & !self.b_ready.val() {
            self.r_wait.d.next = self.r_wait.q.val() + bits::<TIMEOUT_W>(1);
            if self.r_wait.q.val() == self.wait_max.val() {
                self.r_force.d.next = true;
                self.r_err.d.next = true;
                self.n_timeouts.d.next = self.n_timeouts.q.val() + bits::<32>(1);
            }
        } else {
            self.r_wait.d.next = bits::<TIMEOUT_W>(0);
        }
        // R stage -> output register, funnel-shifted by the command's start lane.
        // A stalled R stage keeps its words in registers: once a command's last beat is read
        // its tags go back, and a new read may land in those very buffer words.
        self.f_e.next = self.ram_e.read_data.val();
        self.f_o.next = self.ram_o.read_data.val();
        if self.r_hold.q.val() {
            self.f_e.next = self.h_e.q.val();
            self.f_o.next = self.h_o.q.val();
        }
        if self.rv.q.val() & !self.o_take.val() & !self.r_hold.q.val() {
            self.r_hold.d.next = true;
            self.h_e.d.next = self.ram_e.read_data.val();
            self.h_o.d.next = self.ram_o.read_data.val();
        }
        if self.r_free.val() {
            self.r_hold.d.next = false;
        }
        self.f_lo.next = self.f_e.val();
        self.f_hi.next = self.f_o.val();
        if self.r_odd.q.val() {
            self.f_lo.next = self.f_o.val();
            self.f_hi.next = self.f_e.val();
        }
        self.f_sh.next = self.rs.q.val() << 3;
        self.f_shi.next = self.dw.val() - self.f_sh.val();
        if self.o_take.val() {
            self.o_valid.d.next = self.rv.q.val();
            self.o_keep.d.next = self.r_keep.q.val();
            self.o_last.d.next = self.r_last.q.val();
            self.o_user.d.next = self.r_user.q.val();
            self.o_data.d.next = self.f_lo.val();
            if self.rs.q.val() != bits::<16>(0) {
                self.o_data.d.next =
                    (self.f_lo.val() >> self.f_sh.val()) | (self.f_hi.val() << self.f_shi.val());
            }
        }

        // Done and error bits: set by the write stage, cleared when a tag is issued.
        self.done.d.next =
            (self.done.q.val() & !self.i_tmask.val()) | self.w_done.q.val() | self.i_done_set.val();
        self.err.d.next =
            (self.err.q.val() & !self.i_tmask.val()) | self.w_err.q.val() | self.i_err_set.val();
        if !self.i_go.val() {
            self.done.d.next = self.done.q.val() | self.w_done.q.val();
            self.err.d.next = self.err.q.val() | self.w_err.q.val();
        }

        if self.rst.val() {
            self.c_active.d.next = false;
            self.iss.d.next = bits::<5>(0);
            self.ret.d.next = bits::<5>(0);
            self.rq_valid.d.next = false;
            self.done.d.next = bits::<DMA_TAGS>(0);
            self.err.d.next = bits::<DMA_TAGS>(0);
            self.k_active.d.next = false;
            self.w_we.d.next = false;
            self.w_done.d.next = bits::<DMA_TAGS>(0);
            self.w_err.d.next = bits::<DMA_TAGS>(0);
            self.n_bad.d.next = bits::<32>(0);
            self.r_busy.d.next = false;
            self.rv.d.next = false;
            self.r_hold.d.next = false;
            self.o_valid.d.next = false;
            self.n_timeouts.d.next = bits::<32>(0);
        }
    }
}
