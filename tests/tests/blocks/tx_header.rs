//! The TX header builder on its Verilator model: random packets of every opcode it sends,
//! payloads of 0 to 4096 bytes, random idle cycles on both inputs and random back-pressure on
//! the frame; every frame must equal the one etherparse and the hand-written BTH build
//! (`ferroce_tests::tx`). Bad records (unknown opcode, payload too long) and payload packets
//! of the wrong length are mixed in and must be counted, the good frames around them intact.

use anyhow::{ensure, Context, Result};
use ferroce_sim::{AxisSink, AxisSource, PauseGenerator, RecordSource, Tb};
use ferroce_spec::meta::TX_META;
use ferroce_tests::tx::TxPacket;
use ferroce_tests::{budget, rng, seed, soak};
use rand::Rng;

struct Bench {
    tb: Tb,
    meta: std::rc::Rc<std::cell::RefCell<RecordSource>>,
    pay: std::rc::Rc<std::cell::RefCell<AxisSource>>,
    out: std::rc::Rc<std::cell::RefCell<AxisSink>>,
}

fn bench(s: u64, idle: f64, stall: f64) -> Result<Bench> {
    let mut tb = ferroce_sim::designs::open_tb(
        "ferroce_tx_header_64",
        &ferroce_sim::BuildOptions::default(),
    )?;
    let meta = RecordSource::new(&mut tb, "s_meta", &["tdata"])?;
    let pay = AxisSource::new(&mut tb, "s_pay")?;
    let out = AxisSink::new(&mut tb, "m_axis")?;
    meta.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 1, idle));
    pay.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 2, idle));
    out.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 3, stall));
    Ok(Bench { tb, meta, pay, out })
}

fn send(b: &Bench, p: &TxPacket, payload: Vec<u8>) {
    b.meta.borrow_mut().send_bytes(vec![p.meta()]);
    b.pay.borrow_mut().send(payload);
}

fn run(b: &mut Bench, frames: usize) -> Result<Vec<Vec<u8>>> {
    let out = b.out.clone();
    b.tb.run_until(budget(2_000_000), "frames", |_| {
        out.borrow().count() >= frames
    })?;
    b.tb.clock_cycles(50)?;
    ensure!(
        out.borrow().violations().is_empty(),
        "{:?}",
        out.borrow().violations()
    );
    let got: Vec<Vec<u8>> = std::iter::from_fn(|| out.borrow_mut().recv())
        .map(|f| f.data)
        .collect();
    ensure!(
        got.len() == frames,
        "{} frames, expected {frames}",
        got.len()
    );
    Ok(got)
}

fn compare(got: &[Vec<u8>], want: &[TxPacket]) -> Result<()> {
    for (i, (g, p)) in got.iter().zip(want).enumerate() {
        let w = p.frame_without_icrc();
        ensure!(
            g == &w,
            "frame {i} (opcode {:#04x}, {} payload bytes): {} bytes, expected {}; first \
             difference at byte {:?}",
            p.opcode,
            p.payload.len(),
            g.len(),
            w.len(),
            g.iter().zip(&w).position(|(a, b)| a != b)
        );
    }
    Ok(())
}

#[test]
fn random_packets_match_etherparse_under_back_pressure() -> Result<()> {
    let s = seed("random_packets_match_etherparse_under_back_pressure");
    let mut r = rng(s);
    let mut b = bench(s, 0.2, 0.3)?;
    let pkts: Vec<TxPacket> = (0..soak(400)).map(|_| TxPacket::random(&mut r)).collect();
    for p in &pkts {
        send(&b, p, p.payload.clone());
    }
    let got = run(&mut b, pkts.len())?;
    compare(&got, &pkts).with_context(|| format!("seed {s}"))?;
    ensure!(b.tb.get("bad_len")? == 0 && b.tb.get("bad_opcode")? == 0);
    Ok(())
}

#[test]
fn back_to_back_full_rate() -> Result<()> {
    // No idle cycles, no back-pressure: one beat per clock plus one cycle between frames.
    let s = seed("back_to_back_full_rate");
    let mut r = rng(s);
    let mut b = bench(s, 0.0, 0.0)?;
    let pkts: Vec<TxPacket> = (0..50)
        .map(|_| {
            let mut p = TxPacket::random(&mut r);
            p.opcode = ferroce_spec::opcodes::RC_RDMA_WRITE_MIDDLE;
            p.ext.clear();
            p.payload = (0..1024).map(|_| r.gen()).collect();
            p
        })
        .collect();
    for p in &pkts {
        send(&b, p, p.payload.clone());
    }
    let start = b.tb.cycle();
    let got = run(&mut b, pkts.len())?;
    compare(&got, &pkts)?;
    let beats: u64 = got.iter().map(|f| f.len().div_ceil(8) as u64).sum();
    let cycles = b.tb.cycle() - start - 50;
    ensure!(
        cycles <= beats + 2 * pkts.len() as u64 + 10,
        "{cycles} cycles for {beats} beats"
    );
    Ok(())
}

#[test]
fn bad_records_are_counted_and_frames_around_them_are_intact() -> Result<()> {
    let s = seed("bad_records_are_counted_and_frames_around_them_are_intact");
    let mut r = rng(s);
    let mut b = bench(s, 0.1, 0.2)?;
    let (mut good, mut sent_short) = (Vec::new(), 0u64);
    let (mut bad_op, mut bad_len) = (0u64, 0u64);
    for i in 0..120 {
        let p = TxPacket::random(&mut r);
        match i % 4 {
            0 => {
                // An opcode the builder does not send (reserved RC 0x15): no frame.
                let mut q = p.clone();
                q.opcode = 0x15;
                send(&b, &q, q.payload.clone());
                bad_op += 1;
            }
            1 => {
                // pay_len above 4096: no frame; the packet given is consumed.
                let mut m = p.meta();
                let f = TX_META.find("pay_len").context("field")?;
                TX_META.set(f, &mut m, 5000);
                b.meta.borrow_mut().send_bytes(vec![m]);
                b.pay.borrow_mut().send(vec![0u8; 100]);
                bad_len += 1;
            }
            2 if !p.payload.is_empty() => {
                // One byte short: sent as given (its lengths then disagree), counted.
                let mut short = p.payload.clone();
                short.pop();
                send(&b, &p, short);
                sent_short += 1;
                bad_len += 1;
            }
            _ => {
                send(&b, &p, p.payload.clone());
                good.push(p);
            }
        }
    }
    let got = run(&mut b, good.len() + sent_short as usize)?;
    // The short frames are in between: keep only those whose length matches a good one's slot.
    let mut gi = 0;
    for g in &got {
        if gi < good.len() && g == &good[gi].frame_without_icrc() {
            gi += 1;
        }
    }
    ensure!(
        gi == good.len(),
        "{gi} of {} good frames intact",
        good.len()
    );
    ensure!(b.tb.get("bad_opcode")? == bad_op, "bad_opcode");
    ensure!(b.tb.get("bad_len")? == bad_len, "bad_len");
    Ok(())
}
