"""The ICRC engine's Verilator model against scapy's ICRC, through the Python harness."""

from __future__ import annotations

import os
import random
import time

import pytest

import ferroce
from ferroce import AxisSink, AxisSource, ClockCycles

import scapy_frames
from soak import soak

N_FRAMES = soak(1200)


def seed(test: str) -> int:
    s = int(os.environ.get("FERROCE_SEED", time.time_ns() % (1 << 63)))
    print(f"{test}: seed {s} (rerun with FERROCE_SEED={s})")
    return s


async def run_frames(dut, frames, r):
    src = AxisSource(dut, "s_axis")
    mon = AxisSink(dut, "m_icrc", monitor=True)
    idle, stall = r.choice([0.0, 0.1, 0.5]), r.choice([0.0, 0.1, 0.5])
    src.set_pause(r.randrange(1 << 63), idle)
    src.set_backpressure(r.randrange(1 << 63), stall)
    for data, _ in frames:
        await src.send(data)
    for i, (data, want) in enumerate(frames):
        icrc, flags = await mon.recv()
        got = int.from_bytes(icrc, "little")
        assert (got, flags) == (want, 0), (
            f"{dut.name} frame {i} ({len(data)} B, idle {idle}, stall {stall}): "
            f"got {got:#010x} flags {flags:#x}, scapy {want:#010x}"
        )
    await ClockCycles(dut.clk, 4)
    assert mon.empty(), "a result with no frame"
    return idle, stall


@pytest.mark.parametrize("design", ["ferroce_icrc_64", "ferroce_icrc_512"])
def test_scapy_frames(design):
    """1,200 scapy-built RoCEv2 frames: the model's ICRC equals scapy's, with no flag."""
    s = seed(f"test_scapy_frames[{design}]")
    frames = scapy_frames.frames(s, N_FRAMES)
    kinds = {(b"\x81\x00" == d[12:14], d[12:14] == b"\x86\xdd" or d[16:18] == b"\x86\xdd") for d, _ in frames}
    assert len(kinds) == 4, "every VLAN x IP version case present"
    # scapy and the Rust reference agree before the model is asked.
    for data, want in frames:
        assert ferroce.spec_icrc(data) == want

    async def body(dut):
        return await run_frames(dut, frames, random.Random(s))

    idle, stall = ferroce.run(body, design, timeout_cycles=soak(2_000_000))
    print(f"{design}: {len(frames)} scapy frames match (idle {idle}, back-pressure {stall})")


def test_checked_in_vectors_are_scapys():
    """tests/data/scapy_roce.pcap (the Rust harness's copy of the set) is what scapy makes."""
    fresh = scapy_frames.PCAP.with_suffix(".fresh.pcap")
    try:
        scapy_frames.write_pcap(fresh)
        assert fresh.read_bytes() == scapy_frames.PCAP.read_bytes(), (
            "tests/data/scapy_roce.pcap is stale: run python tests/py/scapy_frames.py"
        )
    finally:
        fresh.unlink(missing_ok=True)


@ferroce.test("ferroce_icrc_64")
async def test_flags_reach_python(dut):
    """A frame with a wrong ICRC and one cut short: the flags come out by name."""
    r = random.Random(7)
    (good, icrc), = scapy_frames.frames(r.randrange(1 << 30), 1)
    src = AxisSource(dut, "s_axis")
    mon = AxisSink(dut, "m_icrc", monitor=True)
    bad = bytearray(good)
    bad[good.rfind(icrc.to_bytes(4, "little"))] ^= 0x01  # a bit of the carried ICRC
    await src.send(bytes(bad))
    await src.send(good[:30])
    await src.send(good)
    _, f1 = await mon.recv()
    _, f2 = await mon.recv()
    d3, f3 = await mon.recv()
    assert f1 == ferroce.FLAGS["mismatch"]
    assert f2 & ferroce.FLAGS["truncated"]
    assert (int.from_bytes(d3, "little"), f3) == (icrc, 0)
