//! The ICRC reference in `spec` against real RoCEv2 traffic captured from Linux Soft-RoCE
//! (`tests/data/rxe`): every RoCE frame's carried ICRC must equal the reference, and
//! etherparse (an outside parser) must agree on where the IP packet ends.

use anyhow::{ensure, Context, Result};
use ferroce_spec::icrc::{carried_icrc, icrc, parse, IcrcError};
use pcap_file::pcap::PcapReader;
use std::path::PathBuf;

fn vectors() -> Result<Vec<PathBuf>> {
    ferroce_tests::rxe_pcaps()
}

#[test]
fn every_rxe_frame_has_the_reference_icrc() -> Result<()> {
    let mut total = 0;
    for path in vectors()? {
        let mut reader = PcapReader::new(std::fs::File::open(&path)?)
            .with_context(|| format!("opening {}", path.display()))?;
        let (mut roce, mut other) = (0, 0);
        while let Some(pkt) = reader.next_packet() {
            let frame = pkt?.data.into_owned();
            match parse(&frame) {
                Ok((layout, end)) => {
                    let want = carried_icrc(&frame)?;
                    assert_eq!(
                        icrc(&frame)?,
                        want,
                        "{} frame {}: ICRC",
                        path.display(),
                        roce + other
                    );
                    // etherparse agrees on the layout: the ICRC sits at the end of the IP
                    // packet, which ends at the UDP payload's end.
                    let sliced = etherparse::SlicedPacket::from_ethernet(&frame)?;
                    let udp_end = match &sliced.transport {
                        Some(etherparse::TransportSlice::Udp(u)) => {
                            u.payload().as_ptr() as usize - frame.as_ptr() as usize
                                + u.payload().len()
                        }
                        _ => panic!("{}: RoCE frame without UDP", path.display()),
                    };
                    assert_eq!(end + 4, udp_end, "{}: ICRC position", path.display());
                    assert!(!layout.vlan, "rxe captures carry no VLAN tag");
                    roce += 1;
                }
                Err(IcrcError::NotIp(_) | IcrcError::NotUdp(_) | IcrcError::NotRoce(_)) => {
                    other += 1
                }
                Err(e) => panic!("{}: unexpected parse error {e}", path.display()),
            }
        }
        println!("{}: {roce} RoCE frames, {other} others", path.display());
        ensure!(roce > 0, "{}: no RoCE frames", path.display());
        total += roce;
    }
    println!("{total} RoCE frames checked");
    Ok(())
}

#[test]
fn a_flipped_bit_changes_the_icrc_and_a_masked_one_does_not() -> Result<()> {
    let path = &vectors()?[0];
    let mut reader = PcapReader::new(std::fs::File::open(path)?)?;
    while let Some(pkt) = reader.next_packet() {
        let frame = pkt?.data.into_owned();
        let Ok((layout, end)) = parse(&frame) else {
            continue;
        };
        let base = icrc(&frame)?;
        for (offset, mask) in layout.masked_bytes() {
            let mut f = frame.clone();
            f[offset] ^= mask;
            assert_eq!(icrc(&f)?, base, "masked byte {offset} changed the ICRC");
        }
        let masked: Vec<usize> = layout.masked_bytes().iter().map(|m| m.0).collect();
        for offset in layout.ip_offset()..end {
            if masked.contains(&offset) {
                continue;
            }
            let mut f = frame.clone();
            f[offset] ^= 0x01;
            // Length and protocol fields change the parse itself; a changed ICRC or a
            // rejected frame both show the byte is covered.
            if let Ok(v) = icrc(&f) {
                assert_ne!(v, base, "unmasked byte {offset} did not change the ICRC");
            }
        }
        return Ok(());
    }
    anyhow::bail!("no RoCE frame in {}", path.display())
}
