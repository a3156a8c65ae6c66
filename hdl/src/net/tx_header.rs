//! `TxHeader`: the TX header builder. Takes one metadata record (`spec::meta::TX_META`) and
//! one payload packet per RoCEv2 packet and emits the frame: Ethernet, IPv4 (checksum
//! computed), UDP to 4791, BTH, the opcode's extended headers, the payload, the BTH pad bytes
//! and four zero bytes where the ICRC goes (`IcrcInsert` fills them in). No FCS: the MAC adds it.
//!
//! Ports:
//! - `s_meta_{tdata,tvalid,tready}`: the record.
//! - `s_pay_*`: the payload as one packet, `pay_len` bytes (`tkeep` contiguous from lane 0 on
//!   the last beat, all ones before it; a zero-length payload is one empty last beat).
//! - `m_axis_*`: the frame; `tuser` on its last beat when the payload's last beat had it (the
//!   payload's bytes are bad: `TxQueues` drops the frame).
//! - `bad_len`, `bad_opcode`: counters of refused or malformed inputs (below).
//!
//! ```text
//!  s_meta -> [A: record] -> [B: fields placed into a header image, checksum sum]
//!         -> [C: header beats from the image, then payload shifted by (header length mod
//!             DW/8) lanes with the image's last bytes in front; pad and ICRC zeros] -> Skid
//! ```
//! The header image is the frame's first bytes as one big-endian value, byte 0 on top,
//! built from the `spec::headers` layouts (constant fields at elaboration); each header beat
//! is its top `DW` bits with the bytes reversed into lanes. Extended headers come from the
//! record's `ext`, masked to the opcode's length (`spec::opcodes`), so nothing but the header
//! lands before the payload.
//!
//! Throughput: one beat per clock, one idle cycle between frames; the next record is
//! prepared while a frame is sent. All outputs come from registers (the `Skid`), and
//! `s_*_tready` depend on registers only, so the block composes (docs/ARCHITECTURE.md).
//!
//! Bad inputs: an opcode the builder does not send, or `pay_len` above `TX_MAX_PAYLOAD`: no
//! frame, the payload packet is consumed, `bad_opcode` or `bad_len` counts it. A payload
//! packet that is not `pay_len` bytes long is sent as it came (its IP length then disagrees and
//! any receiver drops it) and counted in `bad_len`: the builder never stalls waiting for bytes
//! that are not coming, and never adds bytes that were not given.

use crate::host::k;
use crate::prelude::*;
use crate::stream::{counts, data_of_count, keep_of_count, ones, Skid};
use crate::util::{bits_from_bools, log2_exact};
use ferroce_spec::headers::{
    BTH, ETH, ETHERTYPE_IPV4, ETHERTYPE_VLAN, ETH_TYPE_OFFSET, ICRC_LEN, IPV4, IP_PROTO_UDP,
    ROCEV2_UDP_PORT, UDP, VLAN_TAG_LEN,
};
use ferroce_spec::layout::Layout;
use ferroce_spec::meta::{
    tx_opcodes, IPV4_FLAGS_DF, TX_BASE_HDR_LEN, TX_EXT_LEN, TX_MAX_HDR_LEN, TX_MAX_PAYLOAD,
    TX_META, VLAN_GROUP_W,
};

/// Width of the metadata record.
pub const META_W: usize = TX_META.len * 8;

const ETH_OFF: usize = 0;
const IP_OFF: usize = ETH_OFF + ETH.len;
const UDP_OFF: usize = IP_OFF + IPV4.len;
const BTH_OFF: usize = UDP_OFF + UDP.len;
const EXT_OFF: usize = BTH_OFF + BTH.len;
/// Where an 802.1Q tag goes: after the two addresses.
const TAG_OFF: usize = ETH_TYPE_OFFSET;

#[derive(Copy, Clone, PartialEq, Debug, LogicState)]
pub enum TxHeaderState {
    Idle,
    Hdr,
    Body,
    Tail,
    Drop,
}

#[derive(LogicBlock)]
pub struct TxHeader<const DW: usize, const KW: usize, const IW: usize> {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_meta_tdata: Signal<In, Bits<META_W>>,
    pub s_meta_tvalid: Signal<In, Bit>,
    pub s_meta_tready: Signal<Out, Bit>,
    pub s_pay_tdata: Signal<In, Bits<DW>>,
    pub s_pay_tkeep: Signal<In, Bits<KW>>,
    pub s_pay_tlast: Signal<In, Bit>,
    pub s_pay_tuser: Signal<In, Bit>,
    pub s_pay_tvalid: Signal<In, Bit>,
    pub s_pay_tready: Signal<Out, Bit>,
    pub m_axis_tdata: Signal<Out, Bits<DW>>,
    pub m_axis_tkeep: Signal<Out, Bits<KW>>,
    pub m_axis_tlast: Signal<Out, Bit>,
    pub m_axis_tuser: Signal<Out, Bit>,
    pub m_axis_tvalid: Signal<Out, Bit>,
    pub m_axis_tready: Signal<In, Bit>,
    pub bad_len: Signal<Out, Bits<32>>,
    pub bad_opcode: Signal<Out, Bits<32>>,
    out: Skid<DW, KW>,
    // Stage A: the record.
    a_valid: DFF<Bit>,
    a_meta: DFF<Bits<META_W>>,
    // Stage B: the prepared header.
    b_valid: DFF<Bit>,
    b_img: DFF<Bits<IW>>,
    b_sum: DFF<Bits<32>>,
    b_hl: DFF<Bits<16>>,
    b_r: DFF<Bits<16>>,
    b_z: DFF<Bits<16>>,
    b_pay: DFF<Bits<16>>,
    b_known: DFF<Bit>,
    b_fits: DFF<Bit>,
    b_vlan: DFF<Bit>,
    b_tci: DFF<Bits<16>>,
    // Stage C: the frame.
    state: DFF<TxHeaderState>,
    img: DFF<Bits<IW>>,
    hl: DFF<Bits<16>>,
    r: DFF<Bits<16>>,
    z: DFF<Bits<16>>,
    want: DFF<Bits<32>>,
    got: DFF<Bits<32>>,
    carry: DFF<Bits<DW>>,
    /// The payload in hand was marked bad (for a frame ending in `Tail`).
    bad: DFF<Bit>,
    rem: DFF<Bits<16>>,
    n_bad_len: DFF<Bits<32>>,
    n_bad_op: DFF<Bits<32>>,
    // Stage B locals.
    opc: Signal<Local, Bits<8>>,
    ext_len: Signal<Local, Bits<16>>,
    ext_mask: Signal<Local, Bits<EXT_W>>,
    known: Signal<Local, Bit>,
    pay16: Signal<Local, Bits<16>>,
    negp: Signal<Local, Bits<16>>,
    pad: Signal<Local, Bits<16>>,
    hlen: Signal<Local, Bits<16>>,
    ip_len: Signal<Local, Bits<16>>,
    udp_len: Signal<Local, Bits<16>>,
    tos: Signal<Local, Bits<8>>,
    ttl: Signal<Local, Bits<8>>,
    sip: Signal<Local, Bits<32>>,
    dip: Signal<Local, Bits<32>>,
    sum: Signal<Local, Bits<32>>,
    img_b: Signal<Local, Bits<IW>>,
    vgrp: Signal<Local, Bits<16>>,
    vl: Signal<Local, Bit>,
    tci: Signal<Local, Bits<16>>,
    // Stage C locals.
    s1: Signal<Local, Bits<32>>,
    s2: Signal<Local, Bits<16>>,
    ext_v: Signal<Local, Bits<EXT_W>>,
    ck: Signal<Local, Bits<16>>,
    this_beat: Signal<Local, Bits<DW>>,
    next_beat: Signal<Local, Bits<DW>>,
    hb: Signal<Local, Bits<DW>>,
    hb2: Signal<Local, Bits<DW>>,
    take: Signal<Local, Bit>,
    n: Signal<Local, Bits<16>>,
    pm: Signal<Local, Bits<DW>>,
    sh: Signal<Local, Bits<16>>,
    shi: Signal<Local, Bits<16>>,
    merged: Signal<Local, Bits<DW>>,
    spill: Signal<Local, Bits<DW>>,
    total: Signal<Local, Bits<16>>,
    got_next: Signal<Local, Bits<32>>,
    keep_t: Signal<Local, Bits<KW>>,
    keep_rem: Signal<Local, Bits<KW>>,
    img_u: Signal<Local, Bits<IW>>,
    img_t: Signal<Local, Bits<IW>>,
    tag32: Signal<Local, Bits<32>>,
    // Constants.
    base_img: Constant<Bits<IW>>,
    mp: Vec<Constant<Bits<10>>>,
    ip: Vec<Constant<Bits<16>>>,
    op_code: Vec<Constant<Bits<8>>>,
    op_ext: Vec<Constant<Bits<16>>>,
    op_mask: Vec<Constant<Bits<EXT_W>>>,
    top_sh: Vec<Constant<Bits<16>>>,
    nc: Vec<Constant<Bits<16>>>,
    top_at: Constant<Bits<10>>,
    top2_at: Constant<Bits<10>>,
    lane_sh: Vec<Constant<Bits<16>>>,
    byte0: Constant<Bits<DW>>,
    dmask: Vec<Constant<Bits<DW>>>,
    keepc: Vec<Constant<Bits<KW>>>,
    kw: Constant<Bits<16>>,
    kw_log: Constant<Bits<16>>,
    kw_m1: Constant<Bits<16>>,
    dw: Constant<Bits<16>>,
    base_len: Constant<Bits<16>>,
    ip_fixed: Constant<Bits<16>>,
    udp_fixed: Constant<Bits<16>>,
    sum_fixed: Constant<Bits<32>>,
    icrc_len: Constant<Bits<16>>,
    max_pay: Constant<Bits<16>>,
    full_keep: Constant<Bits<KW>>,
    // 802.1Q: the addresses stay on top, the rest moves down by the tag.
    keep_top: Constant<Bits<IW>>,
    keep_low: Constant<Bits<IW>>,
    tag_at: Constant<Bits<16>>,
    tag_bits: Constant<Bits<16>>,
    tag_len: Constant<Bits<16>>,
    tpid: Constant<Bits<32>>,
}

/// Metadata fields in the order of `TxHeader::mp`.
const META_FIELDS: [&str; 18] = [
    "dst_mac", "src_mac", "src_ip", "dst_ip", "src_port", "dscp", "ecn", "ttl", "opcode", "se",
    "ack_req", "pkey", "dest_qp", "psn", "pay_len", "ext", "vlan", "ext2",
];
/// Bits of extended headers (`ext` then `ext2`, one big-endian value).
const EXT_W: usize = TX_EXT_LEN * 8;
/// Header fields the kernel places, as (layout, offset of the header, field), in the order
/// of `TxHeader::ip`.
const IMG_FIELDS: [(&Layout, usize, &str); 17] = [
    (&ETH, ETH_OFF, "dst"),
    (&ETH, ETH_OFF, "src"),
    (&IPV4, IP_OFF, "dscp"),
    (&IPV4, IP_OFF, "ecn"),
    (&IPV4, IP_OFF, "total_len"),
    (&IPV4, IP_OFF, "ttl"),
    (&IPV4, IP_OFF, "checksum"),
    (&IPV4, IP_OFF, "src"),
    (&IPV4, IP_OFF, "dst"),
    (&UDP, UDP_OFF, "src_port"),
    (&UDP, UDP_OFF, "len"),
    (&BTH, BTH_OFF, "opcode"),
    (&BTH, BTH_OFF, "se"),
    (&BTH, BTH_OFF, "pad"),
    (&BTH, BTH_OFF, "pkey"),
    (&BTH, BTH_OFF, "dest_qp"),
    (&BTH, BTH_OFF, "ack_req"),
];
// Indices into `ip` and `mp`, named for the kernel.
const I_PSN: usize = 17;
const I_EXT: usize = 18;

/// The constant bytes of every header (version, lengths that never change, protocol numbers,
/// ports), in wire order; the kernel ORs the rest in.
fn constant_header() -> Vec<u8> {
    let mut h = vec![0u8; TX_MAX_HDR_LEN];
    let set = |h: &mut Vec<u8>, l: &Layout, off: usize, name: &str, v: u128| {
        let f = l.find(name).expect("header field");
        l.set(f, &mut h[off..off + l.len], v);
    };
    set(&mut h, &ETH, ETH_OFF, "ethertype", ETHERTYPE_IPV4.into());
    set(&mut h, &IPV4, IP_OFF, "version", 4);
    set(&mut h, &IPV4, IP_OFF, "ihl", (IPV4.len / 4) as u128);
    set(&mut h, &IPV4, IP_OFF, "flags", IPV4_FLAGS_DF.into());
    set(&mut h, &IPV4, IP_OFF, "protocol", IP_PROTO_UDP.into());
    set(&mut h, &UDP, UDP_OFF, "dst_port", ROCEV2_UDP_PORT.into());
    h
}

/// The 16-bit one's-complement sum of the constant IPv4 header words.
fn constant_ip_sum(h: &[u8]) -> u64 {
    h[IP_OFF..IP_OFF + IPV4.len]
        .chunks(2)
        .map(|w| u64::from(u16::from_be_bytes([w[0], w[1]])))
        .sum()
}

impl<const DW: usize, const KW: usize, const IW: usize> TxHeader<DW, KW, IW> {
    pub fn new() -> Self {
        assert_eq!(DW, KW * 8, "keep width must be the data width in bytes");
        log2_exact(KW);
        assert!(
            IW >= TX_MAX_HDR_LEN * 8 && IW.is_multiple_of(DW) && IW >= 2 * DW && IW <= 1024,
            "the header image holds the longest header in whole beats"
        );
        const {
            assert!(
                META_W > 512 && META_W <= 1024,
                "record fields are indexed with 10 bits"
            )
        };
        assert_eq!(
            TX_META.field("ext").width + TX_META.field("ext2").width,
            EXT_W,
            "ext then ext2 are the extended headers"
        );
        let hdr = constant_header();
        // Byte i of the frame lives in image bits IW-8-8i ..= IW-1-8i.
        let mut bools = vec![false; IW];
        for (i, b) in hdr.iter().enumerate() {
            for j in 0..8 {
                bools[IW - 8 - 8 * i + j] = (b >> j) & 1 == 1;
            }
        }
        let at = |l: &Layout, off: usize, name: &str| -> Constant<Bits<16>> {
            let f = l.find(name).expect("header field");
            k((IW - 8 * (off + l.len) + l.lsb(f)) as u64)
        };
        let mut ip: Vec<Constant<Bits<16>>> =
            IMG_FIELDS.iter().map(|(l, o, n)| at(l, *o, n)).collect();
        ip.push(at(&BTH, BTH_OFF, "psn"));
        ip.push(k((IW - 8 * EXT_OFF - 8 * TX_EXT_LEN) as u64));
        assert_eq!(ip.len(), I_EXT + 1);
        assert_eq!(IMG_FIELDS.len(), I_PSN);
        let mp = META_FIELDS
            .iter()
            .map(|n| k(TX_META.find(n).expect("TX_META field").bit as u64))
            .collect();
        let ops = tx_opcodes();
        // The top `e` bytes of the extended-header value.
        let ext_mask = |e: usize| -> Vec<bool> { (0..EXT_W).map(|b| b >= EXT_W - 8 * e).collect() };
        let ip_fixed = IPV4.len + UDP.len + BTH.len + ICRC_LEN;
        // Image bits of the addresses (`top`), or of everything from the tag's end down.
        let tag_mask = |top: bool| -> Vec<bool> {
            (0..IW)
                .map(|b| {
                    if top {
                        b >= IW - 8 * TAG_OFF
                    } else {
                        b < IW - 8 * (TAG_OFF + VLAN_TAG_LEN)
                    }
                })
                .collect()
        };
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_meta_tdata: Default::default(),
            s_meta_tvalid: Default::default(),
            s_meta_tready: Default::default(),
            s_pay_tdata: Default::default(),
            s_pay_tkeep: Default::default(),
            s_pay_tlast: Default::default(),
            s_pay_tuser: Default::default(),
            s_pay_tvalid: Default::default(),
            s_pay_tready: Default::default(),
            m_axis_tdata: Default::default(),
            m_axis_tkeep: Default::default(),
            m_axis_tlast: Default::default(),
            m_axis_tuser: Default::default(),
            m_axis_tvalid: Default::default(),
            m_axis_tready: Default::default(),
            bad_len: Default::default(),
            bad_opcode: Default::default(),
            out: Skid::new(),
            a_valid: Default::default(),
            a_meta: Default::default(),
            b_valid: Default::default(),
            b_img: Default::default(),
            b_sum: Default::default(),
            b_hl: Default::default(),
            b_r: Default::default(),
            b_z: Default::default(),
            b_pay: Default::default(),
            b_known: Default::default(),
            b_fits: Default::default(),
            b_vlan: Default::default(),
            b_tci: Default::default(),
            state: Default::default(),
            img: Default::default(),
            hl: Default::default(),
            r: Default::default(),
            z: Default::default(),
            want: Default::default(),
            got: Default::default(),
            carry: Default::default(),
            bad: Default::default(),
            rem: Default::default(),
            n_bad_len: Default::default(),
            n_bad_op: Default::default(),
            opc: Default::default(),
            ext_len: Default::default(),
            ext_mask: Default::default(),
            known: Default::default(),
            pay16: Default::default(),
            negp: Default::default(),
            pad: Default::default(),
            hlen: Default::default(),
            ip_len: Default::default(),
            udp_len: Default::default(),
            tos: Default::default(),
            ttl: Default::default(),
            sip: Default::default(),
            dip: Default::default(),
            sum: Default::default(),
            img_b: Default::default(),
            vgrp: Default::default(),
            vl: Default::default(),
            tci: Default::default(),
            s1: Default::default(),
            s2: Default::default(),
            ext_v: Default::default(),
            ck: Default::default(),
            this_beat: Default::default(),
            next_beat: Default::default(),
            hb: Default::default(),
            hb2: Default::default(),
            take: Default::default(),
            n: Default::default(),
            pm: Default::default(),
            sh: Default::default(),
            shi: Default::default(),
            merged: Default::default(),
            spill: Default::default(),
            total: Default::default(),
            got_next: Default::default(),
            keep_t: Default::default(),
            keep_rem: Default::default(),
            img_u: Default::default(),
            img_t: Default::default(),
            tag32: Default::default(),
            base_img: Constant::new(bits_from_bools::<IW>(&bools)),
            mp,
            ip,
            op_code: ops.iter().map(|&(c, _)| k(c.into())).collect(),
            op_ext: ops.iter().map(|&(_, e)| k(e as u64)).collect(),
            op_mask: ops
                .iter()
                .map(|&(_, e)| Constant::new(bits_from_bools::<EXT_W>(&ext_mask(e))))
                .collect(),
            top_sh: (0..KW).map(|l| k((DW - 8 - 8 * l) as u64)).collect(),
            nc: counts(KW),
            top_at: k((IW - DW) as u64),
            top2_at: k((IW - 2 * DW) as u64),
            lane_sh: (0..KW).map(|l| k((8 * l) as u64)).collect(),
            byte0: k(0xFF),
            dmask: data_of_count::<DW>(),
            keepc: keep_of_count::<KW>(),
            kw: k(KW as u64),
            kw_log: k(log2_exact(KW) as u64),
            kw_m1: k(KW as u64 - 1),
            dw: k(DW as u64),
            base_len: k(TX_BASE_HDR_LEN as u64),
            ip_fixed: k(ip_fixed as u64),
            udp_fixed: k((ip_fixed - IPV4.len) as u64),
            sum_fixed: k(constant_ip_sum(&hdr)),
            icrc_len: k(ICRC_LEN as u64),
            max_pay: k(TX_MAX_PAYLOAD as u64),
            full_keep: ones::<KW>(),
            keep_top: Constant::new(bits_from_bools::<IW>(&tag_mask(true))),
            keep_low: Constant::new(bits_from_bools::<IW>(&tag_mask(false))),
            tag_at: k((IW - 8 * (TAG_OFF + VLAN_TAG_LEN)) as u64),
            tag_bits: k(8 * VLAN_TAG_LEN as u64),
            tag_len: k(VLAN_TAG_LEN as u64),
            tpid: k(u64::from(ETHERTYPE_VLAN) << 16),
        }
    }
}

impl<const DW: usize, const KW: usize, const IW: usize> Default for TxHeader<DW, KW, IW> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const DW: usize, const KW: usize, const IW: usize> Logic for TxHeader<DW, KW, IW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, a_valid, a_meta, b_valid, b_img, b_sum, b_hl, b_r, b_z, b_pay, b_known,
            b_fits, b_vlan, b_tci, state, img, hl, r, z, want, got, carry, bad, rem, n_bad_len,
            n_bad_op
        );
        self.out.clk.next = self.clk.val();
        self.out.rst.next = self.rst.val();
        self.m_axis_tdata.next = self.out.m_axis_tdata.val();
        self.m_axis_tkeep.next = self.out.m_axis_tkeep.val();
        self.m_axis_tlast.next = self.out.m_axis_tlast.val();
        self.m_axis_tuser.next = self.out.m_axis_tuser.val();
        self.m_axis_tvalid.next = self.out.m_axis_tvalid.val();
        self.out.m_axis_tready.next = self.m_axis_tready.val();
        self.bad_len.next = self.n_bad_len.q.val();
        self.bad_opcode.next = self.n_bad_op.q.val();

        // Stage A: take a record when the slot is free.
        self.s_meta_tready.next = !self.a_valid.q.val();
        if !self.a_valid.q.val() & self.s_meta_tvalid.val() {
            self.a_valid.d.next = true;
            self.a_meta.d.next = self.s_meta_tdata.val();
        }

        // Stage B: lengths, the header image without its checksum, the checksum's sum.
        self.opc.next = self.a_meta.q.val().get_bits::<8>(self.mp[8].val().index());
        self.ext_len.next = bits::<16>(0);
        self.ext_mask.next = bits::<EXT_W>(0);
        self.known.next = false;
        for i in 0..self.op_code.len() {
            if self.opc.val() == self.op_code[i].val() {
                self.ext_len.next = self.op_ext[i].val();
                self.ext_mask.next = self.op_mask[i].val();
                self.known.next = true;
            }
        }
        self.pay16.next = bit_cast::<16, 13>(
            self.a_meta
                .q
                .val()
                .get_bits::<13>(self.mp[14].val().index()),
        );
        self.negp.next = bits::<16>(0) - self.pay16.val();
        self.pad.next = self.negp.val() & bits::<16>(3);
        // The record's 802.1Q group (spec::meta::VLAN_GROUP_W): vlan, pcp, vid from bit 0.
        self.vgrp.next = self
            .a_meta
            .q
            .val()
            .get_bits::<VLAN_GROUP_W>(self.mp[16].val().index());
        self.vl.next = (self.vgrp.val() & bits::<16>(1)) != bits::<16>(0);
        self.tci.next = (((self.vgrp.val() >> 1) & bits::<16>(7)) << 13) | (self.vgrp.val() >> 4);
        self.hlen.next = self.base_len.val() + self.ext_len.val();
        if self.vl.val() {
            self.hlen.next = self.base_len.val() + self.ext_len.val() + self.tag_len.val();
        }
        self.ip_len.next =
            self.ip_fixed.val() + self.ext_len.val() + self.pay16.val() + self.pad.val();
        self.udp_len.next =
            self.udp_fixed.val() + self.ext_len.val() + self.pay16.val() + self.pad.val();
        self.tos.next =
            (bit_cast::<8, 6>(self.a_meta.q.val().get_bits::<6>(self.mp[5].val().index())) << 2)
                | bit_cast::<8, 2>(self.a_meta.q.val().get_bits::<2>(self.mp[6].val().index()));
        self.ttl.next = self.a_meta.q.val().get_bits::<8>(self.mp[7].val().index());
        self.sip.next = self.a_meta.q.val().get_bits::<32>(self.mp[2].val().index());
        self.dip.next = self.a_meta.q.val().get_bits::<32>(self.mp[3].val().index());
        self.sum.next = self.sum_fixed.val()
            + bit_cast::<32, 8>(self.tos.val())
            + (bit_cast::<32, 8>(self.ttl.val()) << 8)
            + bit_cast::<32, 16>(self.ip_len.val())
            + (self.sip.val() >> 16)
            + (self.sip.val() & bits::<32>(0xFFFF))
            + (self.dip.val() >> 16)
            + (self.dip.val() & bits::<32>(0xFFFF));
        self.ext_v.next = ((bit_cast::<EXT_W, 128>(
            self.a_meta
                .q
                .val()
                .get_bits::<128>(self.mp[15].val().index()),
        ) << 96)
            | bit_cast::<EXT_W, 96>(
                self.a_meta
                    .q
                    .val()
                    .get_bits::<96>(self.mp[17].val().index()),
            ))
            & self.ext_mask.val();
        self.img_b.next = self.base_img.val()
            | (bit_cast::<IW, 48>(self.a_meta.q.val().get_bits::<48>(self.mp[0].val().index()))
                << self.ip[0].val())
            | (bit_cast::<IW, 48>(self.a_meta.q.val().get_bits::<48>(self.mp[1].val().index()))
                << self.ip[1].val())
            | (bit_cast::<IW, 6>(self.a_meta.q.val().get_bits::<6>(self.mp[5].val().index()))
                << self.ip[2].val())
            | (bit_cast::<IW, 2>(self.a_meta.q.val().get_bits::<2>(self.mp[6].val().index()))
                << self.ip[3].val())
            | (bit_cast::<IW, 16>(self.ip_len.val()) << self.ip[4].val())
            | (bit_cast::<IW, 8>(self.ttl.val()) << self.ip[5].val())
            | (bit_cast::<IW, 32>(self.sip.val()) << self.ip[7].val())
            | (bit_cast::<IW, 32>(self.dip.val()) << self.ip[8].val())
            | (bit_cast::<IW, 16>(self.a_meta.q.val().get_bits::<16>(self.mp[4].val().index()))
                << self.ip[9].val())
            | (bit_cast::<IW, 16>(self.udp_len.val()) << self.ip[10].val())
            | (bit_cast::<IW, 8>(self.opc.val()) << self.ip[11].val())
            | (bit_cast::<IW, 1>(self.a_meta.q.val().get_bits::<1>(self.mp[9].val().index()))
                << self.ip[12].val())
            | (bit_cast::<IW, 16>(self.pad.val()) << self.ip[13].val())
            | (bit_cast::<IW, 16>(
                self.a_meta
                    .q
                    .val()
                    .get_bits::<16>(self.mp[11].val().index()),
            ) << self.ip[14].val())
            | (bit_cast::<IW, 24>(
                self.a_meta
                    .q
                    .val()
                    .get_bits::<24>(self.mp[12].val().index()),
            ) << self.ip[15].val())
            | (bit_cast::<IW, 1>(self.a_meta.q.val().get_bits::<1>(self.mp[10].val().index()))
                << self.ip[16].val())
            | (bit_cast::<IW, 24>(
                self.a_meta
                    .q
                    .val()
                    .get_bits::<24>(self.mp[13].val().index()),
            ) << self.ip[17].val())
            | (bit_cast::<IW, EXT_W>(self.ext_v.val()) << self.ip[18].val());
        if self.a_valid.q.val() & !self.b_valid.q.val() {
            self.a_valid.d.next = false;
            self.b_valid.d.next = true;
            self.b_img.d.next = self.img_b.val();
            self.b_sum.d.next = self.sum.val();
            self.b_hl.d.next = self.hlen.val() >> self.kw_log.val();
            self.b_r.d.next = self.hlen.val() & self.kw_m1.val();
            self.b_z.d.next = self.pad.val() + self.icrc_len.val();
            self.b_pay.d.next = self.pay16.val();
            self.b_known.d.next = self.known.val();
            self.b_fits.d.next = self.pay16.val() <= self.max_pay.val();
            self.b_vlan.d.next = self.vl.val();
            self.b_tci.d.next = self.tci.val();
        }

        // Stage C.
        self.s1.next = (self.b_sum.q.val() & bits::<32>(0xFFFF)) + (self.b_sum.q.val() >> 16);
        // At most 0xFFFF + 0xF: one more fold cannot carry out of 16 bits.
        self.s2.next =
            bit_cast::<16, 32>((self.s1.val() & bits::<32>(0xFFFF)) + (self.s1.val() >> 16));
        self.ck.next = !self.s2.val();
        // The image's next beat and the one after, bytes reversed into lanes.
        self.this_beat.next = self.img.q.val().get_bits::<DW>(self.top_at.val().index());
        self.next_beat.next = self.img.q.val().get_bits::<DW>(self.top2_at.val().index());
        self.hb.next = bits::<DW>(0);
        self.hb2.next = bits::<DW>(0);
        for l in 0..KW {
            self.hb.next = self.hb.val()
                | (((self.this_beat.val() >> self.top_sh[l].val()) & self.byte0.val())
                    << self.lane_sh[l].val());
            self.hb2.next = self.hb2.val()
                | (((self.next_beat.val() >> self.top_sh[l].val()) & self.byte0.val())
                    << self.lane_sh[l].val());
        }
        // A payload beat: its bytes, masked, after the `r` bytes carried.
        self.n.next = self.kw.val();
        if self.s_pay_tlast.val() {
            self.n.next = bits::<16>(0);
            for i in 0..(KW + 1) {
                if self.s_pay_tkeep.val() == self.keepc[i].val() {
                    self.n.next = self.nc[i].val();
                }
            }
        }
        self.pm.next = bits::<DW>(0);
        for i in 0..(KW + 1) {
            if self.n.val() == self.nc[i].val() {
                self.pm.next = self.s_pay_tdata.val() & self.dmask[i].val();
            }
        }
        self.sh.next = self.r.q.val() << 3;
        self.shi.next = self.dw.val() - self.sh.val();
        self.merged.next = self.carry.q.val() | (self.pm.val() << self.sh.val());
        self.spill.next = bits::<DW>(0);
        if self.r.q.val() != bits::<16>(0) {
            self.spill.next = self.pm.val() >> self.shi.val();
        }
        self.total.next = self.r.q.val() + self.n.val() + self.z.q.val();
        self.got_next.next = self.got.q.val() + bit_cast::<32, 16>(self.n.val());
        self.keep_t.next = self.full_keep.val();
        self.keep_rem.next = self.full_keep.val();
        for i in 0..(KW + 1) {
            if self.total.val() == self.nc[i].val() {
                self.keep_t.next = self.keepc[i].val();
            }
            if self.rem.q.val() == self.nc[i].val() {
                self.keep_rem.next = self.keepc[i].val();
            }
        }

        self.out.s_axis_tvalid.next = false;
        self.out.s_axis_tdata.next = self.hb.val();
        self.out.s_axis_tkeep.next = self.full_keep.val();
        self.out.s_axis_tlast.next = false;
        self.out.s_axis_tuser.next = false;
        self.s_pay_tready.next = ((self.state.q.val() == TxHeaderState::Body)
            & self.out.s_axis_tready.val())
            | (self.state.q.val() == TxHeaderState::Drop);
        self.take.next = self.s_pay_tready.val() & self.s_pay_tvalid.val();
        self.tag32.next = self.tpid.val() | bit_cast::<32, 16>(self.b_tci.q.val());
        // The untagged image with its checksum; tagged: addresses, tag, the rest moved down.
        self.img_u.next =
            self.b_img.q.val() | (bit_cast::<IW, 16>(self.ck.val()) << self.ip[6].val());
        self.img_t.next = (self.img_u.val() & self.keep_top.val())
            | ((self.img_u.val() >> self.tag_bits.val()) & self.keep_low.val())
            | (bit_cast::<IW, 32>(self.tag32.val()) << self.tag_at.val());
        match self.state.q.val() {
            TxHeaderState::Idle => {
                if self.b_valid.q.val() {
                    self.b_valid.d.next = false;
                    self.img.d.next = self.img_u.val();
                    if self.b_vlan.q.val() {
                        self.img.d.next = self.img_t.val();
                    }
                    self.hl.d.next = self.b_hl.q.val();
                    self.r.d.next = self.b_r.q.val();
                    self.z.d.next = self.b_z.q.val();
                    self.want.d.next = bit_cast::<32, 16>(self.b_pay.q.val());
                    self.got.d.next = bits::<32>(0);
                    self.state.d.next = TxHeaderState::Hdr;
                    if !self.b_fits.q.val() {
                        self.n_bad_len.d.next = self.n_bad_len.q.val() + bits::<32>(1);
                        self.state.d.next = TxHeaderState::Drop;
                    }
                    if !self.b_known.q.val() {
                        self.n_bad_op.d.next = self.n_bad_op.q.val() + bits::<32>(1);
                        self.state.d.next = TxHeaderState::Drop;
                    }
                }
            }
            TxHeaderState::Hdr => {
                if self.hl.q.val() == bits::<16>(0) {
                    // Only when the header is shorter than a beat: it all goes in front.
                    self.carry.d.next = self.hb.val();
                    self.state.d.next = TxHeaderState::Body;
                } else if self.out.s_axis_tready.val() {
                    self.out.s_axis_tvalid.next = true;
                    self.img.d.next = self.img.q.val() << self.dw.val();
                    self.hl.d.next = self.hl.q.val() - bits::<16>(1);
                    if self.hl.q.val() == bits::<16>(1) {
                        self.carry.d.next = self.hb2.val();
                        self.state.d.next = TxHeaderState::Body;
                    }
                }
            }
            TxHeaderState::Body => {
                if self.take.val() {
                    self.out.s_axis_tvalid.next = true;
                    self.out.s_axis_tdata.next = self.merged.val();
                    self.carry.d.next = self.spill.val();
                    self.got.d.next = self.got_next.val();
                    if self.s_pay_tlast.val() {
                        self.bad.d.next = self.s_pay_tuser.val();
                        if self.got_next.val() != self.want.q.val() {
                            self.n_bad_len.d.next = self.n_bad_len.q.val() + bits::<32>(1);
                        }
                        if self.total.val() > self.kw.val() {
                            self.rem.d.next = self.total.val() - self.kw.val();
                            self.state.d.next = TxHeaderState::Tail;
                        } else {
                            self.out.s_axis_tkeep.next = self.keep_t.val();
                            self.out.s_axis_tlast.next = true;
                            self.out.s_axis_tuser.next = self.s_pay_tuser.val();
                            self.state.d.next = TxHeaderState::Idle;
                        }
                    }
                }
            }
            TxHeaderState::Tail => {
                if self.out.s_axis_tready.val() {
                    self.out.s_axis_tvalid.next = true;
                    self.out.s_axis_tdata.next = self.carry.q.val();
                    self.carry.d.next = bits::<DW>(0);
                    if self.rem.q.val() > self.kw.val() {
                        self.rem.d.next = self.rem.q.val() - self.kw.val();
                    } else {
                        self.out.s_axis_tkeep.next = self.keep_rem.val();
                        self.out.s_axis_tlast.next = true;
                        self.out.s_axis_tuser.next = self.bad.q.val();
                        self.state.d.next = TxHeaderState::Idle;
                    }
                }
            }
            TxHeaderState::Drop => {
                if self.take.val() & self.s_pay_tlast.val() {
                    self.state.d.next = TxHeaderState::Idle;
                }
            }
        }
        if self.rst.val() {
            self.a_valid.d.next = false;
            self.b_valid.d.next = false;
            self.state.d.next = TxHeaderState::Idle;
            self.n_bad_len.d.next = bits::<32>(0);
            self.n_bad_op.d.next = bits::<32>(0);
        }
    }
}
