//! The DMA read engine on its Verilator model against the root complex model: random reads
//! of 0 B to 4 KiB at random offsets (crossing 512-byte request and 4 KiB page boundaries),
//! completions split at random RCB boundaries and interleaved across tags, random idle cycles
//! between completion beats and commands, random back-pressure on requests and data. Every
//! byte out is compared with host memory.

use anyhow::{ensure, Context, Result};
use ferroce_sim::pcie::{PcieConfig, RootComplex};
use ferroce_sim::{AxisSink, PauseGenerator, RecordSource, Tb};
use ferroce_spec::tlp::{DMA_MAX_LEN, DMA_READ_REQUEST};
use ferroce_tests::{budget, open_with_root_complex, random_buffer, rng, seed, soak};
use rand::Rng;
use std::cell::RefCell;
use std::rc::Rc;

struct Bench {
    tb: Tb,
    rc: Rc<RefCell<RootComplex>>,
    cmd: Rc<RefCell<RecordSource>>,
    data: Rc<RefCell<AxisSink>>,
}

fn bench(config: PcieConfig) -> Result<Bench> {
    let (mut tb, rc) = open_with_root_complex("ferroce_dma_rd_64", config)?;
    let cmd = RecordSource::new(&mut tb, "s_cmd", &["addr", "len"])?;
    let data = AxisSink::new(&mut tb, "m_data")?;
    Ok(Bench { tb, rc, cmd, data })
}

/// A length with the edge cases weighted in: 0, tiny, around the request size, the maximum.
fn length(r: &mut impl Rng) -> usize {
    match r.gen_range(0..10) {
        0 => 0,
        1 => r.gen_range(1..=16),
        2 => DMA_READ_REQUEST + r.gen_range(0..3) - 1,
        3 => DMA_MAX_LEN,
        4 => DMA_MAX_LEN - r.gen_range(1..8),
        _ => r.gen_range(1..=DMA_MAX_LEN),
    }
}

/// Run until `n` reads came out, then check each against host memory.
fn run_reads(b: &mut Bench, reads: &[(u64, usize)], budget: u64) -> Result<()> {
    let data = b.data.clone();
    let n = reads.len();
    b.tb.run_until(budget, "DMA read data", |_| data.borrow().count() == n)
        .context("waiting for read data")?;
    for (i, &(addr, len)) in reads.iter().enumerate() {
        let f = b.data.borrow_mut().recv().context("frame")?;
        let mut want = vec![0u8; len];
        b.rc.borrow().mem.read(addr, &mut want)?;
        ensure!(
            f.user == 0,
            "read {i} ({len} B at {addr:#x}) flagged an error"
        );
        ensure!(
            f.data == want,
            "read {i} ({len} B at {addr:#x}): got {} bytes, first difference at {:?}",
            f.data.len(),
            f.data.iter().zip(&want).position(|(a, b)| a != b)
        );
    }
    ensure!(
        b.data.borrow().violations().is_empty(),
        "{:?}",
        b.data.borrow().violations()
    );
    Ok(())
}

#[test]
fn random_reads_come_back_byte_exact_in_order() -> Result<()> {
    let s = seed("random_reads_come_back_byte_exact_in_order");
    let mut r = rng(s);
    let mut b = bench(PcieConfig {
        cpl_reorder_seed: Some(s),
        ..PcieConfig::default()
    })?;
    b.rc.borrow_mut()
        .set_rq_backpressure_generator(PauseGenerator::random(s ^ 1, 0.2));
    b.rc.borrow_mut()
        .set_completion_pause_generator(PauseGenerator::random(s ^ 2, 0.2));
    b.cmd
        .borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 3, 0.3));
    b.data
        .borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 4, 0.3));
    let mut bufs = Vec::new();
    for _ in 0..3 {
        let len = 3 * 4096 + r.gen_range(0..4096);
        bufs.push(random_buffer(&b.rc, &mut r, len, 64)?.0);
    }
    let mut reads = Vec::new();
    for _ in 0..soak(1000) {
        let buf = bufs[r.gen_range(0..bufs.len())];
        let len = length(&mut r);
        let addr = buf.addr + r.gen_range(0..=(buf.len - len) as u64);
        b.cmd.borrow_mut().send(vec![addr, len as u64]);
        reads.push((addr, len));
    }
    run_reads(&mut b, &reads, budget(2_000_000))?;
    let stats = b.rc.borrow().dma_stats();
    let want: usize = reads.iter().map(|r| r.1).sum();
    assert_eq!(stats.read_bytes, want as u64, "bytes requested");
    assert_eq!(b.tb.get("bad_cpl")?, 0);
    assert_eq!(b.tb.get("timeouts")?, 0);
    println!(
        "{} reads, {want} bytes, {stats:?}, {} cycles",
        reads.len(),
        b.tb.cycle()
    );
    Ok(())
}

#[test]
fn reads_are_pipelined_across_the_latency() -> Result<()> {
    // 64 KiB in 4 KiB reads with the default 500 ns latency, no back-pressure: the engine
    // must keep enough requests outstanding to stream one beat per clock, less one idle
    // cycle per command, after the read latency and one request's worth of beats (a piece
    // goes out once all of it has arrived).
    let mut b = bench(PcieConfig::default())?;
    let buf = b.rc.borrow_mut().mem.alloc(65536, 4096)?;
    let bytes: Vec<u8> = (0..65536u32).map(|i| (i * 7 + 3) as u8).collect();
    b.rc.borrow_mut().mem.write(buf.addr, &bytes)?;
    let reads: Vec<(u64, usize)> = (0..16).map(|i| (buf.addr + 4096 * i, 4096)).collect();
    for &(a, l) in &reads {
        b.cmd.borrow_mut().send(vec![a, l as u64]);
    }
    let start = b.tb.cycle();
    run_reads(&mut b, &reads, 100_000)?;
    let cycles = b.tb.cycle() - start;
    let beats = 65536 / 8;
    let latency = PcieConfig::default()
        .read_latency_ps
        .div_ceil(b.tb.period_ps());
    println!("64 KiB in {cycles} cycles ({beats} beats, latency {latency} cycles)");
    ensure!(
        cycles <= beats + 16 * 2 + latency + (DMA_READ_REQUEST as u64 / 8) + 20,
        "{cycles} cycles for {beats} beats: reads are not pipelined"
    );
    Ok(())
}

#[test]
fn a_read_outside_host_buffers_completes_with_an_error_and_the_next_is_fine() -> Result<()> {
    let mut b = bench(PcieConfig {
        strict: false,
        ..PcieConfig::default()
    })?;
    let buf = b.rc.borrow_mut().mem.alloc(8192, 4096)?;
    let bytes: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8).collect();
    b.rc.borrow_mut().mem.write(buf.addr, &bytes)?;
    // Runs 100 bytes past the end of the buffer: the second request gets UR.
    b.cmd.borrow_mut().send(vec![buf.addr + 8192 - 1000, 1100]);
    b.cmd.borrow_mut().send(vec![buf.addr + 3, 700]);
    b.cmd.borrow_mut().send(vec![buf.addr, 8000]);
    let data = b.data.clone();
    b.tb.run_until(20_000, "read data", |_| data.borrow().count() == 3)?;
    let bad = b.data.borrow_mut().recv().context("frame")?;
    assert_eq!(bad.user, 1, "the faulting read is flagged");
    assert_eq!(bad.data.len(), 1100);
    let good = b.data.borrow_mut().recv().context("frame")?;
    assert_eq!(good.user, 0);
    assert_eq!(good.data, bytes[3..703]);
    // Longer than DMA_MAX_LEN: refused, one empty beat with the error flag.
    let long = b.data.borrow_mut().recv().context("frame")?;
    assert_eq!((long.data.len(), long.user), (0, 1));
    let v = b.rc.borrow().violations.clone();
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].contains("outside every driver-allocated buffer"),
        "{v:?}"
    );
    // 488 + 512 + 100 (refused) bytes, then 509 + 191.
    assert_eq!(b.rc.borrow().dma_stats().read_requests, 5);
    Ok(())
}

#[test]
fn in_strict_mode_a_read_outside_host_buffers_fails_the_run() -> Result<()> {
    let mut b = bench(PcieConfig::default())?;
    let buf = b.rc.borrow_mut().mem.alloc(4096, 4096)?;
    b.cmd.borrow_mut().send(vec![buf.addr + 4000, 200]);
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

#[test]
fn long_output_stalls_never_let_a_reissued_tag_overwrite_held_data() -> Result<()> {
    // The consumer stops for hundreds of cycles at a time (a paused MAC behind the TX path),
    // moving a beat or two in between. A command's tags go back when its last beat is read
    // from the buffer; short commands at page-aligned addresses make the next command that
    // reuses a tag write the very buffer word a stalled last beat was read from, while it
    // still waits. Every byte must still be the host's.
    let s = seed("long_output_stalls_never_let_a_reissued_tag_overwrite_held_data");
    let mut r = rng(s);
    let mut b = bench(PcieConfig::default())?;
    let mut pattern = Vec::new();
    for _ in 0..400 {
        pattern.extend(std::iter::repeat_n(false, r.gen_range(1..4)));
        pattern.extend(std::iter::repeat_n(true, r.gen_range(100..300)));
    }
    b.data
        .borrow_mut()
        .set_pause_generator(PauseGenerator::pattern(pattern));
    let mut reads = Vec::new();
    for _ in 0..300 {
        let len = r.gen_range(1..=64);
        let (buf, _) = random_buffer(&b.rc, &mut r, len, 4096)?;
        reads.push((buf.addr, len));
    }
    for &(a, l) in &reads {
        b.cmd.borrow_mut().send(vec![a, l as u64]);
    }
    run_reads(&mut b, &reads, 3_000_000)
}
