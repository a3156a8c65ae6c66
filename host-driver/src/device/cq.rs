//! Completion queues on the device: `create_cq`, `poll_cq`.

use crate::cq::{CompletionQueue, WorkCompletion};
use crate::device::Device;
use crate::put;
use crate::{Bar, DmaMemory, DriverError, Result};
use ferroce_spec::queues::{self, CQE, CQE_LEN, CQ_CTX};
use ferroce_spec::regs;

impl<B: Bar, M: DmaMemory> Device<B, M> {
    /// Create a completion queue of at least `depth` entries (`ibv_create_cq`).
    pub fn create_cq(&mut self, depth: u32) -> Result<CompletionQueue> {
        if self.next_cqn >= self.info.num_cqs {
            return Err(DriverError::Exhausted {
                what: "completion queues",
                max: self.info.num_cqs,
            });
        }
        let log_size = depth.max(2).next_power_of_two().trailing_zeros();
        if log_size > 16 {
            return Err(DriverError::Invalid(format!(
                "CQ depth {depth} is over 65536"
            )));
        }
        let ring = self.mem.alloc(CQE_LEN << log_size, 4096)?;
        let cqn = self.next_cqn;
        let mut img = vec![0u8; CQ_CTX.len];
        put(&CQ_CTX, &mut img, "base", ring.addr.into());
        put(&CQ_CTX, &mut img, "log_size", log_size.into());
        self.write_context(regs::TABLE_CQ, cqn, &img)?;
        self.next_cqn += 1;
        Ok(CompletionQueue {
            cqn,
            ring,
            log_size,
            ci: 0,
        })
    }

    /// Take up to `max` completions from `cq` (`ibv_poll_cq`): the CQEs whose owner bit says
    /// the NIC has written them on this pass over the ring. Never touches the NIC. A CQE of
    /// a QP's life before its last move to RESET (its `epoch` not the QP's) frees its slot
    /// and is not returned: a reset QP completes nothing of its old work.
    pub fn poll_cq(&mut self, cq: &mut CompletionQueue, max: usize) -> Result<Vec<WorkCompletion>> {
        let mut out = Vec::new();
        let mask = (1u32 << cq.log_size) - 1;
        while out.len() < max {
            let addr = cq.ring.addr + u64::from(cq.ci & mask) * CQE_LEN as u64;
            let mut e = [0u8; CQE_LEN];
            self.mem.read(addr, &mut e)?;
            let g = |name: &str| CQE.get(&CQE.field(name), &e);
            let pass = (cq.ci >> cq.log_size) & 1;
            if g("owner") as u32 != pass ^ 1 {
                break;
            }
            let wc = WorkCompletion {
                wr_id: g("wr_id") as u64,
                status: g("status") as u32,
                opcode: g("opcode") as u32,
                byte_len: g("byte_len") as u32,
                qpn: g("qpn") as u32,
                imm_data: (g("wc_flags") as u32 & queues::WC_WITH_IMM != 0)
                    .then_some(g("imm_data") as u32),
                src_qp: g("src_qp") as u32,
            };
            cq.ci = cq.ci.wrapping_add(1);
            if self
                .epochs
                .get(&wc.qpn)
                .is_some_and(|e| u128::from(*e) != g("epoch"))
            {
                // Work of the QP's last life (a CQE already on its way when it was reset).
                continue;
            }
            if wc.opcode & queues::WC_RECV != 0 {
                // A receive completion: its WQE left the receive ring (they complete in order).
                let n = self.rq_retired.entry(wc.qpn).or_default();
                *n = n.wrapping_add(1);
            } else if let Some(q) = self.sq_track.get_mut(&wc.qpn) {
                if let Some(n) = q.iter().position(|id| *id == wc.wr_id) {
                    q.drain(..=n);
                    let r = self.sq_retired.entry(wc.qpn).or_default();
                    *r = r.wrapping_add(n as u16 + 1);
                }
            }
            out.push(wc);
        }
        Ok(out)
    }
}
