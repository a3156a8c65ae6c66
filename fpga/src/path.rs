//! A path through a routed netlist, as nextpnr's report and the timing analysis of its SDF
//! both give it, with the netlist's cell names made readable.

/// The critical path of one clock.
#[derive(Clone, Debug, PartialEq)]
pub struct CriticalPath {
    pub from: String,
    pub to: String,
    /// Logic cells on the path (LUT4, PFUMX, L6MUX21, CCU2C, RAM read).
    pub levels: usize,
    pub logic_ns: f64,
    pub routing_ns: f64,
}

/// A readable name for a netlist cell: the register or signal it was made from, without the
/// primitive suffixes Yosys and nextpnr add, and the wrapper's registers named as ports.
pub fn readable(cell: &str) -> String {
    let cut = [
        "_TRELLIS_",
        "_LUT4",
        "_PFUMX",
        "_L6MUX21",
        "_CCU2C",
        "_DP16KD",
        "_DPR16X4",
        "_MULT18",
        "$",
    ]
    .iter()
    .filter_map(|m| cell.find(m))
    .min()
    .unwrap_or(cell.len());
    let base = &cell[..cut];
    if let Some(p) = base.strip_prefix("wrap_i__") {
        format!("input {p}")
    } else if let Some(p) = base.strip_prefix("wrap_o__") {
        format!("output {p}")
    } else if let Some(p) = base.strip_prefix("dut.") {
        p.to_string()
    } else {
        base.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_names() {
        assert_eq!(readable("dut.core.t_reg.q_TRELLIS_FF_Q_24"), "core.t_reg.q");
        assert_eq!(
            readable("wrap_o__m_crc_tdata_TRELLIS_FF_Q_3"),
            "output m_crc_tdata"
        );
        assert_eq!(
            readable("wrap_i__s_axis_tkeep_TRELLIS_FF_Q"),
            "input s_axis_tkeep"
        );
    }
}
