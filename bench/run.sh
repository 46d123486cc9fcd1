#!/usr/bin/env bash
# The benchmarks of docs/PERFORMANCE.md in one command (`make bench`):
# builds axle-bench, stream and onednn-matmul in $BUILD (default
# build-bench), then, for 1 and 2 threads and each module in
# bench/modules, runs Axle on the cpu platform and PyTorch 1.13 at its best
# settings (../shared/PEERS.md; OpenBLAS's core type measured in the run,
# bench/torch_blas_probe.py) one after the other, plus the STREAM triad
# and oneDNN's matmul primitive as the limits, and writes the table into
# the generated section of docs/PERFORMANCE.md (bench/report.py).
#
#   bench/run.sh [WORKLOAD ...]      (default: all of bench/modules)
#
# Environment: BUILD, THREADS (default "1 2"), MIN_SECONDS (per
# measurement, default 1.5), MAX_RUNS (default 200), NO_DOC=1 to print the
# table only.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build-bench}
THREADS=${THREADS:-"1 2"}
MIN_SECONDS=${MIN_SECONDS:-1.5}
# At most this many runs per measurement (both sides): short workloads get
# enough runs in MIN_SECONDS for their best to be seen on a VM whose speed
# changes from second to second.
MAX_RUNS=${MAX_RUNS:-200}
PYTHON=/usr/bin/python3
if [ $# -gt 0 ]; then
  WORKLOADS="$*"
else
  WORKLOADS="chain softmax layernorm matmul_f32 matmul_bf16 mlp_step conv_block"
fi

# PyTorch's best settings (PEERS.md): AVX-512 kernels, malloc keeping its
# memory, and the OpenBLAS core type measured below (TORCH_BLAS).
TORCH_ENV_BASE=(ATEN_CPU_CAPABILITY=avx512
  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295)
# OpenBLAS's core type for this CPU, measured on this machine: its 1024^3
# matmul under each candidate, the fastest wins. Debian's OpenBLAS 0.3.21
# misdetects newer CPUs, and which setting is best changes with the machine.
TORCH_BLAS_CANDIDATES=${TORCH_BLAS_CANDIDATES:-"unset SkylakeX Cooperlake Haswell"}
blas_env() {  # the env(1) arguments for one candidate
  if [ "$1" = unset ]; then echo "-u OPENBLAS_CORETYPE"; else echo "OPENBLAS_CORETYPE=$1"; fi
}
pick_torch_blas() {
  local best="" best_ms="" probes="" c ms
  for c in $TORCH_BLAS_CANDIDATES; do
    # shellcheck disable=SC2046
    ms=$(env $(blas_env "$c") "${TORCH_ENV_BASE[@]}" "$PYTHON" bench/torch_blas_probe.py \
      --threads "$(nproc)" 2>/dev/null) || continue
    probes="$probes${probes:+,}$c:$ms"
    if [ -z "$best" ] || awk "BEGIN { exit !($ms < $best_ms) }"; then best=$c best_ms=$ms; fi
  done
  echo "${best:-unset} ${probes:-none}"
}

have_torch() { "$PYTHON" -c "import torch" 2>/dev/null; }
if ! have_torch && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian's PyTorch (python3-torch) and OpenBLAS ..." >&2
  apt-get install -y --no-install-recommends python3-torch libopenblas0-openmp >/dev/null ||
    (apt-get update >/dev/null && apt-get install -y --no-install-recommends python3-torch libopenblas0-openmp >/dev/null) || true
fi
TORCH=1
have_torch || { echo "warning: no PyTorch under $PYTHON; its columns stay empty" >&2; TORCH=0; }

[ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja >/dev/null
if ! cmake --build "$BUILD" -j "$(nproc)" --target axle-bench stream >&2; then
  # A shared working tree can be mid-edit: measure the last good build.
  [ -x "$BUILD/bench/axle-bench" ] && [ -x "$BUILD/bench/stream" ] || exit 1
  echo "warning: the build failed; measuring the binaries already in $BUILD" >&2
fi
ONEDNN=0
if cmake --build "$BUILD" -j "$(nproc)" --target onednn-matmul >/dev/null 2>&1; then ONEDNN=1; fi

RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT
record() { echo "$*" | tee -a "$RESULTS" >&2; }

record "env load_before=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)"
# The last-level cache: workloads smaller than 4x it are labelled
# cache-resident in the report.
llc_bytes() {
  local size
  size=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || true)
  if [ -z "$size" ] || [ "$size" = 0 ]; then
    size=$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo 0)
    case "$size" in *K) size=$(( ${size%K} * 1024 ));; *M) size=$(( ${size%M} * 1048576 ));; esac
  fi
  echo "$size"
}
record "env llc_bytes=$(llc_bytes)"
record "env cpu=$(lscpu | sed -n 's/^Model name: *//p' | tr ' ' _) cores=$(nproc) date=$(date -u +%Y-%m-%dT%H:%MZ) commit=$(git rev-parse --short HEAD) uncommitted_files=$(git status --porcelain -- axle tools bench | wc -l)"
TORCH_ENV=(env)
if [ "$TORCH" = 1 ]; then
  record "env torch=$("$PYTHON" -c 'import torch; print(torch.__version__)')"
  read -r TORCH_BLAS TORCH_BLAS_PROBES <<<"$(pick_torch_blas)"
  record "env torch_openblas_coretype=$TORCH_BLAS torch_blas_probe_ms=$TORCH_BLAS_PROBES"
  # shellcheck disable=SC2207
  TORCH_ENV=(env $(blas_env "$TORCH_BLAS") "${TORCH_ENV_BASE[@]}")
fi
for t in $THREADS; do
  # The limits, with the sample counts Axle gets: the triad, and the triad
  # with non-temporal stores (the limit for kernels that store that way).
  record "stream - $t $("$BUILD/bench/stream" "$t" --min_seconds="$MIN_SECONDS" --max_runs="$MAX_RUNS")"
  record "stream_nt - $t $("$BUILD/bench/stream" "$t" --min_seconds="$MIN_SECONDS" \
    --max_runs="$MAX_RUNS" --nontemporal)"
  if [ "$ONEDNN" = 1 ]; then
    for type in f32 bf16; do
      for policy in ACTIVE PASSIVE; do  # the report keeps the faster
        record "onednn matmul_$type $t $(OMP_WAIT_POLICY=$policy OMP_NUM_THREADS=$t \
          "$BUILD/bench/onednn-matmul" $type 1024 30)"
      done
    done
  fi
  for w in $WORKLOADS; do
    record "axle $w $t $(AXLE_NUM_THREADS=$t "$BUILD/bench/axle-bench" "bench/modules/$w.hlo" \
      --min_seconds="$MIN_SECONDS" --max_runs="$MAX_RUNS" 2>&1 | tail -n 1 || true)"
    # Axle's dot runs on oneDNN's OpenMP team: the same two policies.
    if [ "$t" -gt 1 ]; then
      record "axle_passive $w $t $(OMP_WAIT_POLICY=PASSIVE AXLE_NUM_THREADS=$t \
        "$BUILD/bench/axle-bench" "bench/modules/$w.hlo" --min_seconds="$MIN_SECONDS" \
        --max_runs="$MAX_RUNS" 2>&1 |
        tail -n 1 || true)"
    fi
    if [ "$TORCH" = 1 ]; then
      record "torch $(${TORCH_ENV[@]} "$PYTHON" bench/torch_bench.py --threads "$t" \
        --min_seconds="$MIN_SECONDS" --max_runs="$MAX_RUNS" "$w" 2>&1 | tail -n 1 | sed "s/ / $t /")"
      # On a loaded machine OpenMP's spinning workers can be 5x slower
      # than sleeping ones (OMP_WAIT_POLICY): each side gets the better.
      if [ "$t" -gt 1 ]; then
        record "torch_passive $(${TORCH_ENV[@]} OMP_WAIT_POLICY=PASSIVE "$PYTHON" \
          bench/torch_bench.py --threads "$t" --min_seconds="$MIN_SECONDS" \
          --max_runs="$MAX_RUNS" "$w" 2>&1 |
          tail -n 1 | sed "s/ / $t /")"
      fi
    fi
  done
done
record "env load_after=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)"

if [ "${NO_DOC:-0}" = 1 ]; then
  "$PYTHON" bench/report.py "$RESULTS"
else
  "$PYTHON" bench/report.py "$RESULTS" --doc docs/PERFORMANCE.md
fi
