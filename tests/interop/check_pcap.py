"""Check the two pcaps of an interop run (ferroce's frames, the guest's frames) from outside.

    python tests/interop/check_pcap.py TX.pcap RX.pcap

For each file: every frame must be RoCEv2 with the ICRC scapy computes (tests/py/roce_check.py)
and dissected by tshark as InfiniBand (BTH opcode, QP, PSN) without a malformed-packet mark.
Request packets seen again with the same destination QP, PSN and opcode are counted as
retransmissions (ACKs are not: a responder may repeat one). Prints one line per file and last
`frames TX RX retransmitted TX RX`; exits 1 if a frame fails.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def main() -> int:
    counts, retx, failed = [], [], False
    for path in sys.argv[1:3]:
        bad = check(path)
        n, r, bad2 = dissect(path)
        bad += bad2
        for b in bad[:20]:
            print(f"{path}: {b}")
        failed |= bool(bad)
        print(f"{path}: {n} frames, {r} retransmitted, {len(bad)} bad")
        counts.append(n)
        retx.append(r)
    print(f"frames {counts[0]} {counts[1]} retransmitted {retx[0]} {retx[1]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
