//! Board designs: a top for a real board around an emitted design, placed and routed with the
//! board's pin constraints, and a bitstream from `ecppack`.
//!
//! One board today, the Lattice ECP5-5G evaluation board (LFE5UM5G-85F-8BG381;
//! `constraints/ecp5-5g-evn/board.lpf`). Its top, `ferroce_evn_top`, shows the 10G MAC alive
//! with nothing but the board: an EHXPLLL makes the core clock from the 12 MHz oscillator, a
//! generator sends one RoCEv2 frame (RDMA WRITE, 64-byte payload, ICRC from `spec`) over and
//! over into `ferroce_mac_10g`, the MAC's XGMII output is looped back into its input through
//! one register, and a checker compares every frame the MAC delivers with the one sent.
//!
//! LEDs (lit when low, as on the board): 0 heartbeat (about 1 Hz), 1 PLL locked, 2 error
//! (a delivered frame differed, or the MAC counted an FCS, ICRC or XGMII code error), 3 and 4-7
//! frames delivered (count bits 20 to 24: they blink while frames flow). The reset button
//! (`rst_n`) restarts everything.
//!
//! The top is plain Verilog-2005 written here (it is board glue, not the NIC); Yosys reads it
//! with the MAC's files. Not loaded on hardware here: the flow ends at the bitstream.

use crate::pnr::{self, Job, Mode, Part, PnrReport};
use crate::{FpgaError, Result};
use ferroce_sim::cache::workspace;
use ferroce_sim::roce::RoceFrame;
use ferroce_spec::icrc::{IcrcLayout, IpVersion};
use ferroce_spec::opcodes::OPCODES;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The board top's module name.
pub const TOP: &str = "ferroce_evn_top";
/// The design inside it.
pub const DESIGN: &str = "ferroce_mac_10g";
/// The board's oscillator, MHz.
pub const CLK_IN_MHZ: f64 = 12.0;
/// The core clock the top asks its PLL for, MHz: what the MAC meets on ECP5 today (see
/// `constraints/fmax-ecp5.txt`); 156 MHz once it closes timing at 156.25.
pub const CORE_MHZ: f64 = 60.0;
/// Idle cycles between generated frames.
const GAP: u32 = 8;

/// The board's part.
pub fn part() -> Part {
    Part::default()
}

/// The board's pin and clock constraints.
pub fn lpf() -> PathBuf {
    workspace()
        .join("constraints")
        .join("ecp5-5g-evn")
        .join("board.lpf")
}

/// An EHXPLLL setting (feedback from CLKOP).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pll {
    pub clki_div: u32,
    pub clkfb_div: u32,
    pub clkop_div: u32,
    pub clkop_cphase: u32,
    /// The output it makes, MHz.
    pub mhz: f64,
}

/// EHXPLLL settings for `fout` from `fin` (MHz). Feedback from CLKOP: fout = fin * FB / CLKI,
/// the VCO (fout * OP) within 400-800 MHz and the phase detector (fin / CLKI) within
/// 3.125-400 MHz; the closest output wins, then the VCO nearest 600 MHz.
pub fn pll(fin: f64, fout: f64) -> Option<Pll> {
    let mut best: Option<((f64, f64), Pll)> = None;
    for clki in 1..=128u32 {
        let pfd = fin / f64::from(clki);
        if !(3.125..=400.0).contains(&pfd) {
            continue;
        }
        for fb in 1..=80u32 {
            let f = pfd * f64::from(fb);
            for op in 1..=128u32 {
                let vco = f * f64::from(op);
                if !(400.0..=800.0).contains(&vco) {
                    continue;
                }
                let score = ((f - fout).abs(), (vco - 600.0).abs());
                if best.as_ref().is_none_or(|b| score < b.0) {
                    best = Some((
                        score,
                        Pll {
                            clki_div: clki,
                            clkfb_div: fb,
                            clkop_div: op,
                            clkop_cphase: op / 2 - 1,
                            mhz: f,
                        },
                    ));
                }
            }
        }
    }
    best.map(|b| b.1)
}

/// The frame the top sends: IPv4 without a VLAN tag, RC RDMA WRITE ONLY, 64 bytes of payload,
/// ICRC included (the MAC adds the FCS).
pub fn frame() -> Result<Vec<u8>> {
    let opcode = OPCODES
        .iter()
        .find(|o| o.name == "RC_RDMA_WRITE_ONLY")
        .ok_or_else(|| FpgaError::Flow("no RC_RDMA_WRITE_ONLY opcode".into()))?;
    Ok(RoceFrame {
        layout: IcrcLayout {
            vlan: false,
            ip: IpVersion::V4,
        },
        opcode,
        payload_len: 64,
        trailer: 0,
        seed: 1,
    }
    .build())
}

/// The top's Verilog for a core clock of `core_mhz`.
pub fn top_verilog(core_mhz: f64) -> Result<String> {
    let p = pll(CLK_IN_MHZ, core_mhz).ok_or_else(|| {
        FpgaError::Flow(format!(
            "no EHXPLLL setting makes {core_mhz} MHz from 12 MHz"
        ))
    })?;
    let (clki, fb, op, cphase, f) = (p.clki_div, p.clkfb_div, p.clkop_div, p.clkop_cphase, p.mhz);
    let bytes = frame()?;
    let beats = bytes.len().div_ceil(8);
    let mut rom = String::new();
    for (i, chunk) in bytes.chunks(8).enumerate() {
        let data = chunk
            .iter()
            .enumerate()
            .fold(0u64, |acc, (l, &b)| acc | (u64::from(b) << (8 * l)));
        let keep = (1u32 << chunk.len()) - 1;
        let last = u32::from(i + 1 == beats);
        let _ = writeln!(
            rom,
            "            6'd{i}: rom = {{1'b{last}, 8'h{keep:02x}, 64'h{data:016x}}};"
        );
    }
    let fmhz = format!("{f}");
    Ok(format!(
        r#"// {TOP}: the Lattice ECP5-5G evaluation board (LFE5UM5G-85F-8BG381) with {DESIGN}
// looped back on itself. Written by `ferroce board` (fpga/src/board.rs); plain Verilog-2005.
//
// clk12 (12 MHz oscillator) -> EHXPLLL -> clk ({fmhz} MHz). A generator sends one {len}-byte
// RoCEv2 frame (RC RDMA WRITE ONLY, ICRC included) every {beats} beats plus {GAP} idle cycles;
// the MAC adds the FCS and sends it on XGMII, which is registered and fed back to the MAC's
// receive side; a checker compares every delivered frame with the one sent.
// LEDs (lit low): 0 heartbeat, 1 PLL locked, 2 error, 3-7 delivered-frame count bits
// LED_SHIFT..LED_SHIFT+4 (20-24 on the board; a simulation shows low bits).
module {TOP} #(
    parameter LED_SHIFT = 20
) (
    input  wire       clk12,
    input  wire       rst_n,
    output wire [7:0] led
);
    wire clk;
    wire locked;
    (* FREQUENCY_PIN_CLKI="12" *)
    (* FREQUENCY_PIN_CLKOP="{fmhz}" *)
    (* ICP_CURRENT="12" *) (* LPF_RESISTOR="8" *) (* MFG_ENABLE_FILTEROPAMP="1" *) (* MFG_GMCREF_SEL="2" *)
    EHXPLLL #(
        .PLLRST_ENA("DISABLED"),
        .INTFB_WAKE("DISABLED"),
        .STDBY_ENABLE("DISABLED"),
        .DPHASE_SOURCE("DISABLED"),
        .OUTDIVIDER_MUXA("DIVA"),
        .OUTDIVIDER_MUXB("DIVB"),
        .OUTDIVIDER_MUXC("DIVC"),
        .OUTDIVIDER_MUXD("DIVD"),
        .CLKI_DIV({clki}),
        .CLKOP_ENABLE("ENABLED"),
        .CLKOP_DIV({op}),
        .CLKOP_CPHASE({cphase}),
        .CLKOP_FPHASE(0),
        .FEEDBK_PATH("CLKOP"),
        .CLKFB_DIV({fb})
    ) pll (
        .RST(1'b0), .STDBY(1'b0), .CLKI(clk12), .CLKOP(clk), .CLKFB(clk), .CLKINTFB(),
        .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1), .PHASESTEP(1'b1),
        .PHASELOADREG(1'b1), .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0), .LOCK(locked)
    );

    // Reset while the button is pressed or the PLL is unlocked; released on clk.
    reg [3:0] rst_sync = 4'hf;
    always @(posedge clk) rst_sync <= {{rst_sync[2:0], ~(rst_n & locked)}};
    wire rst = rst_sync[3];

    // The frame, one 64-bit beat per entry: {{last, keep, data}}, byte 0 in bits 7:0.
    function [72:0] rom;
        input [5:0] beat;
        case (beat)
{rom}            default: rom = 73'd0;
        endcase
    endfunction

    // Generator.
    reg  [5:0] tx_beat;
    reg  [7:0] tx_gap;
    wire [72:0] tx_word = rom(tx_beat);
    wire tx_valid = ~rst & (tx_gap == 8'd0);
    wire tx_ready;
    always @(posedge clk) begin
        if (rst) begin
            tx_beat <= 6'd0;
            tx_gap <= 8'd0;
        end else if (tx_gap != 8'd0) begin
            tx_gap <= tx_gap - 8'd1;
        end else if (tx_ready) begin
            if (tx_word[72]) begin
                tx_beat <= 6'd0;
                tx_gap <= 8'd{GAP};
            end else begin
                tx_beat <= tx_beat + 6'd1;
            end
        end
    end

    // XGMII loopback through one register; idle (/I/ in every lane) in reset.
    wire [63:0] txd;
    wire [7:0]  txc;
    reg  [63:0] rxd;
    reg  [7:0]  rxc;
    always @(posedge clk) begin
        if (rst) begin
            rxd <= {{8{{8'h07}}}};
            rxc <= 8'hff;
        end else begin
            rxd <= txd;
            rxc <= txc;
        end
    end

    wire [63:0] rx_data;
    wire [7:0]  rx_keep;
    wire        rx_last;
    wire        rx_valid;
    wire [31:0] fcs_err;
    wire [31:0] icrc_err;
    wire [31:0] code_err;
    {DESIGN} mac (
        .clk(clk),
        .rst(rst),
        .s_axis_tdata(tx_word[63:0]),
        .s_axis_tkeep(tx_word[71:64]),
        .s_axis_tlast(tx_word[72]),
        .s_axis_tvalid(tx_valid),
        .s_axis_tready(tx_ready),
        .m_axis_tdata(rx_data),
        .m_axis_tkeep(rx_keep),
        .m_axis_tlast(rx_last),
        .m_axis_tvalid(rx_valid),
        .m_axis_tready(1'b1),
        .local_mac(48'h02fe0000000a),
        .pfc_enable(8'h00),
        .pfc_quanta(16'hffff),
        .xoff_bytes(16'hffff),
        .xon_bytes(16'hffff),
        .rsv_a(20'd0),
        .rsv_b(20'd0),
        .xgmii_rxd(rxd),
        .xgmii_rxc(rxc),
        .xgmii_txd(txd),
        .xgmii_txc(txc),
        .fcs_err(fcs_err),
        .icrc_err(icrc_err),
        .xgmii_rx_code_err(code_err)
    );

    // Checker: every delivered beat against the frame; a sticky error.
    reg  [5:0]  rx_beat;
    reg  [31:0] delivered;
    reg         bad;
    wire [72:0] want = rom(rx_beat);
    wire [63:0] lanes = {{{{8{{rx_keep[7]}}}}, {{8{{rx_keep[6]}}}}, {{8{{rx_keep[5]}}}}, {{8{{rx_keep[4]}}}},
                         {{8{{rx_keep[3]}}}}, {{8{{rx_keep[2]}}}}, {{8{{rx_keep[1]}}}}, {{8{{rx_keep[0]}}}}}};
    always @(posedge clk) begin
        if (rst) begin
            rx_beat <= 6'd0;
            delivered <= 32'd0;
            bad <= 1'b0;
        end else begin
            if (rx_valid) begin
                if ((rx_data & lanes) != (want[63:0] & lanes) || rx_keep != want[71:64]
                    || rx_last != want[72])
                    bad <= 1'b1;
                if (rx_last) begin
                    rx_beat <= 6'd0;
                    delivered <= delivered + 32'd1;
                end else begin
                    rx_beat <= rx_beat + 6'd1;
                end
            end
            if (fcs_err != 32'd0 || icrc_err != 32'd0 || code_err != 32'd0)
                bad <= 1'b1;
        end
    end

    reg [25:0] heartbeat = 26'd0;
    always @(posedge clk) heartbeat <= heartbeat + 26'd1;

    assign led = ~{{delivered[LED_SHIFT +: 5], bad, locked, heartbeat[25]}};
endmodule
"#,
        len = bytes.len(),
    ))
}

/// The board's pin and clock constraints, and the core clock's target.
fn job<'a>(
    files: &'a [PathBuf],
    verilog: &'a str,
    lpf: &'a std::path::Path,
    part: &'a Part,
) -> Job<'a> {
    Job {
        top: DESIGN,
        files,
        mode: Mode::Board {
            module: TOP,
            verilog,
        },
        lpf,
        freq: None,
        part,
        seed: 1,
        flow: &pnr::Flow::DEFAULT,
    }
}

/// Build the board top to a bitstream (cached like any P&R result); returns the report and
/// the bitstream's path in the cache, or the tools' complaint.
pub fn build() -> Result<std::result::Result<(PnrReport, PathBuf), String>> {
    let files = ferroce_sim::designs::emit_to(DESIGN, &ferroce_sim::designs::verilog_dir())?;
    let verilog = top_verilog(CORE_MHZ)?;
    let lpf = lpf();
    let part = part();
    let j = job(&files, &verilog, &lpf, &part);
    Ok(match pnr::pnr(&j)? {
        Ok(r) => Ok((r, pnr::bitstream(&j)?)),
        Err(e) => Err(e),
    })
}

/// What a simulation needs beside the MAC's files: the board top, a behavioural EHXPLLL
/// (its output is its input, locked from the start) and `ferroce_evn_sim`, the top with the
/// LEDs showing delivered-frame count bits 2-6. Written into `dir`; returns every file and
/// the simulation's top module.
pub fn sim_files(dir: &std::path::Path) -> Result<(Vec<PathBuf>, &'static str)> {
    let mut files = ferroce_sim::designs::emit_to(DESIGN, &ferroce_sim::designs::verilog_dir())?;
    std::fs::create_dir_all(dir).map_err(crate::io_err(dir))?;
    let stub = "// A behavioural stand-in for the ECP5 PLL: CLKOP is CLKI, locked at once.\n\
module EHXPLLL #(\n\
    parameter PLLRST_ENA = \"DISABLED\", parameter INTFB_WAKE = \"DISABLED\",\n\
    parameter STDBY_ENABLE = \"DISABLED\", parameter DPHASE_SOURCE = \"DISABLED\",\n\
    parameter OUTDIVIDER_MUXA = \"DIVA\", parameter OUTDIVIDER_MUXB = \"DIVB\",\n\
    parameter OUTDIVIDER_MUXC = \"DIVC\", parameter OUTDIVIDER_MUXD = \"DIVD\",\n\
    parameter CLKI_DIV = 1, parameter CLKOP_ENABLE = \"ENABLED\", parameter CLKOP_DIV = 1,\n\
    parameter CLKOP_CPHASE = 0, parameter CLKOP_FPHASE = 0, parameter FEEDBK_PATH = \"CLKOP\",\n\
    parameter CLKFB_DIV = 1\n\
) (\n\
    input RST, input STDBY, input CLKI, output CLKOP, input CLKFB, output CLKINTFB,\n\
    input PHASESEL0, input PHASESEL1, input PHASEDIR, input PHASESTEP, input PHASELOADREG,\n\
    input PLLWAKESYNC, input ENCLKOP, output LOCK\n\
);\n\
    assign CLKOP = CLKI;\n\
    assign CLKINTFB = 1'b0;\n\
    assign LOCK = 1'b1;\n\
endmodule\n";
    let sim = format!(
        "// The board top in simulation: delivered-frame count bits 2-6 on LEDs 3-7.\n\
module ferroce_evn_sim (input wire clk12, input wire rst_n, output wire [7:0] led);\n\
    {TOP} #(.LED_SHIFT(2)) top (.clk12(clk12), .rst_n(rst_n), .led(led));\n\
endmodule\n"
    );
    for (name, text) in [
        ("EHXPLLL.v", stub.to_string()),
        ("ferroce_evn_top.v", top_verilog(CORE_MHZ)?),
        ("ferroce_evn_sim.v", sim),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(crate::io_err(&path))?;
        files.push(path);
    }
    Ok((files, "ferroce_evn_sim"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pll_settings_match_ecppll() {
        // What prjtrellis' ecppll chooses for the same requests.
        let k = |p: Pll| (p.clki_div, p.clkfb_div, p.clkop_div, p.clkop_cphase);
        assert_eq!(pll(12.0, 156.25).map(k), Some((1, 13, 4, 1)));
        assert_eq!(pll(12.0, 60.0).map(k), Some((1, 5, 10, 4)));
    }

    #[test]
    fn the_frame_fits_the_rom() {
        let f = frame().unwrap();
        assert!(f.len() <= 64 * 8 && f.len() >= 60, "{} bytes", f.len());
    }
}
