//! What the NIC says it was built with (the ID block's build parameters), as the driver
//! follows it: on the BAR0 block's model with the driver on top (`host_bar0::open`).

use crate::host_bar0::open;
use anyhow::{ensure, Result};
use ferroce_driver::{DriverError, QpAttr, QpState};
use ferroce_tests::{rng, seed};
use rand::Rng;

/// A QP asks for no more READs and atomics outstanding than the NIC says it was built for
/// (the ID block's `MAX_RD_ATOMIC`): one more is refused, and a QP that names none gets the
/// NIC's figure in its context. A NIC built for 4 is played by lowering what the driver read.
#[test]
fn a_qp_asks_no_more_reads_outstanding_than_the_nic_was_built_for() -> Result<()> {
    let s = seed("a_qp_asks_no_more_reads_outstanding_than_the_nic_was_built_for");
    let mut r = rng(s);
    let (mut dev, _, _) = open(s)?;
    let cq = dev.create_cq(4)?;
    let pd = dev.alloc_pd()?;
    for built in [dev.info.max_rd_atomic, 4] {
        dev.info.max_rd_atomic = built;
        let mut qp = dev.create_qp(&pd, &cq, 4)?;
        dev.modify_qp(&mut qp, QpState::Init, QpAttr::default())?;
        let rtr = QpAttr {
            path_mtu: Some(1024),
            dest_qpn: Some(r.gen_range(0..1 << 24)),
            rq_psn: Some(r.gen_range(0..1 << 24)),
            remote_mac: Some(r.gen()),
            remote_ipv4: Some(r.gen()),
            ..QpAttr::default()
        };
        dev.modify_qp(&mut qp, QpState::Rtr, rtr)?;
        let rts = QpAttr {
            sq_psn: Some(r.gen_range(0..1 << 24)),
            ..QpAttr::default()
        };
        let over = dev.modify_qp(
            &mut qp,
            QpState::Rts,
            QpAttr {
                max_rd_atomic: Some(built as u8 + 1),
                ..rts
            },
        );
        ensure!(
            matches!(over, Err(DriverError::Invalid(_))),
            "built for {built}: {} asked, {over:?}",
            built + 1
        );
        dev.modify_qp(&mut qp, QpState::Rts, rts)?;
        let got = dev.query_qp(&qp)?.max_rd_atomic;
        ensure!(
            u32::from(got) == built,
            "built for {built}: the QP's context says {got}"
        );
    }
    Ok(())
}
