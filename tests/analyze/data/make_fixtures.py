#!/usr/bin/env python3
"""Hand-built fixtures for the analyzer tests, with known answers.

The numbers are chosen, not measured: every stage cost below is exact, so
the tests can check the ceiling model, the bound classifier and the diff
against values computed by hand. Rerun to regenerate:
    python3 tests/analyze/data/make_fixtures.py tests/analyze/data
Layout of results.jsonl follows sweeps/include/rxray/sweep.h.
"""
import json, os, sys

HZ = 2.0e9
FRAMES = [1064, 2064, 4064, 8064]

# cycles/packet per stage, per (engine, mode); callables take the frame size
COSTS = {
    ("dpdk", "hds"): {
        "rx": {"cqe_poll": 60, "buf_alloc": 200, "sge_setup": 120, "chain": 60, "doorbell": 10, "handoff": 50},
        "app": {"hdr_read": 40, "app": 30, "free": 150},
    },
    ("dpdk", "single"): {
        "rx": {"cqe_poll": 40, "buf_alloc": 30, "sge_setup": 20, "doorbell": 5, "handoff": 25},
        "app": {"hdr_read": 40, "app": 30, "free": 40},
    },
    ("verbs", "hds"): {
        "rx": {"cqe_poll": 50, "sge_setup": 20, "doorbell": 10, "handoff": 20},
        "app": {"hdr_read": 40, "app": 30, "free": 20},
    },
    ("verbs", "single"): {  # per-byte: the app touches the whole payload
        "rx": {"cqe_poll": 45, "sge_setup": 10, "doorbell": 5, "handoff": 20},
        "app": {"hdr_read": 40, "app": lambda f: 0.05 * f, "free": 15},
    },
}
NIC = {"hdr_write": 30, "payload_write": lambda f: 0.01 * f, "cqe_write": 10}


def nic_max_mpps(frame):  # 200 Gb/s wire: frame + 20 B preamble/IFG
    return 200e9 / ((frame + 20) * 8) / 1e6


def cost(v, frame):
    return v(frame) if callable(v) else v


def thread(role, core, packets, stages, frame, idle=0):
    st, busy = {}, 0
    for name, v in stages.items():
        cpp = cost(v, frame)
        cyc = int(round(cpp * packets))
        busy += cyc
        count = max(1, packets // 32)
        st[name] = {"count": count, "packets": packets, "cycles": cyc,
                    "cycles_per_packet": cyc / packets if packets else 0,
                    "min": int(cpp), "max": int(cpp * 40), "p50": int(cpp * 30),
                    "p90": int(cpp * 34), "p99": int(cpp * 38)}
    if idle:
        st["idle"] = {"count": 10, "packets": 0, "cycles": idle, "cycles_per_packet": 0,
                      "min": 1, "max": idle, "p50": 5, "p90": 9, "p99": 10}
    return {"role": role, "core": core, "packets": packets, "busy_cycles": busy,
            "cycles_per_packet": busy / packets if packets else 0, "stages": st}


def env():
    return {"kernel": "6.1.0-fixture", "machine": "x86_64", "hostname": "fixture",
            "cpu": "Fixture CPU @ 2.00GHz", "cores_online": 2, "cores_available": 2,
            "clock_note": "tsc (invariant)", "tsc_invariant": True, "probes": "counters",
            # env.dpdk is an object whichever engine wrote the result (one type per field)
            "date": "2026-11-29T10:00:00Z", "dpdk": {"version": "22.11.5"}, "rdma_core": "44.0"}


def run(knobs, offered_mpps, rx_mpps, seconds=1.0, samples=False):
    eng, mode, frame = knobs["engine"], knobs["mode"], knobs["frame"]
    offered = int(round(offered_mpps * 1e6 * seconds))
    received = int(round(rx_mpps * 1e6 * seconds))
    c = COSTS[(eng, mode)]
    threads = [thread("nic", 0, offered, NIC, frame, idle=1000),
               thread("rx", 1, received, c["rx"], frame, idle=5000),
               thread("app", 1, received, c["app"], frame, idle=7000)]
    if samples:
        t0, data = 1000000, []
        for seq in range(3):
            t = t0 + seq * 4000
            for name, v in c["rx"].items():
                cy = int(cost(v, frame))
                data.append([t, cy, name, seq])
                t += cy
        threads[1]["samples"] = {"fields": ["start", "cycles", "stage", "seq"], "data": data}
    return {"schema": "rxray.run/1", "config": dict(knobs), "env": env(),
            "counters": {"offered": offered, "received": received,
                         "out_of_buffer": offered - received, "nombuf": 0, "app_dropped": 0,
                         "errors": 0, "conserved": True},
            "rates": {"offered_mpps": offered / seconds / 1e6, "rx_mpps": received / seconds / 1e6,
                      "loss": (offered - received) / offered if offered else 0, "seconds": seconds},
            "clock": {"source": "tsc", "hz": HZ, "lap_cost_cycles": 24.0},
            "threads": threads}


def predicted(eng, mode, frame):
    c = COSTS[(eng, mode)]
    worst = max(sum(cost(v, frame) for v in c[r].values()) for r in ("rx", "app"))
    return HZ / worst / 1e6


def key(k):
    return ",".join(f"{n}={k[n]}" for n in ("engine", "mode", "frame", "queues", "ring"))


def sweep(out):
    lines = []
    for eng in ("verbs", "dpdk"):
        for mode in ("single", "hds"):
            for frame in FRAMES:
                k = {"engine": eng, "mode": mode, "frame": frame, "queues": 1, "ring": 8192}
                pred, nic = predicted(eng, mode, frame), nic_max_mpps(frame)
                ndr = min(0.95 * pred, nic)
                top_rx = min(0.98 * pred, nic)
                gen = 0.95 * pred >= nic
                ndr_run = run(k, ndr, ndr)
                top_run = run(k, nic, top_rx)
                t1 = dict(top_run, trial={"key": key(k), "n": 1, "target_pps": 0, "status": "ok"})
                t2 = dict(ndr_run, trial={"key": key(k), "n": 2, "target_pps": int(ndr * 1e6), "status": "ok"})
                lines += [t1, t2]
                lines.append({"schema": "rxray.point/1", "key": key(k), "knobs": k, "status": "ok",
                              "reason": "", "ndr_mpps": ndr, "pdr_mpps": ndr, "ndr_loss": 0,
                              "pdr_loss": 0.005, "max_offered_mpps": nic, "nic_max_mpps": nic,
                              "generator_limited": gen, "trials": 2, "ndr_run": ndr_run,
                              "top_run": top_run})
    k = {"engine": "dpdk", "mode": "hds", "frame": 1064, "queues": 4, "ring": 8192}
    lines.append({"schema": "rxray.trial/1", "trial": {"key": key(k), "n": 1, "target_pps": 0,
                  "status": "crashed", "reason": "never ran: infeasible"}})
    lines.append({"schema": "rxray.point/1", "key": key(k), "knobs": k, "status": "infeasible",
                  "reason": "needs 9 cores, 2 available", "ndr_mpps": None, "pdr_mpps": None,
                  "ndr_loss": 0, "pdr_loss": 0.005, "max_offered_mpps": None, "nic_max_mpps": None,
                  "generator_limited": False, "trials": 0, "ndr_run": None, "top_run": None})
    os.makedirs(os.path.join(out, "sweep"), exist_ok=True)
    with open(os.path.join(out, "sweep", "results.jsonl"), "w") as f:
        for l in lines:
            f.write(json.dumps(l, separators=(",", ":")) + "\n")
    with open(os.path.join(out, "sweep", "spec.yaml"), "w") as f:
        f.write("# fixture sweep (hand-built numbers, see make_fixtures.py)\n"
                "engines: [verbs, dpdk]\nmodes: [single, hds]\nframes: [1064, 2064, 4064, 8064]\n"
                "queues: 1\nrings: 8192\nsearch:\n  pdr_loss: 0.005\n  trial_seconds: 1\n"
                "output: results/fixture\n")
    # a sweep killed mid-way: trials only, no summary line
    k = {"engine": "verbs", "mode": "hds", "frame": 1064, "queues": 1, "ring": 8192}
    part = [dict(run(k, 23.0, 19.6), trial={"key": key(k), "n": 1, "target_pps": 0, "status": "ok"}),
            dict(run(k, 15.0, 15.0), trial={"key": key(k), "n": 2, "target_pps": 15000000, "status": "ok"})]
    with open(os.path.join(out, "partial.jsonl"), "w") as f:
        for l in part:
            f.write(json.dumps(l, separators=(",", ":")) + "\n")
    # standalone runs (one with sampled laps)
    for mode in ("single", "hds"):
        k = {"engine": "dpdk", "mode": mode, "frame": 1064, "queues": 1, "ring": 8192}
        r = run(k, 3.0, 3.0, samples=(mode == "hds"))
        with open(os.path.join(out, f"run_dpdk_{mode}.json"), "w") as f:
            json.dump(r, f, indent=1)


if __name__ == "__main__":
    sweep(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
