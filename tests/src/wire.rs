//! Checks of frames by outside references, shared by the tests: the FCS by the `crc` crate
//! (zlib's CRC-32), the ICRC by scapy (`tests/py/roce_check.py`), the dissection by tshark.

use anyhow::{ensure, Context, Result};
use pcap_file::pcap::{PcapPacket, PcapWriter};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The NIC's PFC response, documented in the README: from the last bit of a PFC frame at the
/// receiver to the latest start of a new frame it pauses, beyond a frame already started. On
/// the frame face (`ferroce_nic_64`, 20 cycles; 15.5-16.5 measured) and over XGMII
/// (`ferroce_nic_10g`, 24 cycles: the decoder before the MAC and the encoder after it add two
/// to three; 17.5-19 measured).
pub fn pfc_response_bits(phy: ferroce_sim::world::Phy) -> u64 {
    match phy {
        ferroce_sim::world::Phy::Frames => 1280,
        ferroce_sim::world::Phy::Xgmii => 1536,
    }
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
/// untagged) (`;`-separated fields, in that order).
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
