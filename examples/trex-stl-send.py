#!/usr/bin/env python3
"""One rxray trial's traffic from TRex, for a `generator:` block's start
command (examples/trex-connectx.yaml, docs/generators.md).

Sends UDP frames of --frame bytes at --pps for --seconds from one TRex
port through TRex's stateless (STL) Python client, then prints what the
port sent, from TRex's own counters, as the last line of its output:
    {"sent": N, "seconds": S}
The source port walks over --flows values, so a receiver with several
queues sees several flows (RSS). Needs trex_stl_lib on PYTHONPATH (the
TRex package's automation/trex_control_plane/interactive folder) and a
running TRex server (t-rex-64 -i). Not run in rxray's tests.
"""
import argparse
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True, help="TRex port that sends")
    ap.add_argument("--pps", type=float, required=True)
    ap.add_argument("--frame", type=int, required=True, help="bytes with the FCS")
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--flows", type=int, default=1)
    a = ap.parse_args()

    from trex_stl_lib.api import (IP, UDP, Ether, STLClient, STLPktBuilder,
                                  STLScVmRaw, STLStream, STLTXCont,
                                  STLVmFixIpv4, STLVmFlowVar, STLVmWrFlowVar)

    base = Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1025, dport=4791)
    pad = max(0, a.frame - 4 - len(base))  # TRex adds the 4-byte FCS
    pkt = base / (b"\x55" * pad)
    vm = STLScVmRaw([
        STLVmFlowVar(name="sport", min_value=1025, max_value=1025 + max(a.flows, 1) - 1,
                     size=2, op="inc"),
        STLVmWrFlowVar(fv_name="sport", pkt_offset="UDP.sport"),
        STLVmFixIpv4(offset="IP"),
    ])
    c = STLClient(server=a.server)
    c.connect()
    try:
        c.reset(ports=[a.port])
        c.add_streams(STLStream(packet=STLPktBuilder(pkt=pkt, vm=vm), mode=STLTXCont(pps=a.pps)),
                      ports=[a.port])
        c.clear_stats(ports=[a.port])
        t0 = time.monotonic()
        c.start(ports=[a.port], duration=a.seconds)
        c.wait_on_traffic(ports=[a.port])
        took = time.monotonic() - t0
        sent = c.get_stats(ports=[a.port])[a.port]["opackets"]
    finally:
        c.disconnect()
    # TRex paces on its own clock: the duration asked is its sending time
    print(json.dumps({"sent": int(sent), "seconds": a.seconds, "wall_seconds": took}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
