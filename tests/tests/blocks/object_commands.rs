//! BAR0's object commands as the NIC answers them, below the driver: a bad command fails with
//! its reason, and the NIC returns no context it does not run (the driver keeps what it wrote).

use crate::host_bar0::open;
use anyhow::{ensure, Result};
use ferroce_driver::{Bar, Device, DmaMemory, DriverError};
use ferroce_spec::queues::CQ_CTX;
use ferroce_spec::regs;

/// One object command straight through BAR0: STATUS's error and the staging window after.
pub(crate) fn raw_command<B: Bar, M: DmaMemory>(
    dev: &mut Device<B, M>,
    op: u32,
    table: u32,
    index: u32,
) -> Result<(u32, Vec<u8>)> {
    let l = &regs::CMD;
    let mut cmd = [0u8; 4];
    l.set(&l.field("index"), &mut cmd, index.into());
    l.set(&l.field("table"), &mut cmd, table.into());
    l.set(&l.field("op"), &mut cmd, op.into());
    dev.bar
        .write32(regs::addr("OBJECT", "CMD"), u32::from_le_bytes(cmd))?;
    let err = (dev.bar.read32(regs::addr("OBJECT", "STATUS"))? >> regs::STATUS_ERR_SHIFT) & 0xFF;
    let mut img = Vec::new();
    for w in 0..regs::CTX_WORDS as u32 {
        img.extend(
            dev.bar
                .read32(regs::addr("OBJECT", "CTX0") + 4 * w)?
                .to_le_bytes(),
        );
    }
    Ok((err, img))
}

#[test]
fn bad_object_commands_fail_with_their_reason() -> Result<()> {
    let (mut dev, _, _) = open(2)?;
    for (table, index, want) in [
        (regs::TABLE_QP, 256, "index out of range"),
        (7, 0, "bad table"),
    ] {
        match dev.write_context(table, index, &[0; 4]) {
            Err(DriverError::Command { reason, .. }) => ensure!(reason == want, "{reason}"),
            other => anyhow::bail!("table {table} index {index}: {other:?}"),
        }
    }
    let before = dev.bar.read32(regs::addr("OBJECT", "COMMANDS"))?;
    dev.write_context(regs::TABLE_CQ, 255, &[1; 16])?;
    ensure!(dev.bar.read32(regs::addr("OBJECT", "COMMANDS"))? == before + 1);
    // The NIC keeps no copy of the CQ and MR tables: a READ of them is not an operation it
    // has; the driver answers from what it wrote.
    for table in [regs::TABLE_CQ, regs::TABLE_MR] {
        let (err, _) = raw_command(&mut dev, regs::OP_READ, table, 255)?;
        ensure!(err == regs::ERR_BAD_OP, "table {table}: STATUS error {err}");
    }
    let cq = dev.read_context(regs::TABLE_CQ, 255, 16)?;
    let want = u128::from_le_bytes([1; 16]);
    for f in CQ_CTX.fields {
        ensure!(
            CQ_CTX.get(f, &cq) == want & ((1 << f.width) - 1),
            "{}: {cq:02x?}",
            f.name
        );
    }
    ensure!(
        cq[9..12] == [0; 3],
        "bits no field names were kept: {cq:02x?}"
    );
    ensure!(matches!(
        dev.read_context(regs::TABLE_MR, 256, 4),
        Err(DriverError::Command {
            reason: "index out of range",
            ..
        })
    ));
    Ok(())
}
