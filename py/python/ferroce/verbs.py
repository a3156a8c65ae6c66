"""Two simulated hosts and the Rust driver's verbs, for programs and pytest.

A few lines do what a pyverbs user would::

    from ferroce import verbs

    world = verbs.World()                    # two NICs under Verilator, a 10G link each way
    a, b = world.a, world.b
    qa, qb = world.connect(pmtu=1024)        # an RC QP pair in RTS
    src = a.alloc(4096); a.write(src, data)
    dst = b.alloc(4096)
    smr, dmr = a.reg_mr(src, 4096), b.reg_mr(dst, 4096)
    a.post_send(qa, [dict(wr_id=1, opcode=verbs.WR_RDMA_WRITE, sg_list=[(src, 4096, smr.lkey)],
                          remote_addr=dst, rkey=dmr.rkey)])
    [wc] = a.wait_cq(1)                      # simulated time runs while waiting
    assert wc.status == verbs.WC_SUCCESS and b.read(dst, 4096) == data

``Host`` has ``alloc``/``write``/``read`` (host memory), ``reg_mr`` (``access=`` the
``ACCESS_*`` bits) / ``dereg_mr``,
``create_qp``/``modify_qp`` (RESET -> INIT -> RTR -> RTS by hand, as ``World.connect`` does),
``post_send`` (pyverbs' work request dicts, ``sg_list`` of up to 4 ``(addr, length, lkey)``,
one doorbell per list; ``post_write`` is the one-buffer WRITE shorthand), ``poll_cq`` (no time passes), ``wait_cq`` (time runs),
``counter`` and ``faults`` (the NIC's counters), ``set_pfc`` and ``mac_stats`` (priority flow
control and the MAC's statistics over BAR0; ``World(write_gbps=(None, 5.0))`` makes host b's
memory slow), ``rc_stats`` (the RC transport's retransmissions, timeouts, NAKs, duplicates,
answers to nothing sent, QPs failed by local errors and waits for a QP's share of the
completion pool, over BAR0). Errors the driver refuses are ``ValueError``;
a wait that runs out of cycles is ``TimeoutError``.
"""

from ferroce._native import (Host, Mr, Qp, Wc, World, access_flags, wc_opcodes, wc_status,
                             wr_opcodes)

WC_STATUS = dict(wc_status())
"""``{code: name}`` of every work completion status."""

ACCESS = {name: value for value, name in access_flags()}
"""``{name: bit}`` of every memory region access right (``reg_mr``'s ``access``)."""

WR_OPCODES = {code: name for code, name, _ in wr_opcodes()}
"""``{code: name}`` of every work request opcode (``post_send``'s ``opcode``)."""

WC_OPCODES = {code: name for code, name, _ in wc_opcodes()}
"""``{code: name}`` of every work completion opcode (``Wc.opcode``)."""

globals().update({f"WC_{name}": code for code, name in WC_STATUS.items()})
globals().update({f"WR_{name}": code for code, name in WR_OPCODES.items()})
globals().update({f"WC_{name}": code for code, name in WC_OPCODES.items()})
globals().update({f"ACCESS_{name}": bit for name, bit in ACCESS.items()})

__all__ = ["Host", "Mr", "Qp", "Wc", "World", "WC_STATUS", "WR_OPCODES", "WC_OPCODES",
           "ACCESS"] + [f"WC_{name}" for name in WC_STATUS.values()] + [
    f"WR_{name}" for name in WR_OPCODES.values()] + [
    f"WC_{name}" for name in WC_OPCODES.values()] + [f"ACCESS_{name}" for name in ACCESS]
