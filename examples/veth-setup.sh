#!/bin/sh
# A veth pair for rxray's real-port tests and examples: one end (RX) in
# this namespace for the dpdk engine's net_af_packet port, the other (TX)
# in network namespace NS for the generator. IPv6 is off on both ends
# before they come up, and neither has an address, so the kernel sends
# nothing of its own (no neighbour discovery, no ARP): every frame on the
# pair is the generator's.
#   examples/veth-setup.sh up   [NS RX TX]   (root)
#   examples/veth-setup.sh down [NS RX TX]
set -eu
cmd=${1:-}
ns=${2:-rxray-gen}
rx=${3:-rxray-rx0}
tx=${4:-rxray-tx0}
noipv6() { # [netns-exec prefix...] iface
  iface=$1
  shift
  if [ -e /proc/sys/net/ipv6 ]; then
    "$@" sysctl -qw "net.ipv6.conf.$iface.disable_ipv6=1"
  fi
}
case "$cmd" in
up)
  ip netns add "$ns"
  ip link add "$rx" type veth peer name "$tx"
  ip link set "$tx" netns "$ns"
  noipv6 "$rx"
  noipv6 "$tx" ip netns exec "$ns"
  ip link set "$rx" up
  ip -n "$ns" link set "$tx" up
  ;;
down)
  ip link del "$rx" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  ;;
*)
  echo "usage: $0 up|down [netns rx-iface tx-iface]" >&2
  exit 2
  ;;
esac
