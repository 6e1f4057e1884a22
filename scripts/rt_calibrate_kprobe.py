# SPDX-License-Identifier: MIT
"""rt_calibrate_kprobe.py - `scripts/rt-calibrate kprobe`: count the kernel's
SLUB list_lock acquisitions of the AF_UNIX send path's caches while
hackbench runs, with kprobe events and hist triggers (tracefs), in a kernel
that has them (a vm-check guest booting Debian's kernel: doc/rt.md,
"Calibration").

How: struct kmem_cache_node's first member is its list_lock (mm/slab.h), so
the lock's address is the node's.  The offsets of kmem_cache.name and
kmem_cache.node come from the kernel's BTF (/sys/kernel/btf/vmlinux); a
kprobe on __slab_free (first argument the cache) with a hist trigger keyed
on (name, node[i]) finds each cache's node addresses during a warm-up
hackbench; then one kprobe a lock function (_raw_spin_lock*, or on PREEMPT_RT
rt_spin_lock*) with a hist trigger keyed on its first argument,
filtered to those addresses, counts the acquisitions, and one on
unix_stream_sendmsg counts the sends.
"""
import json
import os
import platform
import re
import struct
import subprocess
import sys
import time

SLAB = "/sys/kernel/slab"
BTF = "/sys/kernel/btf/vmlinux"
GROUP = "lbcal"
# Lock functions whose first argument is the lock: the !PREEMPT_RT raw
# spinlock entries and PREEMPT_RT's spinlock_t (an rt_mutex) entries.
LOCK_FUNCS = ("_raw_spin_lock", "_raw_spin_lock_irqsave", "_raw_spin_lock_irq",
              "_raw_spin_lock_bh", "rt_spin_lock", "rt_spin_lock_nested")
TRYLOCK_FUNCS = ("_raw_spin_trylock", "rt_spin_trylock")


def lock_role(fn, rt):
    """What a call of lock function FN at a list_lock's address is: "acq",
    an acquisition; "try", a trylock (an attempt); "wait_lock": on
    PREEMPT_RT (RT true) spinlock_t is an rt_mutex whose first member is
    the raw wait_lock, which its slow paths take at the same address
    (kernel/locking/rtmutex.c): not an acquisition of list_lock."""
    if fn in TRYLOCK_FUNCS:
        return "try"
    if rt and not fn.startswith("rt_"):
        return "wait_lock"
    return "acq"
# Functions whose first argument is the struct kmem_cache, for finding the
# caches' nodes (the first one the kernel has is used).
FIND_FUNCS = ("__slab_free", "___slab_alloc", "deactivate_slab")
# Slab events counted beside the locks, per cache (first argument the
# cache; the first function of each list that the kernel has): slow-path
# allocations (a cpu slab refilled: from its own remote frees, a partial
# slab or a new one), new slabs, slabs given back to the page allocator.
# With cpu partials on (CONFIG_SLUB_CPU_PARTIAL=y, cpu_partial 0; mm/slub.c
# v6.1) also, where the kernel has them as functions of their own: slabs
# put on a CPU's partial list (from __slab_free, drain, or get_partial_node),
# the drains back to the node list, the takes from it, and cpu slabs
# unfrozen back to the lists.  And the frees that miss the cpu slab's fast
# path (do_slab_free: the object's slab is not this CPU's c->slab), which
# enter __slab_free: the work-alike's "slow-path frees".
SITE_FUNCS = (("slow", ("___slab_alloc", "__slab_alloc")), ("newslab", ("new_slab", "allocate_slab")),
              ("discard", ("discard_slab", "free_slab", "__free_slab")),
              ("put_cpu_partial", ("put_cpu_partial",)),
              ("unfreeze_partials", ("__unfreeze_partials",)),
              # v6.1's GCC split the `!n->nr_partial` test off into the
              # caller: the .part.0 body is the call that takes list_lock.
              ("get_partial_node", ("get_partial_node", "get_partial_node.part.0")),
              ("deactivate_slab", ("deactivate_slab",)),
              ("freeslow", ("__slab_free",)))
SKB_SHINFO = 320           # SKB_DATA_ALIGN(sizeof(struct skb_shared_info)), x86-64
KMALLOC_SIZES = (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192)


class Refused(Exception):
    """The kernel does not permit the measurement (exit 3)."""


# --- BTF: the offsets of struct members ----------------------------------

_KIND_EXTRA = {1: 4, 2: 0, 3: 12, 7: 0, 8: 0, 9: 0, 10: 0, 11: 0, 12: 0, 14: 4, 16: 0, 17: 4, 18: 0}
_KIND_VLEN = {4: 12, 5: 12, 6: 8, 13: 8, 15: 12, 19: 12}


def btf_member_offsets(blob, struct_name):
    """{member name: byte offset} of the first non-empty struct STRUCT_NAME
    in a BTF blob (include/uapi/linux/btf.h); KeyError if there is none,
    ValueError if the blob is not BTF."""
    if len(blob) < 24:
        raise ValueError("BTF: too short")
    magic, _ver, _flags, hdr_len = struct.unpack_from("<HBBI", blob, 0)
    if magic != 0xEB9F:
        raise ValueError(f"BTF: bad magic {magic:#x}")
    type_off, type_len, str_off, str_len = struct.unpack_from("<IIII", blob, 8)
    types = hdr_len + type_off
    strs = hdr_len + str_off

    def name(off):
        end = blob.index(b"\0", strs + off)
        return blob[strs + off:end].decode()

    pos, end = types, types + type_len
    while pos < end:
        name_off, info, _size = struct.unpack_from("<III", blob, pos)
        kind, vlen, kflag = (info >> 24) & 0x1F, info & 0xFFFF, info >> 31
        pos += 12
        if kind in _KIND_EXTRA:
            pos += _KIND_EXTRA[kind]
            continue
        if kind not in _KIND_VLEN:
            raise ValueError(f"BTF: unknown kind {kind}")
        if kind == 4 and vlen and name(name_off) == struct_name:
            out = {}
            for i in range(vlen):
                m_name, _m_type, m_off = struct.unpack_from("<III", blob, pos + 12 * i)
                bits = m_off & 0xFFFFFF if kflag else m_off
                out[name(m_name)] = bits // 8
            return out
        pos += _KIND_VLEN[kind] * vlen
    raise KeyError(struct_name)


# --- which caches an AF_UNIX stream send uses ------------------------------

def data_head_bytes(datasize, page=4096):
    """__alloc_skb's kmalloc size for one send of DATASIZE bytes (one skb):
    unix_stream_sendmsg puts the bytes past SKB_MAX_HEAD(0) = PAGE_SIZE - 320
    in page fragments, page-aligned (data_len), and the head holds the rest:
    SKB_DATA_ALIGN(linear) + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))."""
    max_head = page - SKB_SHINFO
    data_len = min(datasize, (max(0, datasize - max_head) + page - 1) // page * page)
    linear = datasize - data_len
    return (linear + 63) // 64 * 64 + SKB_SHINFO


def kmalloc_cache(size):
    """The kmalloc-N cache a kmalloc(SIZE) comes from (KMALLOC_NORMAL)."""
    for s in KMALLOC_SIZES:
        if size <= s:
            return f"kmalloc-{s}"
    raise ValueError(f"{size} bytes is beyond the kmalloc caches")


def data_candidates(datasize, slab_dir=SLAB):
    """The caches the data head of a DATASIZE-byte send may come from, in
    the kernel's order of preference: skbuff_small_head (v6.3 on) where the
    head fits its objects, else kmalloc's size class, memcg-accounted
    (kmalloc-cg-N: a socket's allocations are charged to its cgroup) or
    not (net/core/skbuff.c __alloc_skb, kmalloc_reserve).  Those that the
    kernel has; the warm-up picks the one the frees went to."""
    need = data_head_bytes(datasize)
    out = []
    small = os.path.join(slab_dir, "skbuff_small_head", "object_size")
    if os.path.exists(small):
        with open(small) as f:
            if need <= int(f.read()):
                out.append("skbuff_small_head")
    km = kmalloc_cache(need)
    out += [km.replace("kmalloc-", "kmalloc-cg-"), km]
    return [c for c in out if os.path.exists(os.path.join(slab_dir, c))]


def pick_caches(hits, head, candidates):
    """[head, the candidate with the most slow-path frees in the warm-up];
    KeyError naming the head or the candidates when the warm-up saw none."""
    if not hits.get(head):
        raise KeyError(head)
    best = max(candidates, key=lambda c: hits.get(c, 0), default=None)
    if best is None or not hits.get(best):
        raise KeyError(" or ".join(candidates) or "a data head cache")
    return [head, best]


# --- hist trigger output ------------------------------------------------------

_ENTRY = re.compile(r"^\{(.*)\}\s+hitcount:\s*(\d+)")


def _value(text):
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"(0x)?[0-9a-fA-F]+", text):
        return int(text, 16)
    return text


def parse_hist(text):
    """([(key dict, hitcount)], Totals' Hits or None, Dropped or None) from
    a tracefs hist file."""
    entries, hits, dropped = [], None, None
    for line in text.splitlines():
        m = _ENTRY.match(line.strip())
        if m:
            key = {}
            for part in m.group(1).split(","):
                k, _, v = part.partition(":")
                key[k.strip()] = _value(v)
            entries.append((key, int(m.group(2))))
            continue
        m = re.match(r"^\s*(Hits|Dropped):\s*(\d+)", line)
        if m and m.group(1) == "Hits":
            hits = int(m.group(2))
        elif m:
            dropped = int(m.group(2))
    return entries, hits, dropped


def node_map(find_hists):
    """({cache: [node addresses]}, {cache: hits}) from the finder hists (one
    a node index, each keyed name, n)."""
    nodes, hits = {}, {}
    for text in find_hists:
        for key, n in parse_hist(text)[0]:
            name, addr = key.get("name"), key.get("n")
            if isinstance(name, str) and isinstance(addr, int) and addr:
                nodes.setdefault(name, [])
                if addr not in nodes[name]:
                    nodes[name].append(addr)
                hits[name] = hits.get(name, 0) + n
    return nodes, hits


def lock_counts(text, addr_cache):
    """{cache: acquisitions} from a lock function's hist keyed on lock."""
    out = {}
    for key, hits in parse_hist(text)[0]:
        c = addr_cache.get(key.get("lock"))
        if c is not None:
            out[c] = out.get(c, 0) + hits
    return out


def rates(load, messages):
    """{cache: acquisitions per message}, the total; ValueError on bad input."""
    if messages <= 0:
        raise ValueError("MESSAGES must be a positive integer")
    res = {c: n / messages for c, n in sorted(load.items())}
    return res, sum(res.values())


# The sites whose calls each took list_lock once, with cpu partials on
# (v6.1): get_partial_node's body, __unfreeze_partials (one node), and
# discard_slab for the free that emptied a slab on the partial list (it
# also counts an empty slab __unfreeze_partials gives back, under that
# call's acquisition: then the sum is high).
LOCK_SITES = ("get_partial_node", "unfreeze_partials", "discard")


def sites_list_lock(sites, messages):
    """list_lock acquisitions per message from the LOCK_SITES' counts (both
    caches), or None when one of them was not probed."""
    by_ev = {key.split(" ")[0]: by_cache for key, by_cache in (sites or {}).items()}
    if any(ev not in by_ev for ev in LOCK_SITES):
        return None
    return sum(sum(by_ev[ev].values()) for ev in LOCK_SITES) / messages


def report_lines(res, total, messages, objs, counts, sends, idle, secs, sites=None, rt=False,
                 locks=True):
    """The report.  RT: a PREEMPT_RT kernel, whose allocations all enter
    ___slab_alloc (no lockless fast path: mm/slub.c USE_LOCKLESS_FAST_PATH),
    so slow-path entries are not refills there.  LOCKS false: the lock
    functions were not probed (--no-lock-probes), no acquisition counted."""
    out = []
    if not locks:
        out.append(f"list_lock not counted (--no-lock-probes): the slab sites alone, "
                   f"{messages} messages, {sends} unix_stream_sendmsg calls counted")
    for c, v in res.items() if locks else ():
        out.append(f"{c}: {v:.4f} list_lock acquisitions per message ({counts[c]} in all, "
                   f"{objs.get(c, '?')} objects per slab)")
    if locks:
        out.append(f"total: {total:.4f} list_lock acquisitions per message ({messages} messages, "
                   f"{sends} unix_stream_sendmsg calls counted)")
    for site, by_cache in (sites or {}).items():
        out.append(f"{site} per message: " + ", ".join(
            f"{c} {n / messages:.4f}" + (f" (objects per refill {messages / n:.1f})"
                                         if site.startswith("slow") and n and not rt else "")
            for c, n in by_cache.items()))
    from_sites = None if locks else sites_list_lock(sites, messages)
    if from_sites is not None:
        out.append(f"list_lock from the sites (get_partial_node + __unfreeze_partials + "
                   f"discard_slab): {from_sites:.4f} per message, both caches")
    idle_txt = ", ".join(f"{c} {n}" for c, n in sorted(idle.items())) or "none"
    out.append(f"with no load for {secs:g} s before: {idle_txt}")
    return out


# --- tracefs --------------------------------------------------------------------

class Tracefs:
    """kprobe events in group lbcal and their hist triggers; close() removes
    them all (also after an error)."""

    def __init__(self, root):
        self.root = root
        self.triggers = []   # (event, trigger text)
        self.events = []

    def _write(self, rel, text):
        # os.open, not open(..., "a"): Python seeks to the end of a file it
        # opens for appending, and tracefs files refuse that seek (EINVAL).
        fd = os.open(os.path.join(self.root, rel), os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, (text + "\n").encode())
        finally:
            os.close(fd)

    def kprobe(self, event, func, args=""):
        try:
            self._write("kprobe_events", f"p:{GROUP}/{event} {func} {args}".rstrip())
        except OSError as e:
            raise Refused(f"kprobe on {func} refused: {e.strerror}") from e
        self.events.append(event)

    def hist(self, event, trigger):
        try:
            self._write(f"events/{GROUP}/{event}/trigger", trigger)
        except OSError as e:
            raise Refused(f"hist trigger on {event} refused ({trigger}): {e.strerror}") from e
        self.triggers.append((event, trigger))

    def read_hist(self, event):
        with open(os.path.join(self.root, f"events/{GROUP}/{event}/hist")) as f:
            return f.read()

    def drop(self, event):
        for ev, trig in [t for t in self.triggers if t[0] == event]:
            # Removing a hist trigger takes its whole text, filter included.
            self._write(f"events/{GROUP}/{ev}/trigger", "!" + trig)
            self.triggers.remove((ev, trig))
        self._write("kprobe_events", f"-:{GROUP}/{event}")
        self.events.remove(event)

    def close(self):
        for event in list(self.events):
            try:
                self.drop(event)
            except OSError as e:
                print(f"rt-calibrate: could not remove {GROUP}/{event}: {e.strerror}",
                      file=sys.stderr)


def tracefs_root():
    for p in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.exists(os.path.join(p, "kprobe_events")):
            return p
    if os.path.isdir("/sys/kernel/tracing"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
                       stderr=subprocess.DEVNULL, check=False)
        if os.path.exists("/sys/kernel/tracing/kprobe_events"):
            return "/sys/kernel/tracing"
    raise Refused("no kprobe_events in tracefs: this kernel has no CONFIG_KPROBE_EVENTS")


def kallsyms_text():
    """The kernel's text symbols (probe-able function names)."""
    names = set()
    with open("/proc/kallsyms") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tT":  # 4 columns: a module's
                names.add(parts[2])
    return names


def online_nodes():
    """The online NUMA node numbers (/sys/devices/system/node/online)."""
    try:
        with open("/sys/devices/system/node/online") as f:
            text = f.read().strip()
    except OSError:
        return [0]
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def read_int(path, default=None):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return default


def check_caches(caches):
    """Refused unless each cache has its own sysfs entry (not merged)."""
    for c in caches:
        p = os.path.join(SLAB, c)
        if not os.path.exists(p):
            raise Refused(f"no cache {c} in {SLAB} (accepted with --caches: names there)")
        if os.path.islink(p):
            raise Refused(f"{c} is merged with {os.path.basename(os.readlink(p))}: boot the "
                          "kernel with slab_nomerge (vm-check --append slab_nomerge)")


def offsets():
    """(offset of kmem_cache.name, of kmem_cache.node) from the kernel's BTF,
    after checking that list_lock is kmem_cache_node's first member."""
    try:
        with open(BTF, "rb") as f:
            blob = f.read()
    except OSError as e:
        raise Refused(f"{BTF}: {e.strerror} (a kernel with CONFIG_DEBUG_INFO_BTF is needed)")
    km = btf_member_offsets(blob, "kmem_cache")
    kn = btf_member_offsets(blob, "kmem_cache_node")
    if kn.get("list_lock") != 0:
        raise Refused(f"kmem_cache_node.list_lock is at offset {kn.get('list_lock')}, not 0")
    return km["name"], km["node"]


def hackbench_cmd(o, loops):
    cmd = [o.hackbench, "-g", str(o.groups), "-f", str(o.fds), "-s", str(o.datasize),
           "-l", str(loops)]
    cmd.append("-P" if o.process else "-T")
    if o.pipe:
        cmd.append("-p")
    return cmd


def name_counts(text):
    """{name: hitcount} from a hist keyed on a cache name."""
    return {k["name"]: n for k, n in parse_hist(text)[0] if isinstance(k.get("name"), str)}


def snapshot(t, lock_events, addr_cache, site_events):
    """The counts now: acquisitions by cache and by lock function, sends,
    and each site event's hits by cache."""
    caches, funcs = {}, {}
    for ev, fn, role in lock_events:
        got = lock_counts(t.read_hist(ev), addr_cache)
        funcs[fn] = sum(got.values())
        for c, n in got.items():
            if role == "acq":
                caches[c] = caches.get(c, 0) + n
    sends = parse_hist(t.read_hist("send"))[1] or 0
    sites = {ev: name_counts(t.read_hist(ev)) for ev in site_events}
    return {"caches": caches, "funcs": funcs, "sends": sends, "sites": sites}


def delta(a, b):
    return {k: b.get(k, 0) - a.get(k, 0) for k in set(a) | set(b)}


def set_cpu_partial(caches, saved):
    for c in caches:
        p = os.path.join(SLAB, c, "cpu_partial")
        with open(p) as f:
            saved[p] = f.read().strip()
        with open(p, "w") as f:
            f.write("0")


def probe_all(t, o, caches, candidates, name_off, node_off):
    """Find the caches' node addresses (a warm-up hackbench under the finder
    probes), then set the counting probes; returns (lock events, addr map)."""
    syms = kallsyms_text()
    find_fn = next((f for f in FIND_FUNCS if f in syms), None)
    if find_fn is None:
        raise Refused(f"none of {', '.join(FIND_FUNCS)} is a probe-able symbol")
    nodes = online_nodes()
    for i in nodes:
        t.kprobe(f"find{i}", find_fn,
                 f"name=+0(+{name_off}($arg1)):string n=+{node_off + 8 * i}($arg1):x64")
        t.hist(f"find{i}", "hist:keys=name,n:vals=hitcount")
    subprocess.run(hackbench_cmd(o, 1), check=True, stdout=subprocess.DEVNULL)
    nm, hits = node_map([t.read_hist(f"find{i}") for i in nodes])
    for i in nodes:
        t.drop(f"find{i}")
    try:
        picked = pick_caches(hits, caches[0], candidates) if candidates else list(caches)
        missing = [c for c in picked if c not in nm]
        if missing:
            raise KeyError(missing[0])
    except KeyError as e:
        raise Refused(f"the warm-up hackbench freed nothing to {e.args[0]} through {find_fn}: "
                      "not a cache this send path uses (--caches)") from e
    caches[:] = picked
    warm = {c: hits.get(c, 0) for c in [caches[0]] + candidates}
    addr_cache = {a: c for c in caches for a in nm[c]}
    filt = " || ".join(f"lock == {a:#x}" for a in sorted(addr_cache))
    events, rt = [], "rt_spin_lock" in syms
    # --no-lock-probes: the slab sites alone.  A lock function's kprobe fires
    # at every spinlock the kernel takes (the filter runs after the hit), so
    # it slows the load it measures; the sites fire only on slab slow paths.
    for fn in () if getattr(o, "no_lock_probes", False) else LOCK_FUNCS + TRYLOCK_FUNCS:
        # On PREEMPT_RT the raw lock functions are not probed: their calls at
        # a list_lock are its rt_mutex's wait_lock (lock_role), and a kprobe
        # on them, hit from every raw lock in the kernel, re-entered itself
        # and crashed a 4-vCPU guest of 6.1.0-57-rt-amd64 twice in nine
        # counts ("reenter_kprobe" BUG in _raw_spin_lock_irqsave).
        if fn in syms and (not rt or fn.startswith("rt_")):
            ev = "lk" + fn.replace("_", "")[:24]
            t.kprobe(ev, fn, "lock=$arg1:x64")
            t.hist(ev, f"hist:keys=lock:vals=hitcount if {filt}")
            events.append((ev, fn, lock_role(fn, rt)))
    t.kprobe("send", "unix_stream_sendmsg")
    t.hist("send", "hist:keys=common_pid:vals=hitcount")
    sites = {}
    for ev, fns in SITE_FUNCS:
        fn = next((f for f in fns if f in syms), None)
        if fn:
            t.kprobe(ev, fn, f"name=+0(+{name_off}($arg1)):string")
            t.hist(ev, "hist:keys=name:vals=hitcount")
            sites[ev] = fn
    return events, addr_cache, warm, sites


def host_facts():
    rel = platform.release()
    with open("/proc/cmdline") as f:
        cmdline = f.read().strip()
    return {"kernel": rel, "version": platform.version(), "cmdline": cmdline,
            "cpus_online": os.cpu_count(), "numa_nodes": len(online_nodes()),
            "preempt_rt": "PREEMPT_RT" in platform.version()}


def measure(o):
    """One measurement; returns the result dict (raises Refused)."""
    root = tracefs_root()
    if o.caches:
        caches, candidates = o.caches.split(","), []
    else:
        caches, candidates = ["skbuff_head_cache"], data_candidates(o.datasize)
    check_caches(caches + candidates)
    name_off, node_off = offsets()
    t, saved = Tracefs(root), {}
    try:
        set_cpu_partial(caches + candidates, saved)
        events, addr_cache, warm, sites = probe_all(t, o, caches, candidates, name_off, node_off)
        base = snapshot(t, events, addr_cache, sites)
        time.sleep(o.idle)
        before = snapshot(t, events, addr_cache, sites)
        r = subprocess.run(hackbench_cmd(o, o.loops), check=True, capture_output=True, text=True)
        after = snapshot(t, events, addr_cache, sites)
    finally:
        t.close()
        for p, v in saved.items():
            with open(p, "w") as f:
                f.write(v)
    load, idle = delta(before["caches"], after["caches"]), delta(base["caches"], before["caches"])
    messages = o.groups * o.fds * o.fds * o.loops
    res, total = rates(load, messages)
    objs = {c: read_int(os.path.join(SLAB, c, "objs_per_slab")) for c in caches}
    size = {c: read_int(os.path.join(SLAB, c, "object_size")) for c in caches}
    htime = next((ln for ln in r.stdout.splitlines() if ln.startswith("Time:")), "")
    return {"caches": caches, "acquisitions": {c: load.get(c, 0) for c in caches},
            "per_message": {c: res.get(c, 0.0) for c in caches}, "total_per_message": total,
            "objs_per_slab": objs, "object_size": size, "messages": messages,
            "sends_counted": after["sends"] - before["sends"],
            "idle": {c: idle.get(c, 0) for c in caches},
            "by_function": delta(before["funcs"], after["funcs"]),
            "roles": {fn: role for _ev, fn, role in events}, "warmup_slow_frees": warm,
            # From the lock functions probed, or (--no-lock-probes: none) the
            # kernel's version string ("PREEMPT_RT" in uname -v).
            "preempt_rt": (any(fn.startswith("rt_") for _ev, fn, _role in events)
                           or host_facts()["preempt_rt"]),
            "sites": {f"{ev} ({fn})": {c: after["sites"][ev].get(c, 0) - before["sites"][ev].get(c, 0)
                                        for c in caches} for ev, fn in sites.items()},
            "lock_probes": not getattr(o, "no_lock_probes", False),
            "hackbench": " ".join(hackbench_cmd(o, o.loops)),
            "hackbench_time": htime}


def write_json(path, o, result):
    doc = {"schema": "lockbench-rt-calibrate", "schema_version": 1, "host": host_facts(),
           "config": {"groups": o.groups, "fds": o.fds, "datasize": o.datasize, "loops": o.loops,
                      "mode": "process" if o.process else "threads", "pipe": o.pipe,
                      "idle_s": o.idle, "cpu_partial": 0, "caches": result["caches"],
                      "lock_probes": result.get("lock_probes", True)},
           "result": result}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
