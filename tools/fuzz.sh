#!/usr/bin/env bash
# Fuzz one of rxray's parsers with libFuzzer (clang, ASan + UBSan).
#   tools/fuzz.sh TARGET SECONDS [RUNS]   fuzz TARGET for SECONDS (and/or RUNS execs)
#   tools/fuzz.sh all SECONDS             every target, one after another
#   tools/fuzz.sh list                    the targets
#   tools/fuzz.sh build                   only build them (e.g. before parallel runs)
# Targets: spec result set folded telemetry options (fuzz/fuzz_<target>.c).
# Builds into build-fuzz/ (CC=clang, -DRXRAY_FUZZ=ON). Seeds: fuzz/seeds/<target>
# (read-only) and fuzz/regress/<target> (every crash found so far); the
# growing corpus lives in build-fuzz/corpus/<target>, a crash's input in
# build-fuzz/artifacts/<target>/. Exit 0 when no crash, 1 on a crash or
# timeout (the input is named), 2 on bad usage. Prints execs and exec/s.
# FUZZ_JOBS=N overrides the build's parallelism; FUZZ_ARGS adds libFuzzer flags;
# FUZZ_NO_BUILD=1 uses the targets already built (several runs at once:
#   tools/fuzz.sh build; for t in $(tools/fuzz.sh list); do
#     FUZZ_NO_BUILD=1 tools/fuzz.sh $t 3600 10000000 & done; wait).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(spec result set folded telemetry options forms)
usage() { echo "usage: tools/fuzz.sh TARGET|all|list SECONDS [RUNS] (targets: ${targets[*]})" >&2; exit 2; }

[ $# -ge 1 ] || usage
if [ "$1" = list ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
if [ "$1" = build ]; then set -- all 1 0; fi
[ $# -ge 2 ] || usage
what=$1 secs=$2 runs=${3:--1}
# 0 would mean "no limit" to libFuzzer
case "$secs" in ''|0|*[!0-9]*) echo "fuzz: SECONDS: '$secs' is not a count of seconds >= 1" >&2; exit 2 ;; esac
case "$runs" in -1) ;; ''|*[!0-9]*) echo "fuzz: RUNS: '$runs' is not a whole number" >&2; exit 2 ;; esac
if [ "$what" = all ]; then
  sel=("${targets[@]}")
else
  ok=0; for t in "${targets[@]}"; do [ "$t" = "$what" ] && ok=1; done
  [ $ok -eq 1 ] || { echo "fuzz: unknown target '$what' (${targets[*]})" >&2; exit 2; }
  sel=("$what")
fi
command -v clang >/dev/null || { echo "fuzz: clang not found (tools/setup.sh installs it)" >&2; exit 1; }

dir=build-fuzz
mkdir -p "$dir"
if [ "${FUZZ_NO_BUILD:-0}" = 1 ]; then
  for t in "${sel[@]}"; do
    [ -x "$dir/fuzz/fuzz_$t" ] || { echo "fuzz: $dir/fuzz/fuzz_$t not built (tools/fuzz.sh build)" >&2; exit 1; }
  done
elif ! CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRXRAY_FUZZ=ON \
     >"$dir/configure.log" 2>&1; then
  cat "$dir/configure.log"; exit 1
elif ! cmake --build "$dir" -j"${FUZZ_JOBS:-$(nproc)}" --target "${sel[@]/#/fuzz_}" \
     >"$dir/build.log" 2>&1; then
  grep -Ev '^\[ *[0-9]+%\]' "$dir/build.log" | tail -40; echo "fuzz: build FAILED" >&2; exit 1
fi
[ "$runs" != 0 ] || { echo "fuzz: built ${sel[*]/#/$dir/fuzz/fuzz_}"; exit 0; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${sel[@]}"; do
  corpus=$dir/corpus/$t art=$dir/artifacts/$t log=$dir/fuzz-$t.log
  mkdir -p "$corpus" "$art"
  seeds=()
  for d in fuzz/seeds/$t fuzz/regress/$t; do [ -d "$d" ] && seeds+=("$d"); done
  # fuzz/<target>.dict: the format's keys and edge values (libFuzzer -dict)
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  echo "== fuzz $t: ${secs} s${3:+, at most $runs runs} (log $log)"
  rc=0
  # -close_fd_mask=2: the parsers' error lines on stderr would drown the log
  "$dir/fuzz/fuzz_$t" -max_total_time="$secs" -runs="$runs" -timeout=10 -rss_limit_mb=2048 "${dict[@]}" \
    -max_len=4096 -print_final_stats=1 -close_fd_mask=2 -artifact_prefix="$art/" \
    ${FUZZ_ARGS:-} "$corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  execs=$(LC_ALL=C sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(LC_ALL=C sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -aEo 'cov: [0-9]+' "$log" | tail -1 || true)
  if [ $rc -ne 0 ]; then
    grep -aE 'ERROR|SUMMARY|Test unit written|runtime error|timeout' "$log" | head -20
    echo "== fuzz $t: FAILED (exit $rc) after ${execs:-?} execs; see $log and $art/"
    status=1
  else
    echo "== fuzz $t: ok, ${execs:-?} execs, ${speed:-?} exec/s, ${cov:-cov ?}, corpus $(ls "$corpus" | wc -l) inputs"
  fi
done
exit $status
