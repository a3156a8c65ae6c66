//! The port on the device: its addresses, PFC, and the counters.

use crate::device::Device;
use crate::port::{MacStats, PfcConfig, RcStats};
use crate::{Bar, DmaMemory, DriverError, Result};
use ferroce_spec::regs;

impl<B: Bar, M: DmaMemory> Device<B, M> {
    /// Set the port's own MAC and IPv4 address (the source of every packet it sends).
    pub fn set_port(&mut self, mac: [u8; 6], ipv4: [u8; 4]) -> Result<()> {
        let m = mac.iter().fold(0u64, |a, b| a << 8 | u64::from(*b));
        self.bar
            .write32(regs::addr("PORT", "MAC_LO"), (m & 0xFFFF_FFFF) as u32)?;
        self.bar
            .write32(regs::addr("PORT", "MAC_HI"), (m >> 32) as u32)?;
        self.bar
            .write32(regs::addr("PORT", "IPV4"), u32::from_be_bytes(ipv4))
    }

    /// Configure priority flow control (the PFC register block): which priorities the port
    /// sends PFC frames for, the pause time they carry, and the receive buffer's watermarks.
    /// Refused: `xon_bytes` above `xoff_bytes`, a watermark past 16 bits, or `quanta` under
    /// `spec::mac_ctrl::PFC_MIN_QUANTA` (a refresh must reach the peer before its pause ends).
    pub fn set_pfc(&mut self, pfc: &PfcConfig) -> Result<()> {
        let min = ferroce_spec::mac_ctrl::PFC_MIN_QUANTA;
        if pfc.quanta < min {
            return Err(DriverError::Invalid(format!(
                "PFC pause time {} quanta: at least {min}",
                pfc.quanta
            )));
        }
        if pfc.xon_bytes > pfc.xoff_bytes || pfc.xoff_bytes > 0xFFFF {
            return Err(DriverError::Invalid(format!(
                "PFC watermarks: XON {} must not exceed XOFF {} (16 bits)",
                pfc.xon_bytes, pfc.xoff_bytes
            )));
        }
        let w = |bar: &mut B, r: &str, v: u32| bar.write32(regs::addr("PFC", r), v);
        w(&mut self.bar, "QUANTA", pfc.quanta.into())?;
        w(&mut self.bar, "XOFF_BYTES", pfc.xoff_bytes)?;
        w(&mut self.bar, "XON_BYTES", pfc.xon_bytes)?;
        w(&mut self.bar, "ENABLE", pfc.enable.into())
    }

    /// Read the MAC's statistics (PFC and pause per priority, drops by reason) from BAR0.
    pub fn mac_stats(&mut self) -> Result<MacStats> {
        let mut st = MacStats::default();
        let bar = &mut self.bar;
        let mut rd = |name: &str| bar.read32(regs::addr("MAC_STATS", name));
        for p in 0..8 {
            st.pfc_rx[p] = rd(&format!("PFC_RX{p}"))?;
            st.xoff_tx[p] = rd(&format!("XOFF_TX{p}"))?;
            st.xon_tx[p] = rd(&format!("XON_TX{p}"))?;
            st.paused_cycles[p] = rd(&format!("PAUSED{p}"))?;
            st.frames_tx[p] = rd(&format!("FRAMES_TX{p}"))?;
        }
        st.pause_rx = rd("PAUSE_RX")?;
        st.ctrl_bad_dst = rd("CTRL_BAD_DST")?;
        st.ctrl_bad_opcode = rd("CTRL_BAD_OPCODE")?;
        st.ctrl_bad_reserved = rd("CTRL_BAD_RESERVED")?;
        st.tx_oversize = rd("TX_OVERSIZE")?;
        st.rx_fcs_err = rd("RX_FCS_ERR")?;
        st.rx_runt = rd("RX_RUNT")?;
        st.rx_overflow = rd("RX_OVERFLOW")?;
        st.rx_code_err = rd("RX_CODE_ERR")?;
        st.rx_too_long = rd("RX_TOO_LONG")?;
        st.tx_bad_frame = rd("TX_BAD_FRAME")?;
        Ok(st)
    }

    /// Read the RC transport's reliability statistics (retransmissions, timeouts, NAKs both
    /// ways, duplicates, QPs failed by retries) from BAR0.
    pub fn rc_stats(&mut self) -> Result<RcStats> {
        let bar = &mut self.bar;
        let mut rd = |name: &str| bar.read32(regs::addr("RC_STATS", name));
        Ok(RcStats {
            retrans: rd("RETRANS")?,
            timeouts: rd("TIMEOUTS")?,
            seq_nak_rx: rd("SEQ_NAK_RX")?,
            seq_nak_tx: rd("SEQ_NAK_TX")?,
            rnr_nak_rx: rd("RNR_NAK_RX")?,
            rnr_nak_tx: rd("RNR_NAK_TX")?,
            dup_rx: rd("DUP_RX")?,
            retry_exc: rd("RETRY_EXC")?,
            ghost_rx: rd("GHOST_RX")?,
            local_fail: rd("LOCAL_FAIL")?,
            pool_wait: rd("POOL_WAIT")?,
            rsp_refused: rd("RSP_REFUSED")?,
            jobs_full: rd("JOBS_FULL")?,
            key_refused: rd("KEY_REFUSED")?,
        })
    }
}
