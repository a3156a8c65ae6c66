"""``python -m ferroce.bench DESIGN...``: Verilator cycles per second through the Python harness.

A cocotb-style loop: an AXI-stream source keeps the design busy with frames while the test
awaits ``RisingEdge`` once per cycle (the common shape of a cocotb test), so each cycle
crosses from Python into Rust and back. Prints one ``design cycles_per_second`` line each.
"""

from __future__ import annotations

import sys
import time

import ferroce
from ferroce import AxisSource, RisingEdge

CYCLES = 200_000


async def _bench(dut) -> float:
    src = AxisSource(dut, "s_axis")
    frame = bytes(range(256)) * 6
    for _ in range(CYCLES * 64 // len(frame) + 10):  # busy at any width
        src.send_nowait(frame)
    t0 = time.perf_counter()
    for _ in range(CYCLES):
        await RisingEdge(dut.clk)
    return CYCLES / (time.perf_counter() - t0)


def main(argv: list[str]) -> int:
    for design in argv or ferroce.designs():
        print(f"{design} {ferroce.run(_bench, design, timeout_cycles=CYCLES + 10):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
