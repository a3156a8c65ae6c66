//! What the RC engines pass between them, in one place: the widths of the records and tables
//! one engine writes and another reads. No engine imports another; each takes these from here,
//! and each is derived from `spec` (its layouts and sizes) or from the BAR0 tables.

use ferroce_spec::meta::{READ_JOB, SENT_PER_QP, SENT_POOL, SENT_RESERVED};
use ferroce_spec::queues::MAX_RD_ATOMIC;

/// QP table address width (256 QPs), as BAR0 stores the tables.
pub const QA: usize = crate::host::bar0::OBJ_A;

/// The completer's pool of outstanding requests: `POOL` (`spec::meta::SENT_POOL`) entries, `PA`
/// address bits. The requester hands a record over only within its QP's share (its reserved
/// entry, and its part of the shared ones: `SENT_PER_QP`), so an entry is always free for one.
pub const PA: usize = SENT_POOL.trailing_zeros() as usize;
pub const POOL: usize = 1 << PA;
const _: () = assert!(POOL == SENT_POOL && SENT_RESERVED == 1 << QA);
/// Records retired per QP, counted (mod 2^`RC_W`) by the completer for the requester's share.
pub const RC_W: usize = 8;
const _: () = assert!(SENT_PER_QP < 1 << (RC_W - 1));

/// A READ job record's bits (`READ_JOB`: the responder to the requester).
pub const JOB_W: usize = READ_JOB.len * 8;
/// READ counts per QP (issued, landed) wrap at 32: at most `MAX_RD_ATOMIC` apart.
pub const RDC_W: usize = 5;
/// READ slots (`READ_SLOT`, the fields in use) and their address: the QP, then the slot
/// (`SLOT_IX` bits: `MAX_RD_ATOMIC` slots per QP).
pub const SLOT_W: usize = 49 + RDC_W;
pub const SLOT_IX: usize = MAX_RD_ATOMIC.trailing_zeros() as usize;
pub const SLOT_A: usize = QA + SLOT_IX;
const _: () = assert!(MAX_RD_ATOMIC.is_power_of_two() && 2 * MAX_RD_ATOMIC <= 1 << RDC_W);

/// The READ cursor as the completer reads it from the responder (`m_rpk_data`): the next
/// response PSN 0/24, the QP's epoch when the READ began 24/8, a response in progress 32 (after
/// an `init_sq` write: the QP's `sq_psn` and its new epoch, nothing in progress); and 33: a READ
/// response for the QP has come (landed or not) since the completer last cleared the bit
/// (`s_rpk_clr`).
pub const RPK_W: usize = 34;
