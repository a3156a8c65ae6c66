//! Shared helpers for ferroce's tests.

pub mod diff;
pub mod fuzz;
pub mod rx;
pub mod tx;
pub mod wire;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The seed for a random test: `$FERROCE_SEED` if set, else fresh. Printed so that any run
/// can be repeated with `FERROCE_SEED=<seed> cargo test <name>`.
pub fn seed(test: &str) -> u64 {
    let seed = std::env::var("FERROCE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    let soak = soak_factor();
    if soak > 1 {
        println!("{test}: seed {seed}, soak x{soak} (rerun with FERROCE_SEED={seed} FERROCE_SOAK={soak})");
    } else {
        println!("{test}: seed {seed} (rerun with FERROCE_SEED={seed})");
    }
    seed
}

/// The soak factor, `$FERROCE_SOAK` (default 1). Every random test multiplies its random
/// counts (cycles, frames, work requests) by it: the default sizes fit the CI budget, and
/// `FERROCE_SOAK=20 cargo test --workspace` runs twenty times as much of every random test.
pub fn soak_factor() -> usize {
    std::env::var("FERROCE_SOAK")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(1)
}

/// `n` times the soak factor: the size of a random run.
pub fn soak(n: usize) -> usize {
    n * soak_factor()
}

/// A cycle limit for a random run, scaled by the soak factor like the run itself: `n` cycles
/// at the default size.
pub fn budget(n: u64) -> u64 {
    n * soak_factor() as u64
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

use anyhow::{ensure, Result};
use ferroce_sim::{AxisSink, Tb};
use std::cell::RefCell;

/// Clock until `n` results have come out of the tap output `<prefix>_tdata/_tvalid/_tuser`,
/// failing after `budget` cycles; then check that nothing more comes out.
pub fn collect(tb: &mut Tb, prefix: &str, n: usize, budget: u64) -> Result<Vec<(u64, u64)>> {
    let data = tb.model_ref().port(&format!("{prefix}_tdata"))?;
    let valid = tb.model_ref().port(&format!("{prefix}_tvalid"))?;
    let user = tb.model_ref().port(&format!("{prefix}_tuser"))?;
    let mut out = Vec::with_capacity(n);
    let start = tb.cycle();
    while out.len() < n {
        tb.rising_edge()?;
        if tb.model_ref().get(valid) != 0 {
            out.push((tb.model_ref().get(data), tb.model_ref().get(user)));
        }
        ensure!(
            tb.cycle() - start < budget,
            "{} results of {n} after {budget} cycles",
            out.len()
        );
    }
    tb.clock_cycles(4)?;
    ensure!(tb.model_ref().get(valid) == 0, "spurious result");
    Ok(out)
}

/// Drive one beat of `s_axis` by hand, tready high (for keep patterns a source never makes).
pub fn beat(tb: &mut Tb, data: &[u8], keep: u64, last: bool) -> Result<()> {
    let p = tb.model_ref().port("s_axis_tdata")?;
    tb.model().set_bytes(p, data)?;
    let k = tb.model_ref().port("s_axis_tkeep")?;
    let keep_bytes: Vec<u8> = (0..k.width.div_ceil(8))
        .map(|i| (keep >> (8 * i)) as u8)
        .collect();
    tb.model().set_bytes(k, &keep_bytes)?;
    tb.set("s_axis_tlast", u64::from(last))?;
    tb.set("s_axis_tvalid", 1)?;
    tb.set("s_axis_tready", 1)?;
    tb.rising_edge()?;
    tb.set("s_axis_tvalid", 0)?;
    Ok(())
}

/// All ones in the low `lanes` bits.
pub fn full_keep(lanes: usize) -> u64 {
    if lanes >= 64 {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    }
}

/// Every result a tap monitor has seen, as (32-bit tdata, tuser).
pub fn drain(mon: &RefCell<AxisSink>) -> Vec<(u32, u64)> {
    std::iter::from_fn(|| mon.borrow_mut().recv())
        .map(|f| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&f.data[..4]);
            (u32::from_le_bytes(b), f.user)
        })
        .collect()
}

/// Settle a rust-hdl design, then give it one rising edge (the rust-hdl side of the
/// differential tests).
pub fn hdl_edge<B: ferroce_hdl::prelude::Block>(b: &mut B, set_clk: impl Fn(&mut B, bool)) {
    use ferroce_hdl::prelude::simulate;
    set_clk(b, false);
    assert!(simulate(b, 200), "rust-hdl model did not settle");
    set_clk(b, true);
    assert!(simulate(b, 200), "rust-hdl model did not settle");
}

/// The rust-hdl side of a test on several clocks ([`ferroce_sim::clocks::MultiTb`]): settle,
/// then change the clocks that changed at the instant `e` (`set_clk(block, clock, level)`, the
/// clocks numbered as the testbench numbers them), and settle again.
pub fn hdl_edges<B: ferroce_hdl::prelude::Block>(
    b: &mut B,
    e: &ferroce_sim::clocks::Edges,
    set_clk: impl Fn(&mut B, usize, bool),
) {
    use ferroce_hdl::prelude::simulate;
    assert!(simulate(b, 200), "rust-hdl model did not settle");
    for &i in &e.rising {
        set_clk(b, i, true);
    }
    for &i in &e.falling {
        set_clk(b, i, false);
    }
    assert!(simulate(b, 200), "rust-hdl model did not settle");
}

/// A rust-hdl value as little-endian bytes (`ceil(N / 8)` of them), to compare with a
/// Verilator port's `get_bytes`.
pub fn bytes_of<const N: usize>(v: ferroce_hdl::prelude::Bits<N>) -> Vec<u8> {
    (0..N.div_ceil(8))
        .map(|i| {
            (0..8)
                .filter(|k| 8 * i + k < N)
                .fold(0u8, |b, k| b | (u8::from(v.get_bit(8 * i + k)) << k))
        })
        .collect()
}

/// Little-endian bytes as a rust-hdl value of `N` bits (missing high bytes are zero).
pub fn wide<const N: usize>(bytes: &[u8]) -> ferroce_hdl::prelude::Bits<N> {
    let mut b = ferroce_hdl::util::bools_from_bytes(bytes);
    b.resize(N, false);
    ferroce_hdl::util::bits_from_bools(&b)
}

use ferroce_sim::pcie::{Buffer, PcieConfig, RootComplex};
use std::rc::Rc;

/// Open design `name` with a root complex on its DMA streams `m_rq_*` / `s_rc_*`.
pub fn open_with_root_complex(
    name: &str,
    config: PcieConfig,
) -> Result<(Tb, Rc<RefCell<RootComplex>>)> {
    let mut tb = ferroce_sim::designs::open_tb(name, &ferroce_sim::BuildOptions::default())?;
    let period = tb.period_ps();
    let rc = RootComplex::new(config).with_dma(tb.model_ref(), "m_rq", "s_rc", period)?;
    let rc = Rc::new(RefCell::new(rc));
    tb.add(rc.clone());
    Ok((tb, rc))
}

/// Allocate a host buffer of `len` bytes and fill it with random bytes; returns the buffer and
/// its contents.
pub fn random_buffer(
    rc: &RefCell<RootComplex>,
    r: &mut impl rand::Rng,
    len: usize,
    align: u64,
) -> Result<(Buffer, Vec<u8>)> {
    let buf = rc.borrow_mut().mem.alloc(len, align)?;
    let bytes: Vec<u8> = (0..len).map(|_| r.gen()).collect();
    rc.borrow_mut().mem.write(buf.addr, &bytes)?;
    Ok((buf, bytes))
}

/// Every frame of a pcap file, in order.
pub fn read_pcap(path: &std::path::Path) -> Result<Vec<Vec<u8>>> {
    use anyhow::Context;
    let mut reader = pcap_file::pcap::PcapReader::new(std::fs::File::open(path)?)
        .with_context(|| format!("opening {}", path.display()))?;
    let mut frames = Vec::new();
    while let Some(pkt) = reader.next_packet() {
        frames.push(pkt?.data.into_owned());
    }
    Ok(frames)
}

/// The tests' data directory, `tests/data` (inside the repository: `tests/data/README.md`).
pub fn data_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// The Soft-RoCE captures in `tests/data/rxe`, in name order.
pub fn rxe_pcaps() -> Result<Vec<std::path::PathBuf>> {
    use anyhow::Context;
    let dir = data_dir().join("rxe");
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    paths.sort();
    ensure!(
        paths.len() == 9,
        "{}: expected the 9 Soft-RoCE captures, found {}",
        dir.display(),
        paths.len()
    );
    Ok(paths)
}

/// Every frame of the Soft-RoCE captures, file by file in name order (RoCEv2 traffic and the
/// TCP connection setup around it).
pub fn rxe_frames() -> Result<Vec<Vec<u8>>> {
    let mut frames = Vec::new();
    for path in rxe_pcaps()? {
        frames.extend(read_pcap(&path)?);
    }
    Ok(frames)
}

/// Transmit credits in use as a sender sees them (`TxQueues::used`), wandering: now and then
/// (one cycle in `every`) one priority's figure jumps to empty, full (`cap`) or in between.
/// Returns the bus bytes (16 bits per priority, little-endian).
pub fn wander_credits(
    r: &mut impl rand::Rng,
    used: &mut [u64; 8],
    cap: u64,
    every: u32,
) -> Vec<u8> {
    if r.gen_ratio(1, every) {
        let p = r.gen_range(0..8);
        used[p] = match r.gen_range(0..4) {
            0 => 0,
            1 => cap,
            _ => r.gen_range(0..=cap),
        };
    }
    used.iter()
        .flat_map(|u| (*u as u16).to_le_bytes())
        .collect()
}

/// One direction's buffers for traffic between two hosts of a world: random source bytes
/// registered at the sender, and at the receiver a buffer of random bytes whose middle is a
/// region, the guard bytes on either side outside it.
pub struct Guarded {
    pub src: ferroce_driver::MemoryRegion,
    pub src_bytes: Vec<u8>,
    /// The receiver's buffer, guards included.
    pub buf: u64,
    /// The region over its middle.
    pub region: ferroce_driver::MemoryRegion,
    /// The buffer's bytes as written: the image the test updates with what should land.
    pub expect: Vec<u8>,
}

/// [`Guarded`] buffers: `src_len` source bytes at `from` (a region for local and remote
/// writes), `len` bytes of region at `to` with `guard` bytes on each side, its rights `access`.
pub fn guarded(
    r: &mut ChaCha8Rng,
    from: &mut ferroce_sim::world::Host,
    to: &mut ferroce_sim::world::Host,
    (src_len, len, guard): (usize, usize, usize),
    access: u32,
) -> Result<Guarded> {
    use ferroce_driver::DmaMemory;
    use rand::Rng;
    let src_bytes: Vec<u8> = (0..src_len).map(|_| r.gen()).collect();
    let src = from.buffer(src_len, &src_bytes)?;
    let expect: Vec<u8> = (0..len + 2 * guard).map(|_| r.gen()).collect();
    let buf = to.dev.mem.alloc(expect.len(), 4096)?;
    to.dev.mem.write(buf.addr, &expect)?;
    let region = to
        .dev
        .reg_mr(&to.pd, buf.addr + guard as u64, len as u64, access)?;
    Ok(Guarded {
        src,
        src_bytes,
        buf: buf.addr,
        region,
        expect,
    })
}

/// Two hosts joined by links that lose `loss` of the frames, corrupt 0.5 %, duplicate 1 % and
/// reorder 2 %, both ways (from `seed`, which also interleaves PCIe completions); their QPs'
/// ACK timeout 4.096 us x 2^6, 262 us: about three times the slowest round trip of a 16 KiB
/// WRITE.
pub fn lossy_world(seed: u64, loss: f64) -> Result<ferroce_sim::world::World> {
    faulty_world(
        seed,
        ferroce_sim::RandomFaults {
            loss,
            corrupt: 0.005,
            duplicate: 0.01,
            reorder: 0.02,
            seed,
            ..Default::default()
        },
    )
}

/// Two hosts joined by links with the given `faults`, PCIe completions interleaved from
/// `seed` and each NIC's memory requests held back at random (as in [`lossless_world`]), the
/// QPs' ACK timeout 6 (262 us).
pub fn faulty_world(
    seed: u64,
    faults: ferroce_sim::RandomFaults,
) -> Result<ferroce_sim::world::World> {
    use ferroce_sim::world::{World, WorldConfig};
    let mut w = World::open(&WorldConfig {
        reorder_seed: Some(seed),
        rq_pause: 0.2,
        faults,
        ..WorldConfig::default()
    })?;
    w.retry.timeout = Some(6);
    Ok(w)
}

/// Two hosts as the random transport tests run them: PCIe read completions interleaved
/// across tags and each NIC's memory requests held back at random (from `seed`), with PFC
/// on priority 0 (`traffic::LOSSLESS_PFC`): back-to-back small messages and READ responses
/// can outrun a receiver's memory.
pub fn lossless_world(seed: u64) -> Result<ferroce_sim::world::World> {
    use ferroce_sim::world::{World, WorldConfig};
    let cfg = WorldConfig {
        reorder_seed: Some(seed),
        rq_pause: 0.2,
        ..WorldConfig::default()
    };
    let mut w = World::open(&cfg)?;
    w.a.dev.set_pfc(&ferroce_sim::traffic::LOSSLESS_PFC)?;
    w.b.dev.set_pfc(&ferroce_sim::traffic::LOSSLESS_PFC)?;
    Ok(w)
}

/// The transport's counters of host `h` that are not zero, for a failure's message.
pub fn nonzero_counters(h: &ferroce_sim::world::Host) -> String {
    [
        "req_bad_wqe",
        "req_prot_err",
        "req_dma_err",
        "mac_bad_frames",
        "req_reads",
        "rd_bad_cpl",
        "rd_timeouts",
        "rx_accepted",
        "rx_icrc_err",
        "rx_overflow",
        "rx_bad_len",
        "rx_bad_opcode",
        "resp_bad_qp",
        "resp_unsupported",
        "resp_dup",
        "resp_seq_err",
        "resp_bad_req",
        "resp_bad_rkey",
        "resp_rnr",
        "resp_reads",
        "resp_jobs_full",
        "resp_bad_resp",
        "resp_atomics",
        "resp_flushed",
        "resp_sc_bad_len",
        "rq_bad_wqe",
        "rq_empty",
        "cpl_naks",
        "cpl_bad_cq",
        "cpl_cqes",
        "cpl_timeouts",
        "cpl_seq_naks",
        "cpl_rnr_naks",
        "cpl_retry_exc",
        "req_retrans",
        "req_cuts",
        "req_win_stops",
        "fail_local",
        "req_rsp_refused",
        "cpl_ghosts",
        "req_pool_waits",
        "req_yields",
        "wr_bad_len",
        "cqe_bad_len",
    ]
    .iter()
    .filter_map(|n| match h.counter(n) {
        Ok(0) => None,
        Ok(v) => Some(format!("{n} {v}")),
        Err(e) => Some(format!("{n} ?{e}")),
    })
    .collect::<Vec<_>>()
    .join(", ")
}

/// A record's bytes with the named fields set (the rest zero).
pub fn layout_img(l: &ferroce_spec::layout::Layout, fields: &[(&str, u128)]) -> Vec<u8> {
    let mut img = vec![0u8; l.len];
    for (n, v) in fields {
        l.set(&l.field(n), &mut img, *v);
    }
    img
}

/// A RoCEv2 frame's BTH as the tests read it from the wire (etherparse for Ethernet, 802.1Q,
/// IPv4 and UDP; IBA 9.2 for the BTH): opcode, destination QP, PSN, and the AETH syndrome of
/// an acknowledgement (opcodes 0x0D..0x12), if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bth {
    pub opcode: u8,
    pub dqpn: u32,
    pub psn: u32,
    pub syndrome: Option<u8>,
}

/// The BTH of `frame` (with or without its FCS), or `None` if it is not RoCEv2.
pub fn bth(frame: &[u8]) -> Option<Bth> {
    use etherparse::{SlicedPacket, TransportSlice};
    let p = SlicedPacket::from_ethernet(frame).ok()?;
    let Some(TransportSlice::Udp(udp)) = &p.transport else {
        return None;
    };
    if udp.destination_port() != 4791 {
        return None;
    }
    let b = udp.payload();
    if b.len() < 12 {
        return None;
    }
    let opcode = b[0];
    let syndrome = ((0x0D..=0x12).contains(&opcode) && b.len() >= 13).then(|| b[12]);
    Some(Bth {
        opcode,
        dqpn: u32::from_be_bytes([0, b[5], b[6], b[7]]),
        psn: u32::from_be_bytes([0, b[9], b[10], b[11]]),
        syndrome,
    })
}

/// The first RoCEv2 frame with `opcode` to pass on `wire` from now on, kept (without its FCS)
/// in the cell returned, as the model of a well-formed frame a test forges others from; every
/// frame passes. (The wire's fault hook is this one until the test sets another.)
pub fn catch_first(
    wire: &ferroce_sim::world::Wire,
    opcode: u8,
) -> Result<std::rc::Rc<RefCell<Option<Vec<u8>>>>> {
    let caught: std::rc::Rc<RefCell<Option<Vec<u8>>>> = Default::default();
    let c = caught.clone();
    wire.set_fault_hook(move |_, f| {
        let f = &f[..f.len() - 4];
        if bth(f).is_some_and(|b| b.opcode == opcode) && c.borrow().is_none() {
            *c.borrow_mut() = Some(f.to_vec());
        }
        ferroce_sim::link::Fault::Pass
    })?;
    Ok(caught)
}

/// Completions of host a (`side` 0) or b (1) until `n` have come (`what` names the wait), at
/// most `max` cycles.
pub fn reap(
    w: &mut ferroce_sim::world::World,
    side: usize,
    n: usize,
    max: u64,
    what: &str,
) -> Result<Vec<ferroce_driver::WorkCompletion>> {
    let mut got = Vec::new();
    let start = w.cycle();
    while got.len() < n {
        w.run(500)?;
        let h = if side == 0 { &mut w.a } else { &mut w.b };
        got.extend(h.dev.poll_cq(&mut h.cq, 64)?);
        ensure!(
            w.cycle() - start < max,
            "{what}: {} of {n} completions after {max} cycles: {got:?}; a: {}; b: {}",
            got.len(),
            nonzero_counters(&w.a),
            nonzero_counters(&w.b)
        );
    }
    Ok(got)
}
/// What a VCD holds, enough to check it: each variable's full name (scopes joined by `.`) and
/// how many times its value changed after the first dump.
pub struct Vcd {
    pub changes: std::collections::HashMap<String, u64>,
    /// The first and the last timestamp.
    pub start: u64,
    pub end: u64,
}

impl Vcd {
    /// How many times `top`'s signal `name` changed (the most of any scope that has it).
    pub fn changes_of(&self, top: &str, name: &str) -> u64 {
        self.changes
            .iter()
            .filter(|(n, _)| n.ends_with(&format!("{top}.{name}")))
            .map(|(_, c)| *c)
            .max()
            .unwrap_or(0)
    }

    /// That the file is the window of `cycles` cycles from cycle `from` of `top`, clocked by
    /// `top.clk` with a period of `period_ps`: the clock toggles twice every cycle of the
    /// window, and the file spans the window and no more.
    pub fn check_window(
        &self,
        top: &str,
        from: u64,
        cycles: u64,
        period_ps: u64,
    ) -> anyhow::Result<()> {
        let clk = self.changes_of(top, "clk");
        anyhow::ensure!(
            clk + 2 >= 2 * cycles && clk <= 2 * cycles + 2,
            "clk changed {clk} times in a window of {cycles} cycles"
        );
        anyhow::ensure!(
            self.start >= from * period_ps && self.end <= (from + cycles + 1) * period_ps,
            "the file spans {}..{} ps, the window {}..{} ps",
            self.start,
            self.end,
            from * period_ps,
            (from + cycles) * period_ps
        );
        Ok(())
    }
}

/// Read a VCD (with the `vcd` crate) as GTKWave would: the header's scopes and variables, then
/// the value changes.
pub fn read_vcd(path: &std::path::Path) -> anyhow::Result<Vcd> {
    use anyhow::Context;
    use std::collections::HashMap;
    use vcd::Command;
    let file = std::fs::File::open(path).with_context(|| format!("opening {path:?}"))?;
    let mut scope: Vec<String> = Vec::new();
    let mut names: HashMap<vcd::IdCode, Vec<String>> = HashMap::new();
    let mut seen: HashMap<vcd::IdCode, String> = HashMap::new();
    let mut changes: HashMap<String, u64> = HashMap::new();
    let (mut start, mut end) = (None, 0);
    for cmd in vcd::Parser::new(std::io::BufReader::new(file)) {
        let (id, value) = match cmd.with_context(|| format!("parsing {path:?}"))? {
            Command::ScopeDef(_, name) => {
                scope.push(name);
                continue;
            }
            Command::Upscope => {
                scope.pop();
                continue;
            }
            Command::VarDef(_, _, id, name, _) => {
                let full = scope.iter().chain([&name]).cloned().collect::<Vec<_>>();
                names.entry(id).or_default().push(full.join("."));
                continue;
            }
            Command::Timestamp(t) => {
                end = t;
                start.get_or_insert(t);
                continue;
            }
            Command::ChangeScalar(id, v) => (id, format!("{v:?}")),
            Command::ChangeVector(id, v) => (id, format!("{v:?}")),
            _ => continue,
        };
        // A change after the variable's first value counts.
        let before = seen.insert(id, value.clone());
        if before.is_some_and(|b| b != value) {
            for n in names.get(&id).into_iter().flatten() {
                *changes.entry(n.clone()).or_default() += 1;
            }
        }
    }
    Ok(Vcd {
        changes,
        start: start.unwrap_or(0),
        end,
    })
}
