//! `Icrc`: the RoCEv2 invariant CRC of every frame on an AXI-stream, observed as a tap, and the
//! check of the ICRC the frame carries.
//!
//! Ports:
//! - `s_axis_*`: the stream, Ethernet header first (no preamble; an FCS after the IP packet is
//!   ignored, as is Ethernet padding). `tvalid` and `tready` are both inputs: the block never
//!   stalls the stream. Keep rule as in [`crate::crc::Crc32`].
//! - `m_icrc_tdata`: the ICRC computed over the frame (the value `spec::icrc::icrc` returns;
//!   it travels least-significant byte first), `m_icrc_tvalid` a one-cycle pulse
//!   [`ICRC_LATENCY`] cycles after the frame's last beat, `m_icrc_tuser` the status bits of
//!   `spec::icrc::flags`: zero means a complete RoCEv2 frame whose carried ICRC is right.
//!   `tdata` means nothing when any bit other than `MISMATCH` is set. All three are registers.
//!
//! How (docs/ARCHITECTURE.md, "ICRC"; the pipelining follows docs/timing.md): three stages in
//! front of the CRC core, each a few LUT levels deep, then the core's two stages and an output
//! register.
//! - **A** (from the wire): a one-hot register says which header beat arrives. The layout case
//!   (802.1Q tag or not, IPv4 or IPv6) is decided from the EtherType bytes, which sit in the
//!   beat where coverage starts or earlier. Every field check is made at each case's fixed lane
//!   (IP version and IHL, protocol, UDP port, the IP length against its range), and the offset
//!   of the last covered byte, `ip + length - 4 - 1`, is added up per case, before the case is
//!   known.
//! - **B**: the case selects the beat's lane masks (covered lanes and bits forced to one, ROMs
//!   from `IcrcLayout::masked_bytes()`), the first covered beat and its start state
//!   `U_{ip lane}(SEED)`, the end offset and the checks that fire in this beat.
//! - **C**: the end offset (this beat's, or held from the beat that carried the length) gives
//!   the last covered beat, its lane mask and `last_zeros`, and the four bytes after it: the
//!   carried ICRC.
//!
//! The core sees `data & cov & end | forced`, one LUT per bit. Throughput one beat per clock,
//! back-to-back frames.
//!
//! Limits: IP lengths over `MAX_IP_LEN` (16 KiB) are `BAD_LENGTH`; the byte counter saturates at
//! 32 KiB, past which nothing of a RoCEv2 frame can lie.

use crate::crc::crc_core::{CrcCore, ZW};
use crate::crc::gf2;
use crate::prelude::*;
use crate::stream::{lane_masks, ones, zeros};
use crate::util::{bits_from_bools, bits_from_u64};
use ferroce_spec::headers::*;
use ferroce_spec::icrc::{flags, IcrcLayout, IpVersion, MAX_IP_LEN, SEED};

/// Cycles from a frame's last beat to its result on `m_icrc_*`: stages A, B and C, the core's
/// two, and the output register. Users that align other results with it take this constant.
pub const ICRC_LATENCY: usize = 6;

/// Width of the frame byte counter and of every offset.
const OW: usize = 16;
/// The byte counter stops here (a multiple of every lane count).
const BASE_SATURATE: u64 = 0x8000;
/// Width of the one-hot header-beat position (more than the header beats of any width).
const PW: usize = 16;

#[derive(LogicBlock)]
pub struct Icrc<const DW: usize, const KW: usize, const SW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<In, Bit>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub m_icrc_tdata: Signal<Out, Bits<32>>,
    pub m_icrc_tvalid: Signal<Out, Bit>,
    pub m_icrc_tuser: Signal<Out, Bits<8>>,
    core: CrcCore<DW>,
    // Where the next beat from the wire lies, and the case so far.
    base_in: DFF<Bits<OW>>,
    pos_in: DFF<Bits<PW>>,
    /// Inside a frame, past its first beat (else `pos_in` means nothing: beat 0). Zero at
    /// power-up, so the block needs no reset to start right.
    nz_in: DFF<Bit>,
    past_in: DFF<Bit>,
    vlan_a: DFF<Bit>,
    v6_a: DFF<Bit>,
    // Stage A: the beat, its position and case, and every check at every case's lane.
    a_valid: DFF<Bit>,
    a_data: DFF<Bits<DW>>,
    a_last: DFF<Bit>,
    a_base: DFF<Bits<OW>>,
    a_pos: DFF<Bits<PW>>,
    a_past: DFF<Bit>,
    a_cs: DFF<Bits<4>>,
    a_et_notip: DFF<Bit>,
    a_in_notip: DFF<Bit>,
    a_ver_ok: DFF<Bits<4>>,
    a_ihl_ok: DFF<Bits<4>>,
    a_proto_ok: DFF<Bits<4>>,
    a_dport_ok: DFF<Bits<4>>,
    a_len_ok: DFF<Bits<4>>,
    a_lo: [DFF<Bits<OW>>; 4],
    a_keep_bad: DFF<Bit>,
    a_nbytes: DFF<Bits<OW>>,
    // Stage B state and registers.
    flags_acc: DFF<Bits<8>>,
    in_frame_b: DFF<Bit>,
    b_valid: DFF<Bit>,
    b_data: DFF<Bits<DW>>,
    b_last: DFF<Bit>,
    b_base: DFF<Bits<OW>>,
    b_nbytes: DFF<Bits<OW>>,
    b_cov: DFF<Bits<DW>>,
    b_frc: DFF<Bits<DW>>,
    b_first: DFF<Bit>,
    b_first_state: DFF<Bits<32>>,
    b_past_ip: DFF<Bit>,
    b_len_here: DFF<Bit>,
    b_lo: DFF<Bits<OW>>,
    b_lo_ok: DFF<Bit>,
    b_rx_off: [DFF<Bits<OW>>; 4],
    b_flags: DFF<Bits<8>>,
    b_short: DFF<Bit>,
    // Stage C state and registers (the core's inputs).
    lo_reg: DFF<Bits<OW>>,
    known_reg: DFF<Bit>,
    rx_off_reg: [DFF<Bits<OW>>; 4],
    region_done: DFF<Bit>,
    in_frame_c: DFF<Bit>,
    rx: [DFF<Bits<8>>; 4],
    got: [DFF<Bit>; 4],
    c_beat: DFF<Bit>,
    c_data: DFF<Bits<DW>>,
    c_cov: DFF<Bits<DW>>,
    c_end: DFF<Bits<DW>>,
    c_frc: DFF<Bits<DW>>,
    c_first: DFF<Bit>,
    c_first_state: DFF<Bits<32>>,
    c_last: DFF<Bit>,
    c_zeros: DFF<Bits<ZW>>,
    c_valid: DFF<Bit>,
    c_flags: DFF<Bits<8>>,
    c_short: DFF<Bit>,
    // Beside the core: the frame's verdict and carried ICRC, then the output.
    d_valid: DFF<Bit>,
    d_flags: DFF<Bits<8>>,
    e_valid: DFF<Bit>,
    e_flags: DFF<Bits<8>>,
    rx_p1: [DFF<Bits<8>>; 4],
    rx_p2: [DFF<Bits<8>>; 4],
    o_valid: DFF<Bit>,
    o_flags: DFF<Bits<8>>,
    o_crc: DFF<Bits<32>>,
    // Combinational, stage A.
    beat_in: Signal<Local, Bit>,
    pos_now: Signal<Local, Bits<PW>>,
    raw_et: Signal<Local, Bits<16>>,
    raw_inner: Signal<Local, Bits<16>>,
    vlan_now: Signal<Local, Bit>,
    v6_now: Signal<Local, Bit>,
    cs_now: Signal<Local, Bits<4>>,
    ip_byte: [Signal<Local, Bits<8>>; 4],
    len_raw: [Signal<Local, Bits<16>>; 4],
    len_v: [Signal<Local, Bits<OW>>; 4],
    lo_v: [Signal<Local, Bits<OW>>; 4],
    ok_ver: Signal<Local, Bits<4>>,
    ok_ihl: Signal<Local, Bits<4>>,
    ok_proto: Signal<Local, Bits<4>>,
    ok_dport: Signal<Local, Bits<4>>,
    ok_len: Signal<Local, Bits<4>>,
    keep_p1: Signal<Local, Bits<KW>>,
    nbytes_in: Signal<Local, Bits<OW>>,
    // Combinational, stage B.
    flags_b: Signal<Local, Bits<8>>,
    lo_sel: Signal<Local, Bits<OW>>,
    end_b: Signal<Local, Bits<OW>>,
    hdr_end_sel: Signal<Local, Bits<OW>>,
    cov_b: Signal<Local, Bits<DW>>,
    frc_b: Signal<Local, Bits<DW>>,
    rx_off_b: [Signal<Local, Bits<OW>>; 4],
    // Combinational, stage C.
    known_now: Signal<Local, Bit>,
    lo_now: Signal<Local, Bits<OW>>,
    lo_hi: Signal<Local, Bits<OW>>,
    last_now: Signal<Local, Bit>,
    end_lane: Signal<Local, Bits<OW>>,
    zeros_now: Signal<Local, Bits<ZW>>,
    covering: Signal<Local, Bit>,
    end_now: Signal<Local, Bits<DW>>,
    rx_off_now: [Signal<Local, Bits<OW>>; 4],
    rx_hi: [Signal<Local, Bits<OW>>; 4],
    rx_lane: [Signal<Local, Bits<OW>>; 4],
    rx_sh: [Signal<Local, Bits<SW>>; 4],
    rx_hit: [Signal<Local, Bit>; 4],
    rx_now: [Signal<Local, Bits<8>>; 4],
    got_now: [Signal<Local, Bit>; 4],
    crc_out: Signal<Local, Bits<32>>,
    mismatch: Signal<Local, Bit>,
    // Constants: per layout case (index = vlan * 2 + ipv6, `IcrcLayout::ALL` order).
    case_oh: Vec<Constant<Bits<4>>>,
    /// One-hot header-beat masks of the beat holding: the IP header's first byte,
    ip_m: Vec<Constant<Bits<PW>>>,
    /// every header beat from there on,
    ge_ip_m: Vec<Constant<Bits<PW>>>,
    /// the IP length field, the protocol / next header byte, the UDP destination port.
    len_m: Vec<Constant<Bits<PW>>>,
    proto_m: Vec<Constant<Bits<PW>>>,
    dport_m: Vec<Constant<Bits<PW>>>,
    /// Bit shift of those fields in their beat.
    ip_sh: Vec<Constant<Bits<SW>>>,
    len_sh: Vec<Constant<Bits<SW>>>,
    proto_sh: Vec<Constant<Bits<SW>>>,
    dport_sh: Vec<Constant<Bits<SW>>>,
    /// IP version of the case.
    ver: Vec<Constant<Bits<8>>>,
    /// The case is IPv4 (its IHL is checked).
    is_v4: Vec<Constant<Bit>>,
    /// Accepted range of the IP length field (bias for IPv6 removed).
    len_min: Vec<Constant<Bits<OW>>>,
    len_max: Vec<Constant<Bits<OW>>>,
    /// Offset of the last covered byte minus the length field: ip + bias - ICRC_LEN - 1.
    last_k: Vec<Constant<Bits<OW>>>,
    /// End of the BTH: a frame shorter than this is truncated.
    hdr_end: Vec<Constant<Bits<OW>>>,
    /// CRC register at the first covered beat: undoes the zero lanes before the IP header.
    first_state: Vec<Constant<Bits<32>>>,
    /// Per header beat and case: lanes covered and bits forced to one.
    cov0: Vec<Constant<Bits<DW>>>,
    cov1: Vec<Constant<Bits<DW>>>,
    cov2: Vec<Constant<Bits<DW>>>,
    cov3: Vec<Constant<Bits<DW>>>,
    frc0: Vec<Constant<Bits<DW>>>,
    frc1: Vec<Constant<Bits<DW>>>,
    frc2: Vec<Constant<Bits<DW>>>,
    frc3: Vec<Constant<Bits<DW>>>,
    beat_m: Vec<Constant<Bits<PW>>>,
    last_hdr_m: Constant<Bits<PW>>,
    lane_mask: Vec<Constant<Bits<DW>>>,
    lane_id: Vec<Constant<Bits<OW>>>,
    lane_count: Vec<Constant<Bits<OW>>>,
    k_off: Vec<Constant<Bits<OW>>>,
    et_m: Constant<Bits<PW>>,
    et_sh: Constant<Bits<SW>>,
    inner_m: Constant<Bits<PW>>,
    inner_sh: Constant<Bits<SW>>,
    et_vlan: Constant<Bits<16>>,
    et_v4: Constant<Bits<16>>,
    et_v6: Constant<Bits<16>>,
    roce_port: Constant<Bits<16>>,
    udp: Constant<Bits<8>>,
    ihl5: Constant<Bits<8>>,
    nib: Constant<Bits<8>>,
    byte_mask: Constant<Bits<16>>,
    lane_lo: Constant<Bits<OW>>,
    lane_hi: Constant<Bits<OW>>,
    lane_lo8: Constant<Bits<ZW>>,
    lanes: Constant<Bits<OW>>,
    saturate: Constant<Bits<OW>>,
    zero_ow: Constant<Bits<OW>>,
    pos0: Constant<Bits<PW>>,
    zero_pw: Constant<Bits<PW>>,
    one_kw: Constant<Bits<KW>>,
    full_keep: Constant<Bits<KW>>,
    zero_kw: Constant<Bits<KW>>,
    all_dw: Constant<Bits<DW>>,
    zero_dw: Constant<Bits<DW>>,
    zero4: Constant<Bits<4>>,
    zero8: Constant<Bits<8>>,
    f_not_ip: Constant<Bits<8>>,
    f_ip_options: Constant<Bits<8>>,
    f_not_roce: Constant<Bits<8>>,
    f_bad_length: Constant<Bits<8>>,
    f_truncated: Constant<Bits<8>>,
    f_bad_keep: Constant<Bits<8>>,
    f_mismatch: Constant<Bits<8>>,
}

/// The 16-bit value a big-endian header field shows in `tdata` (lane order: first byte low).
fn wire16(v: u16) -> u64 {
    u64::from(v.swap_bytes())
}

impl<const DW: usize, const KW: usize, const SW: usize> Icrc<DW, KW, SW> {
    /// Bytes per beat.
    pub const LANES: usize = DW / 8;

    /// Header beats with case-dependent masks (later beats are fully covered, nothing forced).
    pub fn header_beats() -> usize {
        let end = IcrcLayout::ALL
            .iter()
            .map(|l| {
                l.masked_bytes()
                    .iter()
                    .map(|&(o, _)| o + 1)
                    .max()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        end.div_ceil(Self::LANES)
    }

    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        assert!(
            KW.is_power_of_two() && KW >= 8,
            "{KW} lanes: need a power of two >= 8"
        );
        let w = KW;
        assert_eq!(1 << SW, DW, "SW must be log2 of the data width");
        let nb = Self::header_beats();
        assert!(nb < PW, "{nb} header beats: widen PW");
        let c16 = |v: u64| Constant::new(bits_from_u64::<OW>(v));
        let csh = |v: u64| Constant::new(bits_from_u64::<SW>(v));
        let onehot = |b: usize| Constant::new(bits_from_u64::<PW>(1 << b));
        let sh_of = |o: usize| ((o % w) * 8) as u64;
        let dport = |l: &IcrcLayout| l.udp_offset() + UDP_DST_PORT_OFFSET;
        // Every decision byte must sit in one header beat, and the case must be decided in or
        // before the beat where coverage starts (the ROMs of earlier beats are the same for all
        // cases).
        for l in IcrcLayout::ALL {
            let et = l.ethertype_offset();
            assert_eq!(et / w, (et + 1) / w, "EtherType straddles a beat");
            assert_eq!(
                et / w,
                l.ip_offset() / w,
                "case decided after coverage starts"
            );
            for o in [l.ip_len_offset(), dport(&l)] {
                assert_eq!(o / w, (o + 1) / w, "16-bit field straddles a beat");
            }
            for o in [
                l.ip_len_offset() + 1,
                dport(&l) + 1,
                l.ip_proto_offset(),
                et,
            ] {
                assert!(o / w < nb, "field at {o} after the header beats");
            }
        }
        let mut cov: [Vec<Constant<Bits<DW>>>; 4] = Default::default();
        let mut frc: [Vec<Constant<Bits<DW>>>; 4] = Default::default();
        // One constant per layout case, in `IcrcLayout::ALL` order.
        let case16 = |f: &dyn Fn(&IcrcLayout) -> usize| -> Vec<Constant<Bits<OW>>> {
            IcrcLayout::ALL.iter().map(|l| c16(f(l) as u64)).collect()
        };
        let case_sh = |f: &dyn Fn(&IcrcLayout) -> usize| -> Vec<Constant<Bits<SW>>> {
            IcrcLayout::ALL.iter().map(|l| csh(sh_of(f(l)))).collect()
        };
        let case_m = |f: &dyn Fn(&IcrcLayout) -> usize| -> Vec<Constant<Bits<PW>>> {
            IcrcLayout::ALL.iter().map(|l| onehot(f(l) / w)).collect()
        };
        for (c, l) in IcrcLayout::ALL.iter().enumerate() {
            let ip = l.ip_offset();
            let masked = l.masked_bytes();
            for b in 0..nb {
                let mut cover = vec![false; DW];
                let mut force = vec![false; DW];
                for lane in 0..w {
                    let o = b * w + lane;
                    for k in 0..8 {
                        cover[lane * 8 + k] = o >= ip;
                    }
                    if let Some(&(_, m)) = masked.iter().find(|&&(mo, _)| mo == o) {
                        for k in 0..8 {
                            force[lane * 8 + k] = (m >> k) & 1 == 1;
                        }
                    }
                }
                cov[c].push(Constant::new(bits_from_bools::<DW>(&cover)));
                frc[c].push(Constant::new(bits_from_bools::<DW>(&force)));
            }
        }
        let c8 = |v: u8| Constant::new(bits_from_u64::<8>(u64::from(v)));
        let et = ETH_TYPE_OFFSET;
        let inner = VLAN_INNER_TYPE_OFFSET;
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            s_axis_tlast: Default::default(),
            m_icrc_tdata: Default::default(),
            m_icrc_tvalid: Default::default(),
            m_icrc_tuser: Default::default(),
            core: CrcCore::new(),
            base_in: Default::default(),
            pos_in: Default::default(),
            nz_in: Default::default(),
            past_in: Default::default(),
            vlan_a: Default::default(),
            v6_a: Default::default(),
            a_valid: Default::default(),
            a_data: Default::default(),
            a_last: Default::default(),
            a_base: Default::default(),
            a_pos: Default::default(),
            a_past: Default::default(),
            a_cs: Default::default(),
            a_et_notip: Default::default(),
            a_in_notip: Default::default(),
            a_ver_ok: Default::default(),
            a_ihl_ok: Default::default(),
            a_proto_ok: Default::default(),
            a_dport_ok: Default::default(),
            a_len_ok: Default::default(),
            a_lo: Default::default(),
            a_keep_bad: Default::default(),
            a_nbytes: Default::default(),
            flags_acc: Default::default(),
            in_frame_b: Default::default(),
            b_valid: Default::default(),
            b_data: Default::default(),
            b_last: Default::default(),
            b_base: Default::default(),
            b_nbytes: Default::default(),
            b_cov: Default::default(),
            b_frc: Default::default(),
            b_first: Default::default(),
            b_first_state: Default::default(),
            b_past_ip: Default::default(),
            b_len_here: Default::default(),
            b_lo: Default::default(),
            b_lo_ok: Default::default(),
            b_rx_off: Default::default(),
            b_flags: Default::default(),
            b_short: Default::default(),
            lo_reg: Default::default(),
            known_reg: Default::default(),
            rx_off_reg: Default::default(),
            region_done: Default::default(),
            in_frame_c: Default::default(),
            rx: Default::default(),
            got: Default::default(),
            c_beat: Default::default(),
            c_data: Default::default(),
            c_cov: Default::default(),
            c_end: Default::default(),
            c_frc: Default::default(),
            c_first: Default::default(),
            c_first_state: Default::default(),
            c_last: Default::default(),
            c_zeros: Default::default(),
            c_valid: Default::default(),
            c_flags: Default::default(),
            c_short: Default::default(),
            d_valid: Default::default(),
            d_flags: Default::default(),
            e_valid: Default::default(),
            e_flags: Default::default(),
            rx_p1: Default::default(),
            rx_p2: Default::default(),
            o_valid: Default::default(),
            o_flags: Default::default(),
            o_crc: Default::default(),
            beat_in: Default::default(),
            pos_now: Default::default(),
            raw_et: Default::default(),
            raw_inner: Default::default(),
            vlan_now: Default::default(),
            v6_now: Default::default(),
            cs_now: Default::default(),
            ip_byte: Default::default(),
            len_raw: Default::default(),
            len_v: Default::default(),
            lo_v: Default::default(),
            ok_ver: Default::default(),
            ok_ihl: Default::default(),
            ok_proto: Default::default(),
            ok_dport: Default::default(),
            ok_len: Default::default(),
            keep_p1: Default::default(),
            nbytes_in: Default::default(),
            flags_b: Default::default(),
            lo_sel: Default::default(),
            end_b: Default::default(),
            hdr_end_sel: Default::default(),
            cov_b: Default::default(),
            frc_b: Default::default(),
            rx_off_b: Default::default(),
            known_now: Default::default(),
            lo_now: Default::default(),
            lo_hi: Default::default(),
            last_now: Default::default(),
            end_lane: Default::default(),
            zeros_now: Default::default(),
            covering: Default::default(),
            end_now: Default::default(),
            rx_off_now: Default::default(),
            rx_hi: Default::default(),
            rx_lane: Default::default(),
            rx_sh: Default::default(),
            rx_hit: Default::default(),
            rx_now: Default::default(),
            got_now: Default::default(),
            crc_out: Default::default(),
            mismatch: Default::default(),
            case_oh: (0..4)
                .map(|c| Constant::new(bits_from_u64::<4>(1 << c)))
                .collect(),
            ip_m: case_m(&|l| l.ip_offset()),
            ge_ip_m: IcrcLayout::ALL
                .iter()
                .map(|l| {
                    let from = l.ip_offset() / w;
                    let bits = ((1u64 << nb) - 1) & !((1u64 << from) - 1);
                    Constant::new(bits_from_u64::<PW>(bits))
                })
                .collect(),
            len_m: case_m(&|l| l.ip_len_offset()),
            proto_m: case_m(&|l| l.ip_proto_offset()),
            dport_m: case_m(&dport),
            ip_sh: case_sh(&|l| l.ip_offset()),
            len_sh: case_sh(&|l| l.ip_len_offset()),
            proto_sh: case_sh(&|l| l.ip_proto_offset()),
            dport_sh: case_sh(&dport),
            ver: IcrcLayout::ALL
                .iter()
                .map(|l| c8(if l.ip == IpVersion::V6 { 6 } else { 4 }))
                .collect(),
            is_v4: IcrcLayout::ALL
                .iter()
                .map(|l| Constant::new(l.ip == IpVersion::V4))
                .collect(),
            len_min: case16(&|l| l.min_ip_len() - l.ip_len_bias()),
            len_max: case16(&|l| MAX_IP_LEN - l.ip_len_bias()),
            last_k: case16(&|l| l.ip_offset() + l.ip_len_bias() - ICRC_LEN - 1),
            hdr_end: case16(&|l| l.bth_offset() + BTH_LEN),
            first_state: IcrcLayout::ALL
                .iter()
                .map(|l| gf2::unshift(SEED, l.ip_offset() % w))
                .map(|fs| Constant::new(bits_from_u64::<32>(u64::from(fs))))
                .collect(),
            cov0: std::mem::take(&mut cov[0]),
            cov1: std::mem::take(&mut cov[1]),
            cov2: std::mem::take(&mut cov[2]),
            cov3: std::mem::take(&mut cov[3]),
            frc0: std::mem::take(&mut frc[0]),
            frc1: std::mem::take(&mut frc[1]),
            frc2: std::mem::take(&mut frc[2]),
            frc3: std::mem::take(&mut frc[3]),
            beat_m: (0..nb).map(onehot).collect(),
            last_hdr_m: onehot(nb - 1),
            lane_mask: lane_masks::<DW>(),
            lane_id: (0..w).map(|l| c16(l as u64)).collect(),
            lane_count: (0..w).map(|l| c16(l as u64 + 1)).collect(),
            k_off: (0..4).map(|k| c16(k as u64 + 1)).collect(),
            et_m: onehot(et / w),
            et_sh: csh(sh_of(et)),
            inner_m: onehot(inner / w),
            inner_sh: csh(sh_of(inner)),
            et_vlan: Constant::new(bits_from_u64::<16>(wire16(ETHERTYPE_VLAN))),
            et_v4: Constant::new(bits_from_u64::<16>(wire16(ETHERTYPE_IPV4))),
            et_v6: Constant::new(bits_from_u64::<16>(wire16(ETHERTYPE_IPV6))),
            roce_port: Constant::new(bits_from_u64::<16>(wire16(ROCEV2_UDP_PORT))),
            udp: c8(IP_PROTO_UDP),
            ihl5: c8(5),
            nib: c8(0x0F),
            byte_mask: Constant::new(bits_from_u64::<16>(0xFF)),
            lane_lo: c16((w - 1) as u64),
            lane_hi: c16(0xFFFF ^ (w as u64 - 1)),
            lane_lo8: Constant::new(bits_from_u64::<ZW>((w - 1) as u64)),
            lanes: c16(w as u64),
            saturate: c16(BASE_SATURATE),
            zero_ow: c16(0),
            pos0: onehot(0),
            zero_pw: Constant::new(bits_from_u64::<PW>(0)),
            one_kw: Constant::new(bits_from_u64::<KW>(1)),
            full_keep: ones(),
            zero_kw: zeros(),
            all_dw: ones(),
            zero_dw: zeros(),
            zero4: Constant::new(bits_from_u64::<4>(0)),
            zero8: c8(0),
            f_not_ip: c8(flags::NOT_IP),
            f_ip_options: c8(flags::IP_OPTIONS),
            f_not_roce: c8(flags::NOT_ROCE),
            f_bad_length: c8(flags::BAD_LENGTH),
            f_truncated: c8(flags::TRUNCATED),
            f_bad_keep: c8(flags::BAD_KEEP),
            f_mismatch: c8(flags::MISMATCH),
        }
    }
}

impl<const DW: usize, const KW: usize, const SW: usize> Default for Icrc<DW, KW, SW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize, const SW: usize> Logic for Icrc<DW, KW, SW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clk,
            base_in,
            pos_in,
            nz_in,
            past_in,
            vlan_a,
            v6_a,
            a_valid,
            a_data,
            a_last,
            a_base,
            a_pos,
            a_past,
            a_cs,
            a_et_notip,
            a_in_notip,
            a_ver_ok,
            a_ihl_ok,
            a_proto_ok,
            a_dport_ok,
            a_len_ok,
            a_keep_bad,
            a_nbytes,
            flags_acc,
            in_frame_b,
            b_valid,
            b_data,
            b_last,
            b_base,
            b_nbytes,
            b_cov,
            b_frc,
            b_first,
            b_first_state,
            b_past_ip,
            b_len_here,
            b_lo,
            b_lo_ok,
            b_flags,
            b_short,
            lo_reg,
            known_reg,
            region_done,
            in_frame_c,
            c_beat,
            c_data,
            c_cov,
            c_end,
            c_frc,
            c_first,
            c_first_state,
            c_last,
            c_zeros,
            c_valid,
            c_flags,
            c_short,
            d_valid,
            d_flags,
            e_valid,
            e_flags,
            o_valid,
            o_flags,
            o_crc
        );
        for k in 0..4 {
            self.a_lo[k].clock.next = self.clk.val();
            self.b_rx_off[k].clock.next = self.clk.val();
            self.rx_off_reg[k].clock.next = self.clk.val();
            self.rx[k].clock.next = self.clk.val();
            self.got[k].clock.next = self.clk.val();
            self.rx_p1[k].clock.next = self.clk.val();
            self.rx_p2[k].clock.next = self.clk.val();
            self.a_lo[k].d.next = self.a_lo[k].q.val();
            self.b_rx_off[k].d.next = self.b_rx_off[k].q.val();
            self.rx_off_reg[k].d.next = self.rx_off_reg[k].q.val();
            self.rx[k].d.next = self.rx[k].q.val();
            self.got[k].d.next = self.got[k].q.val();
        }
        self.core.clk.next = self.clk.val();
        self.core.rst.next = self.rst.val();

        // ---- Stage A: from the wire. ----
        self.beat_in.next = self.s_axis_tvalid.val() & self.s_axis_tready.val();
        self.pos_now.next = self.pos0.val();
        if self.nz_in.q.val() {
            self.pos_now.next = self.pos_in.q.val();
        }
        self.raw_et.next = self
            .s_axis_tdata
            .val()
            .get_bits::<16>(self.et_sh.val().index());
        self.raw_inner.next = self
            .s_axis_tdata
            .val()
            .get_bits::<16>(self.inner_sh.val().index());
        // Layout case: from this beat's EtherType bytes when they are in it, else the registers.
        self.vlan_now.next = self.vlan_a.q.val();
        if (self.pos_now.val() & self.et_m.val()) != self.zero_pw.val() {
            self.vlan_now.next = self.raw_et.val() == self.et_vlan.val();
        }
        self.v6_now.next = self.v6_a.q.val();
        if self.vlan_now.val() {
            if (self.pos_now.val() & self.inner_m.val()) != self.zero_pw.val() {
                self.v6_now.next = self.raw_inner.val() == self.et_v6.val();
            }
        } else if (self.pos_now.val() & self.et_m.val()) != self.zero_pw.val() {
            self.v6_now.next = self.raw_et.val() == self.et_v6.val();
        }
        self.cs_now.next = self.case_oh[0].val();
        if self.v6_now.val() {
            self.cs_now.next = self.case_oh[1].val();
        }
        if self.vlan_now.val() {
            self.cs_now.next = self.case_oh[2].val();
            if self.v6_now.val() {
                self.cs_now.next = self.case_oh[3].val();
            }
        }
        // Every case's fields at their lanes; stage B keeps the case's.
        self.ok_ver.next = self.zero4.val();
        self.ok_ihl.next = self.zero4.val();
        self.ok_proto.next = self.zero4.val();
        self.ok_dport.next = self.zero4.val();
        self.ok_len.next = self.zero4.val();
        for c in 0..4 {
            self.ip_byte[c].next = self
                .s_axis_tdata
                .val()
                .get_bits::<8>(self.ip_sh[c].val().index());
            self.len_raw[c].next = self
                .s_axis_tdata
                .val()
                .get_bits::<16>(self.len_sh[c].val().index());
            self.len_v[c].next = ((self.len_raw[c].val() & self.byte_mask.val()) << 8)
                | (self.len_raw[c].val() >> 8);
            self.lo_v[c].next = self.len_v[c].val() + self.last_k[c].val();
            self.a_lo[c].d.next = self.lo_v[c].val();
            if (self.ip_byte[c].val() >> 4) == self.ver[c].val() {
                self.ok_ver.next = self.ok_ver.val() | self.case_oh[c].val();
            }
            if (self.ip_byte[c].val() & self.nib.val()) == self.ihl5.val() {
                self.ok_ihl.next = self.ok_ihl.val() | self.case_oh[c].val();
            }
            if self
                .s_axis_tdata
                .val()
                .get_bits::<8>(self.proto_sh[c].val().index())
                == self.udp.val()
            {
                self.ok_proto.next = self.ok_proto.val() | self.case_oh[c].val();
            }
            if self
                .s_axis_tdata
                .val()
                .get_bits::<16>(self.dport_sh[c].val().index())
                == self.roce_port.val()
            {
                self.ok_dport.next = self.ok_dport.val() | self.case_oh[c].val();
            }
            if (self.len_v[c].val() >= self.len_min[c].val())
                & (self.len_v[c].val() <= self.len_max[c].val())
            {
                self.ok_len.next = self.ok_len.val() | self.case_oh[c].val();
            }
        }
        self.a_ver_ok.d.next = self.ok_ver.val();
        self.a_ihl_ok.d.next = self.ok_ihl.val();
        self.a_proto_ok.d.next = self.ok_proto.val();
        self.a_dport_ok.d.next = self.ok_dport.val();
        self.a_len_ok.d.next = self.ok_len.val();
        self.a_et_notip.d.next = (self.raw_et.val() != self.et_vlan.val())
            & (self.raw_et.val() != self.et_v4.val())
            & (self.raw_et.val() != self.et_v6.val());
        self.a_in_notip.d.next =
            (self.raw_inner.val() != self.et_v4.val()) & (self.raw_inner.val() != self.et_v6.val());
        // Keep: all ones before the last beat, contiguous from lane 0 on it.
        self.keep_p1.next = self.s_axis_tkeep.val() + self.one_kw.val();
        self.a_keep_bad.d.next = self.s_axis_tkeep.val() != self.full_keep.val();
        if self.s_axis_tlast.val() {
            self.a_keep_bad.d.next =
                (self.s_axis_tkeep.val() & self.keep_p1.val()) != self.zero_kw.val();
        }
        self.nbytes_in.next = self.zero_ow.val();
        for l in 0..KW {
            if self.s_axis_tkeep.val().get_bit(l) {
                self.nbytes_in.next = self.lane_count[l].val();
            }
        }
        self.a_nbytes.d.next = self.nbytes_in.val();
        self.a_valid.d.next = self.beat_in.val();
        self.a_data.d.next = self.s_axis_tdata.val();
        self.a_last.d.next = self.s_axis_tlast.val();
        self.a_base.d.next = self.base_in.q.val();
        self.a_pos.d.next = self.pos_now.val();
        self.a_past.d.next = self.past_in.q.val();
        self.a_cs.d.next = self.cs_now.val();
        if self.beat_in.val() {
            self.vlan_a.d.next = self.vlan_now.val();
            self.v6_a.d.next = self.v6_now.val();
            self.past_in.d.next = self.past_in.q.val()
                | ((self.pos_now.val() & self.last_hdr_m.val()) != self.zero_pw.val());
            self.pos_in.d.next = self.pos_now.val() << 1;
            self.nz_in.d.next = true;
            if self.base_in.q.val() != self.saturate.val() {
                self.base_in.d.next = self.base_in.q.val() + self.lanes.val();
            }
            if self.s_axis_tlast.val() {
                self.base_in.d.next = self.zero_ow.val();
                self.nz_in.d.next = false;
                self.past_in.d.next = false;
            }
        }

        // ---- Stage B: the case's masks, start, end offset and checks. ----
        self.cov_b.next = self.all_dw.val();
        self.frc_b.next = self.zero_dw.val();
        for b in 0..self.beat_m.len() {
            if (self.a_pos.q.val() & self.beat_m[b].val()) != self.zero_pw.val() {
                if self.a_cs.q.val().get_bit(0) {
                    self.cov_b.next = self.cov0[b].val();
                    self.frc_b.next = self.frc0[b].val();
                }
                if self.a_cs.q.val().get_bit(1) {
                    self.cov_b.next = self.cov1[b].val();
                    self.frc_b.next = self.frc1[b].val();
                }
                if self.a_cs.q.val().get_bit(2) {
                    self.cov_b.next = self.cov2[b].val();
                    self.frc_b.next = self.frc2[b].val();
                }
                if self.a_cs.q.val().get_bit(3) {
                    self.cov_b.next = self.cov3[b].val();
                    self.frc_b.next = self.frc3[b].val();
                }
            }
        }
        self.flags_b.next = self.zero8.val();
        if self.in_frame_b.q.val() {
            self.flags_b.next = self.flags_acc.q.val();
        }
        if ((self.a_pos.q.val() & self.et_m.val()) != self.zero_pw.val()) & self.a_et_notip.q.val()
        {
            self.flags_b.next = self.flags_b.val() | self.f_not_ip.val();
        }
        if ((self.a_pos.q.val() & self.inner_m.val()) != self.zero_pw.val())
            & (self.a_cs.q.val().get_bit(2) | self.a_cs.q.val().get_bit(3))
            & self.a_in_notip.q.val()
        {
            self.flags_b.next = self.flags_b.val() | self.f_not_ip.val();
        }
        if self.a_keep_bad.q.val() {
            self.flags_b.next = self.flags_b.val() | self.f_bad_keep.val();
        }
        self.b_first.d.next = false;
        self.b_past_ip.d.next = self.a_past.q.val();
        self.b_len_here.d.next = false;
        self.b_lo_ok.d.next = false;
        self.lo_sel.next = self.a_lo[0].q.val();
        self.hdr_end_sel.next = self.hdr_end[0].val();
        self.b_first_state.d.next = self.first_state[0].val();
        for c in 0..4 {
            if self.a_cs.q.val().get_bit(c) {
                self.lo_sel.next = self.a_lo[c].q.val();
                self.hdr_end_sel.next = self.hdr_end[c].val();
                self.b_first_state.d.next = self.first_state[c].val();
                if (self.a_pos.q.val() & self.ge_ip_m[c].val()) != self.zero_pw.val() {
                    self.b_past_ip.d.next = true;
                }
                if (self.a_pos.q.val() & self.ip_m[c].val()) != self.zero_pw.val() {
                    self.b_first.d.next = true;
                    if !self.a_ver_ok.q.val().get_bit(c) {
                        self.flags_b.next = self.flags_b.val() | self.f_not_ip.val();
                    } else if self.is_v4[c].val() & !self.a_ihl_ok.q.val().get_bit(c) {
                        self.flags_b.next = self.flags_b.val() | self.f_ip_options.val();
                    }
                }
                if ((self.a_pos.q.val() & self.proto_m[c].val()) != self.zero_pw.val())
                    & !self.a_proto_ok.q.val().get_bit(c)
                {
                    self.flags_b.next = self.flags_b.val() | self.f_not_roce.val();
                }
                if ((self.a_pos.q.val() & self.dport_m[c].val()) != self.zero_pw.val())
                    & !self.a_dport_ok.q.val().get_bit(c)
                {
                    self.flags_b.next = self.flags_b.val() | self.f_not_roce.val();
                }
                if (self.a_pos.q.val() & self.len_m[c].val()) != self.zero_pw.val() {
                    self.b_len_here.d.next = true;
                    self.b_lo_ok.d.next = self.a_len_ok.q.val().get_bit(c);
                    if !self.a_len_ok.q.val().get_bit(c) {
                        self.flags_b.next = self.flags_b.val() | self.f_bad_length.val();
                    }
                }
            }
        }
        for k in 0..4 {
            self.rx_off_b[k].next = self.lo_sel.val() + self.k_off[k].val();
            self.b_rx_off[k].d.next = self.rx_off_b[k].val();
        }
        self.end_b.next = self.a_base.q.val() + self.a_nbytes.q.val();
        self.b_short.d.next = self.a_last.q.val() & (self.end_b.val() < self.hdr_end_sel.val());
        self.b_valid.d.next = self.a_valid.q.val();
        self.b_data.d.next = self.a_data.q.val();
        self.b_last.d.next = self.a_last.q.val();
        self.b_base.d.next = self.a_base.q.val();
        self.b_nbytes.d.next = self.a_nbytes.q.val();
        self.b_cov.d.next = self.cov_b.val();
        self.b_frc.d.next = self.frc_b.val();
        self.b_lo.d.next = self.lo_sel.val();
        self.b_flags.d.next = self.flags_b.val();
        if self.a_valid.q.val() {
            self.flags_acc.d.next = self.flags_b.val();
            self.in_frame_b.d.next = !self.a_last.q.val();
        }

        // ---- Stage C: the end of coverage and the carried ICRC. ----
        self.known_now.next = self.known_reg.q.val();
        self.lo_now.next = self.lo_reg.q.val();
        if self.b_len_here.q.val() {
            self.known_now.next = self.b_lo_ok.q.val();
            self.lo_now.next = self.b_lo.q.val();
        }
        self.lo_hi.next = self.lo_now.val() & self.lane_hi.val();
        self.last_now.next = self.known_now.val() & (self.lo_hi.val() == self.b_base.q.val());
        self.end_lane.next = self.lo_now.val() & self.lane_lo.val();
        self.zeros_now.next = self.lane_lo8.val() - self.end_lane.val().get_bits::<ZW>(0);
        self.covering.next =
            self.b_valid.q.val() & !self.region_done.q.val() & self.b_past_ip.q.val();
        self.end_now.next = self.all_dw.val();
        if self.last_now.val() {
            self.end_now.next = self.lane_mask[0].val();
            for l in 1..KW {
                if self.lane_id[l].val() <= self.end_lane.val() {
                    self.end_now.next = self.end_now.val() | self.lane_mask[l].val();
                }
            }
        }
        for k in 0..4 {
            self.rx_off_now[k].next = self.rx_off_reg[k].q.val();
            if self.b_len_here.q.val() {
                self.rx_off_now[k].next = self.b_rx_off[k].q.val();
            }
            self.rx_hi[k].next = self.rx_off_now[k].val() & self.lane_hi.val();
            self.rx_lane[k].next = self.rx_off_now[k].val() & self.lane_lo.val();
            self.rx_sh[k].next = self.rx_lane[k].val().get_bits::<SW>(0) << 3;
            self.rx_hit[k].next = self.b_valid.q.val()
                & self.known_now.val()
                & (self.rx_hi[k].val() == self.b_base.q.val())
                & (self.rx_lane[k].val() < self.b_nbytes.q.val());
            self.rx_now[k].next = self.rx[k].q.val();
            if self.rx_hit[k].val() {
                self.rx_now[k].next = self
                    .b_data
                    .q
                    .val()
                    .get_bits::<8>(self.rx_sh[k].val().index());
            }
            self.got_now[k].next =
                self.rx_hit[k].val() | (self.got[k].q.val() & self.in_frame_c.q.val());
            self.rx_p1[k].d.next = self.rx[k].q.val();
            self.rx_p2[k].d.next = self.rx_p1[k].q.val();
        }
        if self.b_valid.q.val() {
            self.lo_reg.d.next = self.lo_now.val();
            self.known_reg.d.next = self.known_now.val() & !self.b_last.q.val();
            self.region_done.d.next =
                self.region_done.q.val() | (self.covering.val() & self.last_now.val());
            self.in_frame_c.d.next = !self.b_last.q.val();
            for k in 0..4 {
                self.rx_off_reg[k].d.next = self.rx_off_now[k].val();
                self.rx[k].d.next = self.rx_now[k].val();
                self.got[k].d.next = self.got_now[k].val();
            }
            if self.b_last.q.val() {
                self.region_done.d.next = false;
            }
        }
        self.c_beat.d.next = self.covering.val();
        self.c_data.d.next = self.b_data.q.val();
        self.c_cov.d.next = self.b_cov.q.val();
        self.c_end.d.next = self.end_now.val();
        self.c_frc.d.next = self.b_frc.q.val();
        self.c_first.d.next = self.b_first.q.val();
        self.c_first_state.d.next = self.b_first_state.q.val();
        self.c_last.d.next = self.last_now.val();
        self.c_zeros.d.next = self.zeros_now.val();
        self.c_valid.d.next = self.b_valid.q.val() & self.b_last.q.val();
        self.c_flags.d.next = self.b_flags.q.val();
        self.c_short.d.next = self.b_short.q.val();

        // ---- The core: one LUT per data bit in front of its XOR matrix. ----
        self.core.beat.next = self.c_beat.q.val();
        self.core.data.next =
            (self.c_data.q.val() & self.c_cov.q.val() & self.c_end.q.val()) | self.c_frc.q.val();
        self.core.first.next = self.c_first.q.val();
        self.core.first_state.next = self.c_first_state.q.val();
        self.core.last.next = self.c_last.q.val();
        self.core.last_zeros.next = self.c_zeros.q.val();

        // ---- Beside the core: truncation once the frame's bytes are all seen, then output. ----
        // The C registers hold a frame's last beat while `got` holds what its beats carried.
        self.d_valid.d.next = self.c_valid.q.val();
        self.d_flags.d.next = self.c_flags.q.val();
        if self.c_short.q.val()
            | !(self.got[0].q.val()
                & self.got[1].q.val()
                & self.got[2].q.val()
                & self.got[3].q.val())
        {
            self.d_flags.d.next = self.c_flags.q.val() | self.f_truncated.val();
        }
        self.e_valid.d.next = self.d_valid.q.val();
        self.e_flags.d.next = self.d_flags.q.val();
        // The core's result this cycle, or the last one held (a frame whose coverage never
        // ended has other flags set, and its tdata means nothing).
        self.crc_out.next = self.o_crc.q.val();
        if self.core.crc_valid.val() {
            self.crc_out.next = self.core.crc.val();
        }
        self.mismatch.next = (self.crc_out.val().get_bits::<8>(0) != self.rx_p2[0].q.val())
            | (self.crc_out.val().get_bits::<8>(8) != self.rx_p2[1].q.val())
            | (self.crc_out.val().get_bits::<8>(16) != self.rx_p2[2].q.val())
            | (self.crc_out.val().get_bits::<8>(24) != self.rx_p2[3].q.val());
        self.o_valid.d.next = self.e_valid.q.val();
        self.o_flags.d.next = self.e_flags.q.val();
        if self.mismatch.val() {
            self.o_flags.d.next = self.e_flags.q.val() | self.f_mismatch.val();
        }
        self.o_crc.d.next = self.crc_out.val();
        if self.rst.val() {
            self.base_in.d.next = self.zero_ow.val();
            self.nz_in.d.next = false;
            self.past_in.d.next = false;
            self.a_valid.d.next = false;
            self.in_frame_b.d.next = false;
            self.b_valid.d.next = false;
            self.known_reg.d.next = false;
            self.region_done.d.next = false;
            self.in_frame_c.d.next = false;
            self.c_beat.d.next = false;
            self.c_valid.d.next = false;
            self.d_valid.d.next = false;
            self.e_valid.d.next = false;
            self.o_valid.d.next = false;
        }
        self.m_icrc_tdata.next = self.o_crc.q.val();
        self.m_icrc_tvalid.next = self.o_valid.q.val();
        self.m_icrc_tuser.next = self.o_flags.q.val();
    }
}
