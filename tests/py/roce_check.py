"""Check the ICRC of every RoCEv2 frame in a pcap with scapy (the outside reference).

``python tests/py/roce_check.py FILE.pcap`` parses each frame with scapy's RoCE layers, lets
scapy recompute the BTH's ICRC over the frame as captured, and compares it with the ICRC the
frame carries. Prints ``ok N`` and exits 0 when all N frames are RoCEv2 with the right ICRC;
otherwise lists the bad frames and exits 1. Frames are as a capture holds them: no FCS.
"""

from __future__ import annotations

import sys

from scapy.contrib.roce import BTH
from scapy.layers.l2 import Ether
from scapy.packet import Padding
from scapy.utils import PcapReader


def check(path: str) -> list[str]:
    bad = []
    n = 0
    with PcapReader(path) as r:
        for i, pkt in enumerate(r):
            n += 1
            data = bytes(pkt)
            p = Ether(data)
            if BTH not in p:
                bad.append(f"frame {i}: not RoCEv2 ({p.summary()})")
                continue
            if Padding in p:  # Ethernet padding after the IP packet is not the ICRC's
                p[Padding].underlayer.remove_payload()
            carried = p[BTH].icrc
            p[BTH].icrc = None
            again = Ether(bytes(p))
            if again[BTH].icrc != carried:
                bad.append(f"frame {i}: ICRC {carried:#010x}, scapy computes {again[BTH].icrc:#010x}")
    if not bad:
        print(f"ok {n}")
    return bad


if __name__ == "__main__":
    problems = check(sys.argv[1])
    for b in problems[:20]:
        print(b)
    sys.exit(1 if problems else 0)
