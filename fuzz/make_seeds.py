#!/usr/bin/env python3
"""Write fuzz/seeds/<target>/ from the tests' own inputs (tests/*/data,
the spec files, the spec strings of tests/sweep/spec_test.c) plus a few
hand-written ones for formats no test file holds (folded stacks,
telemetry replies, argv). Rerun after the tests' inputs change."""
import json, os, re, shutil, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
seeds = os.path.join(root, "fuzz", "seeds")
MAX = 16384  # bigger seeds only slow the fuzzer down


def put(target, name, data):
    d = os.path.join(seeds, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data[:MAX])


def read(rel):
    with open(os.path.join(root, rel), "rb") as f:
        return f.read()


shutil.rmtree(seeds, ignore_errors=True)
# spec: the shipped specs, the fixture's spec, every YAML string of spec_test.c
for rel in ["sweeps/default.yaml", "sweeps/queues.yaml", "tests/analyze/data/sweep/spec.yaml"]:
    put("spec", rel.replace("/", "_"), read(rel))
src = read("tests/sweep/spec_test.c").decode()
for i, m in enumerate(re.finditer(r'\{"((?:[^"\\]|\\.)*\\n(?:[^"\\]|\\.)*)",', src)):
    put("spec", "spec_test_%02d.yaml" % i, bytes(m.group(1), "utf-8").decode("unicode_escape"))

# result: the fixtures' run results, and single lines of the JSONL fixtures
runs = ["tests/analyze/data/run_dpdk_hds.json", "tests/analyze/data/run_dpdk_single.json"]
for rel in runs:
    put("result", os.path.basename(rel), read(rel))
for i, line in enumerate(read("tests/analyze/data/partial.jsonl").splitlines()[:4]):
    put("result", "partial_line%d.json" % i, line)

# set: first byte 0 = .jsonl, 1 = .json (see fuzz_set.c)
put("set", "partial.jsonl", b"\0" + read("tests/analyze/data/partial.jsonl"))
sweep = read("tests/analyze/data/sweep/results.jsonl").splitlines(keepends=True)
small = b"".join(l for l in sweep if len(l) < 3000)[:MAX - 1]
put("set", "sweep_small.jsonl", b"\0" + small[: small.rfind(b"\n") + 1])
for rel in runs:
    put("set", os.path.basename(rel), b"\1" + read(rel))

# forms (fuzz_forms.c, the same first byte): the set's seeds, and a point
# whose trials the loader once read two ways: an unpaced trial that
# passed, a search trial and the same as a calibration trial, its summary
for name in sorted(os.listdir(os.path.join(seeds, "set"))):
    with open(os.path.join(seeds, "set", name), "rb") as f:
        put("forms", name, f.read())
cal = json.loads(sweep[4])
cal["trial"]["n"] = 3
cal["trial"]["purpose"] = "calibration"
put("forms", "point_calib.jsonl", b"\0" + b"".join(
    [sweep[3], sweep[4], json.dumps(cal, separators=(",", ":")).encode() + b"\n", sweep[5]]))

# folded stacks
put("folded", "basic.folded", "main;rx_burst;cqe_poll 120\nmain;rx_burst;buf_alloc 40\nmain;app 7\n")
put("folded", "comments.folded", "# comment\n\nworker#0;free 3.5\nworker#1;free 0.25\n")
put("folded", "deep.folded", ";".join("f%d" % i for i in range(60)) + " 1\n")
put("folded", "utf8.folded", "m\u00e4in;\u6f22\u5b57;<x&y> 2\n")

# telemetry: replies in the order rxb_tele_snapshot asks, NUL-separated
rep = [{"/ethdev/list": [0, 1]},
       {"/ethdev/stats": {"ipackets": 1000, "imissed": 0, "ierrors": 1, "rx_nombuf": 2}},
       {"/ethdev/xstats": {"rx_missed_errors": 5}},
       {"/ethdev/info": {"name": "net_null0", "nb_rx_queues": 1, "rx_mbuf_size_min": 2048}},
       {"/ethdev/stats": {"ipackets": 7, "imissed": 3}},
       {"/ethdev/info": {"name": "0000:3b:00.0"}},
       {"/mempool/list": ["mb_pool_0", "hdr_pool"]},
       {"/mempool/info": {"name": "mb_pool_0", "size": 8192, "cache_size": 256,
                          "elt_size": 2304, "header_size": 64, "populated_size": 8192}},
       {"/mempool/info": None}]
put("telemetry", "snapshot", b"\0".join(json.dumps(r).encode() for r in rep))
put("telemetry", "empty_lists", b"\0".join(json.dumps(r).encode() for r in
                                           [{"/ethdev/list": []}, {"/mempool/list": []}]))
put("telemetry", "not_json", b"{\"/ethdev/list\": [0\0garbage")

# options: argv pieces separated by NUL
for i, argv in enumerate([
        ["--engine", "dpdk", "--mode", "hds", "--frame", "1064", "--seconds", "2"],
        ["--engine", "verbs", "--queues", "4", "--ring", "8192", "--rate", "10M", "-o", "x.json"],
        ["--mempool-cache", "0", "--free", "mixed", "--app", "non-eal", "--quiet"],
        ["--inject", "buf_alloc=100", "--cores", "0-3,6", "--allow-oversubscribe"],
        ["--frame=9000", "-q", "--help"]]):
    put("options", "argv%d" % i, b"\0".join(a.encode() for a in argv))
print("seeds:", {t: len(os.listdir(os.path.join(seeds, t))) for t in sorted(os.listdir(seeds))})
