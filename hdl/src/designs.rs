//! The emittable designs: every block that `ferroce verilog` writes and the tests build.
//!
//! Each design is a top-level block at one datapath width, with a stable module name.

use crate::config::{hundred_g, ten_g};
use crate::emit::{emit, EmitError, Emitted};
use crate::host::Bar0Params;
use crate::net::mac_ctrl_rx::line_bits_per_cycle;
use crate::net::{Mac10g, PfcGen, XgmiiRx, XgmiiTx};
use crate::nic_10g::Nic10g;
use crate::rc::timers::timer_unit_cycles;
use crate::rc::{JobPark, KeyCheck, QpFail, Timers};

pub use crate::config::Config;

/// How much of the design a unit is, which decides where its synthesis is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One block (or a small wrapper of one): linted and synthesized by the test suite.
    Block,
    /// An assembly of blocks that are each gated on their own (a datapath, a whole MAC, the
    /// whole NIC): linted and checked by Yosys in the test suite, synthesized by `ferroce
    /// perf`, since one Yosys synthesis of it takes minutes.
    Assembly,
}

/// A design that can be emitted.
#[derive(Clone, Copy)]
pub struct Design {
    /// Top module name (also the file and filelist name).
    pub name: &'static str,
    pub config: Config,
    pub scope: Scope,
    pub summary: &'static str,
    /// Elaborate and emit it under the given top module name.
    pub build: fn(&str) -> Result<Emitted, EmitError>,
}

/// Every design, in both configurations.
pub const DESIGNS: &[Design] = &[
    Design {
        name: "ferroce_crc32_64",
        build: |n| emit(&mut ten_g::Crc32::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "CRC-32 tap, 64-bit stream",
    },
    Design {
        name: "ferroce_crc32_512",
        build: |n| emit(&mut hundred_g::Crc32::new(), n),
        config: Config::HundredG,
        scope: Scope::Block,
        summary: "CRC-32 tap, 512-bit stream",
    },
    Design {
        name: "ferroce_icrc_64",
        build: |n| emit(&mut ten_g::Icrc::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "RoCEv2 ICRC compute and check tap, 64-bit stream",
    },
    Design {
        name: "ferroce_icrc_512",
        build: |n| emit(&mut hundred_g::Icrc::new(), n),
        config: Config::HundredG,
        scope: Scope::Block,
        summary: "RoCEv2 ICRC compute and check tap, 512-bit stream",
    },
    Design {
        name: "ferroce_async_fifo_64",
        build: |n| emit(&mut ten_g::AsyncFifo::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "Dual-clock FIFO: beats with their keep from one clock to another, Gray pointers through two-flip-flop synchronizers",
    },
    Design {
        name: "ferroce_sync_count_32",
        build: |n| emit(&mut ten_g::SyncCount::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "A 32-bit event count read in another clock: Gray code through a two-flip-flop synchronizer",
    },
    Design {
        name: "ferroce_bar0_64",
        build: |n| emit(&mut ten_g::Bar0::new(bar0_params(Config::TenG)), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "BAR0 completer: register blocks, QP/CQ/MR context writes, doorbells",
    },
    Design {
        name: "ferroce_dma_rd_64",
        build: |n| emit(&mut ten_g::DmaRead::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "DMA read engine: tagged reads, completion reorder buffer, realigned output",
    },
    Design {
        name: "ferroce_dma_wr_64",
        build: |n| emit(&mut ten_g::DmaWrite::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "DMA write engine: memory writes cut at payload-size boundaries",
    },
    Design {
        name: "ferroce_rq_mux_64",
        build: |n| emit(&mut ten_g::RqMux::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "Requester TLP mux: two engines' requests onto one interface, a whole TLP at a time",
    },
    Design {
        name: "ferroce_tx_header_64",
        build: |n| emit(&mut ten_g::TxHeader::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "TX header builder: Eth/VLAN/IPv4/UDP/BTH and every RC opcode's extended headers (RETH, AETH, ImmDt, AtomicETH, ...) from a metadata record, payload, pad, ICRC slot",
    },
    Design {
        name: "ferroce_mac_tx_64",
        build: |n| emit(&mut ten_g::MacTx::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "MAC transmit, frame level: padding to 60 bytes, FCS",
    },
    Design {
        name: "ferroce_pfc_gen_64",
        build: |n| emit(&mut PfcGen::new(line_bits_per_cycle(ten_g::DW)), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "PFC generation: XOFF/XON records from the receive buffers' watermarks, refreshed at half the pause time",
    },
    Design {
        name: "ferroce_xgmii_tx_64",
        build: |n| emit(&mut XgmiiTx::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "XGMII transmit: preamble, /S/ on lane 0 or 4, /T/, idles with the deficit idle count (12-byte average gap); underruns ended with /E/",
    },
    Design {
        name: "ferroce_xgmii_rx_64",
        build: |n| emit(&mut XgmiiRx::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "XGMII receive: lane-4 starts realigned, preamble and SFD checked, frames to /T/; /E/ or a bad ending flagged and counted",
    },
    Design {
        name: "ferroce_tx_queues_64",
        build: |n| emit(&mut ten_g::TxQueues::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "MAC transmit queues: four queues for the eight priorities (8 KiB each), strict priority honouring pause, MAC control frames first",
    },
    Design {
        name: "ferroce_tx_queues_512",
        build: |n| emit(&mut hundred_g::TxQueues::new(), n),
        config: Config::HundredG,
        scope: Scope::Block,
        summary: "MAC transmit queues at 512 bits: eight queues, one per priority (8 KiB each), strict priority honouring pause, MAC control frames first",
    },
    Design {
        name: "ferroce_mac_10g",
        build: |n| emit(&mut Mac10g::new(), n),
        config: Config::TenG,
        scope: Scope::Assembly,
        summary: "The 10G MAC with its XGMII face: transmit queues (16 KiB each), PFC generation, FCS, start gate, XGMII encoder; XGMII decoder, receive (32 KiB buffer), FCS/ICRC checks, PAUSE/PFC receive",
    },
    Design {
        name: "ferroce_mac_512",
        build: |n| emit(&mut hundred_g::Mac::new(), n),
        config: Config::HundredG,
        scope: Scope::Assembly,
        summary: "The 100G MAC at 512 bits for a hard MAC's AXI face: transmit queues (16 KiB each, for 9,000-byte frames), PFC generation, FCS, start gate; receive (64 KiB buffer), FCS/ICRC checks, PAUSE/PFC receive at 400 bits per cycle",
    },
    Design {
        name: "ferroce_mac_rx_64",
        build: |n| emit(&mut ten_g::MacRx::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "MAC receive, frame level: store and forward, FCS and ICRC checked, bad frames dropped and counted",
    },
    Design {
        name: "ferroce_mac_ctrl_rx_64",
        build: |n| emit(&mut ten_g::MacCtrlRx::new(line_bits_per_cycle(ten_g::DW)), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "MAC control receive: 802.3x PAUSE and 802.1Qbb PFC frames recognised, per-priority pause timers in bit times, malformed frames counted",
    },
    Design {
        name: "ferroce_mac_ctrl_rx_512",
        build: |n| emit(&mut hundred_g::MacCtrlRx::new(line_bits_per_cycle(hundred_g::DW)), n),
        config: Config::HundredG,
        scope: Scope::Block,
        summary: "MAC control receive at 100G: PAUSE/PFC, pause timers in bit times (400 per 250 MHz cycle)",
    },
    Design {
        name: "ferroce_rx_parser_64",
        build: |n| emit(&mut ten_g::RxParser::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "RX parser: Eth/IPv4/UDP/BTH/ext headers to a metadata record, payload realigned, bad frames dropped and counted",
    },
    Design {
        name: "ferroce_rx_64",
        build: |n| emit(&mut ten_g::RxFrame::new(), n),
        config: Config::TenG,
        scope: Scope::Assembly,
        summary: "RX path: MAC receive (FCS, ICRC, store and forward) and RX parser",
    },
    Design {
        name: "ferroce_tx_64",
        build: |n| emit(&mut ten_g::TxFrame::new(), n),
        config: Config::TenG,
        scope: Scope::Assembly,
        summary: "TX framing path: header builder, ICRC insert, Ethernet padding, FCS",
    },
    Design {
        name: "ferroce_requester_64",
        build: |n| emit(&mut ten_g::Requester::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "RC requester: doorbells, QP scheduler, WQE fetch, SGE key checks, RDMA WRITE of up to 4 SGEs cut at the PMTU into packet records and payload reads, the pieces gathered",
    },
    Design {
        name: "ferroce_gather_64",
        build: |n| emit(&mut ten_g::Gather::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "Gather: joins a work request's scatter/gather pieces, each read as a packet from lane 0, end to end into one packet",
    },
    Design {
        name: "ferroce_scatter_64",
        build: |n| emit(&mut ten_g::Scatter::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "Scatter: cuts a received packet's payload into the pieces of a receive scatter list, each realigned to lane 0",
    },
    Design {
        name: "ferroce_recv_queue_64",
        build: |n| emit(&mut ten_g::RecvQueue::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "Receive queues: per-QP receive rings (doorbells, consumer index), a QP's next receive WQE fetched by DMA and its scatter list key-checked for the responder",
    },
    Design {
        name: "ferroce_rd_share_64",
        build: |n| emit(&mut ten_g::RdShare::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "Read share: the requester and the receive queues on one DMA read engine, each command's bytes routed back to its client",
    },
    Design {
        name: "ferroce_key_check",
        build: |n| emit(&mut KeyCheck::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "Key check: a local key, PD, access rights and range against the NIC's copy of the MR table, pipelined (4 cycles, one request per cycle)",
    },
    Design {
        name: "ferroce_job_park",
        build: |n| emit(&mut JobPark::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "Job park: one READ response job set aside between packets, so a long response takes turns with the QPs that send; a duplicate READ for its QP cuts it as the requester would",
    },
    Design {
        name: "ferroce_responder_64",
        build: |n| emit(&mut ten_g::Responder::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "RC responder: received packets checked (QP, PSN, message order, length, remote key and range), RDMA WRITE payload to DMA writes, coalesced ACKs and NAKs, received ACKs for the completer",
    },
    Design {
        name: "ferroce_completer_64",
        build: |n| emit(
            &mut ten_g::Completer::new(timer_unit_cycles(Config::TenG.clock_khz())), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "RC completer: ACKs retire sent work requests in order per QP (a QP never waits for another), fatal NAKs fail them, CQEs by DMA with owner bits",
    },
    Design {
        name: "ferroce_qp_fail",
        build: |n| emit(&mut QpFail::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "QP failure: one ERR for the whole QP; the engines' reports to a bit per QP every engine reads, flushes handed to the completer and the responder",
    },
    Design {
        name: "ferroce_timers",
        build: |n| emit(
            &mut Timers::new(timer_unit_cycles(Config::TenG.clock_khz())), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "RC timers: every QP's ACK timer and RNR wait in one RAM, a scanner visiting one QP per cycle, expiries for the completer",
    },
    Design {
        name: "ferroce_tx_arb_64",
        build: |n| emit(&mut ten_g::TxArb::new(), n),
        config: Config::TenG,
        scope: Scope::Block,
        summary: "TX arbiter: requester packets and responder ACKs onto the TX path, records alternating",
    },
    Design {
        name: "ferroce_nic_64",
        build: |n| emit(&mut ten_g::Nic::new(bar0_params(Config::TenG)), n),
        config: Config::TenG,
        scope: Scope::Assembly,
        summary: "The whole NIC: BAR0, requester, responder, completer, DMA read and write engines, TX and RX paths",
    },
    Design {
        name: "ferroce_nic_10g",
        build: |n| emit(&mut Nic10g::new(bar0_params(Config::TenG)), n),
        config: Config::TenG,
        scope: Scope::Assembly,
        summary: "The whole 10G NIC with its XGMII face: ferroce_nic_64 with XGMII transmit and receive",
    },
];

pub fn find(name: &str) -> Option<&'static Design> {
    DESIGNS.iter().find(|d| d.name == name)
}

/// Elaborate and emit a design by name.
///
/// The whole NIC's rust-hdl structures are large, and elaborating it recurses deeply: it runs
/// on a thread of its own with a 256 MiB stack, not on the caller's (a test thread has 2 MiB).
pub fn emit_design(name: &str) -> Result<Emitted, EmitError> {
    let owned = name.to_string();
    std::thread::Builder::new()
        .name(format!("emit {name}"))
        .stack_size(256 << 20)
        .spawn(move || emit_design_here(&owned))
        .map_err(|e| EmitError::Thread(format!("starting the emitter for {name}: {e}")))?
        .join()
        .map_err(|_| EmitError::Thread(format!("the emitter panicked on {name}")))?
}

fn emit_design_here(name: &str) -> Result<Emitted, EmitError> {
    let d = find(name).ok_or_else(|| EmitError::BadName(format!("no design named {name}")))?;
    (d.build)(name)
}

/// The ID block's build parameters for a configuration.
pub fn bar0_params(c: Config) -> Bar0Params {
    Bar0Params {
        datapath_width: c.data_width() as u32,
        clock_khz: c.clock_khz(),
        max_rd_atomic: ferroce_spec::queues::MAX_RD_ATOMIC as u32,
    }
}

/// `docs/ports.md`: every design of the registry with its configuration, scope, summary and
/// ports (read from the emitted top module), grouped by prefix. `ferroce docs` writes it; a
/// test fails when the checked-in page is stale.
pub fn ports_page() -> Result<String, EmitError> {
    use std::fmt::Write as _;
    let mut s = String::from(
        "<!-- Generated from the design registry (hdl/src/designs.rs) by `cargo run --bin ferroce -- docs`; do not edit. -->\n\n\
         # Designs and their ports\n\n\
         `cargo run --release --bin ferroce -- verilog --out DIR [--config 10g|100g|all]` writes each design to \
         `DIR/<design>/`: one `<module>.sv` per module and the filelist `<design>.f` (its header names each tool's flags), leaves first. \
         Module names are `<design>` and `<design>__<instance path>`, never `top`.\n\n\
         Every design has `clk` (the core clock: 156.25 MHz at 10g, 250 MHz at 100g) and `rst` \
         (synchronous, active high), but a clock crossing, which has a clock and a reset per side \
         (`s_clk`, `s_rst`, `m_clk`, `m_rst`). Streams follow one convention: data moves when `tvalid` and \
         `tready` are both high; `s_` ports enter the design, `m_` ports leave it. Ports are \
         grouped by prefix: `s_axis_{tdata[63:0],tlast}` is `s_axis_tdata` (64 bits) and \
         `s_axis_tlast` (1 bit). Counters are 32 bits and wrap; a 256-bit counter port holds \
         eight of them, priority p at bits 32p. Every design is linted and checked by Yosys in \
         the test suite; *blocks* are synthesized there too, *assemblies* by `ferroce perf` \
         (their blocks are gated one by one).\n\n\
         | design | config | scope | modules | ports in | ports out |\n|---|---|---|---|---|---|\n",
    );
    let mut details = String::new();
    for d in DESIGNS {
        let e = emit_design(d.name)?;
        let ports = e.ports();
        let count = |input: bool| ports.iter().filter(|p| p.input == input).count();
        let scope = match d.scope {
            Scope::Block => "block",
            Scope::Assembly => "assembly",
        };
        let _ = writeln!(
            s,
            "| [`{}`](#{}) | {} | {scope} | {} | {} | {} |",
            d.name,
            d.name,
            d.config.name(),
            e.modules.len(),
            count(true),
            count(false)
        );
        let _ = writeln!(
            details,
            "\n## {}\n\n{}.\n",
            d.name,
            d.summary.trim_end_matches('.')
        );
        for (label, input) in [("in", true), ("out", false)] {
            let groups = group_ports(ports.iter().filter(|p| p.input == input));
            let _ = writeln!(details, "- **{label}**: {}", groups.join(", "));
        }
    }
    s.push_str(&details);
    Ok(s)
}

/// Consecutive ports sharing a prefix (all but the last `_` part) in one brace group.
fn group_ports<'a>(ports: impl Iterator<Item = &'a crate::emit::PortDecl>) -> Vec<String> {
    let item = |p: &crate::emit::PortDecl, name: &str| {
        if p.width > 1 {
            format!("{name}[{}:0]", p.width - 1)
        } else {
            name.to_string()
        }
    };
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for p in ports {
        let (prefix, rest) = match p.name.rsplit_once('_') {
            Some((a, b)) if a.contains('_') || b.starts_with('t') => (a.to_string(), b),
            _ => (String::new(), p.name.as_str()),
        };
        match groups.last_mut() {
            Some((g, items)) if !prefix.is_empty() && *g == prefix => items.push(item(p, rest)),
            _ => groups.push((prefix, vec![item(p, rest)])),
        }
    }
    groups
        .into_iter()
        .map(|(prefix, items)| match (prefix.is_empty(), items.len()) {
            (true, _) => format!("`{}`", items.join("")),
            (false, 1) => format!("`{prefix}_{}`", items[0]),
            (false, _) => format!("`{prefix}_{{{}}}`", items.join(",")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in `docs/ports.md` must equal what the registry generates now.
    #[test]
    fn checked_in_ports_page_is_current() -> Result<(), EmitError> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/ports.md");
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == ports_page()?,
            "{} is stale: run `cargo run --bin ferroce -- docs` and commit it",
            path.display()
        );
        Ok(())
    }

    #[test]
    fn every_design_emits_and_has_clock_and_reset() -> Result<(), EmitError> {
        for d in DESIGNS {
            let ports = emit_design(d.name)?.ports();
            assert!(ports.len() > 3, "{}: {} ports", d.name, ports.len());
            // One clock `clk`, or a clock per side (`s_clk`, `m_clk`) for a crossing.
            assert!(
                ports
                    .iter()
                    .any(|p| (p.name == "clk" || p.name.ends_with("_clk"))
                        && p.input
                        && p.width == 1),
                "{}: no clk",
                d.name
            );
        }
        Ok(())
    }
}
