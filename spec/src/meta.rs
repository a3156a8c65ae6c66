//! Records that travel between NIC blocks beside a payload stream (ARCHITECTURE: "headers
//! travel as a metadata stream beside the payload stream"). Host order: a record read as one
//! little-endian integer has each field at its `bit`.

use crate::headers::{BTH_LEN, ETH_HDR_LEN, ICRC_LEN, IPV4_HDR_LEN, UDP_HDR_LEN, VLAN_TAG_LEN};
use crate::layout::{f, Layout};
use crate::opcodes::OPCODES;

/// One packet for the TX header builder: everything that is not the payload.
pub const TX_META: Layout = Layout::host(
    "TX packet metadata",
    80,
    &[
        f("dst_mac", 0, 48, "destination MAC"),
        f("src_mac", 48, 48, "source MAC"),
        f("src_ip", 96, 32, "source IPv4 address"),
        f("dst_ip", 128, 32, "destination IPv4 address"),
        f(
            "src_port",
            160,
            16,
            "UDP source port (flow entropy, A17.3.1)",
        ),
        f("dscp", 176, 6, "IPv4 DSCP"),
        f("ecn", 182, 2, "IPv4 ECN"),
        f("ttl", 184, 8, "IPv4 time to live"),
        f("opcode", 192, 8, "BTH opcode; decides the extended headers"),
        f("se", 200, 1, "BTH solicited event"),
        f("ack_req", 201, 1, "BTH acknowledge request"),
        f("pkey", 208, 16, "BTH partition key"),
        f("dest_qp", 224, 24, "BTH destination QP"),
        f("psn", 256, 24, "BTH packet sequence number"),
        f(
            "pay_len",
            288,
            13,
            "payload bytes (0 ..= 4096); the payload packet must carry exactly these",
        ),
        f(
            "vlan",
            304,
            1,
            "insert an 802.1Q tag (TPID 0x8100, PCP, DEI 0, VID) after the source MAC",
        ),
        f(
            "pcp",
            305,
            3,
            "tag's priority code point (the PFC priority)",
        ),
        f("vid", 308, 12, "tag's VLAN identifier"),
        f(
            "ext",
            384,
            128,
            "extended header bytes 0..16 in wire order as one big-endian value, first byte \
             in bits 511..504 (a RETH fills it; an AETH is its top 32 bits)",
        ),
        f(
            "ext2",
            512,
            96,
            "extended header bytes 16..28, big-endian, byte 16 in bits 607..600 (the ImmDt \
             after a RETH, the last 12 bytes of an AtomicETH)",
        ),
    ],
    "Metadata of one RoCEv2 packet for the TX header builder (`hdl::net::TxHeader`).",
);

/// Bytes of extended headers the record holds (`ext`, then `ext2`): the longest any RC
/// opcode has (RETH + ImmDt, 20; AtomicETH, 28).
pub const TX_EXT_LEN: usize = 28;

/// Headers before the extended transport headers on an untagged IPv4 frame.
pub const TX_BASE_HDR_LEN: usize = ETH_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN + BTH_LEN;

/// Longest header the builder emits (802.1Q-tagged, the longest extended headers).
pub const TX_MAX_HDR_LEN: usize = TX_BASE_HDR_LEN + TX_EXT_LEN + VLAN_TAG_LEN;

/// Width of the 802.1Q group (`vlan`, `pcp`, `vid`) in `TX_META`, `RX_META` and the QP
/// context: the same arrangement from the `vlan` bit in all three, so the transport copies
/// the group as one value (checked by the tests below).
pub const VLAN_GROUP_W: usize = 16;

/// Largest payload of one packet (the largest PMTU).
pub const TX_MAX_PAYLOAD: usize = 4096;

/// Bytes of a RoCEv2 frame the TX path builds, as the MAC's transmit queues hold it (no FCS,
/// before padding): the headers (`tagged`: with an 802.1Q tag), `ext` bytes of extended
/// headers, the payload, its pad to a multiple of 4 and the ICRC. The requester and the
/// responder reserve a frame's beats in the queue of its priority before they send it
/// (`hdl::net::TxQueues`, "Credits"), from this sum.
pub const fn tx_frame_len(tagged: bool, ext: usize, pay_len: usize) -> usize {
    let tag = if tagged { VLAN_TAG_LEN } else { 0 };
    TX_BASE_HDR_LEN + tag + ext + pay_len + (4 - pay_len % 4) % 4 + ICRC_LEN
}

/// Beats of `len` bytes on a stream `kw` bytes wide.
pub const fn beats_of(len: usize, kw: usize) -> usize {
    len.div_ceil(kw)
}

/// IPv4 time to live and flags (don't fragment) the builder writes.
pub const IPV4_FLAGS_DF: u8 = 0b010;

/// The opcodes the TX builder sends, with their extended-header bytes: every RC opcode of
/// the table (requests, responses, acknowledgements), whichever the transport generates today
/// (`opcodes::IMPLEMENTED`).
pub fn tx_opcodes() -> Vec<(u8, usize)> {
    OPCODES
        .iter()
        .filter(|op| op.code < 0x20)
        .map(|op| {
            assert!(
                op.ext_len() <= TX_EXT_LEN,
                "{} ext headers too long",
                op.name
            );
            (op.code, op.ext_len())
        })
        .collect()
}

/// One received packet, as the RX parser (`hdl::net::RxParser`) hands it to the transport:
/// everything the responder and the completer need that is not the payload. The destination
/// MAC and IP address were checked against the NIC's own and are not repeated, except the
/// IP address (a later multi-GID NIC needs it).
pub const RX_META: Layout = Layout::host(
    "RX packet metadata",
    64,
    &[
        f("src_mac", 0, 48, "source MAC"),
        f("src_ip", 48, 32, "source IPv4 address"),
        f("dst_ip", 80, 32, "destination IPv4 address (the NIC's)"),
        f("src_port", 112, 16, "UDP source port"),
        f("dscp", 128, 6, "IPv4 DSCP"),
        f("ecn", 134, 2, "IPv4 ECN (3: congestion experienced)"),
        f("ttl", 136, 8, "IPv4 time to live"),
        f("opcode", 144, 8, "BTH opcode; decides the extended headers"),
        f("se", 152, 1, "BTH solicited event"),
        f("ack_req", 153, 1, "BTH acknowledge request"),
        f("mig_req", 154, 1, "BTH migration state"),
        f(
            "fecn",
            155,
            1,
            "BTH forward explicit congestion notification",
        ),
        f(
            "becn",
            156,
            1,
            "BTH backward explicit congestion notification",
        ),
        f("pkey", 160, 16, "BTH partition key"),
        f("dest_qp", 176, 24, "BTH destination QP"),
        f("psn", 200, 24, "BTH packet sequence number"),
        f(
            "pay_len",
            224,
            13,
            "payload bytes (0 ..= 4096), pad and ICRC removed; the payload packet carries \
             exactly these",
        ),
        f("vlan", 240, 1, "the frame carried an 802.1Q tag"),
        f("pcp", 241, 3, "its priority code point (0 when untagged)"),
        f("vid", 244, 12, "its VLAN identifier (0 when untagged)"),
        f(
            "ext2",
            256,
            128,
            "extended header bytes 16..32 (an ATOMIC ETH's last 12 bytes), big-endian, \
             byte 16 in bits 383..376",
        ),
        f(
            "ext",
            384,
            128,
            "extended header bytes 0..16 in wire order as one big-endian value, first byte \
             in bits 511..504 (as in TX_META); bytes past the opcode's headers are zero",
        ),
    ],
    "Metadata of one received RoCEv2 packet from the RX parser (`hdl::net::RxParser`). \
     Bits 511..256 read as one big-endian value are the extended headers in wire order.",
);

/// Bytes of extended headers the RX record holds (`ext` then `ext2`).
pub const RX_EXT_LEN: usize = 32;

/// Longest header the RX parser accepts: an 802.1Q tag, the base headers and the longest
/// extended headers of any opcode in the table.
pub fn rx_max_hdr_len() -> usize {
    VLAN_TAG_LEN + TX_BASE_HDR_LEN + rx_opcodes().iter().map(|o| o.1).max().unwrap_or(0)
}

/// Every opcode of the table with its extended-header bytes and whether it may carry a
/// payload: the RX parser accepts all of them (the transport decides what it implements).
pub fn rx_opcodes() -> Vec<(u8, usize, bool)> {
    OPCODES
        .iter()
        .map(|op| {
            assert!(
                op.ext_len() <= RX_EXT_LEN,
                "{} ext headers too long",
                op.name
            );
            (op.code, op.ext_len(), op.payload)
        })
        .collect()
}

/// One work request the requester has sent (or refused), for the completer: the completer
/// retires it when an ACK covers `last_psn` (or at once when `status` is not success) and
/// writes a CQE to CQ `cqn` if `flags` has `WQE_FLAG_SIGNALED` or the status is an error.
pub const SENT: Layout = Layout::host(
    "sent work request",
    32,
    &[
        f("qpn", 0, 24, "local QP number"),
        f(
            "status",
            24,
            8,
            "work completion status (queues::WC_STATUS)",
        ),
        f("flags", 32, 8, "the WQE's flags"),
        f("wr_opcode", 40, 8, "the WQE's opcode"),
        f("cqn", 48, 16, "the QP's send CQ"),
        f("wr_id", 64, 64, "the WQE's wr_id"),
        f("byte_len", 128, 32, "the WQE's length"),
        f("first_psn", 160, 24, "PSN of its first packet"),
        f(
            "last_psn",
            192,
            24,
            "PSN of its last packet (first_psn - 1 if it sent none)",
        ),
        f("epoch", 216, 8, "the QP's epoch (QP_CTX) when it was sent"),
        f(
            "sq_index",
            224,
            16,
            "its index in the send queue (sq_ci when it was fetched): where a retry resumes",
        ),
        f(
            "shared",
            240,
            1,
            "it takes an entry of the pool's shared part (its QP had records out already; the first one out takes the QP's own entry)",
        ),
    ],
    "A work request the requester has sent, in send order (`hdl::rc::Requester` to the completer).",
);

/// The completer's pool of `SENT` records (one per work request handed over and not yet
/// completed): an entry reserved for each QP, so every QP can always hand over a work request
/// whatever the others hold, and as many again shared, of which one QP takes at most
/// `SENT_PER_QP - 1` (its share: a QP whose peer never answers holds no more).
pub const SENT_POOL: usize = 512;
/// Entries reserved, one per QP (the NIC's 256 QPs).
pub const SENT_RESERVED: usize = 256;
/// `SENT` records one QP holds at most: its reserved entry and its share of the rest.
pub const SENT_PER_QP: usize = 16;
const _: () = assert!(SENT_RESERVED < SENT_POOL && SENT_PER_QP <= SENT_POOL - SENT_RESERVED);

/// A receive work request done (a SEND, or a WRITE with immediate, landed in it, or it was
/// consumed in error), for the completer: it writes a CQE to CQ `cqn` (the QP's receive CQ).
pub const RECV_DONE: Layout = Layout::host(
    "receive completion",
    32,
    &[
        f("qpn", 0, 24, "local QP number"),
        f(
            "status",
            24,
            8,
            "work completion status (queues::WC_STATUS)",
        ),
        f(
            "opcode",
            32,
            8,
            "work completion opcode: WC_RECV or WC_RECV_RDMA_WITH_IMM",
        ),
        f(
            "wc_flags",
            40,
            8,
            "queues::WC_WITH_IMM when imm_data holds one",
        ),
        f("cqn", 48, 16, "the QP's receive CQ"),
        f("wr_id", 64, 64, "the receive WQE's wr_id"),
        f(
            "byte_len",
            128,
            32,
            "bytes received (a WRITE with immediate: the RDMA length)",
        ),
        f("imm_data", 160, 32, "the ImmDt, as a big-endian number"),
        f("src_qp", 192, 24, "the sending QP"),
        f(
            "epoch",
            216,
            8,
            "the QP's epoch when the record was made (the completer drops one of an earlier epoch than the QP's)",
        ),
    ],
    "A receive completion (`hdl::rc::Responder` to the completer).",
);

/// An acknowledgement the responder received for this NIC's requester (an ACKNOWLEDGE packet's
/// BTH and AETH), for the completer.
pub const RX_ACK: Layout = Layout::host(
    "received acknowledgement",
    16,
    &[
        f(
            "qpn",
            0,
            24,
            "local QP number (the packet's destination QP)",
        ),
        f(
            "syndrome",
            24,
            8,
            "AETH syndrome (headers::AETH_ACK, AETH_NAK_*)",
        ),
        f(
            "psn",
            32,
            24,
            "BTH PSN: the last PSN acknowledged, or the one a NAK names",
        ),
        f("msn", 64, 24, "AETH MSN: messages the peer has completed"),
        f(
            "read",
            88,
            1,
            "the last packet of an RDMA READ's response has landed (its bytes written): the \
             READ is done when its `status` is 0",
        ),
        f(
            "gap",
            89,
            1,
            "not a NAK received: the responses of the QP's READ in progress went past `psn`, \
             the next one it expects, three times (one was lost or reordered): the requester \
             asks for the rest of the READ at once, as after a NAK PSN sequence error",
        ),
        f(
            "status",
            96,
            8,
            "a READ's local error (queues::WC_STATUS; 0: none): its WQE's SGEs refused on a \
             second check (LOC_PROT_ERR), the response longer or shorter than its buffers \
             (LOC_LEN_ERR), the WQE fetch failed (GENERAL_ERR)",
        ),
        f(
            "landed",
            104,
            8,
            "with `read`: the QP's count of READs landed, this one included (mod 32), for \
             the requester's READ slots",
        ),
        f(
            "epoch",
            112,
            8,
            "with `read`: the QP's epoch when the response landed (for a failed payload \
             read, when the read was issued): the completer drops one of an earlier epoch \
             (the QP reset since)",
        ),
    ],
    "An ACK or NAK received for a local QP, or an RDMA READ's response landed \
     (`hdl::rc::Responder` to the completer).",
);

/// An RDMA READ request the responder accepted, for the requester's response generator: it
/// sends READ RESPONSE packets of `len` bytes read from host address `va`, PSNs from `psn`,
/// with `msn` in their AETHs, on QP `qpn` (its peer's addresses from the QP context).
pub const READ_JOB: Layout = Layout::host(
    "READ response job",
    32,
    &[
        f("qpn", 0, 24, "local QP number"),
        f(
            "psn",
            24,
            24,
            "PSN of the first response packet (the request's PSN)",
        ),
        f(
            "msn",
            48,
            24,
            "the responder's MSN after the READ (the AETH's)",
        ),
        f("len", 72, 32, "bytes to read (0 ..= 2^31)"),
        f(
            "seq",
            104,
            8,
            "the QP's count of READs accepted, this one included (mod 32): the requester \
             hands it back when the response has gone (`Responder::s_rdone_seq`)",
        ),
        f(
            "atomic",
            112,
            1,
            "an atomic, already done: one ATOMIC ACKNOWLEDGE (AETH, AtomicAckETH) with `va` \
             as its original data, no payload (`len` 0)",
        ),
        f(
            "dup",
            113,
            1,
            "for a request taken before (a duplicate READ request served again, an atomic \
             replayed): the peer went back to its PSN, so the QP's READ responses sent or \
             queued before this one are stale and are cut short",
        ),
        f(
            "epoch",
            114,
            8,
            "the QP's epoch (QP_CTX) when the request was accepted: a job of an earlier \
             epoch (its QP reset since, perhaps connected again) sends nothing",
        ),
        f(
            "va",
            128,
            64,
            "host address of the first byte (checked against the rkey's region); an \
             atomic's original remote data",
        ),
        f(
            "rkey",
            192,
            32,
            "the request's R_Key: the region is checked again with it after an MR table write",
        ),
        f(
            "gen",
            224,
            32,
            "MR table writes the responder had seen when it read the rkey's entry (a count \
             the requester keeps too): a job whose count is behind checks its region again \
             before it reads a byte",
        ),
    ],
    "An accepted RDMA READ request or a done atomic (`hdl::rc::Responder` to \
     `hdl::rc::Requester`).",
);

/// An acknowledgement the responder owes a QP, as it keeps one per QP until it is sent (the
/// latest replaces one not yet sent, ranked): the fields of the ACK's `TX_META` that differ
/// between QPs and packets. The rest (the NIC's own MAC and IPv4 address, the opcode, TTL,
/// P_Key, and the UDP source port of the QP, `src_port`) are filled in as the ACK leaves, so
/// the table is 176 bits a QP, not `TX_META`'s 512 (5 block RAMs on ECP5, not 14).
pub const ACK_OWED: Layout = Layout::host(
    "owed acknowledgement",
    22,
    &[
        f("dst_mac", 0, 48, "the QP's peer's MAC (TX_META.dst_mac)"),
        f(
            "dst_ip",
            48,
            32,
            "the QP's peer's IPv4 address (TX_META.dst_ip)",
        ),
        f("dest_qp", 80, 24, "the peer's QP number (TX_META.dest_qp)"),
        f("psn", 104, 24, "the PSN acknowledged (TX_META.psn)"),
        f(
            "aeth",
            128,
            32,
            "AETH as sent: syndrome at 24..32, MSN at 0..24",
        ),
        f(
            "vlan",
            160,
            16,
            "the QP's 802.1Q group (TX_META.vlan): its priority picks the transmit queue",
        ),
    ],
    "An ACK or NAK the responder owes a QP (`hdl::rc::Responder`'s per-QP table).",
);

/// Where the requester keeps an RDMA READ in flight until its response lands: the WQE's
/// index in the send ring (the responder fetches it again for its SGEs) and the READ's first
/// PSN. One slot per READ a QP may have outstanding (`queues::MAX_RD_ATOMIC`), slot `k mod
/// MAX_RD_ATOMIC` for the QP's k-th READ, which records `k` (a late duplicate of the response
/// to READ `k - MAX_RD_ATOMIC` finds its old slot but not its count).
pub const READ_SLOT: Layout = Layout::host(
    "READ slot",
    8,
    &[
        f(
            "sq_index",
            0,
            16,
            "the READ WQE's index in the send queue (sq_ci when sent)",
        ),
        f(
            "first_psn",
            16,
            24,
            "PSN of the READ request, and of its first response",
        ),
        f(
            "epoch",
            40,
            8,
            "the QP's epoch (QP_CTX) when sent: a response after a RESET matches no slot",
        ),
        f(
            "atomic",
            48,
            1,
            "an atomic (its response is an ATOMIC ACKNOWLEDGE, not READ RESPONSEs)",
        ),
        f(
            "count",
            49,
            5,
            "the QP's READ count when sent (k for its k-th READ or atomic, mod 32): the slot \
             is the next to land only while the responder's landed count is k, not 16 READs \
             later when the slot has not been used again",
        ),
    ],
    "An RDMA READ in flight (`hdl::rc::Requester` to `hdl::rc::Responder`).",
);

/// IPv4 time to live of every packet the NIC sends.
pub const TX_TTL: u8 = 64;

/// Partition key of every packet the NIC sends (the default full-membership key).
pub const TX_PKEY: u16 = 0xFFFF;

/// UDP source port of a QP's packets (IBA A17.3.1: flow entropy, from the dynamic range
/// 0xC000..): `0xC000 | (qpn << 6 ^ qpn)` over the QP number's low 8 bits, a different port per
/// QP so ECMP spreads QPs and keeps each QP's packets in order.
pub const fn src_port(qpn: u32) -> u16 {
    let q = (qpn & 0xFF) as u16;
    0xC000 | ((q << 6) ^ q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcodes::IMPLEMENTED;

    #[test]
    fn layout_is_consistent() {
        TX_META.check().expect("TX_META");
        assert_eq!(TX_MAX_HDR_LEN, 86);
        for l in [&TX_META, &RX_META, &crate::queues::QP_CTX] {
            let v = l.field("vlan").bit;
            assert_eq!(l.field("vlan").width, 1);
            assert_eq!((l.field("pcp").bit, l.field("pcp").width), (v + 1, 3));
            assert_eq!((l.field("vid").bit, l.field("vid").width), (v + 4, 12));
            assert_eq!(v + VLAN_GROUP_W, l.field("vid").bit + 12, "{}", l.name);
        }
        assert_eq!(
            TX_META.field("ext").width + TX_META.field("ext2").width,
            TX_EXT_LEN * 8,
            "ext and ext2 hold TX_EXT_LEN bytes"
        );
        assert!(TX_MAX_PAYLOAD < 1 << TX_META.field("pay_len").width);
        let ops = tx_opcodes();
        for &c in IMPLEMENTED {
            assert!(ops.iter().any(|o| o.0 == c), "the builder sends {c:#x}");
        }
        assert!(ops.iter().any(|&(_, e)| e == 28) && ops.iter().any(|&(_, e)| e == 20));
        assert!(ops.iter().any(|&(_, e)| e == 16) && ops.iter().any(|&(_, e)| e == 4));
        RX_META.check().expect("RX_META");
        assert_eq!(rx_max_hdr_len(), 86, "tagged, ATOMIC ETH is the longest");
        assert_eq!(
            RX_META.field("ext").bit,
            TX_META.field("ext").bit,
            "ext sits where TX_META has it"
        );
        assert_eq!(RX_META.field("ext2").bit + 128, RX_META.field("ext").bit);
        SENT.check().expect("SENT");
        RX_ACK.check().expect("RX_ACK");
        RECV_DONE.check().expect("RECV_DONE");
        READ_JOB.check().expect("READ_JOB");
        READ_SLOT.check().expect("READ_SLOT");
        ACK_OWED.check().expect("ACK_OWED");
        let ports: std::collections::HashSet<u16> = (0..256).map(src_port).collect();
        assert_eq!(ports.len(), 256, "one port per QP");
        assert!(ports.iter().all(|p| *p >= 0xC000));
    }
}
