//! `Icrc`: the RoCEv2 invariant CRC of every frame on an AXI-stream, observed as a tap, and the
//! check of the ICRC the frame carries.
//!
//! Ports:
//! - `s_axis_*`: the stream, Ethernet header first (no preamble; an FCS after the IP packet is
//!   ignored, as is Ethernet padding). `tvalid` and `tready` are both inputs: the block never
//!   stalls the stream. Keep rule as in [`crate::crc::Crc32`].
//! - `m_icrc_tdata`: the ICRC computed over the frame (the value `spec::icrc::icrc` returns;
//!   it travels least-significant byte first), `m_icrc_tvalid` a one-cycle pulse 2 cycles after
//!   the frame's last beat, `m_icrc_tuser` the status bits of `spec::icrc::flags`: zero means a
//!   complete RoCEv2 frame whose carried ICRC is right. `tdata` means nothing when any bit other
//!   than `MISMATCH` is set.
//!
//! How (docs/ARCHITECTURE.md, "ICRC"): a byte counter `base` gives each beat's offset in the
//! frame. The layout case (802.1Q tag or not, IPv4 or IPv6) is decided from the EtherType bytes,
//! which sit in the beat where coverage starts or earlier, so it is known combinationally for
//! every beat that needs it. Per case and per header beat, elaboration-time ROMs from
//! `IcrcLayout::masked_bytes()` give the lanes covered and the bits forced to one. Coverage
//! starts at the IP header with the CRC core's `first_state = U_{ip lane}(SEED)`, and ends at
//! `ip + length - 4` (the IP length field, read from its beat or a register), with a
//! thermometer lane mask and `last_zeros`. The four bytes after it are the carried ICRC.
//! Throughput one beat per clock, back-to-back frames.
//!
//! Limits: IP lengths over `MAX_IP_LEN` (16 KiB) are `BAD_LENGTH`; the byte counter saturates at
//! 32 KiB, past which nothing of a RoCEv2 frame can lie.

use crate::crc::crc_core::{CrcCore, ZW};
use crate::crc::gf2;
use crate::prelude::*;
use crate::stream::{lane_masks, ones, zeros};
use crate::util::{bits_from_bools, bits_from_u64};
use ferroce_spec::headers::*;
use ferroce_spec::icrc::{flags, IcrcLayout, MAX_IP_LEN, SEED};

/// Width of the frame byte counter and of every offset.
const OW: usize = 16;
/// The byte counter stops here (a multiple of every lane count).
const BASE_SATURATE: u64 = 0x8000;

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
    // State.
    base: DFF<Bits<OW>>,
    in_frame: DFF<Bit>,
    vlan_reg: DFF<Bit>,
    v6_reg: DFF<Bit>,
    len_reg: DFF<Bits<OW>>,
    region_done: DFF<Bit>,
    flags_acc: DFF<Bits<8>>,
    rx: [DFF<Bits<8>>; 4],
    got: [DFF<Bit>; 4],
    // Output pipeline, beside the core's two stages.
    valid_p: [DFF<Bit>; 2],
    flags_p: [DFF<Bits<8>>; 2],
    rx_p1: [DFF<Bits<8>>; 4],
    rx_p2: [DFF<Bits<8>>; 4],
    hold: DFF<Bits<32>>,
    // Combinational.
    beat: Signal<Local, Bit>,
    outer_et: Signal<Local, Bits<16>>,
    inner_et: Signal<Local, Bits<16>>,
    vlan_now: Signal<Local, Bit>,
    v6_now: Signal<Local, Bit>,
    layout: Signal<Local, Bits<2>>,
    s_ip_base: Signal<Local, Bits<OW>>,
    s_ip_sh: Signal<Local, Bits<SW>>,
    s_len_base: Signal<Local, Bits<OW>>,
    s_len_sh: Signal<Local, Bits<SW>>,
    s_proto_base: Signal<Local, Bits<OW>>,
    s_proto_sh: Signal<Local, Bits<SW>>,
    s_dport_base: Signal<Local, Bits<OW>>,
    s_dport_sh: Signal<Local, Bits<SW>>,
    s_len_min: Signal<Local, Bits<OW>>,
    s_len_max: Signal<Local, Bits<OW>>,
    s_last_k: Signal<Local, Bits<OW>>,
    s_hdr_end: Signal<Local, Bits<OW>>,
    s_first_state: Signal<Local, Bits<32>>,
    ip_byte: Signal<Local, Bits<8>>,
    len_raw: Signal<Local, Bits<16>>,
    len_now: Signal<Local, Bits<OW>>,
    len_ok: Signal<Local, Bit>,
    len_known: Signal<Local, Bit>,
    last_off: Signal<Local, Bits<OW>>,
    end_lane: Signal<Local, Bits<OW>>,
    zeros: Signal<Local, Bits<ZW>>,
    lane_lo8: Constant<Bits<ZW>>,
    last_now: Signal<Local, Bit>,
    covering: Signal<Local, Bit>,
    cov_mask: Signal<Local, Bits<DW>>,
    frc_mask: Signal<Local, Bits<DW>>,
    end_mask: Signal<Local, Bits<DW>>,
    rx_off: [Signal<Local, Bits<OW>>; 4],
    rx_lane: [Signal<Local, Bits<OW>>; 4],
    rx_sh: [Signal<Local, Bits<SW>>; 4],
    rx_hit: [Signal<Local, Bit>; 4],
    rx_now: [Signal<Local, Bits<8>>; 4],
    got_now: [Signal<Local, Bit>; 4],
    keep_p1: Signal<Local, Bits<KW>>,
    nbytes: Signal<Local, Bits<OW>>,
    flags_now: Signal<Local, Bits<8>>,
    crc_out: Signal<Local, Bits<32>>,
    // Constants.
    // Per-case constants, one entry per `IcrcLayout::ALL` (index = vlan * 2 + ipv6).
    case_id: Vec<Constant<Bits<2>>>,
    /// Beat base (offset of lane 0) and bit shift of: the IP header's first byte,
    ip_base: Vec<Constant<Bits<OW>>>,
    ip_sh: Vec<Constant<Bits<SW>>>,
    /// the IP length field,
    len_base: Vec<Constant<Bits<OW>>>,
    len_sh: Vec<Constant<Bits<SW>>>,
    /// the IP protocol / next header byte,
    proto_base: Vec<Constant<Bits<OW>>>,
    proto_sh: Vec<Constant<Bits<SW>>>,
    /// the UDP destination port.
    dport_base: Vec<Constant<Bits<OW>>>,
    dport_sh: Vec<Constant<Bits<SW>>>,
    /// Accepted range of the IP length field (bias for IPv6 removed).
    len_min: Vec<Constant<Bits<OW>>>,
    len_max: Vec<Constant<Bits<OW>>>,
    /// Offset of the last covered byte minus the length field: ip + bias - ICRC_LEN - 1.
    last_k: Vec<Constant<Bits<OW>>>,
    /// End of the BTH: a frame shorter than this is truncated.
    hdr_end: Vec<Constant<Bits<OW>>>,
    /// CRC register at the first covered beat: undoes the zero lanes before the IP header.
    first_state: Vec<Constant<Bits<32>>>,
    beat_base: Vec<Constant<Bits<OW>>>,
    cov0: Vec<Constant<Bits<DW>>>,
    cov1: Vec<Constant<Bits<DW>>>,
    cov2: Vec<Constant<Bits<DW>>>,
    cov3: Vec<Constant<Bits<DW>>>,
    frc0: Vec<Constant<Bits<DW>>>,
    frc1: Vec<Constant<Bits<DW>>>,
    frc2: Vec<Constant<Bits<DW>>>,
    frc3: Vec<Constant<Bits<DW>>>,
    lane_mask: Vec<Constant<Bits<DW>>>,
    lane_id: Vec<Constant<Bits<OW>>>,
    lane_count: Vec<Constant<Bits<OW>>>,
    k_off: Vec<Constant<Bits<OW>>>,
    et_base: Constant<Bits<OW>>,
    et_sh: Constant<Bits<SW>>,
    inner_base: Constant<Bits<OW>>,
    inner_sh: Constant<Bits<SW>>,
    et_vlan: Constant<Bits<16>>,
    et_v4: Constant<Bits<16>>,
    et_v6: Constant<Bits<16>>,
    roce_port: Constant<Bits<16>>,
    udp: Constant<Bits<8>>,
    ver4: Constant<Bits<8>>,
    ver6: Constant<Bits<8>>,
    ihl5: Constant<Bits<8>>,
    nib: Constant<Bits<8>>,
    byte_mask: Constant<Bits<16>>,
    lane_lo: Constant<Bits<OW>>,
    lane_hi: Constant<Bits<OW>>,
    lanes: Constant<Bits<OW>>,
    saturate: Constant<Bits<OW>>,
    zero_ow: Constant<Bits<OW>>,
    one_kw: Constant<Bits<KW>>,
    full_keep: Constant<Bits<KW>>,
    zero_kw: Constant<Bits<KW>>,
    all_dw: Constant<Bits<DW>>,
    zero_dw: Constant<Bits<DW>>,
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
        let c16 = |v: u64| Constant::new(bits_from_u64::<OW>(v));
        let csh = |v: u64| Constant::new(bits_from_u64::<SW>(v));
        let base_of = |o: usize| o / w * w;
        let sh_of = |o: usize| ((o % w) * 8) as u64;
        // Every decision byte must sit in one beat, and the case must be decided in or before the
        // beat where coverage starts (the ROMs of earlier beats are the same for all cases).
        for l in IcrcLayout::ALL {
            let et = l.ethertype_offset();
            assert_eq!(et / w, (et + 1) / w, "EtherType straddles a beat");
            assert_eq!(
                et / w,
                l.ip_offset() / w,
                "case decided after coverage starts"
            );
            for o in [l.ip_len_offset(), l.udp_offset() + UDP_DST_PORT_OFFSET] {
                assert_eq!(o / w, (o + 1) / w, "16-bit field straddles a beat");
            }
        }
        let nb = Self::header_beats();
        let mut cov: [Vec<Constant<Bits<DW>>>; 4] = Default::default();
        let mut frc: [Vec<Constant<Bits<DW>>>; 4] = Default::default();
        // One constant per layout case, in `IcrcLayout::ALL` order.
        let case16 = |f: &dyn Fn(&IcrcLayout) -> usize| -> Vec<Constant<Bits<OW>>> {
            IcrcLayout::ALL.iter().map(|l| c16(f(l) as u64)).collect()
        };
        let case_sh = |f: &dyn Fn(&IcrcLayout) -> usize| -> Vec<Constant<Bits<SW>>> {
            IcrcLayout::ALL.iter().map(|l| csh(sh_of(f(l)))).collect()
        };
        let dport = |l: &IcrcLayout| l.udp_offset() + UDP_DST_PORT_OFFSET;
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
            base: Default::default(),
            in_frame: Default::default(),
            vlan_reg: Default::default(),
            v6_reg: Default::default(),
            len_reg: Default::default(),
            region_done: Default::default(),
            flags_acc: Default::default(),
            rx: Default::default(),
            got: Default::default(),
            valid_p: Default::default(),
            flags_p: Default::default(),
            rx_p1: Default::default(),
            rx_p2: Default::default(),
            hold: Default::default(),
            beat: Default::default(),
            outer_et: Default::default(),
            inner_et: Default::default(),
            vlan_now: Default::default(),
            v6_now: Default::default(),
            layout: Default::default(),
            s_ip_base: Default::default(),
            s_ip_sh: Default::default(),
            s_len_base: Default::default(),
            s_len_sh: Default::default(),
            s_proto_base: Default::default(),
            s_proto_sh: Default::default(),
            s_dport_base: Default::default(),
            s_dport_sh: Default::default(),
            s_len_min: Default::default(),
            s_len_max: Default::default(),
            s_last_k: Default::default(),
            s_hdr_end: Default::default(),
            s_first_state: Default::default(),
            ip_byte: Default::default(),
            len_raw: Default::default(),
            len_now: Default::default(),
            len_ok: Default::default(),
            len_known: Default::default(),
            last_off: Default::default(),
            end_lane: Default::default(),
            zeros: Default::default(),
            lane_lo8: Constant::new(bits_from_u64::<ZW>((w - 1) as u64)),
            last_now: Default::default(),
            covering: Default::default(),
            cov_mask: Default::default(),
            frc_mask: Default::default(),
            end_mask: Default::default(),
            rx_off: Default::default(),
            rx_lane: Default::default(),
            rx_sh: Default::default(),
            rx_hit: Default::default(),
            rx_now: Default::default(),
            got_now: Default::default(),
            keep_p1: Default::default(),
            nbytes: Default::default(),
            flags_now: Default::default(),
            crc_out: Default::default(),
            case_id: (0..4)
                .map(|c| Constant::new(bits_from_u64::<2>(c)))
                .collect(),
            ip_base: case16(&|l| base_of(l.ip_offset())),
            ip_sh: case_sh(&|l| l.ip_offset()),
            len_base: case16(&|l| base_of(l.ip_len_offset())),
            len_sh: case_sh(&|l| l.ip_len_offset()),
            proto_base: case16(&|l| base_of(l.ip_proto_offset())),
            proto_sh: case_sh(&|l| l.ip_proto_offset()),
            dport_base: case16(&|l| base_of(dport(l))),
            dport_sh: case_sh(&dport),
            len_min: case16(&|l| l.min_ip_len() - l.ip_len_bias()),
            len_max: case16(&|l| MAX_IP_LEN - l.ip_len_bias()),
            last_k: case16(&|l| l.ip_offset() + l.ip_len_bias() - ICRC_LEN - 1),
            hdr_end: case16(&|l| l.bth_offset() + BTH_LEN),
            first_state: IcrcLayout::ALL
                .iter()
                .map(|l| gf2::unshift(SEED, l.ip_offset() % w))
                .map(|fs| Constant::new(bits_from_u64::<32>(u64::from(fs))))
                .collect(),
            beat_base: (0..nb).map(|b| c16((b * w) as u64)).collect(),
            cov0: std::mem::take(&mut cov[0]),
            cov1: std::mem::take(&mut cov[1]),
            cov2: std::mem::take(&mut cov[2]),
            cov3: std::mem::take(&mut cov[3]),
            frc0: std::mem::take(&mut frc[0]),
            frc1: std::mem::take(&mut frc[1]),
            frc2: std::mem::take(&mut frc[2]),
            frc3: std::mem::take(&mut frc[3]),
            lane_mask: lane_masks::<DW>(),
            lane_id: (1..w).map(|l| c16(l as u64)).collect(),
            lane_count: (0..w).map(|l| c16(l as u64 + 1)).collect(),
            k_off: (0..4).map(|k| c16(k as u64 + 1)).collect(),
            et_base: c16(base_of(et) as u64),
            et_sh: csh(sh_of(et)),
            inner_base: c16(base_of(inner) as u64),
            inner_sh: csh(sh_of(inner)),
            et_vlan: Constant::new(bits_from_u64::<16>(wire16(ETHERTYPE_VLAN))),
            et_v4: Constant::new(bits_from_u64::<16>(wire16(ETHERTYPE_IPV4))),
            et_v6: Constant::new(bits_from_u64::<16>(wire16(ETHERTYPE_IPV6))),
            roce_port: Constant::new(bits_from_u64::<16>(wire16(ROCEV2_UDP_PORT))),
            udp: c8(IP_PROTO_UDP),
            ver4: c8(4),
            ver6: c8(6),
            ihl5: c8(5),
            nib: c8(0x0F),
            byte_mask: Constant::new(bits_from_u64::<16>(0xFF)),
            lane_lo: c16((w - 1) as u64),
            lane_hi: c16(0xFFFF ^ (w as u64 - 1)),
            lanes: c16(w as u64),
            saturate: c16(BASE_SATURATE),
            zero_ow: c16(0),
            one_kw: Constant::new(bits_from_u64::<KW>(1)),
            full_keep: ones(),
            zero_kw: zeros(),
            all_dw: ones(),
            zero_dw: zeros(),
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
            base,
            in_frame,
            vlan_reg,
            v6_reg,
            len_reg,
            region_done,
            flags_acc,
            hold
        );
        for k in 0..4 {
            self.rx[k].d.next = self.rx[k].q.val();
            self.got[k].d.next = self.got[k].q.val();
            self.rx[k].clock.next = self.clk.val();
            self.got[k].clock.next = self.clk.val();
            self.rx_p1[k].clock.next = self.clk.val();
            self.rx_p2[k].clock.next = self.clk.val();
        }
        for k in 0..2 {
            self.valid_p[k].clock.next = self.clk.val();
            self.flags_p[k].clock.next = self.clk.val();
        }
        self.core.clk.next = self.clk.val();
        self.core.rst.next = self.rst.val();
        self.beat.next = self.s_axis_tvalid.val() & self.s_axis_tready.val();

        // Layout case: from this beat's EtherType bytes when they are in it, else the registers.
        self.outer_et.next = self
            .s_axis_tdata
            .val()
            .get_bits::<16>(self.et_sh.val().index());
        self.inner_et.next = self
            .s_axis_tdata
            .val()
            .get_bits::<16>(self.inner_sh.val().index());
        self.vlan_now.next = self.vlan_reg.q.val();
        if self.base.q.val() == self.et_base.val() {
            self.vlan_now.next = self.outer_et.val() == self.et_vlan.val();
        }
        self.v6_now.next = self.v6_reg.q.val();
        if self.vlan_now.val() {
            if self.base.q.val() == self.inner_base.val() {
                self.v6_now.next = self.inner_et.val() == self.et_v6.val();
            }
        } else if self.base.q.val() == self.et_base.val() {
            self.v6_now.next = self.outer_et.val() == self.et_v6.val();
        }
        self.layout.next = self.case_id[0].val();
        if self.v6_now.val() {
            self.layout.next = self.case_id[1].val();
        }
        if self.vlan_now.val() {
            self.layout.next = self.case_id[2].val();
            if self.v6_now.val() {
                self.layout.next = self.case_id[3].val();
            }
        }

        // Per-case constants of this beat's case.
        self.s_ip_base.next = self.ip_base[0].val();
        self.s_ip_sh.next = self.ip_sh[0].val();
        self.s_len_base.next = self.len_base[0].val();
        self.s_len_sh.next = self.len_sh[0].val();
        self.s_proto_base.next = self.proto_base[0].val();
        self.s_proto_sh.next = self.proto_sh[0].val();
        self.s_dport_base.next = self.dport_base[0].val();
        self.s_dport_sh.next = self.dport_sh[0].val();
        self.s_len_min.next = self.len_min[0].val();
        self.s_len_max.next = self.len_max[0].val();
        self.s_last_k.next = self.last_k[0].val();
        self.s_hdr_end.next = self.hdr_end[0].val();
        self.s_first_state.next = self.first_state[0].val();
        for c in 1..4 {
            if self.layout.val() == self.case_id[c].val() {
                self.s_ip_base.next = self.ip_base[c].val();
                self.s_ip_sh.next = self.ip_sh[c].val();
                self.s_len_base.next = self.len_base[c].val();
                self.s_len_sh.next = self.len_sh[c].val();
                self.s_proto_base.next = self.proto_base[c].val();
                self.s_proto_sh.next = self.proto_sh[c].val();
                self.s_dport_base.next = self.dport_base[c].val();
                self.s_dport_sh.next = self.dport_sh[c].val();
                self.s_len_min.next = self.len_min[c].val();
                self.s_len_max.next = self.len_max[c].val();
                self.s_last_k.next = self.last_k[c].val();
                self.s_hdr_end.next = self.hdr_end[c].val();
                self.s_first_state.next = self.first_state[c].val();
            }
        }

        // Header ROMs: lanes covered and bits forced to one in this beat.
        self.cov_mask.next = self.all_dw.val();
        self.frc_mask.next = self.zero_dw.val();
        for b in 0..self.beat_base.len() {
            if self.base.q.val() == self.beat_base[b].val() {
                if self.layout.val() == self.case_id[0].val() {
                    self.cov_mask.next = self.cov0[b].val();
                    self.frc_mask.next = self.frc0[b].val();
                }
                if self.layout.val() == self.case_id[1].val() {
                    self.cov_mask.next = self.cov1[b].val();
                    self.frc_mask.next = self.frc1[b].val();
                }
                if self.layout.val() == self.case_id[2].val() {
                    self.cov_mask.next = self.cov2[b].val();
                    self.frc_mask.next = self.frc2[b].val();
                }
                if self.layout.val() == self.case_id[3].val() {
                    self.cov_mask.next = self.cov3[b].val();
                    self.frc_mask.next = self.frc3[b].val();
                }
            }
        }

        // IP length: big-endian on the wire, from this beat or the register.
        self.len_raw.next = self
            .s_axis_tdata
            .val()
            .get_bits::<16>(self.s_len_sh.val().index());
        self.len_now.next = self.len_reg.q.val();
        if self.base.q.val() == self.s_len_base.val() {
            self.len_now.next =
                ((self.len_raw.val() & self.byte_mask.val()) << 8) | (self.len_raw.val() >> 8);
        }
        self.len_ok.next = (self.len_now.val() >= self.s_len_min.val())
            & (self.len_now.val() <= self.s_len_max.val());
        self.len_known.next = (self.base.q.val() >= self.s_len_base.val()) & self.len_ok.val();

        // Coverage: from the IP header to the byte before the ICRC.
        self.last_off.next = self.len_now.val() + self.s_last_k.val();
        self.end_lane.next = self.last_off.val() & self.lane_lo.val();
        self.zeros.next = self.lane_lo8.val() - self.end_lane.val().get_bits::<ZW>(0);
        self.last_now.next = self.len_known.val()
            & ((self.last_off.val() & self.lane_hi.val()) == self.base.q.val());
        self.covering.next = self.beat.val()
            & !self.region_done.q.val()
            & (self.base.q.val() >= self.s_ip_base.val());
        self.end_mask.next = self.all_dw.val();
        if self.last_now.val() {
            self.end_mask.next = self.lane_mask[0].val();
            for l in 1..KW {
                if self.lane_id[l - 1].val() <= self.end_lane.val() {
                    self.end_mask.next = self.end_mask.val() | self.lane_mask[l].val();
                }
            }
        }
        self.core.beat.next = self.covering.val();
        self.core.data.next = (self.s_axis_tdata.val() & self.cov_mask.val() & self.end_mask.val())
            | self.frc_mask.val();
        self.core.first.next = self.base.q.val() == self.s_ip_base.val();
        self.core.first_state.next = self.s_first_state.val();
        self.core.last.next = self.last_now.val();
        self.core.last_zeros.next = self.zeros.val();

        // The carried ICRC: the four bytes after the covered region, in lanes this beat keeps.
        self.nbytes.next = self.zero_ow.val();
        for l in 0..KW {
            if self.s_axis_tkeep.val().get_bit(l) {
                self.nbytes.next = self.lane_count[l].val();
            }
        }
        for k in 0..4 {
            self.rx_off[k].next = self.last_off.val() + self.k_off[k].val();
            self.rx_lane[k].next = self.rx_off[k].val() & self.lane_lo.val();
            self.rx_sh[k].next = self.rx_lane[k].val().get_bits::<SW>(0) << 3;
            self.rx_hit[k].next = self.beat.val()
                & self.len_known.val()
                & ((self.rx_off[k].val() & self.lane_hi.val()) == self.base.q.val())
                & (self.rx_lane[k].val() < self.nbytes.val());
            self.rx_now[k].next = self.rx[k].q.val();
            if self.rx_hit[k].val() {
                self.rx_now[k].next = self
                    .s_axis_tdata
                    .val()
                    .get_bits::<8>(self.rx_sh[k].val().index());
            }
            self.got_now[k].next =
                self.rx_hit[k].val() | (self.got[k].q.val() & self.in_frame.q.val());
        }

        // Checks, each in the beat that holds its field.
        self.flags_now.next = self.zero8.val();
        if self.in_frame.q.val() {
            self.flags_now.next = self.flags_acc.q.val();
        }
        if (self.base.q.val() == self.et_base.val())
            & (self.outer_et.val() != self.et_vlan.val())
            & (self.outer_et.val() != self.et_v4.val())
            & (self.outer_et.val() != self.et_v6.val())
        {
            self.flags_now.next = self.flags_now.val() | self.f_not_ip.val();
        }
        if self.vlan_now.val()
            & (self.base.q.val() == self.inner_base.val())
            & (self.inner_et.val() != self.et_v4.val())
            & (self.inner_et.val() != self.et_v6.val())
        {
            self.flags_now.next = self.flags_now.val() | self.f_not_ip.val();
        }
        self.ip_byte.next = self
            .s_axis_tdata
            .val()
            .get_bits::<8>(self.s_ip_sh.val().index());
        if self.base.q.val() == self.s_ip_base.val() {
            if self.v6_now.val() {
                if (self.ip_byte.val() >> 4) != self.ver6.val() {
                    self.flags_now.next = self.flags_now.val() | self.f_not_ip.val();
                }
            } else if (self.ip_byte.val() >> 4) != self.ver4.val() {
                self.flags_now.next = self.flags_now.val() | self.f_not_ip.val();
            } else if (self.ip_byte.val() & self.nib.val()) != self.ihl5.val() {
                self.flags_now.next = self.flags_now.val() | self.f_ip_options.val();
            }
        }
        if (self.base.q.val() == self.s_proto_base.val())
            & (self
                .s_axis_tdata
                .val()
                .get_bits::<8>(self.s_proto_sh.val().index())
                != self.udp.val())
        {
            self.flags_now.next = self.flags_now.val() | self.f_not_roce.val();
        }
        if (self.base.q.val() == self.s_dport_base.val())
            & (self
                .s_axis_tdata
                .val()
                .get_bits::<16>(self.s_dport_sh.val().index())
                != self.roce_port.val())
        {
            self.flags_now.next = self.flags_now.val() | self.f_not_roce.val();
        }
        if (self.base.q.val() == self.s_len_base.val()) & !self.len_ok.val() {
            self.flags_now.next = self.flags_now.val() | self.f_bad_length.val();
        }
        // Keep: all ones before the last beat, contiguous from lane 0 on it.
        self.keep_p1.next = self.s_axis_tkeep.val() + self.one_kw.val();
        if self.s_axis_tlast.val() {
            if (self.s_axis_tkeep.val() & self.keep_p1.val()) != self.zero_kw.val() {
                self.flags_now.next = self.flags_now.val() | self.f_bad_keep.val();
            }
        } else if self.s_axis_tkeep.val() != self.full_keep.val() {
            self.flags_now.next = self.flags_now.val() | self.f_bad_keep.val();
        }
        // Truncated: the frame ends inside its headers or before the last ICRC byte.
        if self.s_axis_tlast.val()
            & (((self.base.q.val() + self.nbytes.val()) < self.s_hdr_end.val())
                | !(self.got_now[0].val()
                    & self.got_now[1].val()
                    & self.got_now[2].val()
                    & self.got_now[3].val()))
        {
            self.flags_now.next = self.flags_now.val() | self.f_truncated.val();
        }

        // State updates.
        self.valid_p[0].d.next = false;
        if self.beat.val() {
            self.vlan_reg.d.next = self.vlan_now.val();
            self.v6_reg.d.next = self.v6_now.val();
            self.len_reg.d.next = self.len_now.val();
            self.flags_acc.d.next = self.flags_now.val();
            self.region_done.d.next =
                self.region_done.q.val() | (self.covering.val() & self.last_now.val());
            for k in 0..4 {
                self.rx[k].d.next = self.rx_now[k].val();
                self.got[k].d.next = self.got_now[k].val();
            }
            self.in_frame.d.next = !self.s_axis_tlast.val();
            if self.base.q.val() != self.saturate.val() {
                self.base.d.next = self.base.q.val() + self.lanes.val();
            }
            if self.s_axis_tlast.val() {
                self.base.d.next = self.zero_ow.val();
                self.region_done.d.next = false;
                self.valid_p[0].d.next = true;
            }
        }
        self.flags_p[0].d.next = self.flags_now.val();
        for k in 0..4 {
            self.rx_p1[k].d.next = self.rx_now[k].val();
            self.rx_p2[k].d.next = self.rx_p1[k].q.val();
        }
        self.valid_p[1].d.next = self.valid_p[0].q.val();
        self.flags_p[1].d.next = self.flags_p[0].q.val();
        if self.core.crc_valid.val() {
            self.hold.d.next = self.core.crc.val();
        }
        if self.rst.val() {
            self.base.d.next = self.zero_ow.val();
            self.in_frame.d.next = false;
            self.region_done.d.next = false;
            self.valid_p[0].d.next = false;
            self.valid_p[1].d.next = false;
        }

        // Output, two cycles after the last beat: the core's result this cycle, or held.
        self.crc_out.next = self.hold.q.val();
        if self.core.crc_valid.val() {
            self.crc_out.next = self.core.crc.val();
        }
        self.m_icrc_tdata.next = self.crc_out.val();
        self.m_icrc_tvalid.next = self.valid_p[1].q.val();
        self.m_icrc_tuser.next = self.flags_p[1].q.val();
        if (self.crc_out.val().get_bits::<8>(0) != self.rx_p2[0].q.val())
            | (self.crc_out.val().get_bits::<8>(8) != self.rx_p2[1].q.val())
            | (self.crc_out.val().get_bits::<8>(16) != self.rx_p2[2].q.val())
            | (self.crc_out.val().get_bits::<8>(24) != self.rx_p2[3].q.val())
        {
            self.m_icrc_tuser.next = self.flags_p[1].q.val() | self.f_mismatch.val();
        }
    }
}
