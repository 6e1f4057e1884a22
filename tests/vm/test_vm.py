#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_vm.py - the many-CPU guest checks (scripts/vm-check, doc/vm-check.md).

    test_vm.py VM_CHECK BUILD_DIR scale [CPUS NODES]
    test_vm.py VM_CHECK BUILD_DIR initramfs

scale: ONE boot of a CPUS-CPU, NODES-node guest (default 16 and 4) that
runs tests/vm/guest_checks.py against BUILD_DIR; its TAP comes back as this
test's.  LB_VM_FULL=1: 64 CPUs on 8 nodes and the long form (more locks,
ab, aim7, rt, slab), unless CPUS and NODES are given; above 16 CPUs the
long form boots twice (BIG_BOOTS: rt alone in the second).  LB_VM_ONLY=rt
(a comma list): only those checks (guest_checks.py --only), the pace
first, in one boot.
initramfs: the initramfs builder takes the kernel's modules in dependency
order, and refuses (exit 1, one line naming it) a tree that lacks one.
Either skips (TAP plan 1..0 # SKIP) when qemu, the kernel or busybox-static
is missing: vm-check's exit 77 and its one line."""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok, skip_all  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ORDER = ["virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci",
         "netfs", "fscache", "9pnet", "9pnet_virtio", "9p"]


def vm_check(vmc, args, timeout):
    p = subprocess.run([vmc] + args, capture_output=True, text=True, timeout=timeout)
    if p.returncode == 77:
        skip_all((p.stdout + p.stderr).strip().splitlines()[-1])
    return p


def cpio_files(path):
    """{name: contents} of a gzip'd newc cpio archive."""
    data = gzip.open(path).read()
    files, i = {}, 0
    while i + 110 <= len(data) and data[i:i + 6] == b"070701":
        namesize = int(data[i + 94:i + 102], 16)
        filesize = int(data[i + 54:i + 62], 16)
        name = data[i + 110:i + 110 + namesize - 1].decode()
        if name == "TRAILER!!!":
            break
        i += (110 + namesize + 3) & ~3
        files[name] = data[i:i + filesize]
        i += (filesize + 3) & ~3
    return files


def initramfs(vmc):
    tmp = tempfile.mkdtemp(prefix="vm-initramfs.")
    try:
        out = os.path.join(tmp, "ok.gz")
        p = vm_check(vmc, ["--initramfs-only", out], 60)
        ok(p.returncode == 0, f"vm-check --initramfs-only: exit {p.returncode} {p.stderr.strip()}")
        if p.returncode != 0:
            return
        files = cpio_files(out)
        mods = [n.split("/")[-1][:-3] for n in files if n.endswith(".ko")]
        ok(sorted(mods) == sorted(ORDER), f"the archive holds the virtio and 9p modules ({mods})")
        listed = [m[:-3] for m in files.get("modules", b"").decode().split()]
        # Each module after every module it depends on (modules.dep).
        # vm-check's default kernel: the newest that is not a -rt- one.
        kvers = sorted(os.listdir("/lib/modules"))
        kver = ([k for k in kvers if "-rt-" not in k] or kvers)[-1]
        deps = {}
        for line in open(f"/lib/modules/{kver}/modules.dep"):
            mod, _, rest = line.partition(":")
            name = lambda path: os.path.basename(path).split(".")[0].replace("-", "_")  # noqa: E731
            deps[name(mod)] = [name(d) for d in rest.split()]
        late = [f"{m} before {d}" for i, m in enumerate(listed) for d in deps.get(m, [])
                if d not in listed[:i]]
        ok(sorted(listed) == sorted(ORDER) and not late,
           f"load order: every module after its dependencies ({listed}; {late or 'none late'})")
        ok(files.get("init", b"").startswith(b"#!/bin/busybox sh") and "bin/busybox" in files,
           "the archive has /init and a busybox")
        # A modules tree without 9p.ko: the builder must refuse, naming it.
        fake = os.path.join(tmp, "root")
        src = f"/lib/modules/{kver}"
        dst = os.path.join(fake, "lib", "modules", kver)
        os.makedirs(dst)
        for f in os.listdir(src):
            if f.startswith("modules."):
                shutil.copy(os.path.join(src, f), dst)
        # The tree holds every module but 9p.ko: copy the ones needed, then depmod.
        for line in open(os.path.join(src, "modules.dep")):
            path = line.split(":")[0]
            name = os.path.basename(path).split(".")[0]
            if name in ORDER and name != "9p":
                os.makedirs(os.path.join(dst, os.path.dirname(path)), exist_ok=True)
                shutil.copy(os.path.join(src, path), os.path.join(dst, path))
        subprocess.run(["depmod", "-b", fake, kver], check=True)
        p = vm_check(vmc, ["--moddir", fake, "--kernel", f"/boot/vmlinuz-{kver}",
                           "--initramfs-only", os.path.join(tmp, "bad.gz")], 60)
        lines = p.stderr.strip().splitlines()
        ok(p.returncode == 1 and len(lines) == 1 and "module 9p not found" in lines[0],
           f"a tree without 9p.ko is refused: exit {p.returncode}, {lines}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def host_ns_per_op(build):
    """CPU ns per op of `bench -l none -t 1` here: the guest's pace is
    printed against it (guest_checks.py); 0 when it cannot be had."""
    with tempfile.TemporaryDirectory(prefix="vm-pace.") as d:
        j = os.path.join(d, "pace.json")
        p = subprocess.run([os.path.join(build, "bench", "lockbench"), "bench", "-q", "-l", "none",
                            "-t", "1", "-d", "300ms", "--json", j], capture_output=True, timeout=120)
        if p.returncode:
            return 0
        try:
            return json.load(open(j))["results"][0]["runs"][0]["cpu_ns_per_op"] or 0
        except (OSError, ValueError, KeyError, IndexError):
            return 0


# Above 16 CPUs the long form boots twice: every check but rt, then rt
# alone, each with its own bound.  At 64 CPUs rt's 400 load threads, their
# SCHED_FIFO boosts and 64 RT threads take the TCG guest longest (soft
# lockups on every vCPU, one vCPU stuck for minutes: doc/vm-check.md, "64
# CPUs, 8 nodes"); in its own boot it cannot take the other checks' time,
# nor they its.  (The list: guest_checks.py's STEPS.)
BIG_BOOTS = [("topology,pinning,ladder,locktorture,preload,workloads,aim7", 1200), ("rt", 1200)]


def scale(vmc, build, cpus, nodes, full):
    only = os.environ.get("LB_VM_ONLY")
    if only or not full or cpus <= 16:
        boot(vmc, build, cpus, nodes, full, only, 1800 if full else 240)
        return
    for only, timeout in BIG_BOOTS:
        boot(vmc, build, cpus, nodes, full, only, timeout)


def boot(vmc, build, cpus, nodes, full, only, timeout):
    args = ["--cpus", str(cpus), "--nodes", str(nodes), "--timeout", str(timeout), "--",
            sys.executable if os.path.isabs(sys.executable) else "python3",
            os.path.join(HERE, "guest_checks.py"), "--build", os.path.abspath(build),
            "--cpus", str(cpus), "--nodes", str(nodes), "--budget", str(timeout),
            "--host-ns-per-op", f"{host_ns_per_op(build):.3f}"] + (["--full"] if full else [])
    if only:
        args += ["--only", only]
    t0 = time.monotonic()
    p = vm_check(vmc, args, timeout + 30)
    # A guest that printed nothing at all by the timeout never reached the
    # checks (the emulator's boot, the modules or the 9p mount hung: 2 of
    # 4 runs of one day here, with an empty console, against 23.6 s of
    # checks when it starts).  That is the emulator, not what this test
    # checks: boot once more, and say so.  A second silent boot fails.
    if p.returncode == 124 and not p.stdout.strip():
        diag(f"the first boot printed nothing in {time.monotonic() - t0:.0f} s (the guest never "
             f"reached the checks: {p.stderr.strip()[-200:]}); booting once more")
        p = vm_check(vmc, args, timeout + 30)
    # The guest's TAP, renumbered as this test's own (its plan left out).
    for line in p.stdout.splitlines():
        if line.startswith("ok ") or line.startswith("not ok "):
            good = line.startswith("ok ")
            ok(good, line.split(" - ", 1)[1] if " - " in line else line)
        elif line.startswith("#"):
            diag(line[1:].strip())
        elif not line.startswith("1.."):
            diag("guest: " + line)
    what = f" ({only})" if only else ""
    ok(p.returncode == 0, f"vm-check --cpus {cpus} --nodes {nodes}{what}: exit {p.returncode} "
       f"after {time.monotonic() - t0:.1f} s {p.stderr.strip()[-300:]}")


def main():
    vmc, build, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "initramfs":
        initramfs(vmc)
    else:
        full = os.environ.get("LB_VM_FULL", "") not in ("", "0")
        cpus, nodes = (64, 8) if full else (16, 4)
        if len(sys.argv) > 5:
            cpus, nodes = int(sys.argv[4]), int(sys.argv[5])
        scale(vmc, build, cpus, nodes, full)
    done()


if __name__ == "__main__":
    main()
