//! `ReqHeader`: the header of a memory read or write request for `bytes` bytes (1..=4096) at
//! byte address `addr`, in `spec::tlp`'s packed 128-bit form, registered: `hdr` takes the
//! new header on the clock edge where `load` is high and holds it otherwise. (Registered so a
//! kernel can drive the inputs and use `hdr` without Verilator seeing a loop through the
//! kernel's single always block.)
//!
//! The address goes out DW-aligned, the DW count covers the bytes, and the byte enables
//! trim the first and last DW (PCIe 2.2.5): one DW gets both ends in its first byte enables
//! and 0 in the last; 3-DW format below 4 GiB, 4-DW above. The requester ID is the NIC's.

use crate::host::{k, lsb};
use crate::prelude::*;
use ferroce_spec::tlp::{self, REQUEST};

#[derive(LogicBlock)]
pub struct ReqHeader {
    pub clk: Signal<In, Clock>,
    pub load: Signal<In, Bit>,
    pub addr: Signal<In, Bits<64>>,
    pub bytes: Signal<In, Bits<16>>,
    pub write: Signal<In, Bit>,
    pub tag: Signal<In, Bits<8>>,
    pub hdr: Signal<Out, Bits<128>>,
    held: DFF<Bits<128>>,
    next_hdr: Signal<Local, Bits<128>>,
    a0: Signal<Local, Bits<4>>,
    e: Signal<Local, Bits<4>>,
    dws: Signal<Local, Bits<16>>,
    fbe: Signal<Local, Bits<4>>,
    lmask: Signal<Local, Bits<4>>,
    one: Signal<Local, Bits<4>>,
    be: Signal<Local, Bits<8>>,
    fmt: Signal<Local, Bits<3>>,
    high: Signal<Local, Bit>,
    dw_addr: Signal<Local, Bits<64>>,
    dw_mask: Constant<Bits<64>>,
    rid: Constant<Bits<16>>,
    fmt_rd3: Constant<Bits<3>>,
    fmt_rd4: Constant<Bits<3>>,
    fmt_wr3: Constant<Bits<3>>,
    fmt_wr4: Constant<Bits<3>>,
    l_fmt: Constant<Bits<7>>,
    l_len: Constant<Bits<7>>,
    l_rid: Constant<Bits<7>>,
    l_tag: Constant<Bits<7>>,
    l_be: Constant<Bits<7>>,
    l_addr: Constant<Bits<7>>,
}

impl Default for ReqHeader {
    fn default() -> Self {
        assert_eq!(
            tlp::TYPE_MEM,
            0,
            "memory requests have type 0: only fmt is set"
        );
        Self {
            addr: Default::default(),
            bytes: Default::default(),
            write: Default::default(),
            tag: Default::default(),
            hdr: Default::default(),
            clk: Default::default(),
            load: Default::default(),
            held: Default::default(),
            next_hdr: Default::default(),
            a0: Default::default(),
            e: Default::default(),
            dws: Default::default(),
            fbe: Default::default(),
            lmask: Default::default(),
            one: Default::default(),
            be: Default::default(),
            fmt: Default::default(),
            high: Default::default(),
            dw_addr: Default::default(),
            dw_mask: k(!3u64),
            rid: k(tlp::NIC_REQUESTER_ID.into()),
            fmt_rd3: k(tlp::FMT_3DW_NO_DATA.into()),
            fmt_rd4: k(tlp::FMT_4DW_NO_DATA.into()),
            fmt_wr3: k(tlp::FMT_3DW_DATA.into()),
            fmt_wr4: k(tlp::FMT_4DW_DATA.into()),
            l_fmt: lsb(&REQUEST, "fmt"),
            l_len: lsb(&REQUEST, "length"),
            l_rid: lsb(&REQUEST, "requester_id"),
            l_tag: lsb(&REQUEST, "tag"),
            l_be: lsb(&REQUEST, "be"),
            l_addr: lsb(&REQUEST, "addr"),
        }
    }
}

impl Logic for ReqHeader {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clk, held);
        self.hdr.next = self.held.q.val();
        self.a0.next = bit_cast::<4, 64>(self.addr.val() & bits::<64>(3));
        self.e.next = bit_cast::<4, 16>(
            (bit_cast::<16, 4>(self.a0.val()) + self.bytes.val()) & bits::<16>(3),
        );
        self.dws.next = (bit_cast::<16, 4>(self.a0.val()) + self.bytes.val() + bits::<16>(3)) >> 2;
        self.fbe.next = bits::<4>(15) << self.a0.val();
        self.lmask.next = bits::<4>(15);
        if self.e.val() == bits::<4>(1) {
            self.lmask.next = bits::<4>(1);
        }
        if self.e.val() == bits::<4>(2) {
            self.lmask.next = bits::<4>(3);
        }
        if self.e.val() == bits::<4>(3) {
            self.lmask.next = bits::<4>(7);
        }
        self.one.next = self.fbe.val() & self.lmask.val();
        self.be.next = bit_cast::<8, 4>(self.fbe.val()) | (bit_cast::<8, 4>(self.lmask.val()) << 4);
        if self.dws.val() == bits::<16>(1) {
            self.be.next = bit_cast::<8, 4>(self.one.val());
        }
        self.high.next = (self.addr.val() >> 32) != bits::<64>(0);
        self.fmt.next = self.fmt_rd3.val();
        if self.write.val() {
            self.fmt.next = self.fmt_wr3.val();
        }
        if self.high.val() {
            self.fmt.next = self.fmt_rd4.val();
            if self.write.val() {
                self.fmt.next = self.fmt_wr4.val();
            }
        }
        self.dw_addr.next = self.addr.val() & self.dw_mask.val();
        self.next_hdr.next = (bit_cast::<128, 3>(self.fmt.val()) << self.l_fmt.val())
            | (bit_cast::<128, 10>(self.dws.val().get_bits::<10>(0)) << self.l_len.val())
            | (bit_cast::<128, 16>(self.rid.val()) << self.l_rid.val())
            | (bit_cast::<128, 8>(self.tag.val()) << self.l_tag.val())
            | (bit_cast::<128, 8>(self.be.val()) << self.l_be.val())
            | (bit_cast::<128, 64>(self.dw_addr.val()) << self.l_addr.val());
        if self.load.val() {
            self.held.d.next = self.next_hdr.val();
        }
    }
}
