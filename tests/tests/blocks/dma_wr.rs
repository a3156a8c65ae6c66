//! The DMA write engine on its Verilator model against the root complex model, which checks
//! every write request against PCIe's rules (max payload size, 4 KiB boundaries, contiguous
//! byte enables, `tkeep` agreeing with the header) and the driver's buffers. Random writes of
//! 0 B to 4 KiB at random offsets, random idle cycles on commands and data, random
//! back-pressure on requests; afterwards every buffer equals a model of what was written,
//! byte for byte, so the bytes around each write are checked untouched too.

use anyhow::{ensure, Result};
use ferroce_sim::pcie::{Buffer, PcieConfig, RootComplex};
use ferroce_sim::{AxisSource, PauseGenerator, RecordSource, Tb};
use ferroce_spec::tlp::{DMA_MAX_LEN, DMA_WRITE_PAYLOAD, PAGE};
use ferroce_tests::{budget, open_with_root_complex, random_buffer, rng, seed, soak};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

struct Bench {
    tb: Tb,
    rc: Rc<RefCell<RootComplex>>,
    cmd: Rc<RefCell<RecordSource>>,
    data: Rc<RefCell<AxisSource>>,
}

fn bench(config: PcieConfig) -> Result<Bench> {
    let (mut tb, rc) = open_with_root_complex("ferroce_dma_wr_64", config)?;
    let cmd = RecordSource::new(&mut tb, "s_cmd", &["addr", "len"])?;
    let data = AxisSource::new(&mut tb, "s_data")?;
    Ok(Bench { tb, rc, cmd, data })
}

fn length(r: &mut impl Rng) -> usize {
    match r.gen_range(0..10) {
        0 => 0,
        1 => r.gen_range(1..=16),
        2 => DMA_WRITE_PAYLOAD + r.gen_range(0..3) - 1,
        3 => DMA_MAX_LEN,
        _ => r.gen_range(1..=DMA_MAX_LEN),
    }
}

fn wait_idle(b: &mut Bench, budget: u64) -> Result<()> {
    let (cmd, data, rc) = (b.cmd.clone(), b.data.clone(), b.rc.clone());
    b.tb.run_until(budget, "DMA writes", |_| {
        cmd.borrow().idle() && data.borrow().idle()
    })?;
    // Let the last requests drain out of the engine.
    b.tb.clock_cycles(20)?;
    ensure!(rc.borrow().dma_idle(), "a request is half sent");
    Ok(())
}

fn check(b: &Bench, bufs: &[(Buffer, Vec<u8>)]) -> Result<()> {
    for (i, (buf, want)) in bufs.iter().enumerate() {
        let mut got = vec![0u8; buf.len];
        b.rc.borrow().mem.read(buf.addr, &mut got)?;
        ensure!(
            &got == want,
            "buffer {i}: first difference at byte {:?}",
            got.iter().zip(want).position(|(a, b)| a != b)
        );
    }
    Ok(())
}

#[test]
fn random_writes_land_byte_exact_and_nothing_else_changes() -> Result<()> {
    let s = seed("random_writes_land_byte_exact_and_nothing_else_changes");
    let mut r = rng(s);
    let mut b = bench(PcieConfig::default())?;
    b.rc.borrow_mut()
        .set_rq_backpressure_generator(PauseGenerator::random(s ^ 1, 0.2));
    b.cmd
        .borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 2, 0.3));
    b.data
        .borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 3, 0.2));
    let mut bufs = Vec::new();
    for _ in 0..3 {
        let len = 3 * PAGE as usize + r.gen_range(0..4096);
        bufs.push(random_buffer(&b.rc, &mut r, len, 64)?);
    }
    let n = soak(600);
    let mut bytes = 0;
    for _ in 0..n {
        let k = r.gen_range(0..bufs.len());
        let (buf, model) = &mut bufs[k];
        let len = length(&mut r);
        let off = r.gen_range(0..=buf.len - len);
        let data: Vec<u8> = (0..len).map(|_| r.gen()).collect();
        model[off..off + len].copy_from_slice(&data);
        b.cmd
            .borrow_mut()
            .send(vec![buf.addr + off as u64, len as u64]);
        b.data.borrow_mut().send(data);
        bytes += len;
    }
    wait_idle(&mut b, budget(3_000_000))?;
    check(&b, &bufs)?;
    let stats = b.rc.borrow().dma_stats();
    assert_eq!(stats.write_bytes, bytes as u64);
    assert_eq!(b.tb.get("bad_len")?, 0);
    println!(
        "{n} writes, {bytes} bytes, {stats:?}, {} cycles",
        b.tb.cycle()
    );
    Ok(())
}

#[test]
fn writes_stream_at_one_beat_per_clock() -> Result<()> {
    let mut b = bench(PcieConfig::default())?;
    let buf = b.rc.borrow_mut().mem.alloc(65536, 4096)?;
    for i in 0..16u64 {
        b.cmd.borrow_mut().send(vec![buf.addr + 4096 * i, 4096]);
        b.data.borrow_mut().send(vec![i as u8; 4096]);
    }
    let start = b.tb.cycle();
    wait_idle(&mut b, 100_000)?;
    let cycles = b.tb.cycle() - start - 20;
    let beats = 65536 / 8;
    println!("64 KiB written in {cycles} cycles ({beats} beats)");
    ensure!(
        cycles <= beats + 16 * 2 + 10,
        "{cycles} cycles for {beats} beats"
    );
    assert_eq!(
        b.rc.borrow().dma_stats().write_requests,
        65536 / DMA_WRITE_PAYLOAD as u64
    );
    Ok(())
}

#[test]
fn a_data_packet_of_the_wrong_length_is_counted_and_the_streams_stay_in_step() -> Result<()> {
    let mut b = bench(PcieConfig::default())?;
    let buf = b.rc.borrow_mut().mem.alloc(4096, 4096)?;
    b.rc.borrow_mut().mem.write(buf.addr, &[0xEE; 4096])?;
    // Short: 100 bytes for a 120-byte command (the rest written as zeros).
    b.cmd.borrow_mut().send(vec![buf.addr + 5, 120]);
    b.data.borrow_mut().send(vec![1u8; 100]);
    // Long: 300 bytes for a 200-byte command (the extra dropped).
    b.cmd.borrow_mut().send(vec![buf.addr + 1000, 200]);
    b.data.borrow_mut().send(vec![2u8; 300]);
    // Too long a command: nothing written, its data dropped.
    b.cmd
        .borrow_mut()
        .send(vec![buf.addr, DMA_MAX_LEN as u64 + 1]);
    b.data.borrow_mut().send(vec![3u8; 64]);
    // Then a good one.
    b.cmd.borrow_mut().send(vec![buf.addr + 2000, 50]);
    b.data.borrow_mut().send(vec![4u8; 50]);
    wait_idle(&mut b, 10_000)?;
    assert_eq!(b.tb.get("bad_len")?, 3);
    let mut want = vec![0xEEu8; 4096];
    want[5..105].fill(1);
    want[105..125].fill(0);
    want[1000..1200].fill(2);
    want[2000..2050].fill(4);
    check(&b, &[(buf, want)])
}

#[test]
fn a_write_outside_host_buffers_fails_the_run() -> Result<()> {
    let mut b = bench(PcieConfig::default())?;
    let buf = b.rc.borrow_mut().mem.alloc(4096, 4096)?;
    b.cmd.borrow_mut().send(vec![buf.addr + 4090, 10]);
    b.data.borrow_mut().send(vec![9u8; 10]);
    let err =
        b.tb.run_until(5_000, "a fault", |_| false)
            .expect_err("the run must fail");
    assert!(
        err.to_string()
            .contains("outside every driver-allocated buffer"),
        "{err}"
    );
    Ok(())
}
