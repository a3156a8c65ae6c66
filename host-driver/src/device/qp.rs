//! Queue pairs on the device: `create_qp`, `modify_qp` (the state machine and the attributes
//! each move needs), `query_qp`; the QP context image written to the NIC.

use crate::cq::CompletionQueue;
use crate::device::Device;
use crate::mr::{access, ProtectionDomain};
use crate::put;
use crate::qp::{QpAttr, QpContext, QpState, QueuePair, Vlan};
use crate::{Bar, DmaMemory, DriverError, Result};
use ferroce_spec::queues::{self, QP_CTX, WQE_LEN};
use ferroce_spec::regs;
use std::collections::VecDeque;

impl<B: Bar, M: DmaMemory> Device<B, M> {
    /// Create an RC queue pair in RESET with a send queue of at least `max_send_wr` entries.
    pub fn create_qp(
        &mut self,
        pd: &ProtectionDomain,
        send_cq: &CompletionQueue,
        max_send_wr: u32,
    ) -> Result<QueuePair> {
        if self.next_qpn >= self.info.num_qps {
            return Err(DriverError::Exhausted {
                what: "queue pairs",
                max: self.info.num_qps,
            });
        }
        let sq_log_size = max_send_wr.max(2).next_power_of_two().trailing_zeros();
        if sq_log_size > 15 {
            return Err(DriverError::Invalid(format!(
                "send queue of {max_send_wr} entries is over 32768"
            )));
        }
        let sq = self.mem.alloc(WQE_LEN << sq_log_size, 4096)?;
        let rq = self.mem.alloc(queues::RECV_WQE_LEN << sq_log_size, 4096)?;
        let mut qp = QueuePair {
            qpn: self.next_qpn,
            state: QpState::Reset,
            send_cq: send_cq.cqn,
            pdn: pd.pdn,
            sq,
            sq_log_size,
            sq_pi: 0,
            sq_done: 0,
            epoch: 0,
            rq,
            rq_log_size: sq_log_size,
            recv_cq: send_cq.cqn,
            rq_pi: 0,
            rq_done: 0,
            attr: QpAttr::default(),
        };
        self.write_qp(&qp, true, true)?;
        self.sq_track.insert(qp.qpn, VecDeque::new());
        self.sq_retired.insert(qp.qpn, 0);
        self.rq_retired.insert(qp.qpn, 0);
        self.epochs.insert(qp.qpn, 0);
        self.next_qpn += 1;
        qp.state = QpState::Reset;
        Ok(qp)
    }

    /// The context image of `qp`. `init_sq` / `init_rq` make the NIC take the send / receive
    /// side's running state (PSNs, indices, MSN) from it; without them the NIC keeps its own.
    pub(crate) fn qp_image(&self, qp: &QueuePair, init_sq: bool, init_rq: bool) -> Vec<u8> {
        let mut img = vec![0u8; QP_CTX.len];
        let a = &qp.attr;
        put(&QP_CTX, &mut img, "state", qp.state.code().into());
        put(&QP_CTX, &mut img, "init_sq", init_sq.into());
        put(&QP_CTX, &mut img, "init_rq", init_rq.into());
        put(&QP_CTX, &mut img, "epoch", qp.epoch.into());
        put(&QP_CTX, &mut img, "sq_ci", qp.sq_pi.into());
        put(&QP_CTX, &mut img, "sq_log_size", qp.sq_log_size.into());
        put(&QP_CTX, &mut img, "sq_cqn", qp.send_cq.into());
        put(&QP_CTX, &mut img, "pdn", qp.pdn.into());
        put(&QP_CTX, &mut img, "sq_base", qp.sq.addr.into());
        put(&QP_CTX, &mut img, "rq_base", qp.rq.addr.into());
        put(&QP_CTX, &mut img, "rq_log_size", qp.rq_log_size.into());
        put(&QP_CTX, &mut img, "rq_cqn", qp.recv_cq.into());
        put(&QP_CTX, &mut img, "rq_ci", qp.rq_done.into());
        if let Some(mtu) = a.path_mtu {
            let enc = (1..=5)
                .find(|e| queues::mtu_bytes(*e) == Some(mtu))
                .unwrap_or(0);
            put(&QP_CTX, &mut img, "pmtu", enc.into());
        }
        put(
            &QP_CTX,
            &mut img,
            "remote_qpn",
            a.dest_qpn.unwrap_or(0).into(),
        );
        put(&QP_CTX, &mut img, "epsn", a.rq_psn.unwrap_or(0).into());
        put(&QP_CTX, &mut img, "sq_psn", a.sq_psn.unwrap_or(0).into());
        put(&QP_CTX, &mut img, "una_psn", a.sq_psn.unwrap_or(0).into());
        let mac = a.remote_mac.unwrap_or_default();
        put(
            &QP_CTX,
            &mut img,
            "remote_mac",
            mac.iter().fold(0u128, |acc, b| acc << 8 | u128::from(*b)),
        );
        put(
            &QP_CTX,
            &mut img,
            "remote_ip",
            u32::from_be_bytes(a.remote_ipv4.unwrap_or_default()).into(),
        );
        if let Some(v) = a.vlan {
            put(&QP_CTX, &mut img, "vlan", 1);
            put(&QP_CTX, &mut img, "pcp", v.pcp.into());
            put(&QP_CTX, &mut img, "vid", v.vid.into());
        }
        put(
            &QP_CTX,
            &mut img,
            "max_rd_atomic",
            a.max_rd_atomic
                .map_or(self.info.max_rd_atomic, u32::from)
                .into(),
        );
        put(
            &QP_CTX,
            &mut img,
            "qp_access",
            a.access
                .unwrap_or(access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC)
                .into(),
        );
        let attrs = [
            ("timeout", a.timeout, queues::QP_TIMEOUT_DEFAULT),
            ("retry_cnt", a.retry_cnt, queues::QP_RETRY_CNT_DEFAULT),
            ("rnr_retry", a.rnr_retry, queues::QP_RNR_RETRY_DEFAULT),
            (
                "min_rnr_timer",
                a.min_rnr_timer,
                ferroce_spec::headers::RNR_TIMER_DEFAULT,
            ),
        ];
        for (name, v, default) in attrs {
            put(&QP_CTX, &mut img, name, v.unwrap_or(default).into());
        }
        img
    }

    pub(crate) fn write_qp(&mut self, qp: &QueuePair, init_sq: bool, init_rq: bool) -> Result<()> {
        let img = self.qp_image(qp, init_sq, init_rq);
        self.write_context(regs::TABLE_QP, qp.qpn, &img)
    }

    /// Move a QP to `to` (`ibv_modify_qp`), checking the transition and its attributes
    /// (IBA 10.3.1: RESET -> INIT -> RTR -> RTS; any state -> RESET or ERR). The NIC's running
    /// state is set only where IBA sets it: the receive side's (`epsn` from `rq_psn`, MSN 0)
    /// at INIT -> RTR, the send side's (`sq_psn`, the ring's consumer index) at RTR -> RTS, both
    /// at RESET; any other modify (RTS -> RTS, INIT -> INIT, -> ERR) leaves it running.
    /// `rq_psn` is taken only on the way to RTR and `sq_psn` only on RTR -> RTS.
    pub fn modify_qp(&mut self, qp: &mut QueuePair, to: QpState, attr: QpAttr) -> Result<()> {
        use QpState::{Init, Reset, Rtr, Rts};
        let ok = matches!(
            (qp.state, to),
            (Reset, Init)
                | (Init, Init)
                | (Init, Rtr)
                | (Rtr, Rts)
                | (Rts, Rts)
                | (_, Reset)
                | (_, QpState::Err)
        );
        if !ok {
            return Err(DriverError::BadTransition {
                qpn: qp.qpn,
                from: qp.state,
                to,
            });
        }
        if attr.rq_psn.is_some() && !(qp.state == Init && to == Rtr) {
            return Err(DriverError::Invalid(format!(
                "QP {}: rq_psn is set on INIT -> RTR only, not {:?} -> {to:?}",
                qp.qpn, qp.state
            )));
        }
        if attr.sq_psn.is_some() && !(qp.state == Rtr && to == Rts) {
            return Err(DriverError::Invalid(format!(
                "QP {}: sq_psn is set on RTR -> RTS only, not {:?} -> {to:?}",
                qp.qpn, qp.state
            )));
        }
        let send_side = qp.state == Rtr && to == Rts;
        for (set, what, max) in [
            (attr.timeout, "timeout", 31),
            (attr.retry_cnt, "retry_cnt", 7),
            (attr.rnr_retry, "rnr_retry", 7),
        ] {
            if let Some(v) = set {
                if !send_side {
                    return Err(DriverError::Invalid(format!(
                        "QP {}: {what} is set on RTR -> RTS only, not {:?} -> {to:?}",
                        qp.qpn, qp.state
                    )));
                }
                if v > max {
                    return Err(DriverError::Invalid(format!("{what} {v} (0..={max})")));
                }
            }
        }
        if let Some(v) = attr.max_rd_atomic {
            if !send_side {
                return Err(DriverError::Invalid(format!(
                    "QP {}: max_rd_atomic is set on RTR -> RTS only, not {:?} -> {to:?}",
                    qp.qpn, qp.state
                )));
            }
            // What the NIC was built with (its ID block), not what the spec allows.
            let max = self.info.max_rd_atomic;
            if !(1..=max).contains(&u32::from(v)) {
                return Err(DriverError::Invalid(format!(
                    "max_rd_atomic {v}: this NIC was built for 1..={max}"
                )));
            }
        }
        if let Some(v) = attr.access {
            let remote = access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC;
            if v & !remote != 0 || to == Reset {
                return Err(DriverError::Invalid(format!(
                    "QP {}: qp_access {v:#x} (remote rights only, not on a move to RESET)",
                    qp.qpn
                )));
            }
        }
        if let Some(v) = attr.min_rnr_timer {
            if !((qp.state == Init && to == Rtr) || (qp.state == Rts && to == Rts)) {
                return Err(DriverError::Invalid(format!(
                    "QP {}: min_rnr_timer is set on INIT -> RTR or RTS -> RTS, not {:?} -> {to:?}",
                    qp.qpn, qp.state
                )));
            }
            if v > 31 {
                return Err(DriverError::Invalid(format!("min_rnr_timer {v} (0..=31)")));
            }
        }
        let mut next = qp.attr;
        next.timeout = attr.timeout.or(next.timeout);
        next.retry_cnt = attr.retry_cnt.or(next.retry_cnt);
        next.rnr_retry = attr.rnr_retry.or(next.rnr_retry);
        next.min_rnr_timer = attr.min_rnr_timer.or(next.min_rnr_timer);
        next.max_rd_atomic = attr.max_rd_atomic.or(next.max_rd_atomic);
        next.access = attr.access.or(next.access);
        let merge = |a: &mut Option<u32>, b: Option<u32>| {
            if b.is_some() {
                *a = b;
            }
        };
        merge(&mut next.path_mtu, attr.path_mtu);
        merge(&mut next.dest_qpn, attr.dest_qpn);
        merge(&mut next.rq_psn, attr.rq_psn);
        merge(&mut next.sq_psn, attr.sq_psn);
        next.remote_mac = attr.remote_mac.or(next.remote_mac);
        next.remote_ipv4 = attr.remote_ipv4.or(next.remote_ipv4);
        next.vlan = attr.vlan.or(next.vlan);
        if let Some(v) = next.vlan {
            if v.pcp > 7 || v.vid > 4094 {
                return Err(DriverError::Invalid(format!(
                    "802.1Q priority {} (0..=7) or VLAN {} (0..=4094)",
                    v.pcp, v.vid
                )));
            }
        }
        let need = |present: bool, what: &'static str| {
            if present {
                Ok(())
            } else {
                Err(DriverError::MissingAttr {
                    qpn: qp.qpn,
                    attr: what,
                    to,
                })
            }
        };
        if to == Rtr {
            need(next.path_mtu.is_some(), "path_mtu")?;
            need(next.dest_qpn.is_some(), "dest_qpn")?;
            need(next.rq_psn.is_some(), "rq_psn")?;
            need(next.remote_mac.is_some(), "remote_mac")?;
            need(next.remote_ipv4.is_some(), "remote_ipv4")?;
            if let Some(m) = next.path_mtu {
                if !(1..=5).any(|e| queues::mtu_bytes(e) == Some(m)) {
                    return Err(DriverError::Invalid(format!("path MTU {m}")));
                }
            }
        }
        if to == Rts {
            need(next.sq_psn.is_some(), "sq_psn")?;
        }
        for psn in [next.rq_psn, next.sq_psn].into_iter().flatten() {
            if psn > ferroce_spec::psn::PSN_MASK {
                return Err(DriverError::Invalid(format!(
                    "PSN {psn:#x} is over 24 bits"
                )));
            }
        }
        if to == Reset {
            next = QpAttr::default();
        }
        let init_sq =
            to == Reset || (qp.state == Reset && to == Init) || (qp.state == Rtr && to == Rts);
        let init_rq = to == Reset || (qp.state == Reset && to == Init) || to == Rtr;
        let prev = (
            qp.state, qp.attr, qp.sq_pi, qp.sq_done, qp.epoch, qp.rq_done,
        );
        if to == Reset {
            // Posted receives are discarded; the ring goes on from where it is (the NIC's
            // copy of the producer index stays right).
            qp.rq_done = qp.rq_pi;
            // The ring starts again at entry 0; what was posted is gone with the QP's state,
            // and what the NIC still holds of it completes silently (a new epoch).
            (qp.sq_pi, qp.sq_done) = (0, 0);
            if qp.state != Reset {
                qp.epoch = qp.epoch.wrapping_add(1);
            }
        }
        qp.state = to;
        qp.attr = next;
        if let Err(e) = self.write_qp(qp, init_sq, init_rq) {
            (
                qp.state, qp.attr, qp.sq_pi, qp.sq_done, qp.epoch, qp.rq_done,
            ) = prev;
            return Err(e);
        }
        if to == Reset {
            self.sq_track.insert(qp.qpn, VecDeque::new());
            self.sq_retired.insert(qp.qpn, 0);
            self.rq_retired.insert(qp.qpn, qp.rq_done);
            self.epochs.insert(qp.qpn, qp.epoch);
        }
        Ok(())
    }

    /// The QP's context as the NIC holds it (`ibv_query_qp`): the host's fields as last written
    /// and the NIC's running state (PSNs, send queue consumer index, MSN) as it is now.
    pub fn query_qp(&mut self, qp: &QueuePair) -> Result<QpContext> {
        let img = self.read_context(regs::TABLE_QP, qp.qpn, QP_CTX.len)?;
        let g = |name: &str| QP_CTX.get(&QP_CTX.field(name), &img);
        Ok(QpContext {
            state: QpState::from_code(g("state") as u32),
            pmtu: g("pmtu") as u32,
            remote_qpn: g("remote_qpn") as u32,
            sq_psn: g("sq_psn") as u32,
            epsn: g("epsn") as u32,
            msn: g("msn") as u32,
            sq_ci: g("sq_ci") as u16,
            una_psn: g("una_psn") as u32,
            sq_base: g("sq_base") as u64,
            rq_base: g("rq_base") as u64,
            rq_ci: g("rq_ci") as u16,
            remote_mac: g("remote_mac") as u64,
            remote_ip: g("remote_ip"),
            vlan: (g("vlan") == 1).then(|| Vlan {
                pcp: g("pcp") as u8,
                vid: g("vid") as u16,
            }),
            timeout: g("timeout") as u8,
            retry_cnt: g("retry_cnt") as u8,
            rnr_retry: g("rnr_retry") as u8,
            min_rnr_timer: g("min_rnr_timer") as u8,
            max_rd_atomic: g("max_rd_atomic") as u8,
            access: g("qp_access") as u32,
        })
    }
}
