//! Differential test of the BAR0 completer: the same random TLP stimulus (good and bad reads
//! and writes to registers, context staging, CMD, doorbell pages and junk addresses, with random
//! valid and random ready on both outputs) on rust-hdl's simulator and on the Verilator model,
//! every output compared after every clock edge.

use anyhow::Result;
use ferroce_hdl::config::ten_g;
use ferroce_hdl::designs::{bar0_params, Config};
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::{bits_from_u128, bits_from_u64};
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_spec::regs;
use ferroce_spec::tlp::{self, Header};
use ferroce_tests::diff::Outputs;
use ferroce_tests::{hdl_edge, rng, seed, soak};
use rand::seq::SliceRandom;
use rand::Rng;

fn random_request(r: &mut impl Rng) -> (Header, u64, u64, bool) {
    let addrs = [
        regs::addr("ID", "SCRATCH"),
        regs::TYPE,
        regs::addr("PORT", "MAC_LO"),
        regs::addr("OBJECT", "CTX0") + 4 * r.gen_range(0..regs::CTX_WORDS as u32),
        regs::addr("OBJECT", "STATUS"),
        regs::addr("COUNTERS", "MMIO_BAD"),
        regs::DB_OFFSET + regs::DB_STRIDE * r.gen_range(0..256) + 4 * r.gen_range(0..2),
        r.gen_range(0..regs::BAR0_SIZE) & !3,
    ];
    let mut addr = *addrs.choose(r).unwrap_or(&0);
    let mut data: u64 = r.gen();
    let cmd = regs::addr("OBJECT", "CMD");
    if r.gen_ratio(1, 8) {
        // A command: mostly good ones, some bad op/table/index.
        addr = cmd;
        let op: u32 = if r.gen_ratio(1, 8) {
            r.gen_range(0..16)
        } else {
            r.gen_range(1..3)
        };
        let table: u32 = if r.gen_ratio(1, 8) {
            r.gen_range(0..16)
        } else {
            r.gen_range(0..3)
        };
        let index: u32 = if r.gen_ratio(1, 8) {
            r.gen_range(0..1 << 24)
        } else {
            r.gen_range(0..256)
        };
        data = u64::from(op << 28 | table << 24 | index);
    }
    let write = r.gen_bool(0.5);
    let length = if r.gen_ratio(1, 10) {
        r.gen_range(0..4)
    } else {
        r.gen_range(1..3)
    };
    let mut be = if length == 1 { 0x0F } else { 0xFF };
    if r.gen_ratio(1, 12) {
        be = r.gen();
    }
    let fmt = match (write, r.gen::<bool>()) {
        (true, true) => tlp::FMT_4DW_DATA,
        (true, false) => tlp::FMT_3DW_DATA,
        (false, true) => tlp::FMT_4DW_NO_DATA,
        (false, false) => tlp::FMT_3DW_NO_DATA,
    };
    let h = Header {
        fmt,
        ty: if r.gen_ratio(1, 16) {
            tlp::TYPE_CPL
        } else {
            tlp::TYPE_MEM
        },
        length,
        requester_id: r.gen(),
        tag: r.gen(),
        be,
        addr: u64::from(addr),
        ..Header::default()
    };
    let keep = if write && length == 2 { 0xFF } else { 0x0F };
    let keep = if r.gen_ratio(1, 16) {
        r.gen::<u8>().into()
    } else {
        keep
    };
    (h, data, keep, r.gen_ratio(9, 10))
}

#[test]
fn bar0_64_rust_hdl_matches_verilator() -> Result<()> {
    let mut r = rng(seed("bar0_64_rust_hdl_matches_verilator"));
    let mut hdl = ten_g::Bar0::new(bar0_params(Config::TenG));
    hdl.connect_all();
    let mut tb = open_tb("ferroce_bar0_64", &BuildOptions::default())?;
    let edge = |b: &mut ten_g::Bar0| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    for _ in 0..3 {
        edge(&mut hdl);
    }
    hdl.rst.next = false;
    // open_tb reset the Verilator model with 2 cycles of reset and one after; match it.
    edge(&mut hdl);
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let hdr_in = tb.model_ref().port("s_req_hdr")?;
    let mut held: Option<(Header, u64, u64, bool)> = None;
    let (mut cpls, mut dbs) = (0, 0);
    let cycles = soak(4000);
    for cycle in 0..cycles {
        let valid = r.gen_bool(0.7);
        if held.is_none() {
            held = Some(random_request(&mut r));
        }
        let (h, data, keep, last) = held.unwrap_or_default();
        let (cpl_ready, db_ready) = (r.gen_bool(0.7), r.gen_bool(0.5));
        // The datapath's fence after an MR table write: done after a few cycles.
        let fence_done = r.gen_bool(0.3);
        hdl.s_fence_done.next = fence_done;
        hdl.s_req_hdr.next = bits_from_u128(h.pack());
        hdl.s_req_tdata.next = bits_from_u64(data);
        hdl.s_req_tkeep.next = bits_from_u64(keep);
        hdl.s_req_tlast.next = last;
        hdl.s_req_tvalid.next = valid;
        hdl.m_cpl_tready.next = cpl_ready;
        hdl.m_db_tready.next = db_ready;
        // The engines' running state, as BAR0's QUERY sees it.
        let (psq, prq, puna) = (r.gen::<u64>(), r.gen::<u64>() >> 16, r.gen::<u64>() >> 32);
        hdl.s_peek_sq.next = bits_from_u64(psq);
        hdl.s_peek_rq.next = bits_from_u64(prq);
        hdl.s_peek_cpl.next = bits_from_u64(puna);
        assert!(simulate(&mut hdl, 200));
        let taken = valid && hdl.s_req_tready.val();
        edge(&mut hdl);
        tb.model().set_u128(hdr_in, h.pack())?;
        tb.set("s_req_tdata", data)?;
        tb.set("s_req_tkeep", keep)?;
        tb.set("s_req_tlast", last.into())?;
        tb.set("s_req_tvalid", valid.into())?;
        tb.set("m_cpl_tready", cpl_ready.into())?;
        tb.set("m_db_tready", db_ready.into())?;
        tb.set("s_fence_done", fence_done.into())?;
        tb.set("s_peek_sq", psq)?;
        tb.set("s_peek_rq", prq)?;
        tb.set("s_peek_cpl", puna)?;
        tb.rising_edge()?;
        if taken {
            held = None;
        }
        outs.check(&hdl, tb.model_ref(), cycle as u64)?;
        cpls += usize::from(hdl.m_cpl_tvalid.val() && cpl_ready);
        dbs += usize::from(hdl.m_db_tvalid.val() && db_ready);
    }
    assert!(
        cpls > 50 && dbs > 3,
        "too few completions ({cpls}) or doorbells ({dbs})"
    );
    println!(
        "bar0_64: {cycles} cycles, {cpls} completions, {dbs} doorbells, all {} outputs equal",
        outs.len()
    );
    Ok(())
}
