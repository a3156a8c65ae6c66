//! The key check on its Verilator model, with the rust-hdl simulator beside it on the same
//! stimulus and every output compared every cycle (the differential test). The stimulus plays
//! BAR0's MR table writes (regions registered, re-registered with a new tag, cleared) and sends
//! a request on random cycles: mostly keys of the table with ranges around each region's
//! edges (first byte, last byte, one past either end, ranges that wrap 2^64), some with the
//! wrong PD, a stale tag, tag 0, a cleared entry, missing access rights, zero lengths. Each
//! answer must come `LATENCY` cycles after its request and say what IBA's rules say, computed
//! here in 128-bit arithmetic from the table as it stood when the request was made.

use anyhow::{ensure, Result};
use ferroce_hdl::prelude::*;
use ferroce_hdl::rc::key_check::LATENCY;
use ferroce_hdl::rc::KeyCheck;
use ferroce_hdl::util::bits_from_u64;
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_spec::queues::MR_CTX;
use ferroce_tests::diff::Outputs;
use ferroce_tests::{hdl_edge, rng, seed, soak, wide};
use rand::Rng;
use std::collections::VecDeque;

#[derive(Clone, Copy, Default, Debug)]
struct Region {
    va: u64,
    len: u64,
    key: u32,
    pdn: u16,
    access: u8,
}

impl Region {
    fn image(&self) -> Vec<u8> {
        let mut img = vec![0u8; 32];
        let mut put = |name: &str, v: u128| MR_CTX.set(&MR_CTX.field(name), &mut img, v);
        put("va", self.va.into());
        put("len", self.len.into());
        put("key", self.key.into());
        put("pdn", self.pdn.into());
        put("access", self.access.into());
        img
    }
}

#[derive(Clone, Copy, Debug)]
struct Req {
    key: u32,
    pdn: u16,
    addr: u64,
    len: u32,
    need: u8,
}

/// IBA's rules, from the table entry the key's index names.
fn allowed(table: &[Region], q: &Req) -> bool {
    if q.len == 0 {
        return true;
    }
    let e = &table[(q.key >> 8 & 0xFF) as usize];
    let end = u128::from(q.addr) + u128::from(q.len);
    e.key == q.key
        && q.key & 0xFF != 0
        && e.pdn == q.pdn
        && e.access & q.need == q.need
        && q.addr >= e.va
        && end <= u128::from(e.va) + u128::from(e.len)
}

fn random_region(r: &mut impl Rng, index: usize) -> Region {
    let va = match r.gen_range(0..4) {
        0 => u64::MAX - r.gen_range(0..10_000),
        1 => r.gen_range(0..100),
        _ => r.gen::<u64>() >> r.gen_range(0..40),
    };
    Region {
        va,
        len: match r.gen_range(0..4) {
            0 => 0,
            1 => r.gen_range(1..10),
            _ => r.gen_range(0..1 << 33),
        },
        key: (index as u32) << 8 | r.gen_range(1..=255),
        pdn: r.gen_range(1..4),
        access: r.gen_range(0..16),
    }
}

fn random_req(r: &mut impl Rng, table: &[Region]) -> Req {
    let i = r.gen_range(0..table.len());
    let e = table[i];
    let mut q = Req {
        key: e.key,
        pdn: e.pdn,
        addr: e.va,
        len: r.gen_range(1..5000),
        need: e.access & r.gen_range(0..16),
    };
    // Around the region's edges.
    let end = e.va.wrapping_add(e.len);
    match r.gen_range(0..8) {
        0 => q.addr = e.va.wrapping_add(r.gen_range(0..e.len.max(1))),
        1 => {
            q.len = r.gen_range(1..=e.len.clamp(1, 1 << 31)) as u32;
            q.addr = end.wrapping_sub(u64::from(q.len));
        }
        2 => {
            q.len = r.gen_range(1..=e.len.clamp(1, 1 << 31)) as u32;
            q.addr = end.wrapping_sub(u64::from(q.len)).wrapping_add(1);
        }
        3 => q.addr = e.va.wrapping_sub(1),
        4 => q.addr = u64::MAX - r.gen_range(0..5000),
        5 => q.len = 0,
        _ => q.len = r.gen_range(1..=(1u64 << 31)) as u32,
    }
    // Something wrong, now and then.
    match r.gen_range(0..12) {
        0 => q.pdn ^= 1 + r.gen_range(0..3),
        1 => q.key ^= r.gen_range(1..=255),
        2 => q.key &= !0xFF,
        3 => q.need = !e.access & 0xF,
        4 => q.key = r.gen(),
        _ => {}
    }
    q
}

#[test]
fn key_check_answers_iba_rules_and_rust_hdl_matches_verilator() -> Result<()> {
    let s = seed("key_check_answers_iba_rules_and_rust_hdl_matches_verilator");
    let mut r = rng(s);
    let mut tb = open_tb("ferroce_key_check", &BuildOptions::default())?;
    let mut hdl = KeyCheck::new();
    hdl.connect_all();
    let edge = |b: &mut KeyCheck| hdl_edge(b, |b, c| b.clk.next = c.into());
    hdl.rst.next = true;
    tb.set("rst", 1)?;
    for _ in 0..3 {
        edge(&mut hdl);
        tb.rising_edge()?;
    }
    hdl.rst.next = false;
    tb.set("rst", 0)?;
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let mrw_data = tb.model_ref().port("s_mrw_data")?;
    // The table as the block holds it (256 entries, all cleared at reset: key 0).
    let mut table = vec![Region::default(); 256];
    let used = 12;
    // Requests in flight: (the cycle after whose edge the answer shows, expected answer).
    let mut pending: VecDeque<(usize, bool)> = VecDeque::new();
    let (mut yes, mut no) = (0usize, 0usize);
    let cycles = soak(40_000);
    for cycle in 0..cycles {
        let write = if cycle < used || r.gen_ratio(1, 50) {
            let i = if cycle < used {
                cycle
            } else {
                r.gen_range(0..used)
            };
            let e = if r.gen_ratio(1, 10) {
                Region::default()
            } else {
                random_region(&mut r, i)
            };
            Some((i, e))
        } else {
            None
        };
        let req = (cycle >= used && r.gen_bool(0.6)).then(|| random_req(&mut r, &table[..used]));
        if let Some(q) = req {
            // The answer reflects the table as written before the request's cycle.
            pending.push_back((cycle + LATENCY - 1, allowed(&table, &q)));
        }
        let (w_en, w_index, w_img) = match write {
            Some((i, e)) => (true, i as u64, e.image()),
            None => (false, 0, vec![0u8; 32]),
        };
        let q = req.unwrap_or(Req {
            key: r.gen(),
            pdn: r.gen(),
            addr: r.gen(),
            len: r.gen(),
            need: r.gen(),
        });
        hdl.s_mrw_en.next = w_en;
        hdl.s_mrw_index.next = bits_from_u64(w_index);
        hdl.s_mrw_data.next = wide(&w_img);
        hdl.s_valid.next = req.is_some();
        hdl.s_key.next = bits_from_u64(q.key.into());
        hdl.s_pdn.next = bits_from_u64(q.pdn.into());
        hdl.s_addr.next = bits_from_u64(q.addr);
        hdl.s_len.next = bits_from_u64(q.len.into());
        hdl.s_need.next = bits_from_u64(q.need.into());
        edge(&mut hdl);
        tb.set("s_mrw_en", w_en.into())?;
        tb.set("s_mrw_index", w_index)?;
        tb.model().set_bytes(mrw_data, &w_img)?;
        tb.set("s_valid", req.is_some().into())?;
        tb.set("s_key", q.key.into())?;
        tb.set("s_pdn", q.pdn.into())?;
        tb.set("s_addr", q.addr)?;
        tb.set("s_len", q.len.into())?;
        tb.set("s_need", q.need.into())?;
        tb.rising_edge()?;
        outs.check(&hdl, tb.model_ref(), cycle as u64)?;
        if let Some((i, e)) = write {
            table[i] = e;
        }
        // After the edge that ends cycle c, the outputs answer the request of cycle
        // c + 1 - LATENCY.
        let valid = tb.get("m_valid")? == 1;
        let due = pending.front().is_some_and(|p| p.0 == cycle);
        ensure!(
            valid == due,
            "seed {s} cycle {cycle}: m_valid {valid}, an answer due {due}"
        );
        if due {
            let (_, want) = pending.pop_front().expect("due");
            let got = tb.get("m_ok")? == 1;
            ensure!(
                got == want,
                "seed {s} cycle {cycle}: ok {got}, IBA says {want}"
            );
            if want {
                yes += 1;
            } else {
                no += 1;
            }
        }
    }
    ensure!(
        yes > 1000 && no > 1000,
        "seed {s}: too few of one answer: {yes} allowed, {no} refused"
    );
    println!(
        "seed {s}: key_check {cycles} cycles, {yes} allowed, {no} refused, all {} outputs equal",
        outs.len()
    );
    Ok(())
}
