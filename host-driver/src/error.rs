//! The driver's error type.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum DriverError {
    #[error(
        "no ferroce device: BAR0 offset 0 holds type {found:#010x}, expected {expected:#010x}"
    )]
    NoDevice { found: u32, expected: u32 },
    #[error("register block {name} (type {type_id:#010x}) is missing from the BAR0 list")]
    MissingBlock { name: &'static str, type_id: u32 },
    #[error("register block {name} is at {found:#x}; this driver knows it at {expected:#x}")]
    BlockMoved {
        name: &'static str,
        found: u32,
        expected: u32,
    },
    #[error("register block {name} has version {found:#x}; this driver speaks {expected:#x}")]
    Version {
        name: &'static str,
        found: u32,
        expected: u32,
    },
    #[error("the BAR0 block list does not end (loop or runaway NEXT at {0:#x})")]
    BadBlockList(u32),
    #[error("object command {op} on table {table} index {index} failed: {reason}")]
    Command {
        op: u32,
        table: u32,
        index: u32,
        reason: &'static str,
    },
    #[error("out of {what}: the device has {max}")]
    Exhausted { what: &'static str, max: u32 },
    #[error("invalid argument: {0}")]
    Invalid(String),
    #[error("QP {qpn}: cannot go from {from:?} to {to:?}")]
    BadTransition {
        qpn: u32,
        from: crate::QpState,
        to: crate::QpState,
    },
    #[error("QP {qpn}: {attr} is required for the move to {to:?}")]
    MissingAttr {
        qpn: u32,
        attr: &'static str,
        to: crate::QpState,
    },
    #[error("QP {qpn}: the send queue has {free} free entries, the list has {asked}")]
    QueueFull { qpn: u32, free: usize, asked: usize },
    #[error("lkey {lkey:#x} names no registered memory region")]
    BadKey { lkey: u32 },
    #[error("{len} bytes at {addr:#x} are not inside the region of lkey {lkey:#x}")]
    OutOfRegion { lkey: u32, addr: u64, len: u64 },
    #[error("BAR access failed: {0}")]
    Bar(String),
    #[error("DMA memory: {0}")]
    Dma(String),
}
