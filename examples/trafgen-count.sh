#!/bin/sh
# What trafgen sent, from its summary in OUTPUT (the start command's
# output, rxray's {output}), as the `generator:` block's count prints it:
# {"sent": N, "seconds": S} (S: trafgen's own send time), or N alone.
#   trafgen-count.sh OUTPUT
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTPUT" >&2; exit 2; }
# trafgen starts its summary lines with a carriage return
n=$(tr '\r' '\n' <"$1" | sed -n 's/^ *\([0-9][0-9]*\) packets outgoing.*/\1/p' | tail -n 1)
[ -n "$n" ] || { echo "$1: no 'packets outgoing' line (did trafgen run?)" >&2; exit 1; }
t=$(tr '\r' '\n' <"$1" | sed -n 's/^ *\([0-9][0-9]*\) sec, \([0-9][0-9]*\) usec on CPU.*/\1 \2/p' |
  tail -n 1)
if [ -n "$t" ]; then
  set -- $t
  if [ "$1" -gt 0 ] || [ "$2" -gt 0 ]; then
    printf '{"sent": %s, "seconds": %s.%06d}\n' "$n" "$1" "$2"
    exit 0
  fi
fi
echo "$n"
