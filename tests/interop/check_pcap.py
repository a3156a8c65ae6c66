"""Check the two pcaps of an interop run (ferroce's frames, the guest's frames) from outside.

    python tests/interop/check_pcap.py TX.pcap RX.pcap

For each file: MAC control frames (PAUSE/PFC from the NIC to its link partner, which consumes
them) are counted and set aside; every other frame must be RoCEv2 with the ICRC scapy computes
(tests/py/roce_check.py) and dissected by tshark as InfiniBand (BTH opcode, QP, PSN) without a
malformed-packet mark.
Request packets seen again with the same destination QP, PSN and opcode are counted as
retransmissions (ACKs are not: a responder may repeat one). Prints one line per file and last
`frames TX RX retransmitted TX RX`; exits 1 if a frame fails.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from scapy.utils import PcapReader, PcapWriter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "py"))
from roce_check import check  # noqa: E402

ACK = 17  # RC Acknowledge: may repeat


def dissect(path: str) -> tuple[int, int, list[str]]:
    out = subprocess.run(
        ["tshark", "-n", "-r", path, "-T", "fields", "-E", "separator=,",
         "-e", "frame.number", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp",
         "-e", "infiniband.bth.psn", "-e", "_ws.malformed"],
        capture_output=True, text=True, check=True).stdout
    seen, retx, bad, n = set(), 0, [], 0
    for line in out.splitlines():
        n += 1
        num, op, qp, psn, malformed = (line.split(",") + [""] * 5)[:5]
        if not op or malformed:
            bad.append(f"frame {num}: tshark does not dissect it as RoCE ({line})")
            continue
        key = (int(qp, 0), int(psn, 0), int(op, 0))
        if key[2] != ACK and key in seen:
            retx += 1
        seen.add(key)
    return n, retx, bad


def without_mac_control(path: str, out: str) -> int:
    """Copy `path` to `out` without its MAC control frames; how many there were."""
    n = 0
    with PcapReader(path) as r, PcapWriter(out, sync=True) as w:
        for pkt in r:
            data = bytes(pkt)
            if data[12:14] == b"\x88\x08" and data[:6] == bytes.fromhex("0180c2000001"):
                n += 1
                continue
            w.write(pkt)
    return n


def main() -> int:
    counts, retx, failed = [], [], False
    tmp = tempfile.TemporaryDirectory()
    for i, orig in enumerate(sys.argv[1:3]):
        path = f"{tmp.name}/{i}.pcap"
        ctrl = without_mac_control(orig, path)
        bad = check(path)
        n, r, bad2 = dissect(path)
        bad += bad2
        for b in bad[:20]:
            print(f"{orig}: {b}")
        failed |= bool(bad)
        print(f"{orig}: {n} RoCE frames, {r} retransmitted, {len(bad)} bad, {ctrl} MAC control")
        counts.append(n)
        retx.append(r)
    print(f"frames {counts[0]} {counts[1]} retransmitted {retx[0]} {retx[1]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
