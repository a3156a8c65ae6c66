//! Differential tests of the TX framing blocks and MAC receive: the same random stimulus on rust-hdl's
//! simulator and on the Verilator model, every output compared after every clock edge.
//! Records and payloads come from `ferroce_tests::tx` (every opcode the builder sends, now and
//! then an unknown opcode or a payload of the wrong length), with random idle cycles on the
//! inputs and random back-pressure on the output. `ferroce_tx_64` holds every TX block
//! (builder, ICRC tap, both tail writers, padding, CRC tap) in one run. MAC receive gets wire
//! frames with FCS, one in four damaged. The RX parser gets RoCEv2 frames of several opcode
//! classes, mostly to its own addresses, one in five damaged in its headers, with random
//! back-pressure on both of its outputs; its 512-bit record is compared too.

use anyhow::{Context, Result};
use ferroce_hdl::config::ten_g;
use ferroce_hdl::prelude::*;
use ferroce_hdl::util::{bits_from_bools, bits_from_u64, bools_from_bytes};
use ferroce_sim::designs::open_tb;
use ferroce_sim::BuildOptions;
use ferroce_tests::diff::Outputs;
use ferroce_tests::tx::TxPacket;
use ferroce_tests::{full_keep, hdl_edge, rng, seed, soak};
use rand::Rng;
use std::collections::VecDeque;

/// A payload beat: data, keep, last.
type Beat = (u64, u64, bool);

/// One cycle of inputs.
#[derive(Default, Clone)]
struct In {
    meta: Vec<u8>,
    meta_valid: bool,
    data: u64,
    keep: u64,
    last: bool,
    /// The input's `tuser` where the design has it, on a last beat: a PHY code error on
    /// receive, a frame marked bad (a failed payload read) on transmit.
    user: bool,
    valid: bool,
    out_ready: bool,
    meta_ready: bool,
}

/// The handshake bits the stimulus steers by, read from the rust-hdl block (every output is
/// compared by `Outputs`).
struct Handshake {
    /// `s_meta_tready` (false where the design takes no records).
    meta_ready: bool,
    /// The payload or frame input's `tready` (true where the wire does not wait).
    in_ready: bool,
    out_valid: bool,
    out_last: bool,
}

trait Dut {
    fn drive(&mut self, i: &In);
    fn set_clk(&mut self, c: bool);
    fn set_rst(&mut self, r: bool);
    fn handshake(&self) -> Handshake;
}

macro_rules! framer_dut {
    ($t:ty) => {
        impl Dut for $t {
            fn drive(&mut self, i: &In) {
                self.s_meta_tdata.next = bits_from_bools(&bools_from_bytes(&i.meta));
                self.s_meta_tvalid.next = i.meta_valid;
                self.s_pay_tdata.next = bits_from_u64(i.data);
                self.s_pay_tkeep.next = bits_from_u64(i.keep);
                self.s_pay_tlast.next = i.last;
                self.s_pay_tuser.next = i.user;
                self.s_pay_tvalid.next = i.valid;
                self.m_axis_tready.next = i.out_ready;
            }
            fn set_clk(&mut self, c: bool) {
                self.clk.next = c.into();
            }
            fn set_rst(&mut self, r: bool) {
                self.rst.next = r;
            }
            fn handshake(&self) -> Handshake {
                Handshake {
                    meta_ready: self.s_meta_tready.val(),
                    in_ready: self.s_pay_tready.val(),
                    out_valid: self.m_axis_tvalid.val(),
                    out_last: self.m_axis_tlast.val(),
                }
            }
        }
    };
}

framer_dut!(ten_g::TxHeader);
framer_dut!(ten_g::TxFrame);

impl Dut for ten_g::MacTx {
    fn drive(&mut self, i: &In) {
        self.s_axis_tdata.next = bits_from_u64(i.data);
        self.s_axis_tkeep.next = bits_from_u64(i.keep);
        self.s_axis_tlast.next = i.last;
        self.s_axis_tuser.next = i.user;
        self.s_axis_tvalid.next = i.valid;
        self.m_axis_tready.next = i.out_ready;
    }
    fn set_clk(&mut self, c: bool) {
        self.clk.next = c.into();
    }
    fn set_rst(&mut self, r: bool) {
        self.rst.next = r;
    }
    fn handshake(&self) -> Handshake {
        Handshake {
            meta_ready: false,
            in_ready: self.s_axis_tready.val(),
            out_valid: self.m_axis_tvalid.val(),
            out_last: self.m_axis_tlast.val(),
        }
    }
}

impl Dut for ten_g::MacRx {
    fn drive(&mut self, i: &In) {
        self.s_axis_tuser.next = i.user;
        self.pfc_enable.next = bits_from_u64(LOSSLESS);
        self.xoff_bytes.next = bits_from_u64(XOFF_BYTES);
        self.xon_bytes.next = bits_from_u64(XOFF_BYTES / 2);
        self.s_axis_tdata.next = bits_from_u64(i.data);
        self.s_axis_tkeep.next = bits_from_u64(i.keep);
        self.s_axis_tlast.next = i.last;
        self.s_axis_tvalid.next = i.valid;
        self.m_axis_tready.next = i.out_ready;
    }
    fn set_clk(&mut self, c: bool) {
        self.clk.next = c.into();
    }
    fn set_rst(&mut self, r: bool) {
        self.rst.next = r;
    }
    fn handshake(&self) -> Handshake {
        Handshake {
            meta_ready: false,
            // The wire does not wait.
            in_ready: true,
            out_valid: self.m_axis_tvalid.val(),
            out_last: self.m_axis_tlast.val(),
        }
    }
}

const RX_MAC: u64 = 0x0200_5E10_2030;
/// The receive buffer's settings: priority 3 lossless, the others capped at a low XOFF mark
/// that back-pressure reaches, so the lossy limit acts now and then.
const LOSSLESS: u64 = 0x08;
const XOFF_BYTES: u64 = 512;
const RX_IP: u64 = 0x0A00_0002;

/// The RX designs: frames in, a record and a payload out, the NIC's addresses fixed; `$ready`
/// is what stands for `s_axis_tready`.
macro_rules! rx_dut {
    ($t:ty, |$s:ident| $ready:expr, |$d:ident, $i:ident| $extra:block) => {
        impl Dut for $t {
            fn drive(&mut self, i: &In) {
                {
                    let ($d, $i) = (&mut *self, i);
                    $extra
                }
                self.s_axis_tdata.next = bits_from_u64(i.data);
                self.s_axis_tkeep.next = bits_from_u64(i.keep);
                self.s_axis_tlast.next = i.last;
                self.s_axis_tvalid.next = i.valid;
                self.m_axis_tready.next = i.out_ready;
                self.m_meta_tready.next = i.meta_ready;
                self.local_mac.next = bits_from_u64(RX_MAC);
                self.local_ip.next = bits_from_u64(RX_IP);
            }
            fn set_clk(&mut self, c: bool) {
                self.clk.next = c.into();
            }
            fn set_rst(&mut self, r: bool) {
                self.rst.next = r;
            }
            fn handshake(&self) -> Handshake {
                let $s = self;
                Handshake {
                    meta_ready: false,
                    in_ready: $ready,
                    out_valid: self.m_axis_tvalid.val(),
                    out_last: self.m_axis_tlast.val(),
                }
            }
        }
    };
}

rx_dut!(ten_g::RxParser, |s| s.s_axis_tready.val(), |_d, _i| {});
// The wire does not wait: no `s_axis_tready`, taken as always high.
rx_dut!(ten_g::RxFrame, |_s| true, |d, i| {
    d.s_axis_tuser.next = i.user;
    d.pfc_enable.next = bits_from_u64(LOSSLESS);
    d.xoff_bytes.next = bits_from_u64(XOFF_BYTES);
    d.xon_bytes.next = bits_from_u64(XOFF_BYTES / 2);
});

/// Wire frames for the RX path: the parser's frames with a right ICRC and FCS, some damaged
/// before the ICRC is computed (the parser's checks), one in eight after (the FCS's).
fn rx_wire_frame(r: &mut rand_chacha::ChaCha8Rng) -> Vec<u8> {
    let mut f = rx_frame(r);
    let n = f.len();
    if n >= 58 {
        if let Ok(c) = ferroce_spec::icrc(&f[..n]) {
            f[n - 4..].copy_from_slice(&c.to_le_bytes());
        }
    }
    f.resize(n.max(60), 0);
    let fcs = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(&f);
    f.extend(fcs.to_le_bytes());
    if r.gen_ratio(1, 8) {
        let at = r.gen_range(0..f.len());
        f[at] ^= 1;
    }
    f
}

/// RoCEv2 frames for the RX parser: mostly to its addresses, some opcodes it parses but the
/// TX builder does not send, arbitrary ICRC bytes, padding; one in five damaged in its
/// headers, one in ten cut short.
fn rx_frame(r: &mut rand_chacha::ChaCha8Rng) -> Vec<u8> {
    let mut p = short_packet(r);
    if r.gen_ratio(9, 10) {
        p.dst_mac = RX_MAC.to_be_bytes()[2..].try_into().expect("6 bytes");
        p.dst_ip = (RX_IP as u32).to_be_bytes();
    }
    match r.gen_range(0..6) {
        0 => {
            p.opcode = 0x14;
            p.ext = vec![0x5A; 28];
            p.payload.clear();
        }
        1 => {
            p.opcode = 0x0B;
            p.ext = vec![0x3C; 20];
        }
        _ => {}
    }
    let mut f = p.frame_without_icrc();
    let n = f.len();
    r.fill(&mut f[n - 4..]);
    while f.len() < 60 {
        f.push(r.gen());
    }
    if r.gen_ratio(1, 5) {
        let at = r.gen_range(0..60);
        f[at] ^= 1 << r.gen_range(0..8);
    }
    if r.gen_ratio(1, 10) {
        f.truncate(r.gen_range(1..=f.len()));
    }
    f
}

/// A packet with at most 300 bytes of payload (many frames in a short run).
fn short_packet(r: &mut rand_chacha::ChaCha8Rng) -> TxPacket {
    let mut p = TxPacket::random(r);
    p.payload.truncate(r.gen_range(0..=300));
    p
}

/// Plain frames for a design without records: the builder's frames cut at random.
fn cut_frame(r: &mut rand_chacha::ChaCha8Rng) -> Vec<u8> {
    let mut f = short_packet(r).frame_without_icrc();
    f.truncate(r.gen_range(0..=f.len()));
    f
}

/// Wire frames: ICRC and FCS right, one in six a PFC frame with short times (MAC control),
/// one in four damaged somewhere.
fn wire_frame(r: &mut rand_chacha::ChaCha8Rng) -> Vec<u8> {
    let mut f = if r.gen_ratio(1, 6) {
        let times = std::array::from_fn(|_| r.gen_range(0..8));
        ferroce_spec::mac_ctrl::pfc_frame([2, 0, 0, 0, 0, 1], r.gen(), times)
    } else {
        let mut f = short_packet(r).frame_without_icrc();
        let n = f.len();
        if let Ok(c) = ferroce_spec::icrc(&f) {
            f[n - 4..].copy_from_slice(&c.to_le_bytes());
        }
        f
    };
    let n = f.len();
    f.resize(n.max(60), 0);
    let fcs = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(&f);
    f.extend(fcs.to_le_bytes());
    if r.gen_ratio(1, 4) {
        let at = r.gen_range(0..f.len());
        f[at] ^= 1;
    }
    f
}

/// Run `cycles` cycles; `framer` says whether the design takes records (else frames from
/// `gen` on `s_axis`). Returns the number of frames that came out.
fn run<D: Dut + Block>(
    name: &str,
    hdl: &mut D,
    framer: bool,
    gen: fn(&mut rand_chacha::ChaCha8Rng) -> Vec<u8>,
    cycles: u64,
) -> Result<u64> {
    let mut r = rng(seed(name));
    hdl.connect_all();
    let mut tb = open_tb(name, &BuildOptions::default())?;
    let edge = |b: &mut D| hdl_edge(b, |b, c| b.set_clk(c));
    hdl.set_rst(true);
    for _ in 0..3 {
        edge(hdl);
    }
    hdl.set_rst(false);
    edge(hdl);
    let pay = if framer { "s_pay" } else { "s_axis" };
    let outs = Outputs::new(&*hdl, tb.model_ref())?;
    let optional = |tb: &ferroce_sim::Tb, p: &str| -> Result<Option<ferroce_sim::model::Port>> {
        Ok(if tb.model_ref().has_port(p) {
            Some(tb.model_ref().port(p)?)
        } else {
            None
        })
    };
    let meta_ready = optional(&tb, "m_meta_tready")?;
    let user_port = optional(&tb, &format!("{pay}_tuser"))?;
    let mut user_err = false;
    for (port, v) in [
        ("local_mac", RX_MAC),
        ("local_ip", RX_IP),
        ("pfc_enable", LOSSLESS),
        ("xoff_bytes", XOFF_BYTES),
        ("xon_bytes", XOFF_BYTES / 2),
    ] {
        if tb.model_ref().has_port(port) {
            tb.set(port, v)?;
        }
    }
    let mut metas: VecDeque<Vec<u8>> = VecDeque::new();
    let mut beats: VecDeque<Beat> = VecDeque::new();
    let mut cur_meta: Option<Vec<u8>> = None;
    let mut cur_beat: Option<Beat> = None;
    let mut frames = 0;
    for cycle in 0..cycles {
        if beats.len() < 8 {
            let mut p = short_packet(&mut r);
            let mut payload = p.payload.clone();
            if framer {
                match r.gen_range(0..20) {
                    0 => p.opcode = 0x15,
                    1 => {
                        payload.push(0xA5);
                    }
                    _ => {}
                }
                metas.push_back(p.meta());
            } else {
                payload = gen(&mut r);
            }
            let n = payload.len().div_ceil(8).max(1);
            for i in 0..n {
                let chunk = payload
                    .get(8 * i..(8 * i + 8).min(payload.len()))
                    .unwrap_or(&[]);
                let mut b = [0u8; 8];
                b[..chunk.len()].copy_from_slice(chunk);
                beats.push_back((u64::from_le_bytes(b), full_keep(chunk.len()), i + 1 == n));
            }
        }
        if cur_meta.is_none() && r.gen_bool(0.7) {
            cur_meta = metas.pop_front();
        }
        if cur_beat.is_none() && r.gen_bool(0.85) {
            cur_beat = beats.pop_front();
            // One frame end in twelve carries tuser (where the design takes it).
            user_err = r.gen_ratio(1, 12);
        }
        let (data, keep, last) = cur_beat.unwrap_or_default();
        let i = In {
            meta: cur_meta.clone().unwrap_or_else(|| vec![0; 64]),
            meta_valid: cur_meta.is_some(),
            data,
            keep,
            last,
            user: last && user_err,
            valid: cur_beat.is_some(),
            out_ready: r.gen_bool(0.75),
            meta_ready: r.gen_bool(0.75),
        };
        hdl.drive(&i);
        assert!(simulate(hdl, 200));
        let before = hdl.handshake();
        let meta_taken = i.meta_valid && before.meta_ready;
        let beat_taken = i.valid && before.in_ready;
        frames += u64::from(before.out_last && before.out_valid && i.out_ready);
        edge(hdl);

        if framer {
            let p = tb.model_ref().port("s_meta_tdata")?;
            tb.model().set_bytes(p, &i.meta)?;
            tb.set("s_meta_tvalid", i.meta_valid.into())?;
        }
        tb.set(&format!("{pay}_tdata"), data)?;
        tb.set(&format!("{pay}_tkeep"), keep)?;
        tb.set(&format!("{pay}_tlast"), last.into())?;
        tb.set(&format!("{pay}_tvalid"), i.valid.into())?;
        if let Some(p) = user_port {
            tb.model().set(p, i.user.into())?;
        }
        tb.set("m_axis_tready", i.out_ready.into())?;
        if let Some(p) = meta_ready {
            tb.model().set(p, i.meta_ready.into())?;
        }
        tb.rising_edge()?;
        if meta_taken {
            cur_meta = None;
        }
        if beat_taken {
            cur_beat = None;
        }
        outs.check(&*hdl, tb.model_ref(), cycle)
            .with_context(|| format!("{name}: Verilator vs rust-hdl"))?;
    }
    println!(
        "{name}: {cycles} cycles, {frames} frames, all {} outputs equal",
        outs.len()
    );
    Ok(frames)
}

#[test]
fn tx_header_64_rust_hdl_matches_verilator() -> Result<()> {
    let mut b = ten_g::TxHeader::new();
    let frames = run(
        "ferroce_tx_header_64",
        &mut b,
        true,
        cut_frame,
        soak(6000) as u64,
    )?;
    assert!(frames > 40, "too little traffic: {frames} frames");
    Ok(())
}

#[test]
fn mac_tx_64_rust_hdl_matches_verilator() -> Result<()> {
    let mut b = ten_g::MacTx::new();
    let frames = run(
        "ferroce_mac_tx_64",
        &mut b,
        false,
        cut_frame,
        soak(6000) as u64,
    )?;
    assert!(frames > 40, "too little traffic: {frames} frames");
    Ok(())
}

#[test]
fn tx_64_rust_hdl_matches_verilator() -> Result<()> {
    let mut b = ten_g::TxFrame::new();
    let frames = run("ferroce_tx_64", &mut b, true, cut_frame, soak(5000) as u64)?;
    assert!(frames > 30, "too little traffic: {frames} frames");
    Ok(())
}

#[test]
fn mac_rx_64_rust_hdl_matches_verilator() -> Result<()> {
    let mut b = ten_g::MacRx::new();
    let frames = run(
        "ferroce_mac_rx_64",
        &mut b,
        false,
        wire_frame,
        soak(5000) as u64,
    )?;
    assert!(frames > 30, "too little traffic: {frames} frames");
    Ok(())
}

#[test]
fn rx_parser_64_rust_hdl_matches_verilator() -> Result<()> {
    let mut b = ten_g::RxParser::new();
    let frames = run(
        "ferroce_rx_parser_64",
        &mut b,
        false,
        rx_frame,
        soak(6000) as u64,
    )?;
    assert!(frames > 30, "too little traffic: {frames} frames");
    Ok(())
}

#[test]
fn rx_64_rust_hdl_matches_verilator() -> Result<()> {
    let mut b = ten_g::RxFrame::new();
    let frames = run(
        "ferroce_rx_64",
        &mut b,
        false,
        rx_wire_frame,
        soak(6000) as u64,
    )?;
    assert!(frames > 20, "too little traffic: {frames} frames");
    Ok(())
}
