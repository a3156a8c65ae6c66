//! The simulated host's PCIe link parameters, which every side of the root complex reads.

/// PCIe link parameters of the simulated host.
#[derive(Clone, Copy, Debug)]
pub struct PcieConfig {
    /// Latency from a memory read request to its first completion, in picoseconds.
    pub read_latency_ps: u64,
    /// Max payload size in bytes (128..=4096).
    pub max_payload: usize,
    /// Max read request size in bytes (128..=4096).
    pub max_read_request: usize,
    /// Read completion boundary in bytes (64 or 128).
    pub rcb: usize,
    /// Requester ID of the root port, completer ID of the NIC.
    pub host_id: u16,
    /// Fail the run on any DMA fault or protocol violation by the NIC (else record it in
    /// [`RootComplex::violations`](super::RootComplex::violations), answer a bad read with Unsupported Request, drop a bad
    /// write).
    pub strict: bool,
    /// Interleave completions of different tags and vary their sizes at random, from this
    /// seed.
    pub cpl_reorder_seed: Option<u64>,
}

impl Default for PcieConfig {
    fn default() -> Self {
        PcieConfig {
            read_latency_ps: 500_000,
            max_payload: 256,
            max_read_request: 512,
            rcb: 64,
            host_id: 0x0000,
            strict: true,
            cpl_reorder_seed: None,
        }
    }
}
