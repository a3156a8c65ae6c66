"""spec's MAC control frames (802.3x PAUSE, 802.1Qbb PFC) against scapy's
``scapy.contrib.mac_control``: byte-identical frames both ways, and spec's receive rule
reading what scapy builds."""

from __future__ import annotations

import os
import random

from scapy.all import Ether, raw
from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause

from ferroce import _native
from soak import soak

DST = "01:80:c2:00:00:01"


def mac(b: bytes) -> str:
    return ":".join(f"{x:02x}" for x in b)


def test_pfc_and_pause_frames_match_scapy():
    seed = int(os.environ.get("FERROCE_SEED", random.randrange(1 << 32)))
    print(f"test_pfc_and_pause_frames_match_scapy: seed {seed} (rerun with FERROCE_SEED={seed})")
    rng = random.Random(seed)
    for _ in range(soak(500)):
        src = bytes([2]) + rng.randbytes(5)
        enable = rng.randrange(256)
        times = [rng.choice([0, 1, 0xFFFF, rng.randrange(1 << 16)]) for _ in range(8)]
        fields = {}
        for p in range(8):
            fields[f"c{p}_enabled"] = (enable >> p) & 1
            fields[f"c{p}_pause_time"] = times[p]
        ref = raw(Ether(dst=DST, src=mac(src)) / MACControlClassBasedFlowControl(**fields))
        assert ref == _native.pfc_frame(list(src), enable, times)
        assert _native.parse_mac_ctrl(ref) == ("pfc", enable, times)
        t = rng.randrange(1 << 16)
        ref = raw(Ether(dst=DST, src=mac(src)) / MACControlPause(pause_time=t))
        assert ref == _native.pause_frame(list(src), t)
        assert _native.parse_mac_ctrl(ref) == ("pause", t)


def test_malformed_and_data_frames():
    src = "02:00:00:00:00:01"
    good = raw(Ether(dst=DST, src=src) / MACControlPause(pause_time=5))
    assert _native.parse_mac_ctrl(good[:59]) == ("malformed", "Short")
    other = raw(Ether(dst="01:80:c2:00:00:02", src=src) / MACControlPause(pause_time=5))
    assert _native.parse_mac_ctrl(other) == ("malformed", "BadDst")
    gate = bytearray(good)
    gate[14:16] = b"\x00\x02"  # 802.3 GATE
    assert _native.parse_mac_ctrl(bytes(gate)) == ("malformed", "UnknownOpcode(2)")
    ip = raw(Ether(dst=DST, src=src, type=0x0800) / (b"\x00" * 46))
    assert _native.parse_mac_ctrl(ip) == ("data",)
