//! `JobPark` (a READ response job set aside between packets): rust-hdl against Verilator,
//! every output every cycle, and both against a model of the rules written out here: a park
//! fills a free slot (or one taken the same cycle), a park into a full slot changes nothing,
//! and a duplicate for the parked job's QP cuts it when its PSN is not after the job's next
//! response and is not the job's own first, from the cycle of the park to that of the take.

use anyhow::{ensure, Result};
use ferroce_hdl::prelude::*;
use ferroce_hdl::rc::JobPark;
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_spec::meta::READ_JOB;
use ferroce_tests::diff::{reset_both, Outputs};
use ferroce_tests::{hdl_edge, rng, seed, soak, wide};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

const PSNS: u32 = 1 << 24;

/// A job as the slot holds it.
#[derive(Clone, Debug, Default, PartialEq)]
struct Slot {
    job: Vec<u8>,
    psn: u32,
    rem: u32,
    va: u64,
    first: bool,
    cut: bool,
}

impl Slot {
    fn qpn(&self) -> u128 {
        READ_JOB.get(&READ_JOB.field("qpn"), &self.job)
    }
    fn psn0(&self) -> u32 {
        READ_JOB.get(&READ_JOB.field("psn"), &self.job) as u32
    }
}

/// A job record: random bytes, its QP one of a few (so duplicates find it), its PSN near
/// `base`.
fn job(r: &mut ChaCha8Rng, base: u32) -> Vec<u8> {
    let mut img: Vec<u8> = (0..READ_JOB.len).map(|_| r.gen()).collect();
    READ_JOB.set(
        &READ_JOB.field("qpn"),
        &mut img,
        u128::from(r.gen_range(0..4u32)),
    );
    let psn = base.wrapping_add(r.gen_range(0..64)) % PSNS;
    READ_JOB.set(&READ_JOB.field("psn"), &mut img, u128::from(psn));
    img
}

#[test]
fn job_park_rust_hdl_matches_verilator_and_the_rules() -> Result<()> {
    let s = seed("job_park_rust_hdl_matches_verilator_and_the_rules");
    let mut r = rng(s);
    let mut hdl = JobPark::new();
    hdl.connect_all();
    let mut tb = open_tb("ferroce_job_park", &BuildOptions::default())?;
    let edge = |b: &mut JobPark| hdl_edge(b, |b, c| b.clk.next = c.into());
    reset_both(&mut hdl, &mut tb, |b, v| b.rst.next = v, edge)?;
    let outs = Outputs::new(&hdl, tb.model_ref())?;
    let job_port = tb.model_ref().port("s_job")?;
    let mjob_port = tb.model_ref().port("m_job")?;
    // The model: whether the slot holds a job, and the slot's fields.
    let (mut valid, mut slot) = (false, Slot::default());
    let (mut parks, mut refused, mut cuts, mut takes) = (0usize, 0usize, 0usize, 0usize);
    // PSNs wander from a base that moves now and then, across the 2^24 wrap too.
    let mut base: u32 = r.gen_range(0..PSNS);
    let cycles = soak(40_000);
    for cycle in 0..cycles {
        if r.gen_ratio(1, 200) {
            base = (base + r.gen_range(0..PSNS / 4)) % PSNS;
        }
        let take = valid && r.gen_bool(0.3);
        // A park into a full slot not taken this cycle is a bad input: rare.
        let park = if !valid || take {
            r.gen_bool(0.4)
        } else {
            r.gen_ratio(1, 50)
        };
        let new = Slot {
            job: job(&mut r, base),
            psn: (base + r.gen_range(0..128)) % PSNS,
            rem: r.gen(),
            va: r.gen(),
            first: r.gen_bool(0.3),
            cut: r.gen_ratio(1, 10),
        };
        let dup = r.gen_bool(0.3);
        let near = base.wrapping_add(r.gen_range(0..128)).wrapping_sub(32);
        let djob = job(&mut r, near);
        // (A duplicate at the job's own first PSN now and then.)
        let djob = if dup && r.gen_ratio(1, 8) {
            let mut d = djob;
            READ_JOB.set(
                &READ_JOB.field("qpn"),
                &mut d,
                if valid { slot.qpn() } else { new.qpn() },
            );
            READ_JOB.set(
                &READ_JOB.field("psn"),
                &mut d,
                u128::from(if valid { slot.psn0() } else { new.psn0() }),
            );
            d
        } else {
            djob
        };
        tb.set("s_park", park.into())?;
        tb.model().set_bytes(job_port, &new.job)?;
        tb.set("s_psn", u64::from(new.psn))?;
        tb.set("s_rem", u64::from(new.rem))?;
        tb.set("s_va", new.va)?;
        tb.set("s_first", new.first.into())?;
        tb.set("s_cut", new.cut.into())?;
        tb.set("s_take", take.into())?;
        tb.set("s_dup_valid", dup.into())?;
        let dq = READ_JOB.get(&READ_JOB.field("qpn"), &djob);
        let dp = READ_JOB.get(&READ_JOB.field("psn"), &djob) as u32;
        tb.set("s_dup_qpn", dq as u64)?;
        tb.set("s_dup_psn", u64::from(dp))?;
        hdl.s_park.next = park;
        hdl.s_job.next = wide(&new.job);
        hdl.s_psn.next = bits(u64::from(new.psn));
        hdl.s_rem.next = bits(u64::from(new.rem));
        hdl.s_va.next = bits(new.va);
        hdl.s_first.next = new.first;
        hdl.s_cut.next = new.cut;
        hdl.s_take.next = take;
        hdl.s_dup_valid.next = dup;
        hdl.s_dup_qpn.next = bits(dq as u64);
        hdl.s_dup_psn.next = bits(u64::from(dp));

        // The model's next state.
        let put = park && (!valid || take);
        if park && !put {
            refused += 1;
        }
        let live = put || valid;
        let mut next = if put { new.clone() } else { slot.clone() };
        let hit = live
            && dup
            && dq == next.qpn()
            && next.psn.wrapping_sub(dp) % PSNS < PSNS / 2
            && dp != next.psn0();
        if hit {
            if !next.cut {
                cuts += 1;
            }
            next.cut = true;
        }
        if take {
            takes += 1;
        }
        if put {
            parks += 1;
        }
        valid = put || (valid && !take);
        slot = next;

        edge(&mut hdl);
        tb.rising_edge()?;
        outs.check(&hdl, tb.model_ref(), cycle as u64)?;
        ensure!(
            tb.get("m_valid")? == u64::from(valid),
            "seed {s}: cycle {cycle}: m_valid, the model {valid}"
        );
        if valid {
            let got = Slot {
                job: tb.model_ref().get_bytes(mjob_port)[..READ_JOB.len].to_vec(),
                psn: tb.get("m_psn")? as u32,
                rem: tb.get("m_rem")? as u32,
                va: tb.get("m_va")?,
                first: tb.get("m_first")? == 1,
                cut: tb.get("m_cut")? == 1,
            };
            ensure!(
                got == slot,
                "seed {s}: cycle {cycle}: the slot {got:?}, the model {slot:?}"
            );
        }
    }
    ensure!(
        parks > 2_000 && takes > 2_000 && cuts > 200 && refused > 50,
        "seed {s}: too little coverage: {parks} parks, {takes} takes, {cuts} cuts, {refused} refused"
    );
    println!(
        "job_park: {cycles} cycles, {parks} parks, {takes} takes, {cuts} cuts, {refused} parks \
         into a full slot refused, all {} outputs equal",
        outs.len()
    );
    Ok(())
}

fn bits<const N: usize>(v: u64) -> Bits<N> {
    ferroce_hdl::util::bits_from_u64(v)
}
