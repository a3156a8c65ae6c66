"""ferroce: cocotb-style async testbenches on ferroce's Verilator models.

A test reads like cocotb::

    import ferroce
    from ferroce import RisingEdge, ClockCycles, AxisSource, AxisSink

    @ferroce.test("ferroce_icrc_64")
    async def test_one_frame(dut):
        src = AxisSource(dut, "s_axis")
        mon = AxisSink(dut, "m_icrc", monitor=True)
        await src.send(frame)
        icrc, flags = await mon.recv()

``@ferroce.test`` turns the coroutine into a plain function that pytest collects; it opens the
design (emitting and building its Verilog when needed), runs the reset, and runs the coroutine
and every task it starts until the coroutine returns, failing after ``timeout_cycles``.

The clock of a design is the simulator's own: it advances whenever every task is waiting on a
trigger. ``Clock(...).start()`` is accepted for cocotb compatibility and checks the period.
"""

from ferroce._native import designs, icrc_flags, opcodes, spec_icrc
from ferroce.harness import (
    AxisSink,
    AxisSource,
    Clock,
    ClockCycles,
    Dut,
    Event,
    RisingEdge,
    SimTimeout,
    Task,
    Timer,
    run,
    start_soon,
    test,
)

FLAGS = dict(icrc_flags())

__all__ = [
    "AxisSink",
    "AxisSource",
    "Clock",
    "ClockCycles",
    "Dut",
    "Event",
    "FLAGS",
    "RisingEdge",
    "SimTimeout",
    "Task",
    "Timer",
    "designs",
    "opcodes",
    "run",
    "spec_icrc",
    "start_soon",
    "test",
]
