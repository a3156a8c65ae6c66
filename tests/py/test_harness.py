"""The Python harness itself: triggers, tasks, handles, and failures that must be loud."""

from __future__ import annotations

import pytest

import ferroce
from ferroce import AxisSink, AxisSource, Clock, ClockCycles, Event, RisingEdge, Timer, start_soon

CRC64 = "ferroce_crc32_64"


@ferroce.test(CRC64)
async def test_edges_cycles_and_timer(dut):
    start = dut.cycle
    await RisingEdge(dut.clk)
    assert dut.cycle == start + 1
    await ClockCycles(dut.clk, 10)
    assert dut.cycle == start + 11
    # 10g runs at 156.25 MHz: 6.4 ns per cycle, so 64 ns is 10 cycles and 1 ns rounds up to 1.
    assert dut.period_ps == 6400
    await Timer(64, "ns")
    assert dut.cycle == start + 21
    await Timer(1, "ns")
    assert dut.cycle == start + 22
    await start_soon(Clock(dut.clk, 6.4, "ns").start())


@ferroce.test(CRC64)
async def test_tasks_join_and_events(dut):
    ev = Event()
    log = []

    async def producer():
        await ClockCycles(dut.clk, 5)
        log.append(("set", dut.cycle))
        ev.set(42)
        return "done"

    async def consumer():
        await ev.wait()
        log.append(("woke", dut.cycle))
        return ev.data

    p = start_soon(producer())
    c = start_soon(consumer())
    assert await c == 42
    assert await p == "done"
    # The consumer wakes in the same cycle the event is set, without an extra edge.
    assert log[0][1] == log[1][1]


@ferroce.test(CRC64)
async def test_writes_land_at_the_next_edge(dut):
    """Drive a one-beat frame by hand, the way a cocotb test would, and read the CRC back."""
    dut.s_axis_tdata.value = int.from_bytes(b"12345678", "little")
    dut.s_axis_tkeep.value = 0xFF
    dut.s_axis_tlast.value = 1
    dut.s_axis_tready.value = 1
    dut.s_axis_tvalid.value = 1
    await RisingEdge(dut.clk)
    dut.s_axis_tvalid.value = 0
    while not dut.m_crc_tvalid.value:
        await RisingEdge(dut.clk)
    import zlib

    assert dut.m_crc_tdata.value == zlib.crc32(b"12345678")
    assert dut.m_crc_tuser.value == 0


@ferroce.test("ferroce_crc32_512")
async def test_wide_ports_round_trip(dut):
    v = int.from_bytes(bytes(range(64)), "little")
    dut.s_axis_tdata.value = v
    assert dut.s_axis_tdata.value == v
    assert len(dut.s_axis_tdata) == 512
    with pytest.raises(ValueError):
        dut.s_axis_tdata.value = 1 << 512
    with pytest.raises(ValueError):
        dut.s_axis_tdata.value = -1
    with pytest.raises(ValueError):
        dut.m_crc_tdata.value = 1
    with pytest.raises(AttributeError):
        dut.no_such_port  # noqa: B018


@ferroce.test(CRC64)
async def test_stream_models_with_pauses(dut):
    import zlib
    import random

    r = random.Random(3)
    src = AxisSource(dut, "s_axis")
    mon = AxisSink(dut, "m_crc", monitor=True)
    src.set_pause(1, 0.3)
    src.set_backpressure(2, 0.3)
    frames = [bytes(r.randrange(256) for _ in range(r.randrange(1, 300))) for _ in range(50)]
    for f in frames:
        await src.send(f)
    await src.wait()
    for f in frames:
        crc, user = await mon.recv()
        assert (int.from_bytes(crc, "little"), user) == (zlib.crc32(f), 0)


def test_a_hang_is_a_timeout_not_a_stuck_test():
    async def forever(dut):
        await Event().wait()

    with pytest.raises(ferroce.SimTimeout, match="still running after 500 cycles"):
        ferroce.run(forever, CRC64, timeout_cycles=500)


def test_exceptions_in_tasks_fail_the_test():
    async def boom():
        await ClockCycles(None, 3)
        raise RuntimeError("boom")

    async def main(dut):
        start_soon(boom())
        await ClockCycles(dut.clk, 10)

    with pytest.raises(RuntimeError, match="boom"):
        ferroce.run(main, CRC64)


def test_unknown_design_is_a_clear_error():
    async def main(dut):
        pass

    with pytest.raises(RuntimeError, match="no design named"):
        ferroce.run(main, "ferroce_nope")
