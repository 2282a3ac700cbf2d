#!/usr/bin/env bash
# The real-GPU check of draguard-teardown (issue: deterministic teardown). On a machine with
# an NVIDIA GPU and driver it records a baseline, starts a process that holds a CUDA context
# and 1 GiB (harness/gpu/cuda_hold.py, libcuda through ctypes), and runs the helper against
# the real NVML:
#   1. verify while the process runs           -> held     (exit 1)
#   2. drain a process that ignores SIGTERM    -> deadline (exit 1); then SIGKILL it
#   3. verify after the SIGKILL                -> released (exit 0)
#   4. a process that exits on SIGTERM: drain  -> drained  (exit 0), verify -> released
# and prints each verdict with its timing. Exit 0 when every verdict is the expected one;
# where NVML cannot be loaded (no GPU, no driver) it says SKIP and exits 0. Needs python3 and
# the nvidia-ml-py package (`pip install nvidia-ml-py`); draguard runs from src/, uninstalled.
# Bounded: about 1-2 minutes, 5 at most.
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
WORK=$(mktemp -d)
HOLDER=""
trap '[ -n "$HOLDER" ] && kill -9 "$HOLDER" 2>/dev/null; rm -rf "$WORK"' EXIT
helper() { timeout 120 "$PY" -m draguard.teardown.cli "$@"; }
failed=0

expect() {  # expect NAME WANTED_EXIT COMMAND...
    local name=$1 wanted=$2; shift 2
    local start=$SECONDS out code
    out=$("$@"); code=$?
    printf '%-40s exit %s (want %s) in %3ss  %s\n' "$name" "$code" "$wanted" $((SECONDS - start)) "$out"
    [ "$code" = "$wanted" ] || failed=1
}

hold() {  # hold [--ignore-term]: start the holder on the baseline's first device
    CUDA_VISIBLE_DEVICES=$DEVICE "$PY" harness/gpu/cuda_hold.py --mib 1024 "$@" >"$WORK/holder.out" &
    HOLDER=$!
    for _ in $(seq 100); do grep -q holding "$WORK/holder.out" 2>/dev/null && return 0; sleep 0.2; done
    echo "the holder did not start: $(cat "$WORK/holder.out")"; exit 1
}

baseline=$(helper baseline --state "$WORK/baseline.json")
case $? in
    0) ;;
    3) if grep -qE '"problem": "(library-missing|driver-not-loaded)"' <<<"$baseline"; then
           echo "SKIP: no usable NVIDIA driver here ($baseline)"; exit 0
       fi
       if grep -q '"problem": "bindings-missing"' <<<"$baseline" && ! ls /dev/nvidia0 >/dev/null 2>&1; then
           echo "SKIP: no GPU here, and no nvidia-ml-py either"; exit 0
       fi
       echo "baseline failed: $baseline"; exit 1 ;;
    *) echo "baseline failed: $baseline"; exit 1 ;;
esac
echo "baseline: $baseline"
DEVICE=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["devices"][0]["uuid"])' "$baseline")
STATE=(--state "$WORK/baseline.json")

hold --ignore-term
expect "verify while a process holds the GPU" 1 helper verify "${STATE[@]}" --timeout 5
expect "drain a process that ignores SIGTERM" 1 helper drain --signal TERM --process cuda_hold.py --deadline 5
kill -9 "$HOLDER"; wait "$HOLDER" 2>/dev/null; HOLDER=""
expect "verify after SIGKILL" 0 helper verify "${STATE[@]}" --timeout 60

hold
expect "drain a process that exits on SIGTERM" 0 helper drain --signal TERM --process cuda_hold.py --deadline 30
HOLDER=""
expect "verify after the drain" 0 helper verify "${STATE[@]}" --timeout 60

[ "$failed" = 0 ] && echo "PASS: every verdict as expected" || echo "FAIL: a verdict differs"
exit "$failed"
