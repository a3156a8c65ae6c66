#!/usr/bin/env python3
"""Build the interop guest: a Linux 6.1 kernel with Soft-RoCE (rdma_rxe), rdma-core's tools and
perftest in an initramfs, and a QEMU (TCG) to boot it, from Debian 12 packages only.

    python3 tests/interop/guest.py build [--out target/interop/guest]

Everything is fetched with `apt-get download` (no root, no install), unpacked with
`dpkg-deb -x` and kept under the output directory; a second run reuses it. The result is
`manifest.json` there, which `ferroce interop` reads: the QEMU binary with its library path,
firmware and module directories, the uncompressed kernel (`vmlinux`, booted through PVH: no
in-guest decompression under TCG) and the initramfs. `guest.py boot` starts the guest with an
interactive console for poking at it by hand (the RoCE NIC's socket is left unconnected).

The guest's /init (below) loads the modules, names the RoCE netdev by its MAC, sets the
addresses the kernel command line gives (`ferroce.*`), adds `rxe0` and then runs commands from
its virtio console (`hvc0`), printing a marker line after each, for the harness to drive.
"""

import argparse
import hashlib
import json
import lzma
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

KVER_META = "linux-image-amd64"

# Packages unpacked into the guest's root. Their shared libraries are checked below with the
# tree's own dynamic loader, so a missing one is named instead of failing inside the guest.
GUEST_PKGS = [
    "libc6", "libgcc-s1", "busybox", "iproute2", "kmod", "ibverbs-utils", "ibverbs-providers",
    "libibverbs1", "librdmacm1", "rdmacm-utils", "perftest", "libibumad3", "libpci3",
    "libnl-3-200", "libnl-route-3-200", "libmnl0", "libelf1", "libbpf1", "libcap2", "libbsd0",
    "libmd0", "libselinux1", "libpcre2-8-0", "zlib1g", "libxtables12", "libdb5.3",
    "libtirpc3", "libudev1", "libgssapi-krb5-2", "libkrb5-3", "libk5crypto3",
    "libkrb5support0", "libcom-err2", "libkeyutils1", "libssl3", "libzstd1", "liblzma5",
]
# QEMU 7.2 and the libraries it needs that a Debian 12 machine may lack; installing
# qemu-system-x86 with apt would fight the machine's newer qemu-utils.
QEMU_PKGS = [
    "qemu-system-x86", "qemu-system-common", "qemu-system-data", "seabios", "ipxe-qemu",
    "libcapstone4", "libfdt1", "libpmem1", "libslirp0", "libvdeplug2", "libndctl6",
    "libdaxctl1", "libibverbs1", "librdmacm1", "libnl-3-200", "libnl-route-3-200",
]
# What the guest runs; each must load with the tree's libraries.
GUEST_BINS = [
    "bin/busybox", "bin/ip", "usr/bin/rdma", "usr/bin/ibv_devinfo", "usr/bin/ibv_rc_pingpong",
    "usr/bin/ib_write_bw", "usr/bin/ib_send_bw", "usr/bin/ib_read_bw", "usr/bin/ib_atomic_bw",
    "usr/bin/ib_write_lat", "usr/bin/rping",
    "usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so",
]
MODULES = [
    "virtio_pci", "virtio_net", "virtio_console", "crc32_generic", "crc32-pclmul", "configfs",
    "rdma_rxe", "ib_uverbs", "rdma_ucm",
]

INIT = r"""#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /run /usr/sbin /usr/bin /sbin
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev
/bin/busybox mount -t tmpfs tmp /tmp
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
arg() { for w in $(cat /proc/cmdline); do case $w in ferroce.$1=*) echo ${w#*=};; esac; done; }
for m in $(cat /etc/ferroce/modules); do insmod $m || echo "insmod $m failed"; done
# The RoCE port and the management port, found by their MACs.
for d in /sys/class/net/*; do
  case $(cat $d/address) in
    $(arg roce_mac)) ip link set ${d##*/} name roce0 ;;
    $(arg mgmt_mac)) ip link set ${d##*/} name mgmt0 ;;
  esac
done
ip link set lo up
echo 1 > /proc/sys/net/ipv6/conf/roce0/disable_ipv6
# A plain FIFO with a long queue on the RoCE port: the simulated NIC takes frames far slower
# than rxe makes them, and the default fq_codel drops packets that wait over 5 ms (a burst of
# READ responses would lose some before the wire; rxe does not resend responses).
ip link set roce0 mtu $(arg mtu)
ip link set roce0 txqueuelen 10000
tc qdisc replace dev roce0 root pfifo limit 10000
ip link set roce0 up
ip addr add $(arg ip)/24 dev roce0
ip neigh add $(arg peer_ip) lladdr $(arg peer_mac) nud permanent dev roce0
ip link set mgmt0 up
ip addr add 10.0.2.15/24 dev mgmt0
ip route add default via 10.0.2.2 dev mgmt0
rdma link add rxe0 type rxe netdev roce0
echo "ferroce-guest: rxe0 ready"
exec setsid sh -c 'exec sh /proc/self/fd/0 <>/dev/hvc0 >&0 2>&0'
"""


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def download(pkgs, debs: Path):
    """`apt-get download` what is not in `debs` yet; return each package's .deb."""
    debs.mkdir(parents=True, exist_ok=True)
    have = {p.name.split("_")[0]: p for p in debs.glob("*.deb")}
    missing = [p for p in pkgs if p not in have]
    if missing:
        r = subprocess.run(["apt-get", "download", *missing], cwd=debs,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"apt-get download {' '.join(missing)} failed:\n{r.stderr}\n"
                     "(run `apt-get update` first; Debian 12's archive must be reachable)")
        have = {p.name.split("_")[0]: p for p in debs.glob("*.deb")}
    return [have[p] for p in pkgs]


def kernel_pkg():
    out = subprocess.run(["apt-cache", "depends", KVER_META], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Depends: linux-image-"):
            return line.split()[1]
    sys.exit(f"no versioned kernel behind {KVER_META}: {out}")


def unpack(debs, dest: Path):
    dest.mkdir(parents=True, exist_ok=True)
    for d in debs:
        run(["dpkg-deb", "-x", str(d), str(dest)])


def kmod(tree: Path, name: str, *args):
    # /sbin/depmod etc. are absolute symlinks to /bin/kmod: call it by name instead.
    return subprocess.run([name, *args], executable=str(tree / "bin/kmod"),
                          capture_output=True, text=True, check=True).stdout


def uncompress_kernel(bzimage: Path, out: Path):
    data = bzimage.read_bytes()
    at = data.find(b"\xfd7zXZ\x00")
    if at < 0:
        sys.exit(f"{bzimage}: no xz payload (this script knows Debian's xz-compressed kernels)")
    dec = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
    elf = dec.decompress(data[at:])
    if elf[:4] != b"\x7fELF":
        sys.exit(f"{bzimage}: the xz payload is not an ELF kernel")
    out.write_bytes(elf)


def check_libs(tree: Path):
    ld = tree / "lib64/ld-linux-x86-64.so.2"
    path = f"{tree}/lib/x86_64-linux-gnu:{tree}/usr/lib/x86_64-linux-gnu"
    bad = []
    for b in GUEST_BINS:
        r = subprocess.run([str(ld), "--library-path", path, "--list", str(tree / b)],
                           capture_output=True, text=True)
        if r.returncode != 0 or "not found" in r.stdout:
            bad.append(f"{b}: {r.stdout}{r.stderr}")
    if bad:
        sys.exit("guest binaries with missing libraries (add their packages to GUEST_PKGS):\n"
                 + "\n".join(bad))


class Cpio:
    """A newc cpio archive (what the kernel unpacks as an initramfs)."""

    def __init__(self, f):
        self.f = f
        self.ino = 1

    def entry(self, name: str, mode: int, data: bytes = b""):
        name_b = name.encode() + b"\0"
        fields = [self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0]
        self.ino += 1
        hdr = b"070701" + b"".join(b"%08x" % v for v in fields)
        self.f.write(hdr + name_b)
        self.f.write(b"\0" * (-(len(hdr) + len(name_b)) % 4))
        self.f.write(data)
        self.f.write(b"\0" * (-len(data) % 4))

    def tree(self, root: Path, prefix: str = "", skip=lambda rel: False):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, root)
            for n in sorted(dirnames):
                rel = os.path.normpath(os.path.join(prefix, rel_dir, n))
                p = Path(dirpath) / n
                if skip(rel):
                    dirnames.remove(n)
                    continue
                if p.is_symlink():
                    self.entry(rel, stat.S_IFLNK | 0o777, os.readlink(p).encode())
                    dirnames.remove(n)
                else:
                    self.entry(rel, stat.S_IFDIR | 0o755)
            for n in sorted(filenames):
                rel = os.path.normpath(os.path.join(prefix, rel_dir, n))
                p = Path(dirpath) / n
                if skip(rel):
                    continue
                if p.is_symlink():
                    self.entry(rel, stat.S_IFLNK | 0o777, os.readlink(p).encode())
                else:
                    mode = p.stat().st_mode & 0o7777
                    self.entry(rel, stat.S_IFREG | mode, p.read_bytes())

    def close(self):
        self.entry("TRAILER!!!", 0)


def keep_in_guest(rel: str) -> bool:
    """What of the unpacked packages the guest does not need."""
    if rel.startswith(("usr/share", "boot", "lib/modules", "usr/lib/modules", "etc/init.d",
                       "lib/systemd", "usr/lib/systemd", "lib/udev", "usr/lib/udev")):
        return False
    prov = "usr/lib/x86_64-linux-gnu/libibverbs/"
    if rel.startswith(prov) and rel != prov.rstrip("/") and "librxe" not in rel:
        return False
    if rel.startswith("etc/libibverbs.d/") and rel != "etc/libibverbs.d/rxe.driver":
        return False
    return True


def build(out: Path):
    debs = out / "debs"
    kpkg = kernel_pkg()
    kver = kpkg.removeprefix("linux-image-")
    stamp = out / "manifest.json"
    script = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    if stamp.exists():
        old = json.loads(stamp.read_text())
        if old.get("kernel_version") == kver and old.get("script_sha256") == script:
            print(f"guest: up to date ({stamp})")
            return
    print(f"guest: kernel {kpkg}, {len(GUEST_PKGS)} user packages, QEMU from Debian 12")
    kdeb = download([kpkg], debs)
    gdebs = download(GUEST_PKGS, debs)
    qdebs = download(QEMU_PKGS, debs)

    kroot = out / "kernel"
    shutil.rmtree(kroot, ignore_errors=True)
    unpack(kdeb, kroot)
    groot = out / "root"
    shutil.rmtree(groot, ignore_errors=True)
    unpack(gdebs, groot)
    qroot = out / "qemu"
    shutil.rmtree(qroot, ignore_errors=True)
    unpack(qdebs, qroot)
    check_libs(groot)

    kmod(groot, "depmod", "-b", str(kroot), kver)
    order = []
    for m in MODULES:
        for line in kmod(groot, "modprobe", "-d", str(kroot), "-S", kver,
                         "--show-depends", m).splitlines():
            w = line.split()
            if w and w[0] == "insmod" and w[1] not in order:
                order.append(w[1])
    vmlinux = out / "vmlinux"
    uncompress_kernel(kroot / f"boot/vmlinuz-{kver}", vmlinux)

    initrd = out / "initrd.cpio"
    with open(initrd, "wb") as f:
        c = Cpio(f)
        c.tree(groot, skip=lambda rel: not keep_in_guest(rel))
        mods, dirs = [], set()
        for path in order:
            rel = os.path.relpath(path, kroot)
            parts = Path(rel).parent.parts
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in dirs and not (groot / d).is_dir():
                    c.entry(d, stat.S_IFDIR | 0o755)
                dirs.add(d)
            c.entry(rel, stat.S_IFREG | 0o644, Path(path).read_bytes())
            mods.append("/" + rel)
        for d in ("etc/ferroce",):
            c.entry(d, stat.S_IFDIR | 0o755)
        c.entry("etc/ferroce/modules", stat.S_IFREG | 0o644, ("\n".join(mods) + "\n").encode())
        c.entry("init", stat.S_IFREG | 0o755, INIT.encode())
        c.close()

    lib = f"{qroot}/usr/lib/x86_64-linux-gnu:{qroot}/lib/x86_64-linux-gnu"
    manifest = {
        "kernel_version": kver,
        "script_sha256": script,
        "qemu": str(qroot / "usr/bin/qemu-system-x86_64"),
        "ld_library_path": lib,
        "datadir": str(qroot / "usr/share/qemu"),
        "seabios": str(qroot / "usr/share/seabios"),
        "module_dir": str(qroot / "usr/lib/x86_64-linux-gnu/qemu"),
        "vmlinux": str(vmlinux),
        "initrd": str(initrd),
    }
    r = subprocess.run([manifest["qemu"], "--version"], capture_output=True, text=True,
                       env={**os.environ, "LD_LIBRARY_PATH": lib})
    if r.returncode != 0:
        sys.exit(f"the unpacked QEMU does not start:\n{r.stderr}")
    stamp.write_text(json.dumps(manifest, indent=1) + "\n")
    mb = initrd.stat().st_size / 2**20
    print(f"guest: {r.stdout.splitlines()[0]}; kernel {kver}; initramfs {mb:.0f} MiB; {stamp}")


def boot(out: Path):
    m = json.loads((out / "manifest.json").read_text())
    env = {**os.environ, "LD_LIBRARY_PATH": m["ld_library_path"],
           "QEMU_MODULE_DIR": m["module_dir"]}
    cmdline = ("console=ttyS0 quiet ferroce.ip=10.0.0.20 ferroce.mtu=1500 "
               "ferroce.peer_ip=10.0.0.10 ferroce.peer_mac=02:fe:00:00:00:0a "
               "ferroce.roce_mac=52:54:00:fe:00:14 ferroce.mgmt_mac=52:54:00:fe:01:14")
    os.execve(m["qemu"], [
        "qemu-system-x86_64", "-M", "q35", "-accel", "tcg", "-cpu", "max", "-m", "512",
        "-nodefaults", "-no-user-config", "-nographic", "-L", m["datadir"], "-L", m["seabios"],
        "-kernel", m["vmlinux"], "-initrd", m["initrd"], "-append", cmdline,
        "-serial", "stdio",
        "-netdev", "user,id=mgmt,restrict=on",
        "-device", "virtio-net-pci,netdev=mgmt,mac=52:54:00:fe:01:14,romfile=",
        "-netdev", f"stream,id=roce,server=on,addr.type=unix,addr.path={out}/roce.sock",
        "-device", "virtio-net-pci,netdev=roce,mac=52:54:00:fe:00:14,romfile=",
        "-device", "virtio-serial", "-chardev", f"socket,id=ctl,path={out}/ctl.sock,server=on,wait=off",
        "-device", "virtconsole,chardev=ctl",
    ], env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=["build", "boot"])
    ap.add_argument("--out", type=Path, default=Path("target/interop/guest"))
    a = ap.parse_args()
    out = a.out.resolve()
    if a.cmd == "build":
        build(out)
    else:
        boot(out)


if __name__ == "__main__":
    main()
