#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""guest_checks.py - the scale checks, run INSIDE a scripts/vm-check guest
(one boot a configuration; tests/vm/test_vm.py boots it).  TAP on stdout.

    guest_checks.py --build DIR --cpus N --nodes M [--full] [--budget S]
                    [--host-ns-per-op NS]

Function at scale only: every check is about what the programs say and do
(placement, thread counts, exit status, parseable output, invariants),
never about how fast: the guest's timings mean nothing (TCG, 2 host CPUs).
The short form (the default) is what CI runs; --full adds workloads.

Time limits: the programs judge their own stalls from evidence (their
watchdogs: progress, run state and run delay); a check's own limit is only
a backstop against a hang, and it is what is left of --budget (the guest's
whole time, less the boot), not a constant: an emulated guest's pace
varies tenfold with the host's load.  The pace is measured and printed
first (--host-ns-per-op: the host's CPU ns per op of the same loop)."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from lbtap import diag, done, ok, run_cmd  # noqa: E402


def cpulist(text):
    """"0-3,8" -> [0, 1, 2, 3, 8]."""
    out = []
    for part in text.strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def node_map():
    """{cpu: node} from /sys/devices/system/node/node*/cpulist."""
    base = "/sys/devices/system/node"
    m = {}
    for d in os.listdir(base):
        if re.fullmatch(r"node\d+", d):
            for c in cpulist(open(f"{base}/{d}/cpulist").read()):
                m[c] = int(d[4:])
    return m


def affinity_of_threads(pid):
    """{tid: [cpus]} of pid's threads now (Cpus_allowed_list)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            for line in open(f"/proc/{pid}/task/{tid}/status"):
                if line.startswith("Cpus_allowed_list:"):
                    out[int(tid)] = cpulist(line.split(":", 1)[1])
        except OSError:
            pass
    return out


def probe_cpus(rec):
    """The CPUs bench's c2c probes pin threads to: the run's pair
    (config.c2c_cpus) and each pair of c2c_pairs, probed before the runs.
    A probe's partner is pinned from its creation (lib/lb_c2c.c names it
    lb-c2c only once it runs), so these CPUs are excepted, not names."""
    cpus = set((rec or {}).get("config", {}).get("c2c_cpus") or [])
    for p in (rec or {}).get("c2c_pairs") or []:
        cpus.update(p.get("cpus") or [])
    return cpus



def run_sampled(argv, timeout):
    """Run argv, sampling its threads' affinity every 50 ms: (status,
    stdout, stderr, {tid: cpus pinned to one CPU, as seen last})."""
    seen = {}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
        t0 = time.monotonic()
        while p.poll() is None:
            if time.monotonic() - t0 > timeout:
                p.kill()
                p.wait()
                return -1, "", "timed out", seen
            for tid, cpus in affinity_of_threads(p.pid).items():
                if tid != p.pid and len(cpus) == 1:
                    seen[tid] = cpus[0]
            time.sleep(0.05)
        out.seek(0)
        err.seek(0)
        return p.returncode, out.read(), err.read(), seen


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        diag(f"{path}: {e}")
        return None


class Checks:
    def __init__(self, a):
        self.a = a
        # The budget is vm-check's timeout: less the time the guest took
        # to boot (its uptime) and the ~10 s before its clock started.
        up = float(open("/proc/uptime").read().split()[0])
        self.deadline = time.monotonic() + a.budget - up - 15
        self.lb = os.path.join(a.build, "bench", "lockbench")
        self.lt = os.path.join(a.build, "torture", "locktorture")
        self.tmp = tempfile.mkdtemp(prefix="vmchecks.")
        self.slowdown = 1.0  # a guest CPU second against a host one (pace())
        self.nodes = node_map()

    def left(self, floor=30):
        """The backstop for the next command: what is left of the budget."""
        return max(floor, self.deadline - time.monotonic() - 5)

    def pace(self):
        """The guest's pace, printed: CPU ns per op of `bench -l none` with
        every vCPU busy, against the host's (a vCPU's CPU second under TCG
        on a shared host does a small part of a host CPU's second)."""
        t0 = time.monotonic()
        rc, rec, err, _ = self.bench("pace", ["-l", "none", "-t", str(self.a.cpus), "-d",
                                              "300ms"], self.left())
        runs = [r for x in (rec or {}).get("results", []) for r in x.get("runs", [])]
        ns = runs[0].get("cpu_ns_per_op") if runs else None
        took = time.monotonic() - t0
        if ns and self.a.host_ns_per_op:
            self.slowdown = max(1.0, ns / self.a.host_ns_per_op)
            diag(f"guest pace: {self.a.host_ns_per_op / ns * 100:.1f} % of a host CPU per vCPU "
                 f"CPU second ({ns:.1f} vs {self.a.host_ns_per_op:.1f} ns per op of bench -l none "
                 f"-t {self.a.cpus}, all vCPUs busy); the 300 ms run took {took:.1f} s")
        else:
            diag(f"guest pace: {ns} ns per op of bench -l none -t {self.a.cpus} (no host figure); "
                 f"the 300 ms run took {took:.1f} s")

    def path(self, name):
        return os.path.join(self.tmp, name)

    def bench(self, name, args, timeout=120, sampled=False):
        """lockbench bench ARGS --json: (status, record or None, stderr, seen)."""
        j = self.path(name + ".json")
        argv = [self.lb, "bench", "-q", "--json", j] + args
        if sampled:
            rc, out, err, seen = run_sampled(argv, timeout)
        else:
            rc, out, err = run_cmd(argv, timeout)
            seen = {}
        if rc != 0:
            diag(f"{' '.join(argv)}: exit {rc}")
            diag(out + err, last=10)
        return rc, (load_json(j) if rc == 0 else None), err, seen

    # 1. What the machine is, as lockbench says and as the guest is.
    def topology(self):
        a = self.a
        ok(os.cpu_count() == a.cpus and len(set(self.nodes.values())) == a.nodes,
           f"the guest has {a.cpus} CPUs on {a.nodes} nodes (sees {os.cpu_count()} CPUs, "
           f"{len(set(self.nodes.values()))} nodes)")
        rc, out, err = run_cmd([self.lb, "list", "--json"], 60)
        try:
            reg = json.loads(out)
        except ValueError:
            reg = None
        names = str(reg)
        ok(rc == 0 and reg and "qspinlock" in names and "mutex" in names,
           f"lockbench list --json parses and names the locks (exit {rc})")
        rc, rec, err, _ = self.bench("facts", ["-l", "none", "-t", "1", "-d", "10ms"], 60)
        host = (rec or {}).get("host", {})
        ok(host.get("cpus_online") == a.cpus and host.get("cpus_allowed") == a.cpus,
           f"host facts: cpus_online {host.get('cpus_online')}, cpus_allowed "
           f"{host.get('cpus_allowed')} (want {a.cpus})")
        ok(host.get("numa_nodes") == a.nodes,
           f"host facts: numa_nodes {host.get('numa_nodes')} (want {a.nodes})")
        facts = {int(c): int(nd) for nd, cl in (host.get("numa_cpus") or {}).items()
                 for c in cpulist(cl)}
        ok(facts == self.nodes and len(facts) == a.cpus,
           f"host facts: numa_cpus {host.get('numa_cpus')} is the guest's CPU-to-node map")
        pair = (rec or {}).get("config", {}).get("c2c_cpus")
        ok(isinstance(pair, list) and len(pair) == 2 and pair[0] != pair[1]
           and all(c in self.nodes for c in pair),
           f"c2c probe pair {pair}: two distinct online CPUs")
        self.c2c_pairs(rec)

    # The round trip by CPU pair (lib/lb_c2c_pairs.h): the first CPU and its
    # neighbour on its node, then the first CPU of each other node, each pair
    # on the nodes the guest says, with a figure or null (never ran at once).
    def c2c_pairs(self, rec):
        pairs = (rec or {}).get("c2c_pairs")
        nodes = self.nodes
        by = self.one_cpu_per_node()
        c0 = min(nodes)
        home = nodes[c0]
        want = ([[c0, by[home][1]]] if len(by[home]) > 1 else []) + \
            [[c0, cpus[0]] for nd, cpus in enumerate(by) if nd != home][:9 - (len(by[home]) > 1)]
        got = [p.get("cpus") for p in pairs or []]
        ok(got == want, f"c2c_pairs: the neighbour, then one CPU on each other node: {got} "
           f"(want {want})")
        right = all(p.get("nodes") == [nodes.get(a), nodes.get(b)]
                    for p, (a, b) in zip(pairs or [], got))
        figures = [p.get("round_trip_ns") for p in pairs or []]
        ok(right and all(f is None or f > 0 for f in figures),
           f"c2c_pairs: each pair's nodes are the guest's, round trips {figures} ns")
        diag(f"c2c by pair: {[(p.get('cpus'), p.get('nodes'), p.get('round_trip_ns')) for p in pairs or []]}")

    # 2. Every pinning policy places threads where it claims.
    def pinning(self):
        a, nodes = self.a, self.nodes
        per = a.cpus // a.nodes
        n = a.cpus
        cases = [
            ("compact", n), ("scatter", n), ("scatter", a.nodes),
            ("list", 4), ("none", 4),
        ]
        for policy, t in cases:
            pin = policy
            want_list = None
            if policy == "list":
                # The last CPU of each node, last node first: an order
                # neither compact nor scatter gives.
                want_list = [cpus[-1] for cpus in reversed(self.one_cpu_per_node())][:4]
                pin = ",".join(map(str, want_list))
            rc, rec, err, seen = self.bench(
                f"pin-{policy}-{t}",
                ["-l", "mutex", "-t", str(t), "-d", "1s", "--pin", pin], 180, sampled=True)
            threads, ctx_nodes, lock_node = [], [], None
            for r in (rec or {}).get("results", []):
                for run in r.get("runs", []):
                    threads = [th.get("cpu") for th in run.get("per_thread", [])]
                    ctx_nodes = [th.get("ctx_node") for th in run.get("per_thread", [])]
                    lock_node = run.get("lock_node")
            planned = [c for c in threads if c is not None and c >= 0]
            pnodes = [nodes.get(c) for c in planned]
            label = f"--pin {pin} -t {t}"
            if rc != 0 or len(threads) != t:
                ok(False, f"{label}: exit {rc}, {len(threads)} per-thread records (want {t})")
                continue
            if policy == "none":
                ok(not planned, f"{label}: no thread pinned in the record ({threads})")
                ok(all(c in probe_cpus(rec) for c in seen.values()),
                   f"{label}: no worker seen pinned (saw {sorted(set(seen.values()))}; "
                   f"the c2c probes' CPUs excepted)")
                continue
            ok(len(planned) == t and len(set(planned)) == t,
               f"{label}: {t} threads on {t} distinct CPUs ({planned})")
            if policy == "compact":
                ok(pnodes == sorted(pnodes) and all(pnodes.count(x) == per for x in set(pnodes)),
                   f"{label}: fills node after node, {per} a node (nodes {pnodes})")
            elif policy == "scatter":
                rounds = [pnodes[i:i + a.nodes] for i in range(0, t, a.nodes)]
                ok(all(len(set(r)) == len(r) for r in rounds) and
                   len(set(rounds[0])) == min(t, a.nodes),
                   f"{label}: round-robin over the nodes, each round on distinct nodes "
                   f"(nodes {pnodes})")
            else:
                # A CPU list is a set (cpu_set_t): thread i gets its i-th CPU
                # in ascending order, not in the order written.
                ok(planned == sorted(want_list),
                   f"{label}: thread i on the list's i-th CPU, ascending ({planned})")
            # Memory: the lock on the first thread's node, each thread's
            # lock context on its own CPU's node (get_mempolicy in the run).
            ok(lock_node == pnodes[0],
               f"{label}: the lock's page is on node {lock_node} (want {pnodes[0]}, thread 0's)")
            wrong = [(i, c, nodes.get(c), n) for i, (c, n) in enumerate(zip(planned, ctx_nodes))
                     if n != nodes.get(c)]
            ok(len(ctx_nodes) == t and not wrong,
               f"{label}: each thread's lock context is on its CPU's node "
               f"({'all ' + str(t) if not wrong else 'wrong (thread, cpu, want, got): ' + str(wrong[:6])})")
            extra = probe_cpus(rec)
            ok(set(planned) <= set(seen.values()) <= set(planned) | extra,
               f"{label}: the threads' affinity as /proc shows it is the plan "
               f"(seen {sorted(set(seen.values()))})")

    def one_cpu_per_node(self):
        by = {}
        for c, nd in sorted(self.nodes.items()):
            by.setdefault(nd, []).append(c)
        return [by[k] for k in sorted(by)]

    # 3. bench ladders to 4 x CPUs (its default thread list: 1, N, 4N).
    def ladder(self, locks):
        a = self.a
        rc, rec, err, _ = self.bench("ladder", ["-l", ",".join(locks), "-d", "200ms"], 300)
        got = {}
        bad = []
        for r in (rec or {}).get("results", []):
            got.setdefault(r["lock"], []).append(r["threads"])
            for run in r.get("runs", []):
                pt = run.get("per_thread", [])
                if run.get("lost_updates") or run.get("torn_reads") or len(pt) != r["threads"] \
                        or sum(t["ops"] for t in pt) != run.get("total_ops"):
                    bad.append(f"{r['lock']}@{r['threads']}")
        want = [1, a.cpus, 4 * a.cpus]
        ok(rc == 0 and all(sorted(got.get(lk, [])) == want for lk in locks),
           f"bench -l {','.join(locks)}: the default ladder {want} ran ({got})")
        ok(rc == 0 and not bad,
           f"bench ladder: no lost update or torn read, per-thread ops add up ({bad or 'all'})")

    # 4. locktorture: SUCCESS for each lock, at its default thread counts.
    def torture(self, locks, duration):
        for lock in locks:
            t0 = time.monotonic()
            rc, out, err = run_cmd([self.lt, "--type", lock, "--duration", str(duration),
                                    "--stat_interval", "0"], self.left())
            for line in out.splitlines():
                if "watchdog:" in line:
                    diag(line[:400])
            end = [line for line in out.splitlines() if "End of test" in line]
            good = rc == 0 and end and "SUCCESS" in end[-1]
            if not good:
                diag(out + err, last=15)
            diag(f"locktorture --type {lock}: {time.monotonic() - t0:.1f} s")
            ok(good, f"locktorture --type {lock} --duration {duration}: exit {rc}, "
               f"{'SUCCESS' if good else 'no SUCCESS'}")

    # 6. rt: the parts that scale with the machine, at a load a guest can
    # pass.  Its defaults pass 400,000 messages (10 groups x 20 senders x
    # 20 receivers x 100 loops) whatever the CPU count; in a TCG guest every
    # contended hand-over of its raw (spinning, SCHED_FIFO) list_lock waits
    # for the host to run the next waiter's vCPU, so that work is hours here
    # (doc/vm-check.md, "rt in the guest").  One loop keeps every part that
    # grows with the CPUs: one RT thread a CPU (up to 64), a cpu slab and a
    # raw-section mark a CPU, the slabs' geometry for N CPUs, the 400 tasks.
    def rt(self):
        wd = int(min(3600, max(5, 5 * self.slowdown)))
        # Above 16 CPUs two hackbench groups instead of ten (80 load
        # threads, 800 messages): the 64 RT threads, cpu slabs and marks
        # stay.  With ten groups' 400 threads a 64-vCPU guest under host
        # load hung in 2 of 3 boots, its kernel in soft lockups for
        # minutes: the emulator's vCPUs starved, not a lockbench state
        # (doc/vm-check.md, "64 CPUs, 8 nodes").
        groups = ["-g", "2"] if self.a.cpus > 16 else []
        rec, out, err = self.workload("rt", ["rt", "-r", "1", "-q", "-l", "1"] + groups +
                                      ["--watchdog", f"{wd}s", "--run-timeout",
                                       f"{int(min(3600, self.left()))}s"])
        # The mechanism's gauges (doc/rt.md), and the watchdog's words.
        gauge, also = ("# list_lock", "# raw sections", "# allocator:"), \
            ("seconds time elapsed", "WATCHDOG", "held by", "in state")
        in_gauge = False
        for line in (out + err).splitlines():
            # A gauge's wrapped lines go with it ("#   ...").
            in_gauge = line.startswith(gauge) or (in_gauge and line.startswith("#   "))
            if in_gauge or any(k in line for k in also):
                diag(line[:300])
        self.kernel_lockups()
        res = ((rec or {}).get("results") or [{}])[0]
        run = (res.get("runs") or [{}])[0]
        want = min(self.a.cpus, 64)
        cpus = sorted(t.get("cpu") for t in res.get("rt_threads", []))
        ok(res.get("params", {}).get("rt_threads") == want and cpus == list(range(want)),
           f"rt: one RT thread a CPU ({len(cpus)} threads on CPUs "
           f"{cpus[:3]}..{cpus[-1:]}; want {want})")
        ok(run.get("list_lock_acquires", 0) > 0 and
           run.get("raw_emulation_ns_per_section") is not None,
           f"rt: list_lock taken {run.get('list_lock_acquires')} times in raw sections "
           f"(emulation {run.get('raw_emulation_ns_per_section')} ns a section alone)")

    def kernel_lockups(self):
        """The guest kernel's soft lockup and stall reports so far, with
        where each CPU was (the console's `quiet` drops the backtraces):
        evidence of where an emulated CPU spun (doc/vm-check.md)."""
        rc, out, err = run_cmd(["dmesg"], 30)
        keys = ("soft lockup", "RIP: 00", "rcu_sched self-detected", "rcu: INFO")
        lines = [x for x in out.splitlines() if any(k in x for k in keys)]
        for line in lines[:24]:
            diag("kernel: " + line[:200])
        if len(lines) > 24:
            diag(f"kernel: ... {len(lines) - 24} more such lines")

    # 5. The other workloads run, exit 0 and write parseable JSON.
    def workload(self, name, args, timeout=None):
        """Run `lockbench ARGS --json`: exit 0, the JSON parses and says
        this guest's CPU count.  (The record or None, stdout, stderr.)"""
        j = self.path(name + ".json")
        argv = [self.lb] + args + ["--json", j]
        t0 = time.monotonic()
        rc, out, err = run_cmd(argv, timeout or self.left())
        diag(f"lockbench {args[0]}: {time.monotonic() - t0:.1f} s")
        rec = load_json(j) if rc == 0 else None
        if rc != 0:
            diag(out + err, last=10)
        for line in (out + err).splitlines():
            if "watchdog" in line:
                diag(line[:400])
        cpus = (rec or {}).get("host", {}).get("cpus_online")
        ok(rc == 0 and isinstance(rec, dict) and cpus == self.a.cpus,
           f"lockbench {' '.join(args)}: exit {rc}, JSON parses, says {cpus} CPUs "
           f"(want {self.a.cpus})")
        return rec, out, err


def preload(c):
    """The preload on a real program: Debian's xz compressing with one
    thread a CPU (pthread mutexes and condition variables) on our mutex;
    exit 0, the output decompresses to the input, the preload's record
    parses and counts acquisitions of the mutexes it took over."""
    so = os.path.join(c.a.build, "preload", "liblockbench-preload.so")
    src, dst, rec = c.path("in.txt"), c.path("out.xz"), c.path("preload.json")
    with open(src, "w") as f:
        for i in range(60000):
            f.write(f"line {i} {i * 2654435761 % 4294967296:x}\n")
    env = dict(os.environ, LD_PRELOAD=so, LOCKBENCH_LOCK="mutex", LOCKBENCH_STATS=rec)
    t0 = time.monotonic()
    with open(dst, "wb") as out:
        p = subprocess.run(["xz", "-T", str(c.a.cpus), "-1", "-c", src], stdout=out,
                           stderr=subprocess.PIPE, env=env, timeout=c.left())
    back = subprocess.run(["xz", "-d", "-c", dst], capture_output=True, timeout=c.left())
    same = back.returncode == 0 and back.stdout == open(src, "rb").read()
    tot = (load_json(rec) or {}).get("totals", {})
    diag(f"xz -T {c.a.cpus} under the preload: {time.monotonic() - t0:.1f} s, {tot}")
    ok(p.returncode == 0 and same and tot.get("mutexes_taken_over", 0) > 0
       and tot.get("acquisitions", 0) > 0,
       f"preload: xz -T {c.a.cpus} on lock mutex: exit {p.returncode}, output "
       f"{'decompresses to the input' if same else 'WRONG'}, "
       f"{tot.get('mutexes_taken_over')} mutexes taken over, {tot.get('acquisitions')} acquisitions")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--cpus", type=int, required=True)
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--budget", type=float, default=600)
    ap.add_argument("--host-ns-per-op", type=float, default=0)
    ap.add_argument("--only", default="",
                    help="comma list of checks to run (the pace always runs): " + ",".join(STEPS))
    a = ap.parse_args()
    only = [x for x in a.only.split(",") if x]
    bad = [x for x in only if x not in STEPS]
    if bad:
        print(f"guest_checks.py: --only: unknown check '{bad[0]}' (accepted: {','.join(STEPS)})",
              file=sys.stderr)
        sys.exit(2)
    c = Checks(a)
    t0 = time.monotonic()
    diag(f"{time.monotonic() - t0:6.1f} s: pace")
    c.pace()
    for name in only or STEPS:
        if name in ("aim7", "rt") and not a.full and not only:
            continue  # the long form's
        diag(f"{time.monotonic() - t0:6.1f} s: {name}")
        STEPS[name](c, a.full)
    diag(f"{time.monotonic() - t0:6.1f} s: end")
    done()


def preload_step(c, full):
    if os.path.exists("/usr/bin/xz"):
        preload(c)
    else:
        ok(True, "preload: # SKIP xz not installed")


def workloads_step(c, full):
    c.workload("ab", ["ab", "mutex", "pthread-mutex", "-d", "1s", "-q"])
    c.workload("slab", ["slab", "-r", "1", "-n", "20000", "--ops", "5000", "-q"])


def aim7_args(cpus):
    """aim7 at 100 users.  Up to 16 CPUs: completion mode, each child's job
    list sized from a calibration to make a 1-s point.  Above 16: re-aim's
    fixed window (aim7's default mode), each child's alarm 1 s after its
    start: the calibration (16 children) does not predict 100 children on
    64 vCPUs of a TCG guest, whose sized point took 616 s here; the window
    bounds the point whatever the guest's pace (doc/vm-check.md, "64 CPUs,
    8 nodes").  Both run 100 children under the same watchdog."""
    if cpus > 16:
        return ["aim7", "-u", "100", "-w", "1s", "-q"]
    return ["aim7", "-u", "100", "-t", "1s", "-q"]


# The checks in their order.  Sleeping or parking locks only in the ladder:
# FIFO spinlocks (ticket, qspinlock) at 4 x CPUs hand over a few times a
# second in this guest (doc/vm-check.md).  aim7 and rt: the long form only.
STEPS = {
    "topology": lambda c, full: c.topology(),
    "pinning": lambda c, full: c.pinning(),
    "ladder": lambda c, full: c.ladder(["mutex", "qspinlock-pv", "pthread-mutex", "tas"]
                                       if full else ["mutex"]),
    "locktorture": lambda c, full: c.torture(["mutex", "qspinlock-pv", "pthread-mutex", "rtmutex",
                                              "qrwlock"] if full else ["mutex"], 5 if full else 2),
    "preload": preload_step,
    "workloads": workloads_step,
    "aim7": lambda c, full: c.workload("aim7", aim7_args(c.a.cpus)),
    # rt's own limits are wall-clock ones a user sets for a real machine
    # (--watchdog 5 s, --run-timeout 60 s); here they are sized from the
    # guest's measured pace (Checks.rt).
    "rt": lambda c, full: c.rt(),
}


if __name__ == "__main__":
    main()
