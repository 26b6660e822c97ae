#!/usr/bin/env bash
# rxray test suite: the Release build and the ASan+UBSan build, each
# through ctest. Tests that need root/hugepages/a device skip visibly.
#   tools/test.sh            both builds
#   tools/test.sh release    one of them (release | asan)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
which=${1:-all}
status=0

run_build() { # name dir cmake-args...
  local name=$1 dir=$2; shift 2
  echo "== $name build ($dir)"; mkdir -p "$dir"
  cmake -S . -B "$dir" "$@" >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
  if ! cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1; then
    grep -Ev '^\[ *[0-9]+%\]' "$dir/build.log" | tail -60
    echo "== $name build FAILED"
    return 1
  fi
  echo "== $name tests"
  local rc=0
  ctest --test-dir "$dir" --output-on-failure --timeout 600 || rc=$?
  # Criterion prints [SKIP] with the reason; list them so a skip is seen.
  local log="$dir/Testing/Temporary/LastTest.log"
  if [ -f "$log" ] && grep -q '\[SKIP\]' "$log"; then
    echo "== $name skipped tests (reason):"
    grep '\[SKIP\]' "$log" | sed 's/^.*\[SKIP\] /   /' | sort -u
  fi
  return $rc
}

if [ "$which" = all ] || [ "$which" = release ]; then
  run_build release build -DCMAKE_BUILD_TYPE=Release || status=1
fi
if [ "$which" = all ] || [ "$which" = asan ]; then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_build asan build-asan -DCMAKE_BUILD_TYPE=Debug -DRXRAY_SANITIZE=ON || status=1
fi
exit $status
