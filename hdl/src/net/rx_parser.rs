//! `RxParser`: the RX parser. Takes the good frames `MacRx` releases (FCS stripped, FCS and
//! ICRC already checked) and splits each RoCEv2 packet into one metadata record
//! (`spec::meta::RX_META`) and one payload packet realigned to lane 0: exactly `pay_len`
//! bytes, without the headers, the BTH pad bytes, the ICRC or any Ethernet padding. Every
//! opcode of `spec::opcodes` is parsed (its extended headers land in the record's `ext`,
//! `ext2`); which ones the transport implements is the transport's business.
//!
//! Ports:
//! - `s_axis_*`: frames, Ethernet header first, no FCS.
//! - `local_mac`, `local_ip`: the NIC's addresses (`local_mac` as the 48-bit big-endian
//!   value of the address, first byte on top; `local_ip` likewise).
//! - `m_meta_{tdata,tvalid,tready}`: one record per accepted packet.
//! - `m_axis_*`: its payload, one packet per record, `tkeep` contiguous from lane 0 on the
//!   last beat; a zero-length payload is one empty last beat (the TX builder's convention).
//! - counters of frames dropped (no record, no payload), first reason that applies in this
//!   order: `unsupported` (not IPv4 + UDP 4791, untagged or with one 802.1Q tag; IP
//!   options; an IP fragment),
//!   `bad_csum` (IPv4 header checksum wrong), `bad_mac` (destination MAC not `local_mac`),
//!   `bad_ip` (destination IP not `local_ip`), `bad_opcode` (opcode not in the table, or BTH
//!   version not 0), `bad_len` (UDP length disagrees with the IP length, is not a multiple
//!   of 4 (BTH's PadCnt does not make the payload whole words, IBA 9.2), is too short for the
//!   opcode's headers, pad and ICRC, leaves more than `RX_MAX_PAYLOAD` bytes, or leaves bytes
//!   for an opcode without payload); `accepted` counts the records; `truncated` counts
//!   payloads cut short because the frame ended early (`MacRx` never lets such a frame
//!   through: the tests assert it stays zero).
//!
//! ```text
//!  s_axis -> [P: beats into the FIFO; the first IW/DW beats also into the header image;
//!             one cycle after the header is in, parse it: record out, job (drop, first
//!             payload beat, lane shift, length) into the job queue]
//!         -> beat FIFO -> [R: per job, skip beats up to the payload, shift by
//!             (header length mod DW/8) lanes, cut at pay_len, discard the rest] -> Skid
//! ```
//! Throughput: one beat per clock. P stalls the input for one cycle after a frame shorter
//! than the image (`IW/DW` beats), R spends one extra cycle on a frame whose last payload
//! bytes and ICRC share its last beat after the lane shift; frames are otherwise back to
//! back, faster than the wire (whose 20 bytes of preamble and gap per frame are 2.5 beats at
//! 64 bits). All outputs come from registers, `s_axis_tready` depends on registers only.

use crate::host::k;
use crate::prelude::*;
use crate::stream::{counts, keep_of_count, ones, Skid};
use crate::util::{bits_from_bools, log2_exact};
use ferroce_spec::headers::{
    BTH, ETH, ETHERTYPE_IPV4, ETHERTYPE_VLAN, ETH_TYPE_OFFSET, ICRC_LEN, IPV4, IP_PROTO_UDP,
    ROCEV2_UDP_PORT, UDP, VLAN_TAG_LEN,
};
use ferroce_spec::layout::Layout;
use ferroce_spec::meta::{
    rx_max_hdr_len, rx_opcodes, RX_EXT_LEN, RX_META, TX_BASE_HDR_LEN, TX_MAX_PAYLOAD, VLAN_GROUP_W,
};

/// Width of the RX record.
pub const RX_META_W: usize = RX_META.len * 8;
/// Jobs the parser can have ahead of the realigner.
const JOBS: usize = 4;

const IP_OFF: usize = ETH.len;
const UDP_OFF: usize = IP_OFF + IPV4.len;
const BTH_OFF: usize = UDP_OFF + UDP.len;
const EXT_OFF: usize = BTH_OFF + BTH.len;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum RxAlign {
    Idle,
    Frame,
    Flush,
}

#[derive(LogicBlock)]
pub struct RxParser<const DW: usize, const KW: usize, const IW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axis_tdata: Signal<In, Bits<DW>>,
    pub s_axis_tkeep: Signal<In, Bits<KW>>,
    pub s_axis_tlast: Signal<In, Bit>,
    pub s_axis_tvalid: Signal<In, Bit>,
    pub s_axis_tready: Signal<Out, Bit>,
    pub local_mac: Signal<In, Bits<48>>,
    pub local_ip: Signal<In, Bits<32>>,
    pub m_meta_tdata: Signal<Out, Bits<RX_META_W>>,
    pub m_meta_tvalid: Signal<Out, Bit>,
    pub m_meta_tready: Signal<In, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub accepted: Signal<Out, Bits<32>>,
    pub unsupported: Signal<Out, Bits<32>>,
    pub bad_csum: Signal<Out, Bits<32>>,
    pub bad_mac: Signal<Out, Bits<32>>,
    pub bad_ip: Signal<Out, Bits<32>>,
    pub bad_opcode: Signal<Out, Bits<32>>,
    pub bad_len: Signal<Out, Bits<32>>,
    pub truncated: Signal<Out, Bits<32>>,
    out: Skid<DW, KW>,
    // P: capture.
    img: DFF<Bits<IW>>,
    bi: DFF<Bits<16>>,
    pend: DFF<Bit>,
    ended: DFF<Bit>,
    meta: DFF<Bits<RX_META_W>>,
    meta_v: DFF<Bit>,
    // The beat FIFO.
    f_data: Vec<DFF<Bits<DW>>>,
    f_keep: Vec<DFF<Bits<KW>>>,
    f_last: Vec<DFF<Bit>>,
    f_wp: DFF<Bits<8>>,
    f_rp: DFF<Bits<8>>,
    // The job queue.
    j_b0: Vec<DFF<Bits<16>>>,
    j_s8: Vec<DFF<Bits<16>>>,
    j_len: Vec<DFF<Bits<16>>>,
    j_drop: Vec<DFF<Bit>>,
    j_wp: DFF<Bits<8>>,
    j_rp: DFF<Bits<8>>,
    // R: realign.
    state: DFF<RxAlign>,
    r_bi: DFF<Bits<16>>,
    r_b0: DFF<Bits<16>>,
    r_s8: DFF<Bits<16>>,
    left: DFF<Bits<16>>,
    skip: DFF<Bit>,
    carry: DFF<Bits<DW>>,
    rest: DFF<Bits<16>>,
    // Counters.
    n_ok: DFF<Bits<32>>,
    n_unsup: DFF<Bits<32>>,
    n_csum: DFF<Bits<32>>,
    n_mac: DFF<Bits<32>>,
    n_ip: DFF<Bits<32>>,
    n_op: DFF<Bits<32>>,
    n_len: DFF<Bits<32>>,
    n_trunc: DFF<Bits<32>>,
    // P locals.
    take: Signal<Local, Bit>,
    rev_in: Signal<Local, Bits<DW>>,
    rev_wide: Signal<Local, Bits<IW>>,
    ethertype: Signal<Local, Bits<16>>,
    ver_ihl: Signal<Local, Bits<8>>,
    frag: Signal<Local, Bits<16>>,
    proto: Signal<Local, Bits<8>>,
    ip_len: Signal<Local, Bits<16>>,
    dport: Signal<Local, Bits<16>>,
    udp_len: Signal<Local, Bits<16>>,
    csum1: Signal<Local, Bits<32>>,
    csum2: Signal<Local, Bits<32>>,
    csum3: Signal<Local, Bits<32>>,
    dmac: Signal<Local, Bits<48>>,
    dip: Signal<Local, Bits<32>>,
    opc: Signal<Local, Bits<8>>,
    tver: Signal<Local, Bits<4>>,
    pad: Signal<Local, Bits<16>>,
    plen13: Signal<Local, Bits<13>>,
    known: Signal<Local, Bit>,
    has_pay: Signal<Local, Bit>,
    ext_len: Signal<Local, Bits<16>>,
    ext_mask: Signal<Local, Bits<256>>,
    ext_v: Signal<Local, Bits<256>>,
    is_tag: Signal<Local, Bit>,
    hv: Signal<Local, Bits<IW>>,
    tci: Signal<Local, Bits<16>>,
    vgrp: Signal<Local, Bits<16>>,
    need: Signal<Local, Bits<16>>,
    plen: Signal<Local, Bits<16>>,
    hlen: Signal<Local, Bits<16>>,
    e_unsup: Signal<Local, Bit>,
    e_csum: Signal<Local, Bit>,
    e_mac: Signal<Local, Bit>,
    e_ip: Signal<Local, Bit>,
    e_op: Signal<Local, Bit>,
    e_len: Signal<Local, Bit>,
    drop: Signal<Local, Bit>,
    jobs: Signal<Local, Bits<8>>,
    can_parse: Signal<Local, Bit>,
    rec: Signal<Local, Bits<RX_META_W>>,
    // R locals.
    f_have: Signal<Local, Bit>,
    f_used: Signal<Local, Bits<8>>,
    h_data: Signal<Local, Bits<DW>>,
    h_keep: Signal<Local, Bits<KW>>,
    h_last: Signal<Local, Bit>,
    j_have: Signal<Local, Bit>,
    is_new: Signal<Local, Bit>,
    c_bi: Signal<Local, Bits<16>>,
    c_b0: Signal<Local, Bits<16>>,
    c_s8: Signal<Local, Bits<16>>,
    c_left: Signal<Local, Bits<16>>,
    c_skip: Signal<Local, Bit>,
    c_si8: Signal<Local, Bits<16>>,
    c_s: Signal<Local, Bits<16>>,
    n_in: Signal<Local, Bits<16>>,
    avail: Signal<Local, Bits<16>>,
    ob: Signal<Local, Bits<16>>,
    up: Signal<Local, Bits<16>>,
    merged: Signal<Local, Bits<DW>>,
    o_valid: Signal<Local, Bit>,
    o_data: Signal<Local, Bits<DW>>,
    o_count: Signal<Local, Bits<16>>,
    o_last: Signal<Local, Bit>,
    o_keep: Signal<Local, Bits<KW>>,
    go: Signal<Local, Bit>,
    // Constants.
    ipos: Vec<Constant<Bits<16>>>,
    bc: Vec<Constant<Bits<16>>>,
    top_sh: Vec<Constant<Bits<16>>>,
    lane_sh: Vec<Constant<Bits<16>>>,
    byte0: Constant<Bits<DW>>,
    fp: Vec<Constant<Bits<10>>>,
    mp: Vec<Constant<Bits<16>>>,
    op_code: Vec<Constant<Bits<8>>>,
    op_ext: Vec<Constant<Bits<16>>>,
    op_mask: Vec<Constant<Bits<256>>>,
    op_pay: Vec<Constant<Bit>>,
    fc: Vec<Constant<Bits<8>>>,
    jc: Vec<Constant<Bits<8>>>,
    nc: Vec<Constant<Bits<16>>>,
    keepc: Vec<Constant<Bits<KW>>>,
    nh: Constant<Bits<16>>,
    nh_m1: Constant<Bits<16>>,
    f_mask: Constant<Bits<8>>,
    f_full: Constant<Bits<8>>,
    j_mask: Constant<Bits<8>>,
    j_full: Constant<Bits<8>>,
    kw: Constant<Bits<16>>,
    kw_log: Constant<Bits<16>>,
    kw_m1: Constant<Bits<16>>,
    dw: Constant<Bits<16>>,
    base_len: Constant<Bits<16>>,
    udp_fixed: Constant<Bits<16>>,
    ip_hdr: Constant<Bits<16>>,
    max_pay: Constant<Bits<16>>,
    et_ipv4: Constant<Bits<16>>,
    ver_ihl4: Constant<Bits<8>>,
    frag_mask: Constant<Bits<16>>,
    udp_proto: Constant<Bits<8>>,
    roce_port: Constant<Bits<16>>,
    full_keep: Constant<Bits<KW>>,
    et_vlan: Constant<Bits<16>>,
    keep_top: Constant<Bits<IW>>,
    keep_rest: Constant<Bits<IW>>,
    tag_bits: Constant<Bits<16>>,
    tag_len: Constant<Bits<16>>,
    tci_at: Constant<Bits<10>>,
}

/// Image fields the kernel reads, as (layout, header offset, field), in the order of `fp`.
const IMG_FIELDS: [(&Layout, usize, &str); 24] = [
    (&ETH, 0, "dst"),
    (&ETH, 0, "src"),
    (&ETH, 0, "ethertype"),
    (&IPV4, IP_OFF, "total_len"),
    (&IPV4, IP_OFF, "ttl"),
    (&IPV4, IP_OFF, "protocol"),
    (&IPV4, IP_OFF, "src"),
    (&IPV4, IP_OFF, "dst"),
    (&IPV4, IP_OFF, "dscp"),
    (&IPV4, IP_OFF, "ecn"),
    (&UDP, UDP_OFF, "src_port"),
    (&UDP, UDP_OFF, "dst_port"),
    (&UDP, UDP_OFF, "len"),
    (&BTH, BTH_OFF, "opcode"),
    (&BTH, BTH_OFF, "se"),
    (&BTH, BTH_OFF, "m"),
    (&BTH, BTH_OFF, "pad"),
    (&BTH, BTH_OFF, "tver"),
    (&BTH, BTH_OFF, "pkey"),
    (&BTH, BTH_OFF, "fecn"),
    (&BTH, BTH_OFF, "becn"),
    (&BTH, BTH_OFF, "dest_qp"),
    (&BTH, BTH_OFF, "ack_req"),
    (&BTH, BTH_OFF, "psn"),
];
// Further entries of `fp` (the kernel names them by number): 24, the IPv4 header's first
// byte (version, IHL); 25, its flags and fragment offset as one word; 26..36, its ten words
// for the checksum; 36, the extended-header window.
const F_EXT: usize = 36;

/// RX_META fields, in the order of `mp`.
const META_FIELDS: [&str; 20] = [
    "src_mac", "src_ip", "dst_ip", "src_port", "dscp", "ecn", "ttl", "opcode", "se", "ack_req",
    "mig_req", "fecn", "becn", "pkey", "dest_qp", "psn", "pay_len", "ext2", "ext", "vlan",
];

impl<const DW: usize, const KW: usize, const IW: usize> RxParser<DW, KW, IW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        log2_exact(KW);
        let hdr_max = rx_max_hdr_len();
        assert!(
            IW >= (EXT_OFF + RX_EXT_LEN) * 8 && IW >= hdr_max * 8,
            "the header image holds the longest header and the whole ext window"
        );
        assert!(
            IW.is_multiple_of(DW) && IW <= 1024,
            "the image is whole beats, indexed with 10 bits"
        );
        const {
            assert!(
                RX_META_W == 512,
                "record fields are placed with 16-bit shifts"
            )
        };
        assert_eq!(TX_BASE_HDR_LEN, EXT_OFF);
        let nh = IW / DW;
        let fd = (nh + 4).next_power_of_two();
        assert!(fd <= 128);
        // Byte i of the frame lives in image bits IW-8-8i ..= IW-1-8i.
        let at = |l: &Layout, off: usize, name: &str| -> Constant<Bits<10>> {
            let f = l.find(name).expect("header field");
            k((IW - 8 * (off + l.len) + l.lsb(f)) as u64)
        };
        let mut fp: Vec<Constant<Bits<10>>> =
            IMG_FIELDS.iter().map(|(l, o, n)| at(l, *o, n)).collect();
        fp.push(k((IW - 8 * (IP_OFF + 1)) as u64));
        fp.push(k((IW - 8 * (IP_OFF + 8)) as u64));
        for w in 0..10 {
            fp.push(k((IW - 8 * (IP_OFF + 2 * w + 2)) as u64));
        }
        fp.push(k((IW - 8 * (EXT_OFF + RX_EXT_LEN)) as u64));
        assert_eq!(fp.len(), F_EXT + 1);
        let mp = META_FIELDS
            .iter()
            .map(|n| k(RX_META.find(n).expect("RX_META field").bit as u64))
            .collect();
        let ops = rx_opcodes();
        let ext_mask = |e: usize| -> Constant<Bits<256>> {
            let bools: Vec<bool> = (0..256).map(|b| b >= 256 - 8 * e).collect();
            Constant::new(bits_from_bools::<256>(&bools))
        };
        let udp_fixed = UDP.len + BTH.len + ICRC_LEN;
        // Image bits of the two addresses (`true`), or of everything after them.
        let top_mask = |top: bool| -> Vec<bool> {
            (0..IW)
                .map(|b| (b >= IW - 8 * ETH_TYPE_OFFSET) == top)
                .collect()
        };
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_axis_tdata: Default::default(),
            s_axis_tkeep: Default::default(),
            s_axis_tlast: Default::default(),
            s_axis_tvalid: Default::default(),
            s_axis_tready: Default::default(),
            local_mac: Default::default(),
            local_ip: Default::default(),
            m_meta_tdata: Default::default(),
            m_meta_tvalid: Default::default(),
            m_meta_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            accepted: Default::default(),
            unsupported: Default::default(),
            bad_csum: Default::default(),
            bad_mac: Default::default(),
            bad_ip: Default::default(),
            bad_opcode: Default::default(),
            bad_len: Default::default(),
            truncated: Default::default(),
            out: Skid::new(),
            img: Default::default(),
            bi: Default::default(),
            pend: Default::default(),
            ended: Default::default(),
            meta: Default::default(),
            meta_v: Default::default(),
            f_data: (0..fd).map(|_| Default::default()).collect(),
            f_keep: (0..fd).map(|_| Default::default()).collect(),
            f_last: (0..fd).map(|_| Default::default()).collect(),
            f_wp: Default::default(),
            f_rp: Default::default(),
            j_b0: (0..JOBS).map(|_| Default::default()).collect(),
            j_s8: (0..JOBS).map(|_| Default::default()).collect(),
            j_len: (0..JOBS).map(|_| Default::default()).collect(),
            j_drop: (0..JOBS).map(|_| Default::default()).collect(),
            j_wp: Default::default(),
            j_rp: Default::default(),
            state: Default::default(),
            r_bi: Default::default(),
            r_b0: Default::default(),
            r_s8: Default::default(),
            left: Default::default(),
            skip: Default::default(),
            carry: Default::default(),
            rest: Default::default(),
            n_ok: Default::default(),
            n_unsup: Default::default(),
            n_csum: Default::default(),
            n_mac: Default::default(),
            n_ip: Default::default(),
            n_op: Default::default(),
            n_len: Default::default(),
            n_trunc: Default::default(),
            take: Default::default(),
            rev_in: Default::default(),
            rev_wide: Default::default(),
            ethertype: Default::default(),
            ver_ihl: Default::default(),
            frag: Default::default(),
            proto: Default::default(),
            ip_len: Default::default(),
            dport: Default::default(),
            udp_len: Default::default(),
            csum1: Default::default(),
            csum2: Default::default(),
            csum3: Default::default(),
            dmac: Default::default(),
            dip: Default::default(),
            opc: Default::default(),
            tver: Default::default(),
            pad: Default::default(),
            plen13: Default::default(),
            known: Default::default(),
            has_pay: Default::default(),
            ext_len: Default::default(),
            ext_mask: Default::default(),
            ext_v: Default::default(),
            is_tag: Default::default(),
            hv: Default::default(),
            tci: Default::default(),
            vgrp: Default::default(),
            need: Default::default(),
            plen: Default::default(),
            hlen: Default::default(),
            e_unsup: Default::default(),
            e_csum: Default::default(),
            e_mac: Default::default(),
            e_ip: Default::default(),
            e_op: Default::default(),
            e_len: Default::default(),
            drop: Default::default(),
            jobs: Default::default(),
            can_parse: Default::default(),
            rec: Default::default(),
            f_have: Default::default(),
            f_used: Default::default(),
            h_data: Default::default(),
            h_keep: Default::default(),
            h_last: Default::default(),
            j_have: Default::default(),
            is_new: Default::default(),
            c_bi: Default::default(),
            c_b0: Default::default(),
            c_s8: Default::default(),
            c_left: Default::default(),
            c_skip: Default::default(),
            c_si8: Default::default(),
            c_s: Default::default(),
            n_in: Default::default(),
            avail: Default::default(),
            ob: Default::default(),
            up: Default::default(),
            merged: Default::default(),
            o_valid: Default::default(),
            o_data: Default::default(),
            o_count: Default::default(),
            o_last: Default::default(),
            o_keep: Default::default(),
            go: Default::default(),
            ipos: (0..nh).map(|b| k((IW - (b + 1) * DW) as u64)).collect(),
            bc: counts(nh),
            top_sh: (0..KW).map(|l| k((DW - 8 - 8 * l) as u64)).collect(),
            lane_sh: (0..KW).map(|l| k((8 * l) as u64)).collect(),
            byte0: k(0xFF),
            fp,
            mp,
            op_code: ops.iter().map(|o| k(o.0.into())).collect(),
            op_ext: ops.iter().map(|o| k(o.1 as u64)).collect(),
            op_mask: ops.iter().map(|o| ext_mask(o.1)).collect(),
            op_pay: ops.iter().map(|o| Constant::new(o.2)).collect(),
            fc: counts(fd - 1),
            jc: counts(JOBS - 1),
            nc: counts(KW),
            keepc: keep_of_count::<KW>(),
            nh: k(nh as u64),
            nh_m1: k(nh as u64 - 1),
            f_mask: k(fd as u64 - 1),
            f_full: k(fd as u64),
            j_mask: k(JOBS as u64 - 1),
            j_full: k(JOBS as u64),
            kw: k(KW as u64),
            kw_log: k(log2_exact(KW) as u64),
            kw_m1: k(KW as u64 - 1),
            dw: k(DW as u64),
            base_len: k(TX_BASE_HDR_LEN as u64),
            udp_fixed: k(udp_fixed as u64),
            ip_hdr: k(IPV4.len as u64),
            max_pay: k(TX_MAX_PAYLOAD as u64),
            et_ipv4: k(ETHERTYPE_IPV4.into()),
            et_vlan: k(ETHERTYPE_VLAN.into()),
            keep_top: Constant::new(bits_from_bools::<IW>(&top_mask(true))),
            keep_rest: Constant::new(bits_from_bools::<IW>(&top_mask(false))),
            tag_bits: k(8 * VLAN_TAG_LEN as u64),
            tag_len: k(VLAN_TAG_LEN as u64),
            tci_at: k((IW - 8 * (ETH_TYPE_OFFSET + VLAN_TAG_LEN)) as u64),
            ver_ihl4: k(0x40 | (IPV4.len / 4) as u64),
            // More fragments (flags bit 0) or a fragment offset: a fragment.
            frag_mask: k(0x3FFF),
            udp_proto: k(IP_PROTO_UDP.into()),
            roce_port: k(ROCEV2_UDP_PORT.into()),
            full_keep: ones::<KW>(),
        }
    }
}

impl<const DW: usize, const KW: usize, const IW: usize> Default for RxParser<DW, KW, IW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize, const IW: usize> Logic for RxParser<DW, KW, IW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, img, bi, pend, ended, meta, meta_v, f_wp, f_rp, j_wp, j_rp, state, r_bi,
            r_b0, r_s8, left, skip, carry, rest, n_ok, n_unsup, n_csum, n_mac, n_ip, n_op, n_len,
            n_trunc
        );
        for i in 0..self.f_data.len() {
            self.f_data[i].clock.next = self.clk.val();
            self.f_keep[i].clock.next = self.clk.val();
            self.f_last[i].clock.next = self.clk.val();
            self.f_data[i].d.next = self.f_data[i].q.val();
            self.f_keep[i].d.next = self.f_keep[i].q.val();
            self.f_last[i].d.next = self.f_last[i].q.val();
        }
        for i in 0..JOBS {
            self.j_b0[i].clock.next = self.clk.val();
            self.j_s8[i].clock.next = self.clk.val();
            self.j_len[i].clock.next = self.clk.val();
            self.j_drop[i].clock.next = self.clk.val();
            self.j_b0[i].d.next = self.j_b0[i].q.val();
            self.j_s8[i].d.next = self.j_s8[i].q.val();
            self.j_len[i].d.next = self.j_len[i].q.val();
            self.j_drop[i].d.next = self.j_drop[i].q.val();
        }
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.out.s_axis_tuser.next = false;
        self.m_axis_tdata.next = self.out.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.out.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.out.m_axis_tlast.val();
        self.m_axis_tvalid.next = self.out.m_axis_tvalid.val();
        self.out.m_axis_tready.next = self.m_axis_tready.val();
        self.m_meta_tdata.next = self.meta.q.val();
        self.m_meta_tvalid.next = self.meta_v.q.val();
        self.accepted.next = self.n_ok.q.val();
        self.unsupported.next = self.n_unsup.q.val();
        self.bad_csum.next = self.n_csum.q.val();
        self.bad_mac.next = self.n_mac.q.val();
        self.bad_ip.next = self.n_ip.q.val();
        self.bad_opcode.next = self.n_op.q.val();
        self.bad_len.next = self.n_len.q.val();
        self.truncated.next = self.n_trunc.q.val();
        if self.meta_v.q.val() & self.m_meta_tready.val() {
            self.meta_v.d.next = false;
        }

        // P, capture: every beat into the FIFO, the first IW/DW of a frame into the image
        // (bytes reversed, so the image reads as one big-endian value). A frame that ended
        // inside the image waits for its parse before the next frame may start.
        self.f_used.next = self.f_wp.q.val() - self.f_rp.q.val();
        self.s_axis_tready.next =
            (self.f_used.val() < self.f_full.val()) & !(self.pend.q.val() & self.ended.q.val());
        self.take.next = self.s_axis_tready.val() & self.s_axis_tvalid.val();
        self.rev_in.next = bits::<DW>(0);
        for l in 0..KW {
            self.rev_in.next = self.rev_in.val()
                | (((self.s_axis_tdata.val() >> self.lane_sh[l].val()) & self.byte0.val())
                    << self.top_sh[l].val());
        }
        self.rev_wide.next = bit_cast::<IW, DW>(self.rev_in.val());
        if self.take.val() {
            for i in 0..self.f_data.len() {
                if (self.f_wp.q.val() & self.f_mask.val()) == self.fc[i].val() {
                    self.f_data[i].d.next = self.s_axis_tdata.val();
                    self.f_keep[i].d.next = self.s_axis_tkeep.val();
                    self.f_last[i].d.next = self.s_axis_tlast.val();
                }
            }
            self.f_wp.d.next = self.f_wp.q.val() + bits::<8>(1);
            for b in 0..self.ipos.len() {
                if self.bi.q.val() == self.bc[b].val() {
                    self.img.d.next =
                        self.img.q.val() | (self.rev_wide.val() << self.ipos[b].val());
                }
            }
            if self.bi.q.val() == bits::<16>(0) {
                // A new frame: the image past its first beat starts from zeros.
                self.img.d.next = self.rev_wide.val() << self.ipos[0].val();
            }
            if self.bi.q.val() < self.nh.val() {
                self.bi.d.next = self.bi.q.val() + bits::<16>(1);
                if (self.bi.q.val() == self.nh_m1.val()) | self.s_axis_tlast.val() {
                    self.pend.d.next = true;
                }
            }
            if self.s_axis_tlast.val() {
                self.bi.d.next = bits::<16>(0);
            }
            self.ended.d.next = self.s_axis_tlast.val();
        }

        // P, parse: the image as one value, its fields at fixed places (IPv4 without options;
        // anything else is dropped before a field is trusted). An 802.1Q tag is taken out
        // first: the addresses stay, the rest moves up by the tag.
        self.is_tag.next =
            self.img.q.val().get_bits::<16>(self.fp[2].val().index()) == self.et_vlan.val();
        self.hv.next = self.img.q.val();
        // The record's 802.1Q group (spec::meta::VLAN_GROUP_W): vlan, pcp, vid from bit 0.
        self.tci.next = self.img.q.val().get_bits::<16>(self.tci_at.val().index());
        self.vgrp.next = bits::<16>(0);
        if self.is_tag.val() {
            self.hv.next = (self.img.q.val() & self.keep_top.val())
                | ((self.img.q.val() << self.tag_bits.val()) & self.keep_rest.val());
            self.vgrp.next = bits::<16>(1)
                | ((self.tci.val() >> 13) << 1)
                | ((self.tci.val() & bits::<16>(0xFFF)) << 4);
        }
        self.ethertype.next = self.hv.val().get_bits::<16>(self.fp[2].val().index());
        self.ver_ihl.next = self.hv.val().get_bits::<8>(self.fp[24].val().index());
        self.frag.next = self.hv.val().get_bits::<16>(self.fp[25].val().index());
        self.ip_len.next = self.hv.val().get_bits::<16>(self.fp[3].val().index());
        self.proto.next = self.hv.val().get_bits::<8>(self.fp[5].val().index());
        self.dport.next = self.hv.val().get_bits::<16>(self.fp[11].val().index());
        self.udp_len.next = self.hv.val().get_bits::<16>(self.fp[12].val().index());
        // fp[26..36]: the IPv4 header's ten 16-bit words.
        self.csum1.next =
            bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[26].val().index()))
                + bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[27].val().index()))
                + bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[28].val().index()))
                + bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[29].val().index()))
                + bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[30].val().index()))
                + bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[31].val().index()))
                + bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[32].val().index()))
                + bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[33].val().index()))
                + bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[34].val().index()))
                + bit_cast::<32, 16>(self.hv.val().get_bits::<16>(self.fp[35].val().index()));
        self.csum2.next = (self.csum1.val() & bits::<32>(0xFFFF)) + (self.csum1.val() >> 16);
        self.csum3.next = (self.csum2.val() & bits::<32>(0xFFFF)) + (self.csum2.val() >> 16);
        self.dmac.next = self.hv.val().get_bits::<48>(self.fp[0].val().index());
        self.dip.next = self.hv.val().get_bits::<32>(self.fp[7].val().index());
        self.opc.next = self.hv.val().get_bits::<8>(self.fp[13].val().index());
        self.tver.next = self.hv.val().get_bits::<4>(self.fp[17].val().index());
        self.pad.next = bit_cast::<16, 2>(self.hv.val().get_bits::<2>(self.fp[16].val().index()));
        self.known.next = false;
        self.has_pay.next = false;
        self.ext_len.next = bits::<16>(0);
        self.ext_mask.next = bits::<256>(0);
        for i in 0..self.op_code.len() {
            if self.opc.val() == self.op_code[i].val() {
                self.known.next = true;
                self.has_pay.next = self.op_pay[i].val();
                self.ext_len.next = self.op_ext[i].val();
                self.ext_mask.next = self.op_mask[i].val();
            }
        }
        self.hlen.next = self.base_len.val() + self.ext_len.val();
        if self.is_tag.val() {
            self.hlen.next = self.base_len.val() + self.ext_len.val() + self.tag_len.val();
        }
        self.need.next = self.udp_fixed.val() + self.ext_len.val() + self.pad.val();
        self.plen.next = self.udp_len.val() - self.need.val();
        self.plen13.next = bit_cast::<13, 16>(self.plen.val());
        self.e_unsup.next = (self.ethertype.val() != self.et_ipv4.val())
            | (self.ver_ihl.val() != self.ver_ihl4.val())
            | ((self.frag.val() & self.frag_mask.val()) != bits::<16>(0))
            | (self.proto.val() != self.udp_proto.val())
            | (self.dport.val() != self.roce_port.val());
        self.e_csum.next = self.csum3.val() != bits::<32>(0xFFFF);
        self.e_mac.next = self.dmac.val() != self.local_mac.val();
        self.e_ip.next = self.dip.val() != self.local_ip.val();
        self.e_op.next = !self.known.val() | (self.tver.val() != bits::<4>(0));
        // (Every header after UDP's is whole words, so a UDP length not a multiple of 4 is a
        // payload and pad that are not: a PadCnt that disagrees with the payload.)
        self.e_len.next = ((self.udp_len.val() + self.ip_hdr.val()) != self.ip_len.val())
            | (self.udp_len.val().get_bits::<2>(0) != bits::<2>(0))
            | (self.udp_len.val() < self.need.val())
            | (self.plen.val() > self.max_pay.val())
            | (!self.has_pay.val() & (self.plen.val() != bits::<16>(0)));
        self.drop.next = self.e_unsup.val()
            | self.e_csum.val()
            | self.e_mac.val()
            | self.e_ip.val()
            | self.e_op.val()
            | self.e_len.val();
        self.jobs.next = self.j_wp.q.val() - self.j_rp.q.val();
        self.can_parse.next = self.pend.q.val()
            & (self.jobs.val() < self.j_full.val())
            & (self.drop.val() | !self.meta_v.q.val() | self.m_meta_tready.val());
        self.ext_v.next =
            self.hv.val().get_bits::<256>(self.fp[36].val().index()) & self.ext_mask.val();
        self.rec.next =
            bit_cast::<RX_META_W, 48>(self.hv.val().get_bits::<48>(self.fp[1].val().index()))
                << self.mp[0].val()
                | bit_cast::<RX_META_W, 32>(self.hv.val().get_bits::<32>(self.fp[6].val().index()))
                    << self.mp[1].val()
                | bit_cast::<RX_META_W, 32>(self.dip.val()) << self.mp[2].val()
                | bit_cast::<RX_META_W, 16>(
                    self.hv.val().get_bits::<16>(self.fp[10].val().index()),
                ) << self.mp[3].val()
                | bit_cast::<RX_META_W, 6>(self.hv.val().get_bits::<6>(self.fp[8].val().index()))
                    << self.mp[4].val()
                | bit_cast::<RX_META_W, 2>(self.hv.val().get_bits::<2>(self.fp[9].val().index()))
                    << self.mp[5].val()
                | bit_cast::<RX_META_W, 8>(self.hv.val().get_bits::<8>(self.fp[4].val().index()))
                    << self.mp[6].val()
                | bit_cast::<RX_META_W, 8>(self.opc.val()) << self.mp[7].val()
                | bit_cast::<RX_META_W, 1>(self.hv.val().get_bits::<1>(self.fp[14].val().index()))
                    << self.mp[8].val()
                | bit_cast::<RX_META_W, 1>(self.hv.val().get_bits::<1>(self.fp[22].val().index()))
                    << self.mp[9].val()
                | bit_cast::<RX_META_W, 1>(self.hv.val().get_bits::<1>(self.fp[15].val().index()))
                    << self.mp[10].val()
                | bit_cast::<RX_META_W, 1>(self.hv.val().get_bits::<1>(self.fp[19].val().index()))
                    << self.mp[11].val()
                | bit_cast::<RX_META_W, 1>(self.hv.val().get_bits::<1>(self.fp[20].val().index()))
                    << self.mp[12].val()
                | bit_cast::<RX_META_W, 16>(
                    self.hv.val().get_bits::<16>(self.fp[18].val().index()),
                ) << self.mp[13].val()
                | bit_cast::<RX_META_W, 24>(
                    self.hv.val().get_bits::<24>(self.fp[21].val().index()),
                ) << self.mp[14].val()
                | bit_cast::<RX_META_W, 24>(
                    self.hv.val().get_bits::<24>(self.fp[23].val().index()),
                ) << self.mp[15].val()
                | bit_cast::<RX_META_W, 13>(self.plen13.val()) << self.mp[16].val()
                | bit_cast::<RX_META_W, 256>(self.ext_v.val()) << self.mp[17].val()
                | bit_cast::<RX_META_W, VLAN_GROUP_W>(self.vgrp.val()) << self.mp[19].val();
        if self.can_parse.val() {
            self.pend.d.next = false;
            for i in 0..JOBS {
                if (self.j_wp.q.val() & self.j_mask.val()) == self.jc[i].val() {
                    self.j_b0[i].d.next = self.hlen.val() >> self.kw_log.val();
                    self.j_s8[i].d.next = (self.hlen.val() & self.kw_m1.val()) << 3;
                    self.j_len[i].d.next = self.plen.val();
                    self.j_drop[i].d.next = self.drop.val();
                }
            }
            self.j_wp.d.next = self.j_wp.q.val() + bits::<8>(1);
            if !self.drop.val() {
                self.meta.d.next = self.rec.val();
                self.meta_v.d.next = true;
                self.n_ok.d.next = self.n_ok.q.val() + bits::<32>(1);
            } else if self.e_unsup.val() {
                self.n_unsup.d.next = self.n_unsup.q.val() + bits::<32>(1);
            } else if self.e_csum.val() {
                self.n_csum.d.next = self.n_csum.q.val() + bits::<32>(1);
            } else if self.e_mac.val() {
                self.n_mac.d.next = self.n_mac.q.val() + bits::<32>(1);
            } else if self.e_ip.val() {
                self.n_ip.d.next = self.n_ip.q.val() + bits::<32>(1);
            } else if self.e_op.val() {
                self.n_op.d.next = self.n_op.q.val() + bits::<32>(1);
            } else {
                self.n_len.d.next = self.n_len.q.val() + bits::<32>(1);
            }
        }

        // R: the FIFO's head beat and the job it belongs to (the queue's head when a frame
        // starts).
        self.f_have.next = self.f_wp.q.val() != self.f_rp.q.val();
        self.h_data.next = bits::<DW>(0);
        self.h_keep.next = bits::<KW>(0);
        self.h_last.next = false;
        for i in 0..self.f_data.len() {
            if (self.f_rp.q.val() & self.f_mask.val()) == self.fc[i].val() {
                self.h_data.next = self.f_data[i].q.val();
                self.h_keep.next = self.f_keep[i].q.val();
                self.h_last.next = self.f_last[i].q.val();
            }
        }
        self.j_have.next = self.j_wp.q.val() != self.j_rp.q.val();
        self.is_new.next = self.state.q.val() == RxAlign::Idle;
        self.c_bi.next = self.r_bi.q.val();
        self.c_b0.next = self.r_b0.q.val();
        self.c_s8.next = self.r_s8.q.val();
        self.c_left.next = self.left.q.val();
        self.c_skip.next = self.skip.q.val();
        if self.is_new.val() {
            self.c_bi.next = bits::<16>(0);
            self.c_b0.next = bits::<16>(0);
            self.c_s8.next = bits::<16>(0);
            self.c_left.next = bits::<16>(0);
            self.c_skip.next = false;
            for i in 0..JOBS {
                if (self.j_rp.q.val() & self.j_mask.val()) == self.jc[i].val() {
                    self.c_b0.next = self.j_b0[i].q.val();
                    self.c_s8.next = self.j_s8[i].q.val();
                    self.c_left.next = self.j_len[i].q.val();
                    self.c_skip.next = self.j_drop[i].q.val();
                }
            }
        }
        self.c_s.next = self.c_s8.val() >> 3;
        self.c_si8.next = bits::<16>(0);
        if self.c_s8.val() != bits::<16>(0) {
            self.c_si8.next = self.dw.val() - self.c_s8.val();
        }
        self.n_in.next = self.kw.val();
        if self.h_last.val() {
            self.n_in.next = bits::<16>(0);
            for i in 0..(KW + 1) {
                if self.h_keep.val() == self.keepc[i].val() {
                    self.n_in.next = self.nc[i].val();
                }
            }
        }
        // Payload bytes this beat completes: with no lane shift, the beat's own; with one,
        // the carried beat's upper lanes and this beat's lower ones.
        self.up.next = bits::<16>(0);
        if self.n_in.val() > self.c_s.val() {
            self.up.next = self.n_in.val() - self.c_s.val();
        }
        self.merged.next = self.h_data.val();
        self.avail.next = self.n_in.val();
        if self.c_s8.val() != bits::<16>(0) {
            self.merged.next =
                (self.carry.q.val() >> self.c_s8.val()) | (self.h_data.val() << self.c_si8.val());
            if self.n_in.val() < self.c_s.val() {
                self.avail.next = self.kw.val() - self.c_s.val() + self.n_in.val();
            } else {
                self.avail.next = self.kw.val();
            }
        }
        self.ob.next = self.avail.val();
        if self.c_left.val() < self.avail.val() {
            self.ob.next = self.c_left.val();
        }

        // What this beat does: nothing (skipped, a dropped frame, a finished payload, a
        // header beat), or one output beat.
        self.o_valid.next = false;
        self.o_data.next = self.merged.val();
        self.o_count.next = self.ob.val();
        self.o_last.next = false;
        if !self.c_skip.val() {
            if self.c_left.val() == bits::<16>(0) {
                // Only at a frame's start: a zero-length payload is one empty last beat.
                self.o_valid.next = self.is_new.val();
                self.o_last.next = true;
            } else if self.c_bi.val() >= self.c_b0.val() {
                if self.c_s8.val() == bits::<16>(0) {
                    self.o_valid.next = true;
                    self.o_last.next = (self.c_left.val() <= self.avail.val()) | self.h_last.val();
                } else if self.c_bi.val() == self.c_b0.val() {
                    // The payload's first beat: carried. A frame ending here ends in Flush.
                } else {
                    self.o_valid.next = true;
                    self.o_last.next = (self.c_left.val() <= self.avail.val())
                        | (self.h_last.val() & (self.up.val() == bits::<16>(0)));
                }
            }
        }
        if self.state.q.val() == RxAlign::Flush {
            // The payload's last bytes, from the carried beat.
            self.o_valid.next = true;
            self.o_data.next = self.carry.q.val() >> self.r_s8.q.val();
            self.o_last.next = true;
            self.o_count.next = self.left.q.val();
            if self.rest.q.val() < self.left.q.val() {
                self.o_count.next = self.rest.q.val();
            }
        }
        self.o_keep.next = self.full_keep.val();
        for i in 0..(KW + 1) {
            if self.o_count.val() == self.nc[i].val() {
                self.o_keep.next = self.keepc[i].val();
            }
        }
        self.go.next = self.f_have.val()
            & (!self.is_new.val() | self.j_have.val())
            & (!self.o_valid.val() | self.out.s_axis_tready.val())
            & (self.state.q.val() != RxAlign::Flush);
        self.out.s_axis_tvalid.next = self.state.q.val() == RxAlign::Flush;
        self.out.s_axis_tdata.next = self.o_data.val();
        self.out.s_axis_tkeep.next = self.o_keep.val();
        self.out.s_axis_tlast.next = self.o_last.val();
        if self.go.val() {
            self.out.s_axis_tvalid.next = self.o_valid.val();
            self.f_rp.d.next = self.f_rp.q.val() + bits::<8>(1);
            if self.is_new.val() {
                self.j_rp.d.next = self.j_rp.q.val() + bits::<8>(1);
            }
            self.state.d.next = RxAlign::Frame;
            self.r_bi.d.next = self.c_bi.val() + bits::<16>(1);
            self.r_b0.d.next = self.c_b0.val();
            self.r_s8.d.next = self.c_s8.val();
            self.skip.d.next = self.c_skip.val();
            self.carry.d.next = self.h_data.val();
            self.left.d.next = self.c_left.val();
            if self.o_valid.val() {
                self.left.d.next = self.c_left.val() - self.ob.val();
            }
            if self.h_last.val() {
                self.state.d.next = RxAlign::Idle;
                if !self.c_skip.val()
                    & (self.c_left.val() != bits::<16>(0))
                    & (self.c_bi.val() >= self.c_b0.val())
                {
                    if (self.c_s8.val() != bits::<16>(0)) & (self.c_bi.val() == self.c_b0.val()) {
                        // The whole payload sits in this beat's upper lanes.
                        self.state.d.next = RxAlign::Flush;
                        self.rest.d.next = self.up.val();
                    } else if self.c_left.val() > self.avail.val() {
                        if (self.c_s8.val() != bits::<16>(0)) & (self.up.val() != bits::<16>(0)) {
                            // Payload bytes left in this beat's upper lanes: one more beat.
                            self.state.d.next = RxAlign::Flush;
                            self.rest.d.next = self.up.val();
                        } else {
                            self.n_trunc.d.next = self.n_trunc.q.val() + bits::<32>(1);
                        }
                    }
                }
            }
        }
        if (self.state.q.val() == RxAlign::Flush) & self.out.s_axis_tready.val() {
            self.state.d.next = RxAlign::Idle;
            if self.rest.q.val() < self.left.q.val() {
                self.n_trunc.d.next = self.n_trunc.q.val() + bits::<32>(1);
            }
        }
        if self.rst.val() {
            self.bi.d.next = bits::<16>(0);
            self.pend.d.next = false;
            self.ended.d.next = false;
            self.meta_v.d.next = false;
            self.f_wp.d.next = bits::<8>(0);
            self.f_rp.d.next = bits::<8>(0);
            self.j_wp.d.next = bits::<8>(0);
            self.j_rp.d.next = bits::<8>(0);
            self.state.d.next = RxAlign::Idle;
            self.n_ok.d.next = bits::<32>(0);
            self.n_unsup.d.next = bits::<32>(0);
            self.n_csum.d.next = bits::<32>(0);
            self.n_mac.d.next = bits::<32>(0);
            self.n_ip.d.next = bits::<32>(0);
            self.n_op.d.next = bits::<32>(0);
            self.n_len.d.next = bits::<32>(0);
            self.n_trunc.d.next = bits::<32>(0);
        }
    }
}
