//! Checks of frames by outside references, shared by the tests: the FCS by the `crc` crate
//! (zlib's CRC-32), the ICRC by scapy (`tests/py/roce_check.py`), the dissection by tshark.

use anyhow::{ensure, Context, Result};
use pcap_file::pcap::{PcapPacket, PcapWriter};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The NIC's PFC response, documented in the README: from the last bit of a PFC frame at the
/// receiver to the latest start of a new frame it pauses, a frame the scheduler had already
/// committed included (the window check adds one maximum frame time to it). On
/// the frame face (`ferroce_nic_64`, 20 cycles; 15.5-19.5 measured) and over XGMII
/// (`ferroce_nic_10g`, 24 cycles: the decoder before the MAC and the encoder after it add two
/// to three; 17.5-21 measured).
pub fn pfc_response_bits(phy: ferroce_sim::world::Phy) -> u64 {
    match phy {
        ferroce_sim::world::Phy::Frames => 1280,
        ferroce_sim::world::Phy::Xgmii => 1536,
    }
}

/// The 100G MAC's PFC response (`ferroce_mac_512` on the 100 Gb/s frame link, 250 MHz): 30
/// cycles of 400 bit times (21-27 measured). More cycles than at 10G: the link takes a frame's
/// beats at 128 Gb/s and waits after it, so the frame the scheduler has already committed sits
/// further ahead of the wire.
pub const PFC_RESPONSE_BITS_100G: u64 = 12_000;

/// What [`check_pause_windows`] holds a run to.
pub struct PauseCheck {
    pub rate_bps: u64,
    /// From the peer's end of the wire to the NIC.
    pub propagation_ps: u64,
    /// The largest data frame of the run, with FCS (a frame already started finishes).
    pub max_frame: u64,
    /// The documented response (`pfc_response_bits`, `PFC_RESPONSE_BITS_100G`).
    pub response_bits: u64,
    /// How much later than the response traffic of a priority may resume after its pause
    /// ends (a frame of another priority may be on the wire).
    pub resume_slack_bits: u64,
    /// Priorities (bit p) whose sender keeps frames waiting throughout: only for them must
    /// traffic resume when a pause ends (a light priority may simply have nothing to send).
    pub backlogged: u8,
}

/// What [`check_pause_windows`] measured.
#[derive(Debug, Default)]
pub struct PauseReport {
    /// Control frames that paused a priority carrying traffic.
    pub windows: usize,
    /// The latest start of a paused frame after the pause arrived (a frame in progress
    /// included): the stop response, in ps.
    pub worst_ps: u64,
    /// For each window not refreshed by another pause: from its end to the next start of a
    /// frame it paused, in ps.
    pub resume_ps: Vec<u64>,
    /// For each PFC frame that paused some priorities while others carried traffic: frames of
    /// those others that started in the window after `A` + one maximum frame + the response.
    pub others_flowing: Vec<usize>,
}

/// Judge the pause windows of one direction from pcap timestamps. `data`: the NIC's frames
/// (start ps, bytes, as `pcap_frames_ps` reads them); `ctl`: the MAC control frames the peer
/// sent it (same). For each control frame, from the moment its last bit reaches the NIC (`A`),
/// and each priority p it pauses for q quanta that carries traffic: no frame of p starts later
/// than `A` + one maximum frame time + the response and before the pause ends (q x 512 bit
/// times, or the next control frame for p: an XON ends it, another pause renews it, and a
/// renewed window allows no start at all); when it ends (not renewed), traffic of each
/// backlogged priority it paused starts again within the response plus `resume_slack_bits`.
/// `others_flowing` counts, per PFC window, frames of the priorities it left alone that
/// started after `A` + the allowance. A frame's priority is its VLAN PCP (0 untagged); the NIC's own
/// MAC control frames are not data.
pub fn check_pause_windows(
    c: &PauseCheck,
    data: &[(u64, Vec<u8>)],
    ctl: &[(u64, Vec<u8>)],
) -> Result<PauseReport> {
    use ferroce_spec::mac_ctrl::{parse, quanta_ps, MacCtrl};
    let bits_ps = |bits: u64| bits * 1_000_000_000_000 / c.rate_bps;
    let data: Vec<(u64, usize)> = data
        .iter()
        .filter(|(_, f)| matches!(parse(f), MacCtrl::NotCtrl))
        .map(|(t, f)| (*t, crate::tx::wire_prio(f)))
        .collect();
    let busy: Vec<bool> = (0..8).map(|p| data.iter().any(|d| d.1 == p)).collect();
    // (A, per priority the pause time it sets, PFC rather than PAUSE)
    let ctl: Vec<(u64, [Option<u16>; 8], bool)> = ctl
        .iter()
        .filter_map(|(t, f)| {
            let a = t + c.propagation_ps + bits_ps(8 * (f.len() as u64 + 4));
            match parse(f) {
                MacCtrl::Pause { time } => Some((a, [Some(time); 8], false)),
                MacCtrl::Pfc { enable, times } => Some((
                    a,
                    std::array::from_fn(|p| (enable >> p & 1 == 1).then_some(times[p])),
                    true,
                )),
                _ => None,
            }
        })
        .collect();
    let allowance = bits_ps(8 * (c.max_frame + 20) + c.response_bits);
    let mut rep = PauseReport::default();
    // Priorities whose pause the previous control frame renewed: still paused at its arrival,
    // so their new window starts without the allowance.
    let mut renewing = [false; 8];
    for (i, (a, times, is_pfc)) in ctl.iter().enumerate() {
        let paused: Vec<usize> = (0..8)
            .filter(|&p| times[p].is_some_and(|q| q > 0))
            .collect();
        let mut ends = Vec::new();
        let mut window_end = *a;
        for &p in &paused {
            let q = times[p].unwrap_or(0);
            let quanta_end = a + quanta_ps(q.into(), c.rate_bps);
            let next = ctl[i + 1..].iter().find(|(_, t, _)| t[p].is_some());
            let (end, renewed) = match next {
                Some((x, t, _)) if *x < quanta_end => (*x, t[p] != Some(0)),
                _ => (quanta_end, false),
            };
            window_end = window_end.max(end);
            if !busy[p] {
                continue;
            }
            let cont = renewing[p];
            renewing[p] = renewed;
            let from = if cont { *a } else { a + allowance };
            let starts = || data.iter().filter(move |d| d.1 == p).map(|d| d.0);
            let late: Vec<u64> = starts().filter(|t| *t > from && *t < end).collect();
            ensure!(
                late.is_empty(),
                "control frame {i}: priority {p} paused ({q} quanta) from {a} ps to {end} ps: \
                 frames started at {late:?}"
            );
            if let Some(t) = starts().filter(|t| !cont && t >= a && *t < end).max() {
                rep.worst_ps = rep.worst_ps.max(t - a);
            }
            if !renewed {
                ends.push((p, end));
            }
        }
        if paused.iter().any(|&p| busy[p]) {
            rep.windows += 1;
        }
        // Traffic of a backlogged priority this frame paused starts again when its pause ends.
        ends.retain(|e| c.backlogged >> e.0 & 1 == 1);
        if let Some(end) = ends.iter().map(|e| e.1).max() {
            let resumed = data
                .iter()
                .find(|d| d.0 >= end && ends.iter().any(|e| e.0 == d.1))
                .map(|d| d.0);
            ensure!(
                resumed.is_some_and(|t| t <= end + bits_ps(c.response_bits + c.resume_slack_bits)),
                "control frame {i}: traffic did not resume promptly after {end} ps: {resumed:?}"
            );
            rep.resume_ps.extend(resumed.map(|t| t - end));
        }
        // Frames of the priorities it left alone, from when the paused ones must have
        // stopped (frames committed before the pause do not count).
        let others: Vec<usize> = (0..8).filter(|p| busy[*p] && !paused.contains(p)).collect();
        if *is_pfc && !paused.is_empty() && !others.is_empty() {
            rep.others_flowing.push(
                data.iter()
                    .filter(|d| d.0 > a + allowance && d.0 < window_end && others.contains(&d.1))
                    .count(),
            );
        }
    }
    Ok(rep)
}

/// (start in ps, bytes without FCS) of every frame in a pcap with nanosecond stamps (the
/// link model's taps).
pub fn pcap_frames_ps(path: &Path) -> Result<Vec<(u64, Vec<u8>)>> {
    let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(path)?)
        .with_context(|| format!("opening {}", path.display()))?;
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        let p = p?;
        out.push((p.timestamp.as_nanos() as u64 * 1000, p.data.into_owned()));
    }
    Ok(out)
}

/// The MAC control frames (PFC, PAUSE) of a pcap, with their start times, as
/// [`pcap_frames_ps`] reads them.
pub fn pcap_ctrl_frames_ps(path: &Path) -> Result<Vec<(u64, Vec<u8>)>> {
    use ferroce_spec::mac_ctrl::{parse, MacCtrl};
    Ok(pcap_frames_ps(path)?
        .into_iter()
        .filter(|(_, f)| !matches!(parse(f), MacCtrl::NotCtrl))
        .collect())
}

/// zlib's CRC-32, the Ethernet FCS.
pub const FCS: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

/// Split off and check the FCS; returns the frame without it.
pub fn strip_fcs(i: usize, f: &[u8]) -> Result<&[u8]> {
    ensure!(
        f.len() >= 64,
        "frame {i}: {} bytes, below the minimum",
        f.len()
    );
    let (body, fcs) = f.split_at(f.len() - 4);
    ensure!(
        fcs == FCS.checksum(body).to_le_bytes(),
        "frame {i}: FCS {fcs:02x?}, zlib's CRC-32 is {:08x}",
        FCS.checksum(body)
    );
    Ok(body)
}

/// Heuristic dissectors tshark tries on an InfiniBand payload (`tshark -G heuristic-decodes`,
/// by their short names):
/// random payload bytes sometimes look like one of them (an EtherType, an EoIB header), and the
/// frame is then shown as that protocol, malformed. Our payloads are test bytes, not protocols.
const IB_PAYLOAD_HEURISTICS: &[&str] = &[
    "smcr_infiniband",
    "smb_direct_infiniband",
    "rpcrdma_infiniband",
    "nvme_rdma",
    "lnet_ib",
    "iser_infiniband",
    "eth_over_ib",
    "mellanox_eoib",
    "sdp_infiniband",
    "fc_infiniband",
];

/// Per frame of `pcap`, tshark's protocol column, BTH opcode, destination QP, PSN, malformed
/// flag, expert severities, RETH VA, AETH MSN, 802.1Q priority and VLAN ID (empty when
/// untagged), ImmDt, SE, AtomicETH swap/add and compare data, AtomicAckETH original data
/// (`;`-separated fields, in that order).
pub fn tshark_fields(pcap: &Path) -> Result<Vec<Vec<String>>> {
    let mut cmd = Command::new("tshark");
    for h in IB_PAYLOAD_HEURISTICS {
        cmd.args(["--disable-heuristic", h]);
    }
    let out = cmd
        .arg("-r")
        .arg(pcap)
        .args(["-T", "fields", "-E", "separator=;"])
        .args(["-e", "_ws.col.Protocol", "-e", "infiniband.bth.opcode"])
        .args(["-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn"])
        .args(["-e", "_ws.malformed", "-e", "_ws.expert.severity"])
        .args(["-e", "infiniband.reth.va", "-e", "infiniband.aeth.msn"])
        .args(["-e", "vlan.priority", "-e", "vlan.id"])
        .args(["-e", "infiniband.immdt", "-e", "infiniband.bth.se"])
        .args([
            "-e",
            "infiniband.atomiceth.swapdt",
            "-e",
            "infiniband.atomiceth.cmpdt",
        ])
        .args(["-e", "infiniband.atomicacketh.origremdt"])
        .output()
        .context("running tshark (installed by .ci/setup)")?;
    ensure!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split(';').map(str::to_string).collect())
        .collect())
}

/// A number as tshark prints it (decimal, or hex with `0x`).
pub fn tshark_num(s: &str) -> Result<u64> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    v.with_context(|| format!("tshark field {s:?}"))
}

/// One RoCEv2 frame as tshark dissected it (the fields the transport tests judge).
#[derive(Clone, Debug, Default)]
pub struct Dissected {
    pub opcode: u8,
    pub dest_qp: u32,
    pub psn: u32,
    /// AtomicETH swap (or add) data and compare data, AtomicAckETH original data.
    pub swap_add: Option<u64>,
    pub compare: Option<u64>,
    pub orig: Option<u64>,
}

/// Every frame of the pcap but the MAC control frames (PFC) is RoCEv2 that tshark dissects
/// without complaint and scapy confirms the ICRC of; returns tshark's reading of each.
pub fn check_pcap(pcap: &Path) -> Result<Vec<Dissected>> {
    use ferroce_spec::mac_ctrl::{parse, MacCtrl};
    let frames: Vec<Vec<u8>> = pcap_frames_ps(pcap)?
        .into_iter()
        .map(|(_, f)| f)
        .filter(|f| matches!(parse(f), MacCtrl::NotCtrl))
        .collect();
    let roce = pcap.with_extension("roce.pcap");
    write_pcap(&roce, &frames.iter().map(|f| &f[..]).collect::<Vec<_>>())?;
    let rows = tshark_fields(&roce)?;
    ensure!(
        rows.len() == frames.len(),
        "{}: tshark read {} frames",
        roce.display(),
        rows.len()
    );
    let mut out = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        ensure!(
            row[0] == "RRoCE" && row[4].is_empty() && row.len() >= 15,
            "{}: frame {i}: tshark says {row:?}",
            roce.display()
        );
        let opt = |k: usize| -> Result<Option<u64>> {
            Ok(if row[k].is_empty() {
                None
            } else {
                Some(tshark_num(&row[k])?)
            })
        };
        out.push(Dissected {
            opcode: tshark_num(&row[1])? as u8,
            dest_qp: tshark_num(&row[2])? as u32,
            psn: tshark_num(&row[3])? as u32,
            swap_add: opt(12)?,
            compare: opt(13)?,
            orig: opt(14)?,
        });
    }
    let ok = scapy_check(&roce)?;
    ensure!(ok.trim() == format!("ok {}", rows.len()), "scapy: {ok}");
    Ok(out)
}

/// scapy's verdict on every frame's ICRC: `ok N` when all N are right.
pub fn scapy_check(pcap: &Path) -> Result<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(root.join(".venv/bin/python"))
        .arg(root.join("tests/py/roce_check.py"))
        .arg(pcap)
        .output()
        .context("running tests/py/roce_check.py in .venv (made by .ci/setup)")?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    ensure!(
        out.status.success(),
        "scapy: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(text)
}

/// Write frames (no FCS) to a pcap, one microsecond apart.
pub fn write_pcap(path: &Path, frames: &[&[u8]]) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| path.display().to_string())?;
    let mut w = PcapWriter::new(file)?;
    for (i, f) in frames.iter().enumerate() {
        w.write_packet(&PcapPacket::new(
            Duration::from_micros(i as u64),
            f.len() as u32,
            f,
        ))?;
    }
    Ok(())
}
