//! A pcap file the links write their frames to, with nanosecond timestamps of simulated time.

use crate::{Result, SimError};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::TsResolution;
use std::fs::File;
use std::path::Path;
use std::time::Duration;

/// A pcap file of frames with nanosecond timestamps; a failed write is kept, not raised (the
/// simulation goes on; the test should fail on [`PcapTap::error`]).
pub(crate) struct PcapTap {
    w: PcapWriter<File>,
    err: Option<String>,
}

impl PcapTap {
    pub(crate) fn create(path: &Path) -> Result<PcapTap> {
        let file = File::create(path).map_err(|source| SimError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let header = PcapHeader {
            ts_resolution: TsResolution::NanoSecond,
            ..PcapHeader::default()
        };
        let w = PcapWriter::with_header(file, header)
            .map_err(|e| SimError::Design(format!("pcap {}: {e}", path.display())))?;
        Ok(PcapTap { w, err: None })
    }

    /// One frame (as it should appear: no FCS), stamped `at_ps`.
    pub(crate) fn write(&mut self, at_ps: u64, frame: &[u8]) {
        let ts = Duration::from_nanos(at_ps / 1000);
        if let Err(e) = self
            .w
            .write_packet(&PcapPacket::new(ts, frame.len() as u32, frame))
        {
            self.err.get_or_insert(e.to_string());
        }
    }

    pub(crate) fn error(&self) -> Option<String> {
        self.err.clone()
    }
}
