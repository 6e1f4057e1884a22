#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""guest_checks.py - the scale checks, run INSIDE a scripts/vm-check guest
(one boot a configuration; tests/vm/test_vm.py boots it).  TAP on stdout.

    guest_checks.py --build DIR --cpus N --nodes M [--full]

Function at scale only: every check is about what the programs say and do
(placement, thread counts, exit status, parseable output, invariants),
never about how fast: the guest's timings mean nothing (TCG, 2 host CPUs).
The short form (the default) is what CI runs; --full adds workloads."""
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
        self.lb = os.path.join(a.build, "bench", "lockbench")
        self.lt = os.path.join(a.build, "torture", "locktorture")
        self.tmp = tempfile.mkdtemp(prefix="vmchecks.")
        self.nodes = node_map()

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
            threads = []
            for r in (rec or {}).get("results", []):
                for run in r.get("runs", []):
                    threads = [th.get("cpu") for th in run.get("per_thread", [])]
            planned = [c for c in threads if c is not None and c >= 0]
            pnodes = [nodes.get(c) for c in planned]
            label = f"--pin {pin} -t {t}"
            if rc != 0 or len(threads) != t:
                ok(False, f"{label}: exit {rc}, {len(threads)} per-thread records (want {t})")
                continue
            if policy == "none":
                ok(not planned, f"{label}: no thread pinned in the record ({threads})")
                ok(all(c in (rec["config"].get("c2c_cpus") or []) for c in seen.values()),
                   f"{label}: no worker seen pinned (saw {sorted(set(seen.values()))}; "
                   f"c2c probe pair excepted)")
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
            extra = set(rec["config"].get("c2c_cpus") or [])
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
            rc, out, err = run_cmd([self.lt, "--type", lock, "--duration", str(duration),
                                    "--stat_interval", "0"], 60 + 10 * duration)
            end = [line for line in out.splitlines() if "End of test" in line]
            good = rc == 0 and end and "SUCCESS" in end[-1]
            if not good:
                diag(out + err, last=15)
            ok(good, f"locktorture --type {lock} --duration {duration}: exit {rc}, "
               f"{'SUCCESS' if good else 'no SUCCESS'}")

    # 5. The other workloads run, exit 0 and write parseable JSON.
    def workload(self, name, args, timeout=300):
        j = self.path(name + ".json")
        argv = [self.lb] + args + ["--json", j]
        rc, out, err = run_cmd(argv, timeout)
        rec = load_json(j) if rc == 0 else None
        if rc != 0:
            diag(out + err, last=10)
        cpus = (rec or {}).get("host", {}).get("cpus_online")
        ok(rc == 0 and isinstance(rec, dict) and cpus == self.a.cpus,
           f"lockbench {' '.join(args)}: exit {rc}, JSON parses, says {self.a.cpus} CPUs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--cpus", type=int, required=True)
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--full", action="store_true")
    a = ap.parse_args()
    c = Checks(a)
    t0 = time.monotonic()
    step = lambda what: diag(f"{time.monotonic() - t0:6.1f} s: {what}")  # noqa: E731
    step("topology")
    c.topology()
    step("pinning")
    c.pinning()
    step("ladder")
    # Sleeping or parking locks only: FIFO spinlocks (ticket, qspinlock) at
    # 4 x CPUs hand over a few times a second in this guest (doc/vm-check.md).
    c.ladder(["mutex", "qspinlock-pv", "pthread-mutex", "tas"] if a.full else ["mutex"])
    step("locktorture")
    c.torture(["mutex", "qspinlock-pv", "pthread-mutex", "rtmutex", "qrwlock"] if a.full
              else ["mutex"], 5 if a.full else 2)
    step("workloads")
    c.workload("ab", ["ab", "mutex", "pthread-mutex", "-d", "1s", "-q"])
    c.workload("slab", ["slab", "-r", "1", "-n", "20000", "--ops", "5000", "-q"])
    if a.full:
        c.workload("aim7", ["aim7", "-u", "100", "-t", "1s", "-q"])
        c.workload("rt", ["rt", "-r", "1", "-q"])
    step("end")
    done()


if __name__ == "__main__":
    main()
