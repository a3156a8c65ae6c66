//! `KeyCheck`: a key and a range checked against the NIC's copy of the memory region table,
//! so the NIC, not only the driver, decides what a work request may touch. The requester
//! checks every local buffer of every WQE here before it reads a byte of it; a WQE that user
//! code wrote straight into the ring with a forged key is refused without any DMA.
//!
//! A request passes when the key names a registered region and the range is inside it:
//! - the key's table entry (index = key bits 15..8) holds the whole key (index and tag), and
//!   the tag (bits 7..0) is not 0, so a cleared entry (key 0) matches nothing;
//! - the region is in the request's protection domain;
//! - the region has every access right the request needs (`need`, `spec::queues::ACCESS_*`;
//!   0 for a local read, which IBA allows on every region);
//! - `va <= addr` and `addr + len <= va + len(region)`, in 65-bit arithmetic (a range that
//!   wraps the address space is outside every region).
//!
//! A zero-length request passes whatever its key: it touches no memory, so there is nothing
//! to protect (the driver's `post_send` accepts any key on one too).
//!
//! Ports:
//! - `s_mrw_{en,index,data}`: BAR0's MR table write-through (`Bar0::m_mrw_*`); this block keeps
//!   its own copy of the table's fields.
//! - `s_{valid,key,pdn,addr,len,need}`: one request per cycle at most, no back-pressure.
//! - `m_valid`, `m_ok`: the answer, `LATENCY` cycles after its request, in request order.
//!   Both are registers.
//!
//! ```text
//!  s_* --> [0: table read at the key's index; addr + len] --> [1: the entry registered]
//!      --> [2: key, PD, rights, va <= addr, va + len] --> [3: end <= region end] --> m_*
//! ```
//! Each stage does at most one 64-bit add or compare, so the block runs at the 10g clock.

use crate::host::k;
use crate::prelude::*;
use ferroce_spec::queues::MR_CTX;

/// MR table address width (256 regions) and entry width, as BAR0 stores them.
pub const QA: usize = 8;
pub const MR_W: usize = 256;
/// Bits of an entry this block keeps: every `MR_CTX` field lies below.
const MRS_W: usize = 184;
/// Cycles from a request to its answer.
pub const LATENCY: usize = 4;

#[derive(LogicBlock)]
pub struct KeyCheck {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_mrw_en: Signal<In, Bit>,
    pub s_mrw_index: Signal<In, Bits<QA>>,
    pub s_mrw_data: Signal<In, Bits<MR_W>>,
    pub s_valid: Signal<In, Bit>,
    pub s_key: Signal<In, Bits<32>>,
    pub s_pdn: Signal<In, Bits<16>>,
    pub s_addr: Signal<In, Bits<64>>,
    pub s_len: Signal<In, Bits<32>>,
    pub s_need: Signal<In, Bits<8>>,
    pub m_valid: Signal<Out, Bit>,
    pub m_ok: Signal<Out, Bit>,
    mr_ram: RAM<Bits<MRS_W>, QA>,
    // Stage 1: the request, its end, the entry read.
    v1: DFF<Bit>,
    key1: DFF<Bits<32>>,
    pdn1: DFF<Bits<16>>,
    addr1: DFF<Bits<64>>,
    end1: DFF<Bits<65>>,
    need1: DFF<Bits<8>>,
    zero1: DFF<Bit>,
    // Stage 2: the entry registered.
    v2: DFF<Bit>,
    key2: DFF<Bits<32>>,
    pdn2: DFF<Bits<16>>,
    addr2: DFF<Bits<64>>,
    end2: DFF<Bits<65>>,
    need2: DFF<Bits<8>>,
    zero2: DFF<Bit>,
    e_va: DFF<Bits<64>>,
    e_len: DFF<Bits<64>>,
    e_key: DFF<Bits<32>>,
    e_pdn: DFF<Bits<16>>,
    e_acc: DFF<Bits<8>>,
    // Stage 3: everything but the upper bound decided.
    v3: DFF<Bit>,
    zero3: DFF<Bit>,
    pass3: DFF<Bit>,
    end3: DFF<Bits<65>>,
    e_end3: DFF<Bits<65>>,
    // The answer.
    v4: DFF<Bit>,
    ok4: DFF<Bit>,
    x_va: Constant<Bits<8>>,
    x_len: Constant<Bits<8>>,
    x_key: Constant<Bits<8>>,
    x_pdn: Constant<Bits<8>>,
    x_acc: Constant<Bits<8>>,
}

impl KeyCheck {
    pub fn new() -> Self {
        assert!(MR_CTX.fields.iter().all(|f| f.bit + f.width <= MRS_W));
        let at = |name: &str| k(MR_CTX.lsb(&MR_CTX.field(name)) as u64);
        Self {
            clk: Default::default(),
            rst: Default::default(),
            s_mrw_en: Default::default(),
            s_mrw_index: Default::default(),
            s_mrw_data: Default::default(),
            s_valid: Default::default(),
            s_key: Default::default(),
            s_pdn: Default::default(),
            s_addr: Default::default(),
            s_len: Default::default(),
            s_need: Default::default(),
            m_valid: Default::default(),
            m_ok: Default::default(),
            mr_ram: RAM::default(),
            v1: Default::default(),
            key1: Default::default(),
            pdn1: Default::default(),
            addr1: Default::default(),
            end1: Default::default(),
            need1: Default::default(),
            zero1: Default::default(),
            v2: Default::default(),
            key2: Default::default(),
            pdn2: Default::default(),
            addr2: Default::default(),
            end2: Default::default(),
            need2: Default::default(),
            zero2: Default::default(),
            e_va: Default::default(),
            e_len: Default::default(),
            e_key: Default::default(),
            e_pdn: Default::default(),
            e_acc: Default::default(),
            v3: Default::default(),
            zero3: Default::default(),
            pass3: Default::default(),
            end3: Default::default(),
            e_end3: Default::default(),
            v4: Default::default(),
            ok4: Default::default(),
            x_va: at("va"),
            x_len: at("len"),
            x_key: at("key"),
            x_pdn: at("pdn"),
            x_acc: at("access"),
        }
    }
}

impl Default for KeyCheck {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for KeyCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clk, v1, key1, pdn1, addr1, end1, need1, zero1, v2, key2, pdn2, addr2, end2,
            need2, zero2, e_va, e_len, e_key, e_pdn, e_acc, v3, zero3, pass3, end3, e_end3, v4,
            ok4
        );
        self.mr_ram.read_clock.next = self.clk.val();
        self.mr_ram.write_clock.next = self.clk.val();
        self.mr_ram.write_address.next = self.s_mrw_index.val();
        self.mr_ram.write_data.next = self.s_mrw_data.val().get_bits::<MRS_W>(0);
        self.mr_ram.write_enable.next = self.s_mrw_en.val();
        self.mr_ram.read_address.next = self.s_key.val().get_bits::<QA>(8);
        self.m_valid.next = self.v4.q.val();
        self.m_ok.next = self.ok4.q.val();

        // Stage 1.
        self.v1.d.next = self.s_valid.val();
        self.key1.d.next = self.s_key.val();
        self.pdn1.d.next = self.s_pdn.val();
        self.addr1.d.next = self.s_addr.val();
        self.end1.d.next =
            bit_cast::<65, 64>(self.s_addr.val()) + bit_cast::<65, 32>(self.s_len.val());
        self.need1.d.next = self.s_need.val();
        self.zero1.d.next = self.s_len.val() == bits::<32>(0);

        // Stage 2.
        self.v2.d.next = self.v1.q.val();
        self.key2.d.next = self.key1.q.val();
        self.pdn2.d.next = self.pdn1.q.val();
        self.addr2.d.next = self.addr1.q.val();
        self.end2.d.next = self.end1.q.val();
        self.need2.d.next = self.need1.q.val();
        self.zero2.d.next = self.zero1.q.val();
        self.e_va.d.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<64>(self.x_va.val().index());
        self.e_len.d.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<64>(self.x_len.val().index());
        self.e_key.d.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<32>(self.x_key.val().index());
        self.e_pdn.d.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<16>(self.x_pdn.val().index());
        self.e_acc.d.next = self
            .mr_ram
            .read_data
            .val()
            .get_bits::<8>(self.x_acc.val().index());

        // Stage 3.
        self.v3.d.next = self.v2.q.val();
        self.zero3.d.next = self.zero2.q.val();
        self.pass3.d.next = (self.e_key.q.val() == self.key2.q.val())
            & (self.key2.q.val().get_bits::<8>(0) != bits::<8>(0))
            & (self.e_pdn.q.val() == self.pdn2.q.val())
            & ((self.e_acc.q.val() & self.need2.q.val()) == self.need2.q.val())
            & (self.addr2.q.val() >= self.e_va.q.val());
        self.end3.d.next = self.end2.q.val();
        self.e_end3.d.next =
            bit_cast::<65, 64>(self.e_va.q.val()) + bit_cast::<65, 64>(self.e_len.q.val());

        // Stage 4: the answer.
        self.v4.d.next = self.v3.q.val();
        self.ok4.d.next =
            self.zero3.q.val() | (self.pass3.q.val() & (self.end3.q.val() <= self.e_end3.q.val()));

        if self.rst.val() {
            self.v1.d.next = false;
            self.v2.d.next = false;
            self.v3.d.next = false;
            self.v4.d.next = false;
        }
    }
}
