#!/bin/sh
# One trial's traffic for rxray's `generator:` block: PACKETS frames of
# FRAME bytes (Ethernet header included, ethertype 0x88b5) from IFACE in
# network namespace NS, paced at RATE_BPS bit/s by a token bucket on
# IFACE (trafgen's own -b meters per second: it sends each second's quota
# at full speed, then waits), trafgen pinned to CPU. Exits when all are
# sent; trafgen's summary (what it sent, how long) goes to stdout.
#   trafgen-send.sh NS IFACE RATE_BPS PACKETS FRAME [CPU]
set -eu
[ $# -ge 5 ] || { echo "usage: $0 NS IFACE RATE_BPS PACKETS FRAME [CPU]" >&2; exit 2; }
ns=$1 iface=$2 bps=$3 packets=$4 frame=$5 cpu=${6:-0}
[ "$packets" -ge 1 ] || packets=1 # trafgen's -n 0 means: forever
pay=$((frame - 14))
# bucket and queue of 2 ms at the rate (two full frames at least): the
# wire follows the rate through a VM's timer jitter, and trafgen's own
# send time is the traffic's time within those 2 ms
burst=$((bps / 8 / 500))
[ "$burst" -ge 3028 ] || burst=3028
ip netns exec "$ns" tc qdisc replace dev "$iface" root tbf rate "${bps}bit" burst "$burst" \
  limit "$burst"
exec ip netns exec "$ns" taskset -c "$cpu" trafgen --dev "$iface" --qdisc-path --gap 0ns \
  --num "$packets" --cpus 1 --no-sock-mem --notouch-irq \
  "{ 0x02,0x00,0x00,0x00,0x00,0x01, 0x02,0x00,0x00,0x00,0x00,0x02, c16(0x88b5), fill(0x55, $pay) }"
