//! The page `ferroce perf --write PAGE` writes: a section for each part, the parts measured
//! in this run with their new tables, the parts skipped as the page had them (so one part can
//! be measured again without the hour the whole page takes).

/// One part of the page: its title, its note, and its table if this run measured it.
pub struct Section {
    pub title: &'static str,
    pub note: &'static str,
    pub table: Option<String>,
}

/// The page: its head, then each section in order (measured: its note and new table; skipped:
/// its text from `old`, if `old` has that section), then `versions`.
pub fn compose(sections: &[Section], old: &str, versions: &str) -> String {
    let kept = old_sections(old);
    let mut doc = String::from(PAGE_HEAD);
    for s in sections {
        match &s.table {
            Some(table) => {
                doc.push_str(&format!("\n## {}\n\n{}\n\n{table}", s.title, s.note));
            }
            None => {
                if let Some((_, body)) = kept.iter().find(|(t, _)| *t == s.title) {
                    doc.push_str(&format!("\n## {}\n{body}", s.title));
                }
            }
        }
    }
    doc.push_str(&format!("\n{versions}\n"));
    doc
}

/// The sections of a page `compose` wrote: (title, the text after the title's line), the last
/// one without the versions line.
fn old_sections(old: &str) -> Vec<(&str, &str)> {
    let body = old.rfind("\nMeasured with ").map_or(old, |at| &old[..at]);
    body.split("\n## ")
        .skip(1)
        .filter_map(|s| s.split_once('\n'))
        .collect()
}

const PAGE_HEAD: &str = "<!-- Written by `cargo run --release --bin ferroce -- perf --write docs/performance.md`; rerun it to refresh. -->\n\n\
# Performance\n\n\
Every throughput and latency figure is simulated time on the Verilator model of the emitted \
Verilog; simulation speeds are wall-clock on the machine that ran it (2 cores). \
`--no-nic`, `--no-qps`, `--no-lossy`, `--no-mac`, `--no-taps` and `--no-synth` skip parts; \
a part skipped keeps its section of this page as it was. The plots (SVG) are written beside the \
page, in `perf/`.\n";

pub const LOSSY_NOTE: &str =
    "Host a to host b, one RC QP, path MTU 4096, 256 WRITEs of 64 KiB, the send queue kept \
full, both links dropping frames at random (from a fixed seed; no PFC), the QPs' ACK timeout \
4 (65.5 us). A lost packet is recovered by the sequence NAK the next one draws, a lost last \
packet or ACK by the timeout; the requester goes back to the first unacknowledged PSN \
(go-back-N). Goodput from the first doorbell to the last completion, every byte checked; \
the retries as host a's driver reads them from BAR0's RC_STATS block.";

pub const NIC_NOTE: &str =
    "Host a to host b, one RC QP, path MTU 4096, 10 Gb/s link (156.25 MHz x 64 bits), PCIe \
reads 500 ns with completions in request order, PFC on priority 0, the send queue kept full \
(for SENDs, the receiver keeps its receive queue full, one buffer a SEND; READs are posted by \
host b, the responses carry the bytes from a to b); throughput from the \
first doorbell to the last completion seen by `poll_cq` (for SENDs, on both sides), every \
byte checked. The ceiling is what the wire allows for back-to-back messages of that size \
(`spec::wire`: Ethernet + IPv4 + UDP + BTH, a WRITE's RETH on its first packet, a READ \
response's AETH on its first and last, pad, ICRC, \
FCS, 64-byte minimum frame, 8 bytes of preamble and SFD, 12 bytes of gap). Small messages are \
limited by the requester, which fetches the next WQE only after the current work request's \
payload reads are issued ([ARCHITECTURE.md](ARCHITECTURE.md), \"Where the time goes\"), and \
small SENDs also by the responder, which fetches each receive WQE when its SEND arrives \
(small READs likewise by the requester's side, which fetches the READ's WQE again for its \
SGEs when the response arrives).";

pub const MAC_NOTE: &str =
    "`ferroce_mac_512` (the whole MAC at 512 bits, 250 MHz) fed RoCEv2 frames back to back, \
its wire face looped back into its receive face through one register (`tx_axis_tready` \
always high, as a hard MAC that always takes), the received frames taken at once. Sizes are \
the nearest a RoCEv2 frame has (58 bytes of headers and ICRC, a payload of whole words, FCS); \
66 is the two-beat case. The frame-rate column is beats at 250 MHz against the 100 Gb/s line \
with 20 bytes of preamble and gap per frame: one frame per 512-bit beat falls short of the \
line only for 65-79 and 129-byte frames, a limit of the interface.";

pub const TAPS_NOTE: &str =
    "Frames back to back, no idle. At 10g a 64-bit beat per 6.4 ns clock is 10 Gb/s, the line \
rate; at 100g 512 bits per 4 ns is 128 Gb/s. The ICRC frames are RoCEv2 SENDs over IPv4 of \
the nearest size a 4-byte-padded payload allows. The Python column is a cocotb-shaped loop \
(`python -m ferroce.bench`): one `await RisingEdge` per cycle while the Rust AXI-stream \
source streams.";

pub const SYNTH_NOTE: &str =
    "Yosys `synth_xilinx` and `synth_ice40`, flattened, out of context (no I/O \
buffers). Blocks are synthesized by the test suite too; assemblies only here. iCE40 \
synthesis is a gate, not a fit: the whole NIC needs more block RAM than any iCE40 has.";

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(a: Option<&str>, b: Option<&str>) -> [Section; 2] {
        [
            Section {
                title: "A",
                note: "note a",
                table: a.map(String::from),
            },
            Section {
                title: "B",
                note: "note b",
                table: b.map(String::from),
            },
        ]
    }

    #[test]
    fn a_part_skipped_keeps_its_section_and_a_part_measured_replaces_its_own() {
        let first = compose(
            &sections(Some("| a1 |\n"), Some("| b1 |\n")),
            "",
            "Measured with x.",
        );
        assert!(first.starts_with(PAGE_HEAD));
        assert!(first.ends_with("\nMeasured with x.\n"));
        let second = compose(
            &sections(Some("| a2 |\n"), None),
            &first,
            "Measured with y.",
        );
        assert!(second.contains("## A\n\nnote a\n\n| a2 |\n"), "{second}");
        assert!(second.contains("## B\n\nnote b\n\n| b1 |\n"), "{second}");
        assert!(!second.contains("a1") && !second.contains("Measured with x."));
        assert_eq!(second.matches("## ").count(), 2);
        // Measuring everything again gives what a first run would.
        let third = compose(
            &sections(Some("| a2 |\n"), Some("| b1 |\n")),
            &second,
            "Measured with y.",
        );
        assert_eq!(
            third,
            compose(
                &sections(Some("| a2 |\n"), Some("| b1 |\n")),
                "",
                "Measured with y."
            )
        );
        // Measuring again what was measured, keeping the rest, changes nothing.
        let again = compose(
            &sections(Some("| a1 |\n"), None),
            &first,
            "Measured with x.",
        );
        assert_eq!(again, first);
        // A part skipped that the page never had stays out.
        let fourth = compose(&sections(None, None), "", "Measured with z.");
        assert!(!fourth.contains("## "));
    }
}
