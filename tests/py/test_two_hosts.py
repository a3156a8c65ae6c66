"""Two simulated hosts driven from Python through the Rust driver (``ferroce.verbs``): what a
pyverbs program does, on two ``ferroce_nic_64`` models joined by 10G links."""

from __future__ import annotations

import os
import random
import subprocess
import shutil

import pytest

from ferroce import verbs

GUARD = 64


def seeded(name: str) -> random.Random:
    seed = int(os.environ.get("FERROCE_SEED", random.randrange(1 << 32)))
    print(f"{name}: seed {seed} (rerun with FERROCE_SEED={seed})")
    return random.Random(seed)


def region(host, length: int, fill: bytes | None = None):
    """A buffer with `GUARD` bytes of 0xA5 on each side and a region over its middle."""
    base = host.alloc(length + 2 * GUARD)
    host.write(base, b"\xa5" * (length + 2 * GUARD))
    if fill is not None:
        host.write(base + GUARD, fill)
    return base + GUARD, host.reg_mr(base + GUARD, max(length, 1))


def test_post_send_gathers_up_to_four_sges_in_pyverbs_shape():
    """``post_send`` with pyverbs' work request dicts: each WRITE's message is its SGEs' bytes
    in order (1 to 4 SGEs, some empty, at odd offsets); the target gets exactly those bytes
    and its guard bytes stay. Requests the driver refuses raise ``ValueError``, post nothing."""
    rng = seeded("test_post_send_gathers_up_to_four_sges_in_pyverbs_shape")
    world = verbs.World()
    a, b = world.a, world.b
    qa, _ = world.connect(pmtu=256)
    assert verbs.WR_OPCODES[verbs.WR_RDMA_WRITE] == "RDMA_WRITE"
    assert verbs.WC_OPCODES[verbs.WC_RDMA_WRITE] == "RDMA_WRITE"
    pool = rng.randbytes(12_000)
    saddr, smr = region(a, len(pool), pool)
    wrs, want = [], []
    for i in range(12):
        sg, data = [], b""
        for _ in range(rng.randint(1, 4)):
            n = rng.choice([0, 1, 255, 256, 257, rng.randrange(1, 3000)])
            off = rng.randrange(len(pool) - n + 1)
            sg.append((saddr + off, n, smr.lkey))
            data += pool[off : off + n]
        daddr, dmr = region(b, len(data))
        wrs.append(dict(wr_id=i, opcode=verbs.WR_RDMA_WRITE, sg_list=sg, remote_addr=daddr,
                        rkey=dmr.rkey, signaled=True))
        want.append((daddr, data))
    a.post_send(qa, wrs)
    wcs = a.wait_cq(len(wrs), max_cycles=400_000)
    assert [(w.wr_id, w.status, w.opcode) for w in wcs] == [
        (i, verbs.WC_SUCCESS, verbs.WC_RDMA_WRITE) for i in range(len(wrs))]
    assert [w.byte_len for w in wcs] == [len(d) for _, d in want]
    for daddr, data in want:
        got = b.read(daddr - GUARD, len(data) + 2 * GUARD)
        assert got[GUARD : GUARD + len(data)] == data
        assert got[:GUARD] == got[GUARD + len(data) :] == b"\xa5" * GUARD
    good = dict(wr_id=99, opcode=verbs.WR_RDMA_WRITE, sg_list=[(saddr, 10, smr.lkey)],
                remote_addr=want[0][0], rkey=0)
    for bad in [dict(good, sg_list=[(saddr, 10, smr.lkey)] * 5),
                dict(good, sg_list=[(saddr, 10, smr.lkey), (saddr, 10, smr.lkey ^ 0x100)]),
                dict(good, opcode=verbs.WR_ATOMIC_FETCH_AND_ADD)]:
        with pytest.raises(ValueError):
            a.post_send(qa, [good, bad])
    world.run(5000)
    assert a.poll_cq() == []
    assert a.faults() == {} and b.faults() == {}


def test_writes_of_several_sizes_both_ways(tmp_path):
    rng = seeded("test_writes_of_several_sizes_both_ways")
    world = verbs.World(pcap_dir=str(tmp_path), reorder_seed=rng.randrange(1 << 32), rq_pause=0.2)
    a, b = world.a, world.b
    qa, qb = world.connect(pmtu=1024, psn_ab=0xFFFFF0, psn_ba=rng.randrange(1 << 24))
    assert qa.state == qb.state == "RTS"
    sizes = [0, 1, 64, 1023, 1024, 1025, 4096 + 7, 20_000]
    for src, dst, qp in [(a, b, qa), (b, a, qb)]:
        sent = []
        wrs = []
        for i, n in enumerate(sizes):
            data = rng.randbytes(n)
            saddr, smr = region(src, n, data)
            daddr, dmr = region(dst, n)
            wrs.append((i, saddr, n, smr.lkey, daddr, dmr.rkey))
            sent.append((daddr, data))
        src.post_write(qp, wrs)  # one doorbell for the list
        wcs = src.wait_cq(len(wrs), max_cycles=200_000)
        assert [w.wr_id for w in wcs] == list(range(len(sizes)))
        assert all(w.status == verbs.WC_SUCCESS for w in wcs), wcs
        assert [w.byte_len for w in wcs] == sizes
        assert all(w.qp_num == qp.qp_num for w in wcs)
        for daddr, data in sent:
            got = dst.read(daddr - GUARD, len(data) + 2 * GUARD)
            assert got[GUARD : GUARD + len(data)] == data
            assert got[:GUARD] == got[GUARD + len(data) :] == b"\xa5" * GUARD
    assert a.faults() == {} and b.faults() == {}
    world.run(2000)
    frames = world.frames()
    assert frames[0] > 0 and frames[1] > 0
    if shutil.which("tshark"):
        out = subprocess.run(
            ["tshark", "-r", str(tmp_path / "a_to_b.pcap"), "-d", "udp.port==4791,infiniband",
             "-T", "fields", "-e", "infiniband.bth.opcode"],
            capture_output=True, text=True, check=True,
        ).stdout.split()
        # RDMA WRITE FIRST/MIDDLE/LAST/ONLY one way, ACKs for b's WRITEs the other.
        assert len(out) == frames[0] and set(out) <= {"6", "7", "8", "10", "17"}, set(out)


def test_qp_by_hand_and_a_remote_access_error():
    rng = seeded("test_qp_by_hand_and_a_remote_access_error")
    world = verbs.World(reorder_seed=rng.randrange(1 << 32), rq_pause=0.2)
    a, b = world.a, world.b
    qa, qb = a.create_qp(depth=16), b.create_qp(depth=16)
    assert qa.state == "RESET"
    for host, qp in [(a, qa), (b, qb)]:
        host.modify_qp(qp, "INIT")
    a.modify_qp(qa, "RTR", path_mtu=256, dest_qp_num=qb.qp_num, rq_psn=0,
                remote_mac=b.mac, remote_ip=b.ip)
    b.modify_qp(qb, "RTR", path_mtu=256, dest_qp_num=qa.qp_num, rq_psn=100,
                remote_mac=a.mac, remote_ip=a.ip, min_rnr_timer=12)
    # Reliability attributes as ibv_qp_attr: out of range, or off their transition, refused.
    with pytest.raises(ValueError):
        a.modify_qp(qa, "RTS", sq_psn=100, timeout=32)
    with pytest.raises(ValueError):
        a.modify_qp(qa, "RTS", sq_psn=100, rnr_retry=8)
    with pytest.raises(ValueError):
        a.modify_qp(qa, "RTS", sq_psn=100, max_rd_atomic=17)
    a.modify_qp(qa, "RTS", sq_psn=100, timeout=18, retry_cnt=3, rnr_retry=7, max_rd_atomic=4)
    b.modify_qp(qb, "RTS", sq_psn=0)
    with pytest.raises(ValueError):
        a.modify_qp(qa, "RTS", timeout=10)  # RTS -> RTS takes min_rnr_timer only
    a.modify_qp(qa, "RTS", min_rnr_timer=31)
    with pytest.raises(ValueError):
        a.modify_qp(qa, "RTR")  # RTS -> RTR is not a transition
    data = rng.randbytes(1000)
    saddr, smr = region(a, 1000, data)
    daddr, dmr = region(b, 1000)
    a.post_write(qa, [dict(wr_id=7, local_addr=saddr, length=1000, lkey=smr.lkey,
                           remote_addr=daddr, rkey=dmr.rkey)])
    [wc] = a.wait_cq(1)
    assert (wc.wr_id, wc.status_name, wc.byte_len) == (7, "SUCCESS", 1000)
    assert b.read(daddr, 1000) == data
    # The peer deregisters its region: its key is refused by the NIC, nothing is written.
    b.dereg_mr(dmr)
    b.write(daddr, bytes(1000))
    a.post_write(qa, [(8, saddr, 1000, smr.lkey, daddr, dmr.rkey)])
    [wc] = a.wait_cq(1)
    assert (wc.wr_id, wc.status) == (8, verbs.WC_REM_ACCESS_ERR)
    assert b.counter("resp_bad_rkey") == 1
    assert b.read(daddr, 1000) == bytes(1000)
    # Access rights by name: a region without REMOTE_WRITE refuses the peer's WRITE.
    assert (verbs.ACCESS_LOCAL_WRITE, verbs.ACCESS_REMOTE_WRITE, verbs.ACCESS_REMOTE_READ,
            verbs.ACCESS_REMOTE_ATOMIC) == (1, 2, 4, 8)
    # (A fatal NAK ends QP qa's work: its later requests flush. A fresh pair goes on.)
    qa, _ = world.connect(pmtu=1024)
    ro = b.reg_mr(daddr, 1000, access=verbs.ACCESS_LOCAL_WRITE | verbs.ACCESS_REMOTE_READ)
    a.post_write(qa, [(10, saddr, 1000, smr.lkey, daddr, ro.rkey)])
    [wc] = a.wait_cq(1)
    assert (wc.wr_id, wc.status) == (10, verbs.WC_REM_ACCESS_ERR)
    assert b.counter("resp_bad_rkey") == 2
    assert b.read(daddr, 1000) == bytes(1000)
    qa, _ = world.connect(pmtu=1024)
    rw = b.reg_mr(daddr, 1000, access=verbs.ACCESS_REMOTE_WRITE)
    a.post_write(qa, [(11, saddr, 1000, smr.lkey, daddr, rw.rkey)])
    [wc] = a.wait_cq(1)
    assert (wc.wr_id, wc.status) == (11, verbs.WC_SUCCESS)
    assert b.read(daddr, 1000) == data
    # The QP's own rights (qp_access_flags) bound its regions': READ only, the WRITE is refused.
    qa, qb = world.connect(pmtu=1024)
    b.modify_qp(qb, "RTS", qp_access_flags=verbs.ACCESS_REMOTE_READ)
    b.write(daddr, bytes(1000))
    a.post_write(qa, [(12, saddr, 1000, smr.lkey, daddr, rw.rkey)])
    [wc] = a.wait_cq(1)
    assert (wc.wr_id, wc.status) == (12, verbs.WC_REM_ACCESS_ERR)
    assert b.read(daddr, 1000) == bytes(1000)
    with pytest.raises(ValueError):
        b.modify_qp(qb, "RTS", qp_access_flags=verbs.ACCESS_LOCAL_WRITE)
    with pytest.raises(ValueError):
        b.reg_mr(daddr, 1000, access=0x100)  # not an access right
    with pytest.raises(ValueError):
        b.reg_mr(daddr, 1000, access=verbs.ACCESS_REMOTE_WRITE, remote_write=True)
    # The driver refuses a local key it does not know, before anything reaches the NIC.
    with pytest.raises(ValueError):
        a.post_write(qa, [(9, saddr, 10, smr.lkey ^ 0x100, daddr, dmr.rkey)])
    assert a.poll_cq() == []
    with pytest.raises(TimeoutError):
        a.wait_cq(1, max_cycles=2000)


def test_connect_sets_the_read_limit_and_the_rights_granted(tmp_path):
    """``connect(max_rd_atomic=..., qp_access_flags=...)`` sets both QPs' READ limit (no READ
    request on the wire before the previous READ's response, at 1) and the rights each grants
    its peer (a WRITE to a QP that grants READ only is refused, whatever its region allows);
    values the driver refuses raise ``ValueError``."""
    rng = seeded("test_connect_sets_the_read_limit_and_the_rights_granted")
    world = verbs.World(pcap_dir=str(tmp_path), reorder_seed=rng.randrange(1 << 32))
    a, b = world.a, world.b
    qa, _ = world.connect(pmtu=1024, max_rd_atomic=1, qp_access_flags=verbs.ACCESS_REMOTE_READ)
    n = 4 * 1024
    data = rng.randbytes(n)
    base = b.alloc(n)
    b.write(base, data)
    mr = b.reg_mr(base, n, access=verbs.ACCESS_LOCAL_WRITE | verbs.ACCESS_REMOTE_READ
                  | verbs.ACCESS_REMOTE_WRITE)
    dst, dmr = region(a, n)
    a.post_send(qa, [dict(wr_id=i, opcode=verbs.WR_RDMA_READ, remote_addr=base + 1024 * i,
                          rkey=mr.rkey, sg_list=[(dst + 1024 * i, 1024, dmr.lkey)])
                     for i in range(4)])
    wcs = a.wait_cq(4, max_cycles=400_000)
    assert [(w.wr_id, w.status) for w in wcs] == [(i, verbs.WC_SUCCESS) for i in range(4)]
    assert a.read(dst, n) == data
    world.run(2000)
    from scapy.contrib.roce import BTH
    from scapy.layers.l2 import Ether
    from scapy.utils import rdpcap

    def times(name: str, opcode: int) -> list[float]:
        return [float(p.time) for p in rdpcap(str(tmp_path / name))
                if BTH in Ether(bytes(p)) and Ether(bytes(p))[BTH].opcode == opcode]

    requests = times("a_to_b.pcap", 12)  # RDMA READ request
    responses = times("b_to_a.pcap", 16)  # RDMA READ response ONLY
    assert len(requests) == len(responses) == 4
    for k in range(3):
        assert responses[k] < requests[k + 1], (requests, responses)
    # b's QP grants READ only: a's WRITE is refused (NAK remote access), nothing lands.
    b.write(base, bytes(64))
    a.post_write(qa, [(9, dst, 64, dmr.lkey, base, mr.rkey)])
    [wc] = a.wait_cq(1)
    assert (wc.wr_id, wc.status) == (9, verbs.WC_REM_ACCESS_ERR)
    assert b.read(base, 64) == bytes(64)
    assert b.counter("resp_bad_rkey") == 1
    with pytest.raises(ValueError):
        world.connect(pmtu=1024, max_rd_atomic=17)
    with pytest.raises(ValueError):
        world.connect(pmtu=1024, qp_access_flags=verbs.ACCESS_LOCAL_WRITE)


def test_post_recv_takes_pyverbs_receive_lists_and_refuses_bad_ones_whole():
    """``post_recv`` with pyverbs' receive work request dicts (1 to 4 SGEs) posts them; a list
    with a region lacking local write access, or five SGEs, raises ``ValueError`` and posts
    nothing (the ring's bytes are checked by the Rust system test)."""
    world = verbs.World()
    a = world.a
    qa, _ = world.connect(pmtu=1024)
    addr, mr = region(a, 4096)
    ro = a.reg_mr(addr, 4096, access=verbs.ACCESS_REMOTE_READ)
    wrs = [dict(wr_id=7 + i, sg_list=[(addr + 64 * j, 64, mr.lkey) for j in range(i + 1)])
           for i in range(4)]
    a.post_recv(qa, wrs)
    for bad in [dict(wr_id=1, sg_list=[(addr, 64, ro.lkey)]),
                dict(wr_id=2, sg_list=[(addr, 8, mr.lkey)] * 5)]:
        with pytest.raises(ValueError):
            a.post_recv(qa, [wrs[0], bad])


def test_send_and_recv_in_pyverbs_shape_both_ways():
    """SEND, SEND with immediate and RDMA WRITE with immediate, both ways, in pyverbs' shape:
    each SEND is scattered across the next receive WQE's SGEs (1 to 4, odd offsets), the
    receive completions carry ``WC_RECV`` / ``WC_RECV_RDMA_WITH_IMM``, the byte count, the
    immediate (``None`` when there is none) and the sending QP; guard bytes stay."""
    rng = seeded("test_send_and_recv_in_pyverbs_shape_both_ways")
    world = verbs.World(reorder_seed=rng.randrange(1 << 32))
    qa, qb = world.connect(pmtu=512)
    for src, dst, sq, rq in [(world.a, world.b, qa, qb), (world.b, world.a, qb, qa)]:
        pool = rng.randbytes(8000)
        saddr, smr = region(src, len(pool), pool)
        cases = [(verbs.WR_SEND, 0), (verbs.WR_SEND, 1), (verbs.WR_SEND_WITH_IMM, 511),
                 (verbs.WR_SEND, 513), (verbs.WR_SEND_WITH_IMM, 3000),
                 (verbs.WR_RDMA_WRITE_WITH_IMM, 700)]
        recvs, sends, want = [], [], []
        for i, (op, n) in enumerate(cases):
            off = rng.randrange(len(pool) - n + 1)
            data = pool[off : off + n]
            room = n + rng.randrange(0, 50)
            cuts = sorted(rng.randrange(room + 1) for _ in range(rng.randint(0, 3)))
            pieces = [b - a for a, b in zip([0] + cuts, cuts + [room])]
            bufs = [region(dst, p) for p in pieces]
            recvs.append(dict(wr_id=100 + i, sg_list=[(a, p, mr.lkey)
                                                      for (a, mr), p in zip(bufs, pieces)]))
            imm = rng.randrange(1 << 32) if op != verbs.WR_SEND else None
            wr = dict(wr_id=i, opcode=op, sg_list=[(saddr + off, n, smr.lkey)], signaled=True)
            if imm is not None:
                wr["imm_data"] = imm
            if op == verbs.WR_RDMA_WRITE_WITH_IMM:
                taddr, tmr = region(dst, n)
                wr.update(remote_addr=taddr, rkey=tmr.rkey)
                # The receive WQE's buffers stay as they were.
                want.append((verbs.WC_RECV_RDMA_WITH_IMM, n, imm,
                             [(taddr, data)] + [(a, b"\xa5" * p) for (a, _), p in zip(bufs, pieces)]))
            else:
                placed, at = [], 0
                for (a, _), p in zip(bufs, pieces):
                    placed.append((a, data[at : at + p]))
                    at += p
                want.append((verbs.WC_RECV, n, imm, placed))
            sends.append(wr)
        dst.post_recv(rq, recvs)
        src.post_send(sq, sends)
        wcs = src.wait_cq(len(sends), max_cycles=400_000)
        assert [(w.wr_id, w.status) for w in wcs] == [(i, verbs.WC_SUCCESS) for i in range(len(sends))]
        assert [w.opcode for w in wcs] == [
            verbs.WC_RDMA_WRITE if op == verbs.WR_RDMA_WRITE_WITH_IMM else verbs.WC_SEND
            for op, _ in cases]
        rwcs = dst.wait_cq(len(recvs), max_cycles=400_000)
        got = [(w.wr_id, w.status, w.opcode, w.byte_len, w.imm_data, w.src_qp, w.qp_num)
               for w in rwcs]
        assert got == [(100 + i, verbs.WC_SUCCESS, op, n, imm, sq.qp_num, rq.qp_num)
                       for i, (op, n, imm, _) in enumerate(want)], got
        for _, _, _, placed in want:
            for a, data in placed:
                back = dst.read(a - GUARD, len(data) + 2 * GUARD)
                assert back[GUARD : GUARD + len(data)] == data
                assert back[:GUARD] == back[GUARD + len(data) :] == b"\xa5" * GUARD
    assert world.a.counter("resp_rnr") == world.b.counter("resp_rnr") == 0
    assert world.a.faults() == {} and world.b.faults() == {}


def test_rdma_read_in_pyverbs_shape_both_ways():
    """RDMA READ both ways in pyverbs' shape: ``WR_RDMA_READ`` with ``remote_addr``/``rkey``
    of a region registered with ``ACCESS_REMOTE_READ`` lands the peer's bytes in the local
    SGEs (1 to 4, odd offsets; guards stay) and completes ``WC_RDMA_READ`` with the length;
    a region without the right answers ``WC_REM_ACCESS_ERR`` and writes nothing."""
    rng = seeded("test_rdma_read_in_pyverbs_shape_both_ways")
    world = verbs.World(reorder_seed=rng.randrange(1 << 32))
    qa, qb = world.connect(pmtu=1024)
    for me, peer, q in [(world.a, world.b, qa), (world.b, world.a, qb)]:
        pool = rng.randbytes(20000)
        base = peer.alloc(len(pool))
        peer.write(base, pool)
        mr = peer.reg_mr(base, len(pool), access=verbs.ACCESS_LOCAL_WRITE | verbs.ACCESS_REMOTE_READ)
        wrs, want = [], []
        for i, n in enumerate([0, 1, 1023, 1025, 4096 + 17, 9000]):
            off = rng.randrange(len(pool) - n + 1)
            cuts = sorted(rng.randrange(n + 1) for _ in range(rng.randint(0, 3)))
            pieces = [b - a for a, b in zip([0] + cuts, cuts + [n])]
            bufs = [region(me, p) for p in pieces]
            wrs.append(dict(wr_id=i, opcode=verbs.WR_RDMA_READ, remote_addr=base + off, rkey=mr.rkey,
                            sg_list=[(a, p, m.lkey) for (a, m), p in zip(bufs, pieces)], signaled=True))
            at = 0
            for (a, _), p in zip(bufs, pieces):
                want.append((a, pool[off + at : off + at + p]))
                at += p
        me.post_send(q, wrs)
        wcs = me.wait_cq(len(wrs), max_cycles=400_000)
        assert [(w.wr_id, w.status, w.opcode, w.byte_len) for w in wcs] == [
            (i, verbs.WC_SUCCESS, verbs.WC_RDMA_READ, sum(s[1] for s in wr["sg_list"]))
            for i, wr in enumerate(wrs)]
        for a, data in want:
            back = me.read(a - GUARD, len(data) + 2 * GUARD)
            assert back[GUARD : GUARD + len(data)] == data
            assert back[:GUARD] == back[GUARD + len(data) :] == b"\xa5" * GUARD
    # A region the peer did not open for reading: NAK remote access error, nothing written.
    base = world.b.alloc(64)
    mr = world.b.reg_mr(base, 64, access=verbs.ACCESS_REMOTE_WRITE)
    dst, dmr = region(world.a, 64)
    world.a.post_send(qa, [dict(wr_id=9, opcode=verbs.WR_RDMA_READ, remote_addr=base, rkey=mr.rkey,
                                sg_list=[(dst, 64, dmr.lkey)], signaled=True)])
    (wc,) = world.a.wait_cq(1, max_cycles=400_000)
    assert (wc.wr_id, wc.status) == (9, verbs.WC_REM_ACCESS_ERR)
    assert world.a.read(dst, 64) == b"\xa5" * 64
    assert world.b.counter("resp_bad_rkey") == 1
    assert world.a.faults() == {"cpl_naks": 1}
    assert set(world.b.faults()) <= {"resp_bad_rkey"}
    # ``fence``: a WRITE behind a READ waits for it, and both complete in order (a new QP:
    # the NAK above failed ``qa``).
    qa, _ = world.connect(pmtu=1024)
    base = world.b.alloc(8192)
    mr = world.b.reg_mr(base, 8192, access=verbs.ACCESS_REMOTE_READ | verbs.ACCESS_REMOTE_WRITE)
    dst, dmr = region(world.a, 8192)
    world.a.post_send(qa, [
        dict(wr_id=10, opcode=verbs.WR_RDMA_READ, remote_addr=base, rkey=mr.rkey,
             sg_list=[(dst, 8192, dmr.lkey)]),
        dict(wr_id=11, opcode=verbs.WR_RDMA_WRITE, remote_addr=base, rkey=mr.rkey,
             sg_list=[(dst, 64, dmr.lkey)], fence=True)])
    wcs = world.a.wait_cq(2, max_cycles=400_000)
    assert [(w.wr_id, w.status) for w in wcs] == [(10, verbs.WC_SUCCESS), (11, verbs.WC_SUCCESS)]


def test_atomics_in_pyverbs_shape_both_ways():
    """Atomics both ways in pyverbs' shape: ``WR_ATOMIC_FETCH_AND_ADD`` (``compare_add`` the
    addend) and ``WR_ATOMIC_CMP_AND_SWP`` (``compare_add`` the compare value, ``swap``) on an
    8-byte word of a region with ``ACCESS_REMOTE_ATOMIC``: the original value lands in the
    local 8 bytes (little-endian, guards stay), completions ``WC_FETCH_ADD`` / ``WC_COMP_SWAP``
    of 8 bytes, the word ends as the sequence says; a misaligned address answers
    ``WC_REM_INV_REQ_ERR`` and a region without the right ``WC_REM_ACCESS_ERR``, changing
    nothing."""
    rng = seeded("test_atomics_in_pyverbs_shape_both_ways")
    world = verbs.World(reorder_seed=rng.randrange(1 << 32))
    qa, qb = world.connect(pmtu=1024)
    u64 = (1 << 64) - 1
    for me, peer, q in [(world.a, world.b, qa), (world.b, world.a, qb)]:
        start = rng.randrange(1 << 64)
        word = peer.alloc(64)
        peer.write(word, start.to_bytes(8, "little") + rng.randbytes(56))
        mr = peer.reg_mr(word, 64, access=verbs.ACCESS_REMOTE_ATOMIC)
        v, wrs, want_orig, want_wc = start, [], [], []
        for i in range(8):
            dst, dmr = region(me, 8)
            if rng.random() < 0.5:
                add = rng.randrange(1 << 64)
                wrs.append(dict(wr_id=i, opcode=verbs.WR_ATOMIC_FETCH_AND_ADD, remote_addr=word,
                                rkey=mr.rkey, compare_add=add, sg_list=[(dst, 8, dmr.lkey)]))
                want_orig.append((dst, v))
                want_wc.append((i, verbs.WC_SUCCESS, verbs.WC_FETCH_ADD, 8))
                v = (v + add) & u64
            else:
                cmp = v if rng.random() < 0.6 else rng.randrange(1 << 64)
                swap = rng.randrange(1 << 64)
                wrs.append(dict(wr_id=i, opcode=verbs.WR_ATOMIC_CMP_AND_SWP, remote_addr=word,
                                rkey=mr.rkey, compare_add=cmp, swap=swap,
                                sg_list=[(dst, 8, dmr.lkey)]))
                want_orig.append((dst, v))
                want_wc.append((i, verbs.WC_SUCCESS, verbs.WC_COMP_SWAP, 8))
                v = swap if cmp == v else v
        me.post_send(q, wrs)
        wcs = me.wait_cq(len(wrs), max_cycles=400_000)
        assert [(w.wr_id, w.status, w.opcode, w.byte_len) for w in wcs] == want_wc
        for dst, orig in want_orig:
            back = me.read(dst - GUARD, 8 + 2 * GUARD)
            assert int.from_bytes(back[GUARD : GUARD + 8], "little") == orig
            assert back[:GUARD] == back[GUARD + 8 :] == b"\xa5" * GUARD
        assert int.from_bytes(peer.read(word, 8), "little") == v
        assert peer.counter("resp_atomics") == 8
    # Refusals, on fresh QPs: misaligned (NAK invalid request), no REMOTE_ATOMIC (NAK remote
    # access error); the word unchanged, nothing landed.
    for case, status in [(0, verbs.WC_REM_INV_REQ_ERR), (1, verbs.WC_REM_ACCESS_ERR)]:
        qa, _ = world.connect(pmtu=1024)
        word = world.b.alloc(64)
        world.b.write(word, b"\x11" * 64)
        access = verbs.ACCESS_REMOTE_ATOMIC if case == 0 else verbs.ACCESS_REMOTE_WRITE
        mr = world.b.reg_mr(word, 64, access=access)
        dst, dmr = region(world.a, 8)
        world.a.post_send(qa, [dict(wr_id=20 + case, opcode=verbs.WR_ATOMIC_FETCH_AND_ADD,
                                    remote_addr=word + (4 if case == 0 else 8), rkey=mr.rkey,
                                    compare_add=1, sg_list=[(dst, 8, dmr.lkey)])])
        (wc,) = world.a.wait_cq(1, max_cycles=400_000)
        assert (wc.wr_id, wc.status) == (20 + case, status)
        assert world.b.read(word, 64) == b"\x11" * 64
        assert world.a.read(dst, 8) == b"\xa5" * 8


def test_link_faults_are_drawn_from_a_seed_counted_and_duplicates_taken_once():
    """``World(duplicate=...)`` duplicates frames on both links (counted in ``link_stats()``,
    the other faults stay at zero); RC takes every duplicate once: each WRITE lands exactly
    once and completes once (a duplicate ACK or request changes nothing). Faults beyond a
    probability are refused."""
    rng = seeded("test_link_faults_are_drawn_from_a_seed_counted_and_duplicates_taken_once")
    world = verbs.World(duplicate=0.2, seed=rng.randrange(1 << 32))
    qa, _ = world.connect(pmtu=1024)
    writes_land_once(rng, world, qa, 24, [1, 1024, 3000], 200_000)
    stats = world.link_stats()
    for way in ("a_to_b", "b_to_a"):
        s = stats[way]
        assert s["frames"] > 0
        assert s["duplicated"] > 0, stats
        assert s["dropped"] == s["corrupted"] == s["reordered"] == s["burst_dropped"] == 0
    for bad in (dict(loss=1.5), dict(loss=0.6, reorder=0.6), dict(burst=0.1, burst_len=0)):
        with pytest.raises(Exception, match="link fault"):
            verbs.World(**bad)


def test_writes_over_a_lossy_link_land_exactly_once_by_retransmission():
    """``World(loss=..., corrupt=..., reorder=...)`` with ``connect(timeout=...)``: lost,
    corrupted and reordered frames are recovered by go-back-N retransmission; every WRITE
    lands exactly once, byte-exact, and completes once, in order; the retries are counted."""
    rng = seeded("test_writes_over_a_lossy_link_land_exactly_once_by_retransmission")
    world = verbs.World(loss=0.03, corrupt=0.01, reorder=0.02, seed=rng.randrange(1 << 32))
    a = world.a
    qa, _ = world.connect(pmtu=1024, timeout=6, retry_cnt=7)
    writes_land_once(rng, world, qa, 32, [1, 1024, 3000, 9000], 2_000_000)
    stats = world.link_stats()
    assert stats["a_to_b"]["dropped"] + stats["b_to_a"]["dropped"] > 0, stats
    assert a.counter("req_retrans") > 0
    assert a.counter("cpl_retry_exc") == 0
    # The driver reads the same through BAR0's RC_STATS block.
    st = a.rc_stats()
    assert st["retrans"] == a.counter("req_retrans")
    assert st["timeouts"] == a.counter("cpl_timeouts")
    assert st["seq_nak_rx"] == a.counter("cpl_seq_naks")
    assert st["retry_exc"] == 0
    assert st["ghost_rx"] == a.counter("cpl_ghosts")
    assert st["local_fail"] == 0 and st["pool_wait"] == a.counter("req_pool_waits")
    assert world.b.rc_stats()["dup_rx"] == world.b.counter("resp_dup")


def writes_land_once(rng, world, qa, n, sizes, max_cycles):
    """``n`` WRITEs of random ``sizes`` from a to b on ``qa``: each completes once, in order,
    and lands byte-exact between untouched guards."""
    a, b = world.a, world.b
    sent, wrs = [], []
    for i in range(n):
        data = rng.randbytes(rng.choice(sizes))
        saddr, smr = region(a, len(data), data)
        daddr, dmr = region(b, len(data))
        wrs.append((i, saddr, len(data), smr.lkey, daddr, dmr.rkey))
        sent.append((daddr, data))
    a.post_write(qa, wrs)
    wcs = a.wait_cq(len(wrs), max_cycles=max_cycles)
    assert [(w.wr_id, w.status) for w in wcs] == [(i, verbs.WC_SUCCESS) for i in range(len(wrs))]
    world.run(2000)
    assert a.poll_cq() == []
    for daddr, data in sent:
        got = b.read(daddr - GUARD, len(data) + 2 * GUARD)
        assert got[GUARD : GUARD + len(data)] == data
        assert got[:GUARD] == got[GUARD + len(data) :] == b"\xa5" * GUARD


def vcd_changes(path) -> tuple[dict[str, int], int, int]:
    """A VCD's variables (full names, scopes joined by '.') with how often each changed, and
    its first and last timestamps: what GTKWave would show."""
    words = iter(open(path).read().split())
    scope, names = [], {}
    for w in words:
        if w == "$scope":
            next(words)
            scope.append(next(words))
        elif w == "$upscope":
            scope.pop()
        elif w == "$var":
            next(words), next(words)
            ident, name = next(words), next(words)
            names.setdefault(ident, []).append(".".join(scope + [name]))
        elif w == "$enddefinitions":
            break
    last, changes, times = {}, {}, []
    vector = None
    for w in words:
        if vector is not None:
            ident, value, vector = w, vector, None
        elif w[0] == "#":
            times.append(int(w[1:]))
            continue
        elif w[0] in "bBrR":
            vector = w[1:]
            continue
        elif w[0] in "01xXzZ":
            ident, value = w[1:], w[0]
        else:
            continue
        if ident in last and last[ident] != value:
            for n in names.get(ident, []):
                changes[n] = changes.get(n, 0) + 1
        last[ident] = value
    return changes, times[0], times[-1]


def test_world_trace_writes_a_window_of_one_nic(tmp_path):
    """``World(trace=...)`` writes a VCD of the chosen NIC for the chosen window: its clock
    toggles twice a cycle inside the window and the file holds nothing outside it; host b's
    QP set up over BAR0 and its ACK of host a's WRITE show on its ports. A bad ``trace_nic``
    is a ``ValueError``."""
    with pytest.raises(ValueError):
        verbs.World(trace=str(tmp_path / "x.vcd"), trace_nic="c")
    path = tmp_path / "nic_b.vcd"
    cycles = 8000
    world = verbs.World(trace=str(path), trace_nic="b", trace_from=0, trace_cycles=cycles)
    start, period = world.cycle, world.period_ps  # the window opened with the world
    a, b = world.a, world.b
    qa, _ = world.connect(pmtu=1024)
    data = bytes(range(256)) * 16
    saddr, smr = region(a, len(data), data)
    daddr, dmr = region(b, len(data))
    a.post_send(qa, [dict(wr_id=7, opcode=verbs.WR_RDMA_WRITE, sg_list=[(saddr, len(data), smr.lkey)],
                          remote_addr=daddr, rkey=dmr.rkey)])
    [wc] = a.wait_cq(1)
    assert wc.status == verbs.WC_SUCCESS
    assert world.cycle < start + cycles, "the WRITE ended past the window"
    world.run(start + cycles - world.cycle + 10)  # past the window's end: the file is closed
    changes, first, last = vcd_changes(path)

    def toggles(port):
        return max((n for k, n in changes.items() if k.endswith("ferroce_nic_64." + port)), default=0)

    assert 2 * cycles - 2 <= toggles("clk") <= 2 * cycles + 2, toggles("clk")
    assert start * period <= first and last <= (start + cycles + 1) * period, (first, last)
    assert toggles("s_req_tvalid") >= 2  # host b's driver over BAR0
    assert toggles("m_axis_tvalid") >= 2  # host b's ACK frame
