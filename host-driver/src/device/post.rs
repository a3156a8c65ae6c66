//! Posting work: `post_send` and `post_recv` write WQEs into the rings in host memory and
//! ring the doorbells.

use crate::device::Device;
use crate::qp::{QpState, QueuePair};
use crate::wr::{ring_room, RecvWr, SendWr};
use crate::{Bar, DmaMemory, DriverError, Result};
use ferroce_spec::queues::{self, WQE_LEN};
use ferroce_spec::regs;

impl<B: Bar, M: DmaMemory> Device<B, M> {
    /// Post a list of send work requests (`ibv_post_send`): each WQE is written into the send
    /// queue ring, then the doorbell is rung once for the whole list. All or nothing: a list
    /// that does not fit the ring's free entries, or has an invalid request (a source not
    /// inside a region registered with its `lkey` in the QP's PD), posts none.
    pub fn post_send(&mut self, qp: &mut QueuePair, wrs: &[SendWr]) -> Result<()> {
        // In ERR the NIC completes what is posted with WR_FLUSH_ERR, as IBA asks.
        if qp.state != QpState::Rts && qp.state != QpState::Err {
            return Err(DriverError::Invalid(format!(
                "QP {}: post_send in state {:?}, needs RTS (or ERR, to flush)",
                qp.qpn, qp.state
            )));
        }
        if let Some(done) = self.sq_retired.get(&qp.qpn) {
            qp.sq_done = *done;
        }
        let size = ring_room(qp.qpn, qp.sq_log_size, qp.sq_pi, qp.sq_done, wrs.len())?;
        for wr in wrs {
            // A READ or an atomic writes its SGEs; an atomic's are 8 bytes (its original
            // value), as verbs asks.
            if wr.opcode.is_atomic() && wr.length() != 8 {
                return Err(DriverError::Invalid(format!(
                    "wr_id {}: an atomic's scatter list holds 8 bytes, this one {}",
                    wr.wr_id,
                    wr.length()
                )));
            }
            let need = if wr.opcode.writes_local() {
                queues::ACCESS_LOCAL_WRITE
            } else {
                0
            };
            self.check_sg_list(qp.pdn, wr.wr_id, &wr.sg_list, need)?;
        }
        let mut pi = qp.sq_pi;
        for wr in wrs {
            let slot = usize::from(pi) & (size - 1);
            self.mem
                .write(qp.sq.addr + (slot * WQE_LEN) as u64, &wr.wqe())?;
            pi = pi.wrapping_add(1);
        }
        if !wrs.is_empty() {
            self.ring_sq_doorbell(qp.qpn, pi)?;
        }
        qp.sq_pi = pi;
        self.sq_track
            .entry(qp.qpn)
            .or_default()
            .extend(wrs.iter().map(|w| w.wr_id));
        Ok(())
    }

    /// Post a list of receive work requests (`ibv_post_recv`): each receive WQE is written
    /// into the receive queue ring, then the receive doorbell is rung once for the list. All
    /// or nothing: a list that does not fit the ring's free entries, or has a buffer that is
    /// not inside a region of the QP's PD registered with its `lkey` and local write access,
    /// posts none. Allowed from INIT on (in ERR the NIC flushes them).
    pub fn post_recv(&mut self, qp: &mut QueuePair, wrs: &[RecvWr]) -> Result<()> {
        if qp.state == QpState::Reset {
            return Err(DriverError::Invalid(format!(
                "QP {}: post_recv in RESET, needs INIT or later",
                qp.qpn
            )));
        }
        if let Some(done) = self.rq_retired.get(&qp.qpn) {
            qp.rq_done = *done;
        }
        let size = ring_room(qp.qpn, qp.rq_log_size, qp.rq_pi, qp.rq_done, wrs.len())?;
        for wr in wrs {
            self.check_sg_list(qp.pdn, wr.wr_id, &wr.sg_list, queues::ACCESS_LOCAL_WRITE)?;
        }
        let mut pi = qp.rq_pi;
        for wr in wrs {
            let slot = usize::from(pi) & (size - 1);
            self.mem
                .write(qp.rq.addr + (slot * queues::RECV_WQE_LEN) as u64, &wr.wqe())?;
            pi = pi.wrapping_add(1);
        }
        if !wrs.is_empty() {
            self.ring_rq_doorbell(qp.qpn, pi)?;
        }
        qp.rq_pi = pi;
        Ok(())
    }

    /// Ring QP `qpn`'s receive doorbell with producer index `pi`.
    pub fn ring_rq_doorbell(&mut self, qpn: u32, pi: u16) -> Result<()> {
        let off = self.info.db_offset + qpn * self.info.db_stride + regs::DB_RQ_PI;
        self.bar.write32(off, pi.into())
    }

    /// Ring QP `qpn`'s send doorbell with producer index `pi`.
    pub fn ring_sq_doorbell(&mut self, qpn: u32, pi: u16) -> Result<()> {
        let off = self.info.db_offset + qpn * self.info.db_stride + regs::DB_SQ_PI;
        self.bar.write32(off, pi.into())
    }
}
