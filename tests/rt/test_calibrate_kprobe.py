#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/rt_calibrate_kprobe.py (`rt-calibrate kprobe`) on fixed input: a
BTF blob built here, tracefs hist text as Debian's 6.1 kernel prints it,
the cache choice and the roles of the lock functions (TAP)."""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import done, ok  # tests/lbtap.py  # noqa: E402

SCRIPT = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(SCRIPT)))
import rt_calibrate_kprobe as kp  # noqa: E402


def btf_blob():
    """A BTF blob: int, ptr, an enum, a func proto, struct kmem_cache_node
    (list_lock at 0), a bitfield struct (kind_flag), struct kmem_cache with
    name at 96 and node at 216, and an empty (forward) kmem_cache first."""
    names = b"\0int\0kmem_cache_node\0list_lock\0nr_partial\0kmem_cache\0flags\0name\0node\0" \
            b"E\0A\0bits\0x\0y\0"

    def off(n):
        return names.index(n.encode() + b"\0")

    def t(name_off, kind, vlen, size_or_type, kflag=0):
        return struct.pack("<III", name_off, (kflag << 31) | (kind << 24) | vlen, size_or_type)

    types = b""
    types += t(off("int"), 1, 0, 4) + struct.pack("<I", 32)               # 1 int
    types += t(0, 2, 0, 1)                                                # 2 ptr
    types += t(off("E"), 6, 1, 4) + struct.pack("<Ii", off("A"), 1)       # 3 enum
    types += t(0, 13, 2, 1) + struct.pack("<IIII", 0, 1, 0, 2)            # 4 func proto
    types += t(off("kmem_cache"), 4, 0, 0)                                # 5 empty struct
    types += t(off("kmem_cache_node"), 4, 2, 64) + \
        struct.pack("<III", off("list_lock"), 1, 0) + \
        struct.pack("<III", off("nr_partial"), 1, 64)                     # 6
    types += t(off("bits"), 4, 2, 8, kflag=1) + \
        struct.pack("<III", off("x"), 1, (3 << 24) | 0) + \
        struct.pack("<III", off("y"), 1, (5 << 24) | 35)                  # 7 bitfields
    types += t(0, 3, 0, 0) + struct.pack("<III", 2, 1, 64)                # 8 array
    types += t(off("kmem_cache"), 4, 3, 728) + \
        struct.pack("<III", off("flags"), 1, 64) + \
        struct.pack("<III", off("name"), 2, 96 * 8) + \
        struct.pack("<III", off("node"), 8, 216 * 8)                      # 9
    hdr = struct.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types), len(names))
    return hdr + types + names


blob = btf_blob()
km = kp.btf_member_offsets(blob, "kmem_cache")
ok(km == {"flags": 8, "name": 96, "node": 216},
   f"BTF: kmem_cache's members past an empty struct of that name, an enum, a func proto ({km})")
kn = kp.btf_member_offsets(blob, "kmem_cache_node")
ok(kn == {"list_lock": 0, "nr_partial": 8}, f"BTF: kmem_cache_node's list_lock at 0 ({kn})")
bits = kp.btf_member_offsets(blob, "bits")
ok(bits == {"x": 0, "y": 4}, f"BTF: a kind_flag struct's bit offsets in the low 24 bits ({bits})")
try:
    kp.btf_member_offsets(b"\0" * 24, "kmem_cache")
    ok(False, "BTF: a blob with a bad magic is refused")
except ValueError:
    ok(True, "BTF: a blob with a bad magic is refused")

# Hist text as Debian's 6.1.0-57 kernel printed it (one key, two keys).
LOCK_HIST = """# event histogram
#
# trigger info: hist:keys=lock:vals=hitcount:sort=hitcount:size=2048 if lock == 0xff3c9c7e80042c00 || lock == 0xff3c9c7e80043200 [active]
#

{ lock: 18391658060138630144 } hitcount:      39490
{ lock: 18391658060138631680 } hitcount:      39604
{ lock: 18391658060138600000 } hitcount:          7

Totals:
    Hits: 79101
    Entries: 3
    Dropped: 0
"""
entries, hits, dropped = kp.parse_hist(LOCK_HIST)
ok(len(entries) == 3 and entries[0] == ({"lock": 18391658060138630144}, 39490) and hits == 79101
   and dropped == 0, "hist: entries, Totals' hits and dropped")
FIND0 = """# event histogram
#

{ name: maple_node                                         , n: 18391658060138627072 } hitcount:        947
{ name: skbuff_head_cache                                  , n: 18391658060138630144 } hitcount:       7882
{ name: kmalloc-cg-512                                     , n: 18391658060138631680 } hitcount:       7886
{ name: kmalloc-512                                        , n: 18391658060138631936 } hitcount:         12

Totals:
    Hits: 16727
"""
FIND1 = """{ name: skbuff_head_cache                                  , n: 18391658060200000000 } hitcount:         40
"""
nodes, fhits = kp.node_map([FIND0, FIND1])
ok(nodes["skbuff_head_cache"] == [18391658060138630144, 18391658060200000000]
   and fhits["skbuff_head_cache"] == 7922 and fhits["kmalloc-512"] == 12,
   "finder hists: each cache's node addresses over the node indices, and its slow frees")
picked = kp.pick_caches(fhits, "skbuff_head_cache", ["kmalloc-cg-512", "kmalloc-512"])
ok(picked == ["skbuff_head_cache", "kmalloc-cg-512"],
   f"the data head's cache is the candidate the frees went to ({picked})")
try:
    kp.pick_caches({"skbuff_head_cache": 5}, "skbuff_head_cache", ["skbuff_small_head"])
    ok(False, "a candidate with no free in the warm-up is refused")
except KeyError as e:
    ok(e.args[0] == "skbuff_small_head", "a candidate with no free in the warm-up is refused")

amap = {18391658060138630144: "skbuff_head_cache", 18391658060138631680: "kmalloc-cg-512"}
got = kp.lock_counts(LOCK_HIST, amap)
ok(got == {"skbuff_head_cache": 39490, "kmalloc-cg-512": 39604},
   f"acquisitions by cache, other addresses left out ({got})")
res, total = kp.rates(got, 400000)
ok(abs(res["skbuff_head_cache"] - 0.098725) < 1e-9 and abs(total - 0.197735) < 1e-9,
   f"per message: 39490 / 400000, total (39490 + 39604) / 400000 ({total})")
lines = kp.report_lines(res, total, 400000, {"skbuff_head_cache": 16, "kmalloc-cg-512": 16}, got,
                        400401, {"skbuff_head_cache": 0, "kmalloc-cg-512": 0}, 2,
                        {"slow (___slab_alloc)": {"skbuff_head_cache": 40000}})
ok(lines[-3].startswith("total: 0.1977 list_lock acquisitions per message (400000 messages, 400401")
   and "objects per refill 10.0" in lines[-2], "the report's total and refill lines")
rt_lines = kp.report_lines(res, total, 400000, {}, got, 400401, {}, 2,
                          {"slow (___slab_alloc)": {"skbuff_head_cache": 400401}}, rt=True)
ok("objects per refill" not in rt_lines[-2],
   "PREEMPT_RT: every allocation enters ___slab_alloc, no refill size is claimed")
nl_lines = kp.report_lines({}, 0.0, 400000, {}, {}, 400401, {}, 2,
                          {"slow (___slab_alloc)": {"skbuff_head_cache": 40000}}, locks=False)
ok(nl_lines[0].startswith("list_lock not counted (--no-lock-probes)")
   and not any("acquisitions per message" in ln for ln in nl_lines)
   and "objects per refill 10.0" in nl_lines[1],
   "--no-lock-probes: no acquisition claimed, the sites still reported")
# The plain 6.1 guest's round: the lock probes counted 0.2688 a message for
# the head cache, its sites 0.0869 + 0.1770 + 0.0050.
gpn_sites = {"get_partial_node (get_partial_node.part.0)": {"h": 34760, "d": 34800},
             "unfreeze_partials (__unfreeze_partials)": {"h": 70800, "d": 71080},
             "discard (discard_slab)": {"h": 2000, "d": 2000},
             "slow (___slab_alloc)": {"h": 49000, "d": 49000}}
got_sites = kp.sites_list_lock(gpn_sites, 400000)
ok(abs(got_sites - (34760 + 34800 + 70800 + 71080 + 4000) / 400000) < 1e-12
   and kp.sites_list_lock({"slow (___slab_alloc)": {"h": 1}}, 400000) is None,
   "list_lock from the sites: their sum over both caches; None when one is missing (%s)" % got_sites)
sl = kp.report_lines({}, 0.0, 400000, {}, {}, 400401, {}, 2, gpn_sites, locks=False)
ok(any(ln.startswith("list_lock from the sites") and "0.5386 per message" in ln for ln in sl),
   "--no-lock-probes: the sites' list_lock sum printed")
ok(kp.lock_role("_raw_spin_lock_irqsave", False) == "acq"
   and kp.lock_role("_raw_spin_lock_irqsave", True) == "wait_lock"
   and kp.lock_role("rt_spin_lock", True) == "acq" and kp.lock_role("rt_spin_trylock", True) == "try",
   "roles: a raw lock call is the acquisition, on PREEMPT_RT the rt_mutex's wait_lock")

ok(kp.data_head_bytes(100) == 448 and kp.kmalloc_cache(448) == "kmalloc-512"
   and kp.data_head_bytes(4096) == 320, "data head: 100 bytes -> 448 (kmalloc-512); 4096 -> 320")
with tempfile.TemporaryDirectory() as d:
    for c in ("kmalloc-512", "kmalloc-cg-512"):
        os.makedirs(os.path.join(d, c))
    c61 = kp.data_candidates(100, d)
    os.makedirs(os.path.join(d, "skbuff_small_head"))
    with open(os.path.join(d, "skbuff_small_head", "object_size"), "w") as f:
        f.write("576\n")
    c618 = kp.data_candidates(100, d)
ok(c61 == ["kmalloc-cg-512", "kmalloc-512"] and c618[0] == "skbuff_small_head",
   f"candidates: kmalloc before v6.3 ({c61}), skbuff_small_head after ({c618})")

r = subprocess.run([sys.executable, SCRIPT.replace("rt_calibrate_kprobe.py", "rt-calibrate"),
                    "kprobe", "--loops", "0"], capture_output=True, text=True)
ok(r.returncode == 2 and r.stderr.count("\n") == 1 and "--loops" in r.stderr,
   f"bad --loops: one line naming it, exit 2 ({r.stderr.strip()})")
done()
