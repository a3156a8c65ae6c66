//! The RX parser on its Verilator model. References from outside the design: the Soft-RoCE
//! captures dissected by tshark (every RoCEv2 frame must come out as a record with the fields
//! tshark reads and the payload tshark shows), and frames built by etherparse with the BTH
//! and extended headers written from IBA's figures (`ferroce_tests::tx`) for every opcode
//! class, including the ones the transport does not implement yet. Bad frames are dropped and
//! counted by reason with the good frames around them intact. Random idle cycles on the input,
//! random back-pressure on both outputs, independently.

use anyhow::{ensure, Context, Result};
use ferroce_sim::{AxisSink, AxisSource, PauseGenerator, RecordSink, Tb};
use ferroce_spec::meta::RX_META;
use ferroce_tests::rx::{be, diff, record, record_of};
use ferroce_tests::tx::TxPacket;
use ferroce_tests::{budget, read_pcap, rng, rxe_pcaps, seed, soak};
use rand::Rng;
use std::cell::RefCell;
use std::process::Command;
use std::rc::Rc;

const COUNTERS: [&str; 8] = [
    "accepted",
    "unsupported",
    "bad_csum",
    "bad_mac",
    "bad_ip",
    "bad_opcode",
    "bad_len",
    "truncated",
];
const LOCAL_MAC: [u8; 6] = [0x02, 0x00, 0x5E, 0x10, 0x20, 0x30];
const LOCAL_IP: [u8; 4] = [10, 0, 0, 2];

struct Bench {
    tb: Tb,
    src: Rc<RefCell<AxisSource>>,
    meta: Rc<RefCell<RecordSink>>,
    pay: Rc<RefCell<AxisSink>>,
}

fn bench(s: u64, mac: [u8; 6], ip: [u8; 4], idle: f64, stall: f64) -> Result<Bench> {
    let mut tb = ferroce_sim::designs::open_tb(
        "ferroce_rx_parser_64",
        &ferroce_sim::BuildOptions::default(),
    )?;
    tb.set("local_mac", be(&mac) as u64)?;
    tb.set("local_ip", be(&ip) as u64)?;
    let src = AxisSource::new(&mut tb, "s_axis")?;
    let meta = RecordSink::new(&mut tb, "m_meta", &["tdata"])?;
    let pay = AxisSink::new(&mut tb, "m_axis")?;
    src.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 1, idle));
    meta.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 2, stall));
    pay.borrow_mut()
        .set_pause_generator(PauseGenerator::random(s ^ 3, stall));
    Ok(Bench { tb, src, meta, pay })
}

/// What came out: records, payloads, counters.
type Out = (Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<u64>);

/// Send the frames; run until the input is done and both outputs have been quiet a while.
fn run(b: &mut Bench, frames: &[Vec<u8>]) -> Result<Out> {
    for f in frames {
        b.src.borrow_mut().send(f.clone());
    }
    let src = b.src.clone();
    b.tb.run_until(budget(5_000_000), "input", |_| src.borrow().idle())?;
    let (mut quiet, mut last) = (0, (0, 0));
    while quiet < 300 {
        b.tb.rising_edge()?;
        let now = (b.pay.borrow().beats(), b.meta.borrow().count());
        quiet = if now == last { quiet + 1 } else { 0 };
        last = now;
    }
    ensure!(
        b.pay.borrow().violations().is_empty() && b.meta.borrow().violations().is_empty(),
        "stream contract broken: {:?} {:?}",
        b.pay.borrow().violations(),
        b.meta.borrow().violations()
    );
    let metas = std::iter::from_fn(|| b.meta.borrow_mut().recv_bytes())
        .map(|mut r| r.remove(0))
        .collect();
    let pays = std::iter::from_fn(|| b.pay.borrow_mut().recv())
        .map(|f| f.data)
        .collect();
    let counts = COUNTERS
        .iter()
        .map(|c| b.tb.get(c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((metas, pays, counts))
}

/// Compare records and payloads in order; the first mismatch, described.
fn check(got: &Out, want_meta: &[Vec<u8>], want_pay: &[Vec<u8>]) -> Result<()> {
    let (metas, pays, counts) = got;
    for (i, (g, w)) in metas.iter().zip(want_meta).enumerate() {
        ensure!(g == w, "record {i} differs: {:?}", diff(g, w));
    }
    ensure!(
        metas.len() == want_meta.len(),
        "{} records, want {}; counters {COUNTERS:?} = {counts:?}",
        metas.len(),
        want_meta.len()
    );
    for (i, (g, w)) in pays.iter().zip(want_pay).enumerate() {
        ensure!(
            g == w,
            "payload {i}: {} bytes, want {}; first difference at {:?}",
            g.len(),
            w.len(),
            g.iter().zip(w).position(|(a, b)| a != b)
        );
    }
    ensure!(
        pays.len() == want_pay.len(),
        "{} payloads, want {}",
        pays.len(),
        want_pay.len()
    );
    Ok(())
}

// ---- Soft-RoCE captures, dissected by tshark ----

/// One RoCEv2 frame as tshark reads it: the record it must become and its payload.
struct Dissected {
    frame: usize,
    dst: ([u8; 6], [u8; 4]),
    record: Vec<u8>,
    payload: Vec<u8>,
}

fn hex(s: &str) -> Result<Vec<u8>> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).context("hex"))
        .collect()
}

fn num(s: &str) -> Result<u128> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x") {
        Ok(u128::from_str_radix(h, 16)?)
    } else if s == "True" {
        Ok(1)
    } else if s == "False" {
        Ok(0)
    } else {
        Ok(s.parse()?)
    }
}

fn tshark_dissect(path: &std::path::Path, frames: &[Vec<u8>]) -> Result<Vec<Dissected>> {
    const F: [&str; 22] = [
        "infiniband.bth.opcode",
        "eth.src",
        "eth.dst",
        "ip.src",
        "ip.dst",
        "ip.ttl",
        "ip.dsfield.dscp",
        "ip.dsfield.ecn",
        "udp.srcport",
        "infiniband.bth.se",
        "infiniband.bth.m",
        "infiniband.bth.padcnt",
        "infiniband.bth.p_key",
        "infiniband.bth.destqp",
        "infiniband.bth.a",
        "infiniband.bth.psn",
        "data.data",
        "infiniband.reth.dmalen",
        "infiniband.aeth.msn",
        "infiniband.atomiceth.swapdt",
        "infiniband.atomicacketh.origremdt",
        "ip.checksum.status",
    ];
    let mut cmd = Command::new("tshark");
    cmd.arg("-r")
        .arg(path)
        .args([
            "-d",
            "udp.port==4791,infiniband",
            "-o",
            "ip.check_checksum:TRUE",
        ])
        .args(["-T", "fields", "-E", "separator=;", "-E", "occurrence=f"]);
    for f in F {
        cmd.args(["-e", f]);
    }
    let out = cmd
        .output()
        .context("running tshark (installed by .ci/setup)")?;
    ensure!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(';').collect()).collect();
    ensure!(
        rows.len() == frames.len(),
        "tshark saw {} frames",
        rows.len()
    );
    let mut v = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if r[0].is_empty() {
            continue;
        }
        ensure!(
            r[21] == "2" || r[21] == "1",
            "frame {i}: IP checksum status {}",
            r[21]
        );
        let mac = |s: &str| -> Result<[u8; 6]> {
            hex(s)?.try_into().map_err(|_| anyhow::anyhow!("MAC {s}"))
        };
        let ip = |s: &str| -> Result<[u8; 4]> {
            let b: Vec<u8> = s.split('.').map(|x| x.parse()).collect::<Result<_, _>>()?;
            b.try_into().map_err(|_| anyhow::anyhow!("IP {s}"))
        };
        let ext_len = [(17, 16), (18, 4), (19, 28), (20, 8)]
            .iter()
            .filter(|(c, _)| !r[*c].is_empty())
            .map(|(_, n)| n)
            .sum::<usize>();
        let f = &frames[i];
        let ext = &f[54..54 + ext_len];
        let pad = num(r[11])? as usize;
        let mut payload = hex(r[16])?;
        payload.truncate(payload.len().saturating_sub(pad));
        let (src_mac, dst_mac) = (mac(r[1])?, mac(r[2])?);
        let (src_ip, dst_ip) = (ip(r[3])?, ip(r[4])?);
        let rec = record(
            &[
                ("src_mac", be(&src_mac)),
                ("src_ip", be(&src_ip)),
                ("dst_ip", be(&dst_ip)),
                ("src_port", num(r[8])?),
                ("dscp", num(r[6])?),
                ("ecn", num(r[7])?),
                ("ttl", num(r[5])?),
                ("opcode", num(r[0])?),
                ("se", num(r[9])?),
                ("mig_req", num(r[10])?),
                ("pkey", num(r[12])?),
                ("dest_qp", num(r[13])?),
                ("ack_req", num(r[14])?),
                ("psn", num(r[15])?),
                ("pay_len", payload.len() as u128),
            ],
            ext,
        );
        v.push(Dissected {
            frame: i,
            dst: (dst_mac, dst_ip),
            record: rec,
            payload,
        });
    }
    Ok(v)
}

#[test]
fn soft_roce_frames_parse_as_tshark_reads_them() -> Result<()> {
    let s = seed("soft_roce_frames_parse_as_tshark_reads_them");
    let paths = rxe_pcaps()?;
    let mut total = 0;
    let mut opcodes = std::collections::BTreeSet::new();
    for path in &paths {
        let frames = read_pcap(path)?;
        let roce = tshark_dissect(path, &frames)?;
        // Each host in turn is the NIC: its frames are accepted, the other's counted bad_mac.
        let mut hosts: Vec<([u8; 6], [u8; 4])> = roce.iter().map(|d| d.dst).collect();
        hosts.sort();
        hosts.dedup();
        for host in hosts {
            let mine: Vec<&Dissected> = roce.iter().filter(|d| d.dst == host).collect();
            let others = (roce.len() - mine.len()) as u64;
            let input: Vec<Vec<u8>> = roce.iter().map(|d| frames[d.frame].clone()).collect();
            let mut b = bench(s, host.0, host.1, 0.3, 0.2)?;
            let got = run(&mut b, &input)?;
            let want_meta: Vec<Vec<u8>> = mine.iter().map(|d| d.record.clone()).collect();
            let want_pay: Vec<Vec<u8>> = mine.iter().map(|d| d.payload.clone()).collect();
            check(&got, &want_meta, &want_pay)
                .with_context(|| format!("{} as {:x?}", path.display(), host))?;
            ensure!(
                got.2 == [mine.len() as u64, 0, 0, others, 0, 0, 0, 0],
                "{}: counters {COUNTERS:?} = {:?}",
                path.display(),
                got.2
            );
            total += mine.len();
            for d in &mine {
                opcodes.insert(RX_META.get(&RX_META.field("opcode"), &d.record));
            }
        }
    }
    println!("{total} RoCEv2 frames parsed, opcodes {opcodes:x?}");
    ensure!(total >= 600, "the captures hold RoCEv2 frames");
    Ok(())
}

// ---- Generated frames: every opcode class, then damage ----

/// IBA extended-header bytes and whether a payload may follow, for opcodes of each class,
/// written here from IBA table 38 rather than taken from `spec::opcodes`.
const CLASSES: [(u8, usize, bool); 14] = [
    (0x00, 0, true),   // SEND FIRST
    (0x03, 4, true),   // SEND LAST with immediate
    (0x06, 16, true),  // RDMA WRITE FIRST
    (0x07, 0, true),   // RDMA WRITE MIDDLE
    (0x08, 0, true),   // RDMA WRITE LAST
    (0x0A, 16, true),  // RDMA WRITE ONLY
    (0x0B, 20, true),  // RDMA WRITE ONLY with immediate
    (0x0C, 16, false), // RDMA READ request
    (0x0D, 4, true),   // RDMA READ response FIRST
    (0x11, 4, false),  // ACKNOWLEDGE
    (0x12, 12, false), // ATOMIC ACKNOWLEDGE
    (0x14, 28, false), // FETCH ADD
    (0x17, 4, true),   // SEND ONLY with invalidate
    (0x65, 12, true),  // UD SEND ONLY with immediate
];

/// A random packet to this NIC of a random class, with random FECN/BECN/M bits.
struct Case {
    p: TxPacket,
    bits: (bool, bool, bool),
}

impl Case {
    fn random(r: &mut impl Rng) -> Case {
        let mut p = TxPacket::random(r);
        let (code, ext, pay) = CLASSES[r.gen_range(0..CLASSES.len())];
        p.opcode = code;
        p.ext = (0..ext).map(|_| r.gen()).collect();
        if !pay {
            p.payload.clear();
        }
        p.dst_mac = LOCAL_MAC;
        p.dst_ip = LOCAL_IP;
        Case {
            p,
            bits: (r.gen(), r.gen(), r.gen()),
        }
    }

    /// The frame with an arbitrary ICRC (not this block's to check) and, when short, random
    /// Ethernet padding.
    fn frame(&self, r: &mut impl Rng) -> Vec<u8> {
        let mut f = self.p.frame_without_icrc();
        let n = f.len();
        r.fill(&mut f[n - 4..]);
        let (m, fecn, becn) = self.bits;
        let bth = self.p.l3_offset() + 28;
        f[bth + 1] |= u8::from(m) << 6;
        f[bth + 4] |= (u8::from(fecn) << 7) | (u8::from(becn) << 6);
        while f.len() < 60 {
            f.push(r.gen());
        }
        f
    }

    fn record(&self) -> Vec<u8> {
        record_of(&self.p, self.bits)
    }
}

/// Recompute the IPv4 header checksum of a frame after editing its header (at `ip`).
fn fix_ip_checksum(f: &mut [u8], ip: usize) {
    f[ip + 10] = 0;
    f[ip + 11] = 0;
    let sum: u32 = f[ip..ip + 20]
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    let folded = (sum & 0xFFFF) + (sum >> 16);
    let ck = !((folded & 0xFFFF) + (folded >> 16)) as u16;
    f[ip + 10..ip + 12].copy_from_slice(&ck.to_be_bytes());
}

#[test]
fn every_opcode_class_parses_byte_exact() -> Result<()> {
    let s = seed("every_opcode_class_parses_byte_exact");
    let mut r = rng(s);
    let mut b = bench(s, LOCAL_MAC, LOCAL_IP, 0.3, 0.3)?;
    let cases: Vec<Case> = (0..soak(500)).map(|_| Case::random(&mut r)).collect();
    let frames: Vec<Vec<u8>> = cases.iter().map(|c| c.frame(&mut r)).collect();
    let got = run(&mut b, &frames)?;
    let want_meta: Vec<Vec<u8>> = cases.iter().map(Case::record).collect();
    let want_pay: Vec<Vec<u8>> = cases.iter().map(|c| c.p.payload.clone()).collect();
    check(&got, &want_meta, &want_pay)?;
    ensure!(
        got.2 == [500, 0, 0, 0, 0, 0, 0, 0],
        "counters {COUNTERS:?} = {:?}",
        got.2
    );
    Ok(())
}

#[test]
fn bad_frames_are_dropped_by_reason_and_good_ones_pass() -> Result<()> {
    let s = seed("bad_frames_are_dropped_by_reason_and_good_ones_pass");
    let mut r = rng(s);
    let mut b = bench(s, LOCAL_MAC, LOCAL_IP, 0.3, 0.2)?;
    let (mut frames, mut want_meta, mut want_pay) = (Vec::new(), Vec::new(), Vec::new());
    let mut expect = [0u64; 8];
    for i in 0..440 {
        let mut c = Case::random(&mut r);
        let kind = i % 11;
        if kind == 6 {
            c.p.dst_ip = [10, 0, 0, 3];
        }
        if kind == 8 || kind == 9 {
            // An opcode without payload carrying bytes; then one outside the table.
            c.p.opcode = if kind == 8 { 0x11 } else { 0x15 };
            c.p.ext = vec![0; 4];
            c.p.payload = vec![0xA5; 8];
        }
        let mut f = c.frame(&mut r);
        let ip = c.p.l3_offset();
        let good = |f: Vec<u8>, c: &Case, fr: &mut Vec<Vec<u8>>, m: &mut Vec<_>, p: &mut Vec<_>| {
            fr.push(f);
            m.push(c.record());
            p.push(c.p.payload.clone());
        };
        match kind {
            0..=2 => {
                good(f, &c, &mut frames, &mut want_meta, &mut want_pay);
                expect[0] += 1;
            }
            3 => {
                // Unsupported: an 802.1ad service tag in front (QinQ), an IPv6 ethertype,
                // an IP fragment.
                match (i / 11) % 3 {
                    0 => f.splice(12..12, [0x88, 0xA8, 0x00, 0x05]).for_each(drop),
                    1 => {
                        f[ip - 2] = 0x86;
                        f[ip - 1] = 0xDD;
                    }
                    _ => {
                        f[ip + 6] |= 0x20;
                        fix_ip_checksum(&mut f, ip);
                    }
                }
                frames.push(f);
                expect[1] += 1;
            }
            4 => {
                // A bit flipped in the IPv4 identification: the header checksum catches it.
                f[ip + 4 + r.gen_range(0..2)] ^= 1 << r.gen_range(0..8);
                frames.push(f);
                expect[2] += 1;
            }
            5 => {
                f[r.gen_range(0..6)] ^= 1 << r.gen_range(0..8);
                frames.push(f);
                expect[3] += 1;
            }
            6 => {
                frames.push(f);
                expect[4] += 1;
            }
            7 => {
                // BTH transport version 1.
                f[ip + 29] |= 0x01;
                frames.push(f);
                expect[5] += 1;
            }
            8 => {
                frames.push(f);
                expect[6] += 1;
            }
            9 => {
                frames.push(f);
                expect[5] += 1;
            }
            _ if (i / 11) % 2 == 0 => {
                // UDP length one word short of the IP length.
                let ul = u16::from_be_bytes([f[ip + 24], f[ip + 25]]) - 4;
                f[ip + 24..ip + 26].copy_from_slice(&ul.to_be_bytes());
                frames.push(f);
                expect[6] += 1;
            }
            _ => {
                // UDP and IP lengths 1-3 bytes short (the last bytes left as Ethernet
                // padding): payload and pad no longer whole words, whatever PadCnt says.
                let k = r.gen_range(1..=3u16);
                let ul = u16::from_be_bytes([f[ip + 24], f[ip + 25]]) - k;
                f[ip + 24..ip + 26].copy_from_slice(&ul.to_be_bytes());
                let il = u16::from_be_bytes([f[ip + 2], f[ip + 3]]) - k;
                f[ip + 2..ip + 4].copy_from_slice(&il.to_be_bytes());
                fix_ip_checksum(&mut f, ip);
                frames.push(f);
                expect[6] += 1;
            }
        }
    }
    let got = run(&mut b, &frames)?;
    check(&got, &want_meta, &want_pay)?;
    ensure!(
        got.2 == expect,
        "counters {COUNTERS:?} = {:?}, want {expect:?}",
        got.2
    );
    Ok(())
}

#[test]
fn a_frame_shorter_than_its_headers_say_is_cut_and_counted() -> Result<()> {
    let s = seed("a_frame_shorter_than_its_headers_say_is_cut_and_counted");
    let mut r = rng(s);
    let mut b = bench(s, LOCAL_MAC, LOCAL_IP, 0.2, 0.2)?;
    let (mut frames, mut want_meta, mut want_pay) = (Vec::new(), Vec::new(), Vec::new());
    let mut cut = 0;
    for i in 0..60 {
        let mut c = Case::random(&mut r);
        c.p.opcode = 0x07;
        c.p.ext.clear();
        c.p.payload = (0..r.gen_range(100..600)).map(|_| r.gen()).collect();
        let mut f = c.frame(&mut r);
        let mut pay = c.p.payload.clone();
        if i % 3 == 0 {
            // The frame loses its ICRC and some payload bytes (MacRx would drop it).
            let lose = r.gen_range(8..40);
            f.truncate(f.len() - lose);
            pay.truncate(pay.len() + 4 + (4 - pay.len() % 4) % 4 - lose);
            cut += 1;
        }
        frames.push(f);
        want_meta.push(c.record());
        want_pay.push(pay);
    }
    let got = run(&mut b, &frames)?;
    check(&got, &want_meta, &want_pay)?;
    ensure!(
        got.2 == [60, 0, 0, 0, 0, 0, 0, cut],
        "counters {COUNTERS:?} = {:?}",
        got.2
    );
    Ok(())
}

#[test]
fn full_size_frames_stream_at_one_beat_per_clock() -> Result<()> {
    let s = seed("full_size_frames_stream_at_one_beat_per_clock");
    let mut r = rng(s);
    // No idle, no back-pressure: this measures the rate.
    let mut b = bench(s, LOCAL_MAC, LOCAL_IP, 0.0, 0.0)?;
    let mut frames = Vec::new();
    for _ in 0..20 {
        let mut c = Case::random(&mut r);
        c.p.opcode = 0x07;
        c.p.ext.clear();
        c.p.payload = (0..4096).map(|_| r.gen()).collect();
        frames.push(c.frame(&mut r));
    }
    let beats: u64 = frames.iter().map(|f| f.len().div_ceil(8) as u64).sum();
    let start = b.tb.cycle();
    for f in &frames {
        b.src.borrow_mut().send(f.clone());
    }
    let src = b.src.clone();
    b.tb.run_until(1_000_000, "input", |_| src.borrow().idle())?;
    let cycles = b.tb.cycle() - start;
    println!("{beats} input beats in {cycles} cycles");
    ensure!(
        cycles <= beats + 2 * frames.len() as u64 + 20,
        "{beats} beats took {cycles} cycles"
    );
    Ok(())
}
