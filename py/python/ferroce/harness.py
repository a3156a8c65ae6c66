"""The scheduler, triggers, handles and AXI-stream models behind ``ferroce``.

One scheduler runs one design. Tasks are coroutines; each ``await`` of a trigger suspends the
task. When every task is suspended, the scheduler gives the design one rising edge (the Rust
side samples and drives its AXI-stream models), then resumes the tasks whose trigger fired.
Writes to inputs take effect at the next rising edge; reads see the values after the last one.
"""

from __future__ import annotations

import math
from typing import Any, Awaitable, Callable, Coroutine, Optional

from ferroce import _native


class SimTimeout(AssertionError):
    """The test ran out of its cycle budget: a hang is a failure, never a stuck process."""


# --------------------------------------------------------------------------- handles


class Signal:
    """A port of the design: ``.value`` reads it (an int) or drives it (inputs only)."""

    __slots__ = ("_dut", "_name")

    def __init__(self, dut: "Dut", name: str):
        self._dut = dut
        self._name = name

    @property
    def value(self) -> int:
        return self._dut._native.get(self._name)

    @value.setter
    def value(self, v: int) -> None:
        self._dut._native.set(self._name, int(v))

    @property
    def name(self) -> str:
        return self._name

    def __len__(self) -> int:
        return self._dut._native.width(self._name)

    def __repr__(self) -> str:
        return f"<Signal {self._dut.name}.{self._name} = {self.value:#x}>"


class Dut:
    """The design under test; its ports are attributes (``dut.s_axis_tvalid.value = 1``)."""

    def __init__(self, design: str, trace: Optional[str] = None):
        object.__setattr__(self, "_native", _native.Dut(design, trace))
        object.__setattr__(
            self, "_ports", {n: (w, i) for n, w, i in self._native.ports()}
        )

    def __getattr__(self, name: str) -> Signal:
        if name in self._ports:
            return Signal(self, name)
        raise AttributeError(f"{self._native.name} has no port {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"assign {name}.value, not {name}")

    @property
    def name(self) -> str:
        return self._native.name

    @property
    def cycle(self) -> int:
        return self._native.cycle

    @property
    def period_ps(self) -> int:
        """The clock period of the design's configuration (6400 ps at 10g, 4000 at 100g)."""
        return self._native.period_ps


# --------------------------------------------------------------------------- triggers


class _Trigger:
    """Something a task can await. ``cycles`` edges from now, or a condition."""

    cycles = 1

    def ready(self) -> bool:
        return False

    def __await__(self):
        yield self
        return self


class RisingEdge(_Trigger):
    """The next rising edge of the design's clock."""

    def __init__(self, signal: Optional[Signal] = None):
        self.signal = signal


class ClockCycles(_Trigger):
    """``n`` rising edges (cocotb: ``ClockCycles(dut.clk, n)``)."""

    def __init__(self, signal: Optional[Signal], n: int):
        if n < 1:
            raise ValueError("ClockCycles needs n >= 1")
        self.signal = signal
        self.cycles = n


class Timer(_Trigger):
    """Simulated time, rounded up to whole clock cycles (at least one)."""

    _UNITS = {"ps": 1, "ns": 1_000, "us": 1_000_000, "ms": 1_000_000_000}

    def __init__(self, time: float, units: str = "ns"):
        if units not in self._UNITS:
            raise ValueError(f"unknown time unit {units!r}")
        self.ps = time * self._UNITS[units]
        sched = _Scheduler.current()
        self.cycles = max(1, math.ceil(self.ps / sched.dut.period_ps))


class _Wait(_Trigger):
    """Resume as soon as ``cond()`` holds (checked after every step and edge)."""

    def __init__(self, cond: Callable[[], bool]):
        self.cond = cond
        self.cycles = None

    def ready(self) -> bool:
        return self.cond()


class Event:
    """``await event.wait()`` until some task calls ``event.set()``."""

    def __init__(self):
        self._set = False
        self.data = None

    def set(self, data: Any = None) -> None:
        self._set = True
        self.data = data

    def clear(self) -> None:
        self._set = False

    def is_set(self) -> bool:
        return self._set

    async def wait(self) -> None:
        if not self._set:
            await _Wait(lambda: self._set)


class Clock:
    """cocotb's ``Clock``: the design's clock already runs; this checks the period."""

    def __init__(self, signal: Signal, period: float, units: str = "ns"):
        self.signal = signal
        self.period_ps = period * Timer._UNITS[units]

    async def start(self) -> None:
        sched = _Scheduler.current()
        want = sched.dut.period_ps
        if abs(self.period_ps - want) > 0.5:
            raise ValueError(
                f"{sched.dut.name} is clocked at {want} ps; Clock asked for {self.period_ps} ps"
            )


# --------------------------------------------------------------------------- tasks


class Task:
    """A running coroutine. ``await task`` waits for its result."""

    def __init__(self, coro: Coroutine):
        self._coro = coro
        self._trigger: Optional[_Trigger] = None
        self._left = 0
        self.done = False
        self.result: Any = None
        self.name = getattr(coro, "__qualname__", repr(coro))

    def __await__(self):
        if not self.done:
            yield _Wait(lambda: self.done)
        return self.result

    def _step(self) -> None:
        try:
            trig = self._coro.send(None)
        except StopIteration as stop:
            self.done = True
            self.result = stop.value
            return
        if not isinstance(trig, _Trigger):
            raise TypeError(f"task {self.name} awaited {trig!r}, not a ferroce trigger")
        self._trigger = trig
        self._left = trig.cycles or 0

    def _runnable(self) -> bool:
        t = self._trigger
        return t is None or (t.cycles is None and t.ready()) or (
            t.cycles is not None and self._left <= 0
        )

    def kill(self) -> None:
        self._coro.close()
        self.done = True


class _Scheduler:
    _stack: list["_Scheduler"] = []

    def __init__(self, dut: Dut, timeout_cycles: int):
        self.dut = dut
        self.tasks: list[Task] = []
        self.budget = timeout_cycles

    @classmethod
    def current(cls) -> "_Scheduler":
        if not cls._stack:
            raise RuntimeError("no ferroce test is running")
        return cls._stack[-1]

    def spawn(self, coro: Coroutine) -> Task:
        t = Task(coro)
        self.tasks.append(t)
        return t

    def run(self, main: Task) -> Any:
        start = self.dut._native.cycle
        while True:
            # Step every runnable task until all wait on the clock.
            progressed = True
            while progressed:
                progressed = False
                for t in list(self.tasks):
                    if not t.done and t._runnable():
                        t._trigger = None
                        t._step()
                        progressed = True
                self.tasks = [t for t in self.tasks if not t.done]
                if main.done:
                    for t in self.tasks:
                        t.kill()
                    return main.result
            if self.dut._native.cycle - start >= self.budget:
                waiting = ", ".join(t.name for t in self.tasks)
                raise SimTimeout(
                    f"{self.dut.name}: still running after {self.budget} cycles "
                    f"(waiting: {waiting})"
                )
            self.dut._native.rising_edge()
            for t in self.tasks:
                if t._trigger is not None and t._trigger.cycles is not None:
                    t._left -= 1


def start_soon(coro: Coroutine) -> Task:
    """Run ``coro`` beside the current test (cocotb.start_soon)."""
    return _Scheduler.current().spawn(coro)


def run(
    fn: Callable[[Dut], Awaitable[Any]],
    design: str,
    timeout_cycles: int = 1_000_000,
    trace: Optional[str] = None,
) -> Any:
    """Open ``design`` and run ``await fn(dut)`` to completion; return its result."""
    dut = Dut(design, trace)
    sched = _Scheduler(dut, timeout_cycles)
    _Scheduler._stack.append(sched)
    try:
        return sched.run(sched.spawn(fn(dut)))
    finally:
        _Scheduler._stack.pop()


def test(design: str, timeout_cycles: int = 1_000_000):
    """Decorator: an ``async def test_x(dut)`` becomes a pytest test on ``design``."""

    def deco(fn: Callable[[Dut], Awaitable[Any]]):
        def wrapper() -> None:
            run(fn, design, timeout_cycles)

        wrapper.__name__ = fn.__name__
        wrapper.__qualname__ = fn.__qualname__
        wrapper.__doc__ = fn.__doc__
        wrapper.__module__ = fn.__module__
        return wrapper

    return deco


# --------------------------------------------------------------------------- AXI-stream


class AxisSource:
    """cocotbext-axi's ``AxiStreamSource``: ``await send(frame)`` queues it; the Rust model
    drives ``<prefix>_t*`` every cycle."""

    def __init__(self, dut: Dut, prefix: str):
        self._src = dut._native.axis_source(prefix)

    async def send(self, data: bytes, user: int = 0) -> None:
        self._src.send(bytes(data), user)

    def send_nowait(self, data: bytes, user: int = 0) -> None:
        self._src.send(bytes(data), user)

    def set_pause(self, seed: int, p: float) -> None:
        """Idle cycles between beats, with probability ``p``."""
        self._src.set_pause(seed, p)

    def set_backpressure(self, seed: int, p: float) -> None:
        """For a tap (``tready`` is an input): hold ``tready`` low with probability ``p``."""
        self._src.set_backpressure(seed, p)

    def idle(self) -> bool:
        return self._src.idle()

    async def wait(self) -> None:
        """Until everything queued has been sent."""
        if not self._src.idle():
            await _Wait(self._src.idle)


class AxisSink:
    """cocotbext-axi's ``AxiStreamSink`` (or ``AxiStreamMonitor`` with ``monitor=True``):
    ``await recv()`` returns ``(data, user)`` of the next frame."""

    def __init__(self, dut: Dut, prefix: str, monitor: bool = False):
        n = dut._native
        self._sink = n.axis_monitor(prefix) if monitor else n.axis_sink(prefix)

    async def recv(self) -> tuple[bytes, int]:
        f = self._sink.recv()
        if f is None:
            await _Wait(lambda: self._sink.count() > 0)
            f = self._sink.recv()
        return f

    def recv_nowait(self) -> Optional[tuple[bytes, int]]:
        return self._sink.recv()

    def count(self) -> int:
        return self._sink.count()

    def empty(self) -> bool:
        return self._sink.count() == 0

    def set_pause(self, seed: int, p: float) -> None:
        self._sink.set_pause(seed, p)

    def violations(self) -> list[str]:
        return self._sink.violations()
