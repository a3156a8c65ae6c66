"""The soak factor, as the Rust tests have it: ``FERROCE_SOAK=N`` multiplies every random count."""

from __future__ import annotations

import os


def soak(n: int) -> int:
    """``n`` times ``$FERROCE_SOAK`` (default 1)."""
    try:
        factor = int(os.environ.get("FERROCE_SOAK", "1"))
    except ValueError:
        factor = 1
    return n * max(factor, 1)
