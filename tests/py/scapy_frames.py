"""RoCEv2 frames built by scapy (the outside reference for the ICRC), reproducible from a seed.

Each frame: Ethernet, an 802.1Q tag or not, IPv4 (random DSCP/ECN, TTL, id) or IPv6 (random
traffic class, flow label, hop limit), UDP to 4791 (random source port and checksum), BTH
(an opcode from spec's table, FECN/BECN set or not, random QP/PSN), the opcode's extended
headers, a payload, and scapy's ICRC; padded to 60 bytes as a MAC would.

``python tests/py/scapy_frames.py`` rewrites ``tests/data/scapy_roce.pcap`` (seed 2026,
1,200 frames), the set the Rust harness runs in ``tests/tests/blocks/icrc.rs``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import PcapWriter

import ferroce

PCAP = Path(__file__).resolve().parent.parent / "data" / "scapy_roce.pcap"
PCAP_SEED = 2026
PCAP_COUNT = 1200


def frame(r: random.Random, max_payload: int = 512) -> tuple[bytes, int]:
    """One frame and the ICRC scapy computed for it."""
    code, _name, ext_len, has_payload = r.choice(ferroce.opcodes())
    mac = lambda: ":".join(f"{b:02x}" for b in [r.randrange(256) & 0xFE] + [r.randrange(256) for _ in range(5)])  # noqa: E731
    pkt = Ether(src=mac(), dst=mac())
    if r.random() < 0.5:
        pkt = pkt / Dot1Q(vlan=r.randrange(1, 4095), prio=r.randrange(8))
    if r.random() < 0.5:
        pkt = pkt / IP(
            src=".".join(str(r.randrange(256)) for _ in range(4)),
            dst=".".join(str(r.randrange(256)) for _ in range(4)),
            tos=r.randrange(256),
            ttl=r.randrange(256),
            id=r.randrange(65536),
            flags=r.choice([0, 2]),
        )
    else:
        pkt = pkt / IPv6(
            src=":".join(f"{r.randrange(65536):x}" for _ in range(8)),
            dst=":".join(f"{r.randrange(65536):x}" for _ in range(8)),
            tc=r.randrange(256),
            fl=r.randrange(1 << 20),
            hlim=r.randrange(256),
        )
    payload_len = r.randrange(max_payload + 1) if has_payload else 0
    pad = -payload_len % 4
    pkt = pkt / UDP(sport=r.randrange(0xC000, 0x10000), dport=4791, chksum=r.randrange(65536))
    pkt = pkt / BTH(
        opcode=code,
        solicited=r.randrange(2),
        padcount=pad,
        fecn=r.randrange(2),
        becn=r.randrange(2),
        dqpn=r.randrange(1, 1 << 24),
        ackreq=r.randrange(2),
        psn=r.randrange(1 << 24),
    )
    body = bytes(r.randrange(256) for _ in range(ext_len + payload_len)) + bytes(pad)
    pkt = pkt / Raw(body)
    wire = bytes(pkt)
    icrc = int.from_bytes(wire[-4:], "little")
    return wire.ljust(60, b"\0"), icrc


def frames(seed: int, n: int, max_payload: int = 512) -> list[tuple[bytes, int]]:
    r = random.Random(seed)
    return [frame(r, max_payload) for _ in range(n)]


def write_pcap(path: Path = PCAP) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with PcapWriter(str(path), linktype=1, sync=False) as w:
        for i, (data, _) in enumerate(frames(PCAP_SEED, PCAP_COUNT)):
            if i == 0:
                w.write_header(data)
            w.write_packet(data, sec=i, usec=0)  # fixed timestamps: the file is reproducible


if __name__ == "__main__":
    write_pcap(Path(sys.argv[1]) if len(sys.argv) > 1 else PCAP)
