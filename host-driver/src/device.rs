//! The device (`ibv_open_device`): BAR discovery, the object commands that write and read the
//! NIC's context tables, and the driver's own bookkeeping. The verbs on it are in its children,
//! one file per verbs object.

mod cq;
mod pd_mr;
mod port;
mod post;
mod qp;

use crate::mr::MemoryRegion;
use crate::{Bar, DmaMemory, DriverError, Result};
use ferroce_spec::layout::Layout;
use ferroce_spec::queues::{CQ_CTX, MR_CTX, QP_CTX, QP_RUNNING, QP_STATE_ERR};
use ferroce_spec::regs::{self, Block, Param, Reset, BLOCKS};
use std::collections::{HashMap, VecDeque};

/// What the ID block says about the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub datapath_width: u32,
    pub clock_khz: u32,
    pub num_qps: u32,
    pub num_cqs: u32,
    pub num_mrs: u32,
    /// READs and atomics a QP may have outstanding (`max_rd_atomic`, `max_dest_rd_atomic`),
    /// as the NIC was built.
    pub max_rd_atomic: u32,
    pub db_offset: u32,
    pub db_stride: u32,
}

/// An open ferroce device.
pub struct Device<B: Bar, M: DmaMemory> {
    pub bar: B,
    pub mem: M,
    pub info: DeviceInfo,
    next_qpn: u32,
    next_cqn: u32,
    next_pdn: u32,
    /// Registered memory regions by key index (`lkey >> 8`); `None` once deregistered.
    mrs: Vec<Option<MemoryRegion>>,
    mr_gen: u32,
    /// Per QP, the wr_ids posted and not yet retired by a completion, in order: a completion
    /// retires its request and every unsignaled one before it (send queues complete in order).
    sq_track: HashMap<u32, VecDeque<u64>>,
    /// Per QP, the send queue entries retired (`QueuePair::sq_done` is taken from here).
    sq_retired: HashMap<u32, u16>,
    /// Per QP, the receive queue entries retired: one per receive completion (every receive
    /// WQE the NIC takes completes, in ring order), set to the producer index by a move to
    /// RESET (`QueuePair::rq_done` is taken from here).
    rq_retired: HashMap<u32, u16>,
    /// Per QP, its epoch (`QueuePair::epoch`): CQEs of another belong to a life before its
    /// last reset and are passed over.
    epochs: HashMap<u32, u8>,
    /// Every context written, by (table, index), as the NIC took it (the layout's fields
    /// only): the NIC keeps no copy of the host's fields, so `read_context` starts here (an
    /// entry never written is zero, as the NIC clears its tables at reset).
    written: HashMap<(u32, u32), Vec<u8>>,
}

/// The context layout of an object table.
fn layout_of(table: u32) -> Option<&'static Layout> {
    match table {
        regs::TABLE_QP => Some(&QP_CTX),
        regs::TABLE_CQ => Some(&CQ_CTX),
        regs::TABLE_MR => Some(&MR_CTX),
        _ => None,
    }
}

/// `image`'s named fields, other bits zero (what the NIC's tables keep).
fn fields_only(l: &Layout, image: &[u8]) -> Vec<u8> {
    let mut full = image.to_vec();
    full.resize(l.len.max(image.len()), 0);
    let mut out = vec![0u8; full.len()];
    for f in l.fields {
        l.set(f, &mut out, l.get(f, &full));
    }
    out
}

fn type_of(b: &Block) -> u32 {
    b.type_id
}

impl<B: Bar, M: DmaMemory> Device<B, M> {
    /// Open the device behind `bar`: walk the register-block list from offset 0 and check
    /// every block this driver needs is where the spec puts it, with a version it speaks.
    pub fn open(mut bar: B, mem: M) -> Result<Self> {
        let id = &BLOCKS[0];
        let found = bar.read32(id.base + regs::TYPE)?;
        if found != id.type_id {
            return Err(DriverError::NoDevice {
                found,
                expected: id.type_id,
            });
        }
        let mut seen = Vec::new();
        let mut at = 0u32;
        loop {
            if seen.len() > 64 || seen.iter().any(|(a, _)| *a == at) && !seen.is_empty() {
                return Err(DriverError::BadBlockList(at));
            }
            let ty = bar.read32(at + regs::TYPE)?;
            let ver = bar.read32(at + regs::VERSION)?;
            seen.push((at, (ty, ver)));
            let next = bar.read32(at + regs::NEXT)?;
            if next == 0 {
                break;
            }
            at = next;
        }
        for b in BLOCKS {
            let (base, (_, ver)) = seen
                .iter()
                .find(|(_, (ty, _))| *ty == type_of(b))
                .copied()
                .ok_or(DriverError::MissingBlock {
                    name: b.name,
                    type_id: b.type_id,
                })?;
            if base != b.base {
                return Err(DriverError::BlockMoved {
                    name: b.name,
                    found: base,
                    expected: b.base,
                });
            }
            if ver >> 16 != b.version >> 16 {
                return Err(DriverError::Version {
                    name: b.name,
                    found: ver,
                    expected: b.version,
                });
            }
        }
        let param = |bar: &mut B, p: Param| -> Result<u32> {
            let r = id
                .regs
                .iter()
                .find(|r| r.reset == Reset::Param(p))
                .ok_or_else(|| DriverError::Invalid(format!("ID block lacks {}", p.name())))?;
            bar.read32(id.base + r.offset)
        };
        let info = DeviceInfo {
            datapath_width: param(&mut bar, Param::DatapathWidth)?,
            clock_khz: param(&mut bar, Param::ClockKhz)?,
            num_qps: param(&mut bar, Param::NumQps)?,
            num_cqs: param(&mut bar, Param::NumCqs)?,
            num_mrs: param(&mut bar, Param::NumMrs)?,
            max_rd_atomic: param(&mut bar, Param::MaxRdAtomic)?,
            db_offset: bar.read32(regs::addr("ID", "DB_OFFSET"))?,
            db_stride: bar.read32(regs::addr("ID", "DB_STRIDE"))?,
        };
        Ok(Device {
            bar,
            mem,
            info,
            // QP 0 and 1 are special in IB (SMI, GSI); data QPs start at 2.
            next_qpn: 2,
            next_cqn: 0,
            next_pdn: 0,
            sq_track: HashMap::new(),
            sq_retired: HashMap::new(),
            rq_retired: HashMap::new(),
            epochs: HashMap::new(),
            written: HashMap::new(),
            mrs: Vec::new(),
            mr_gen: 0,
        })
    }

    /// Run an object command: stage `image` (WRITE) or fetch it (READ).
    pub(crate) fn command(
        &mut self,
        op: u32,
        table: u32,
        index: u32,
        image: &mut [u8],
    ) -> Result<()> {
        let words = image.len().div_ceil(4);
        let ctx0 = regs::addr("OBJECT", "CTX0");
        if op == regs::OP_WRITE {
            for w in 0..regs::CTX_WORDS {
                let mut b = [0u8; 4];
                if w < words {
                    let end = (4 * w + 4).min(image.len());
                    b[..end - 4 * w].copy_from_slice(&image[4 * w..end]);
                }
                self.bar
                    .write32(ctx0 + 4 * w as u32, u32::from_le_bytes(b))?;
            }
        }
        let mut cmd = [0u8; 4];
        let l = &regs::CMD;
        l.set(&l.field("index"), &mut cmd, index.into());
        l.set(&l.field("table"), &mut cmd, table.into());
        l.set(&l.field("op"), &mut cmd, op.into());
        self.bar
            .write32(regs::addr("OBJECT", "CMD"), u32::from_le_bytes(cmd))?;
        // The read is ordered behind the CMD write, and the NIC answers once it has finished.
        let status = self.bar.read32(regs::addr("OBJECT", "STATUS"))?;
        let err = (status >> regs::STATUS_ERR_SHIFT) & 0xFF;
        if err != regs::ERR_NONE {
            let reason = match err {
                regs::ERR_BAD_OP => "bad operation",
                regs::ERR_BAD_TABLE => "bad table",
                regs::ERR_BAD_INDEX => "index out of range",
                _ => "unknown error",
            };
            return Err(DriverError::Command {
                op,
                table,
                index,
                reason,
            });
        }
        if op == regs::OP_READ {
            for w in 0..words {
                let v = self.bar.read32(ctx0 + 4 * w as u32)?.to_le_bytes();
                let end = (4 * w + 4).min(image.len());
                image[4 * w..end].copy_from_slice(&v[..end - 4 * w]);
            }
        }
        Ok(())
    }

    /// Write a context image to the device.
    pub fn write_context(&mut self, table: u32, index: u32, image: &[u8]) -> Result<()> {
        let mut img = image.to_vec();
        self.command(regs::OP_WRITE, table, index, &mut img)?;
        if let Some(l) = layout_of(table) {
            self.written.insert((table, index), fields_only(l, image));
        }
        Ok(())
    }

    /// A context image as the NIC runs it (`len` bytes): what was last written, and for a QP
    /// the NIC's running state over it (`QP_RUNNING`, read from the NIC; `state` ERR if the
    /// NIC has failed the QP). The NIC keeps no copy of the CQ and MR tables, so those come
    /// from what was written, after the same checks of table and index the NIC makes.
    pub fn read_context(&mut self, table: u32, index: u32, len: usize) -> Result<Vec<u8>> {
        let mut img = vec![0u8; len];
        let count = match table {
            regs::TABLE_QP => self.info.num_qps,
            regs::TABLE_CQ => self.info.num_cqs,
            regs::TABLE_MR => self.info.num_mrs,
            _ => u32::MAX,
        };
        if table == regs::TABLE_QP || count == u32::MAX || index >= count {
            // The NIC reads a QP and names a bad table or index.
            self.command(regs::OP_READ, table, index, &mut img)?;
        }
        let mut out = self
            .written
            .get(&(table, index))
            .cloned()
            .unwrap_or_default();
        out.resize(len, 0);
        if table == regs::TABLE_QP {
            let l = &QP_CTX;
            let mut nic = img.clone();
            nic.resize(l.len, 0);
            out.resize(l.len.max(len), 0);
            for name in QP_RUNNING {
                let f = l.field(name);
                l.set(&f, &mut out, l.get(&f, &nic));
            }
            let st = l.field("state");
            if l.get(&st, &nic) == u128::from(QP_STATE_ERR) {
                l.set(&st, &mut out, QP_STATE_ERR.into());
            }
            out.truncate(len);
        }
        Ok(out)
    }
}
