"""Priority flow control from Python (``ferroce.verbs``): a receiver whose host takes memory
writes at half the line rate stays lossless once both ports run PFC on priority 0, and the
MAC statistics the driver reads from BAR0 show the XOFF/XON exchange."""

from __future__ import annotations

import os
import random

from ferroce import verbs


def test_pfc_keeps_a_slow_receiver_lossless():
    seed = int(os.environ.get("FERROCE_SEED", random.randrange(1 << 32)))
    print(f"test_pfc_keeps_a_slow_receiver_lossless: seed {seed} (rerun with FERROCE_SEED={seed})")
    rng = random.Random(seed)
    world = verbs.World(write_gbps=(None, 5.0))
    a, b = world.a, world.b
    for host in (a, b):
        host.set_pfc(enable=0x01, quanta=1000, xoff_bytes=6 << 10, xon_bytes=5 << 10)
    qa, _ = world.connect(pmtu=4096)
    size, count = 64 << 10, 12
    data = rng.randbytes(size * count)
    src, dst = a.alloc(len(data)), b.alloc(len(data))
    a.write(src, data)
    smr, dmr = a.reg_mr(src, len(data)), b.reg_mr(dst, len(data))
    wrs = [(i, src + i * size, size, smr.lkey, dst + i * size, dmr.rkey) for i in range(count)]
    a.post_write(qa, wrs)
    wcs = a.wait_cq(count, max_cycles=2_000_000)
    assert [w.wr_id for w in wcs] == list(range(count))
    assert all(w.status == verbs.WC_SUCCESS for w in wcs), wcs
    assert b.read(dst, len(data)) == data
    sa, sb = a.mac_stats(), b.mac_stats()
    print("a:", sa)
    print("b:", sb)
    assert sb["rx_overflow"] == [0]
    assert sb["xoff_tx"][0] > 0 and sb["xon_tx"][0] > 0 and sum(sb["xoff_tx"][1:]) == 0
    assert sa["pfc_rx"][0] >= sb["xoff_tx"][0] and sa["paused_cycles"][0] > 0
    assert a.faults() == {} and b.faults() == {}
