#!/usr/bin/env bash
# Axle on the real JAX programs of ../shared/jax against XLA:CPU's times.
#
#   bench/jax_programs.sh [NAME ...]        (default: every NAME.hlo there)
#
# Builds axle-bench in $BUILD (default build-bench) and runs each program on
# the cpu platform with AXLE_NUM_THREADS=2 (pinned to cores 0,1 when
# taskset is there), on its shipped inputs (NAME.inK.npy; the perf_*
# programs on seeded random ones). XLA:CPU's times come from summary.json:
# they were measured on another machine (a Sapphire Rapids Xeon pinned to 2
# cores, ../shared/jax/README.md), so "xla/axle" here compares across
# machines; run both on one lent machine for a same-machine ratio (that
# README says how). Prints one line per program and the geomeans, and with
# DOC=1 rewrites the generated JAX section of docs/PERFORMANCE.md.
#
# Environment: BUILD, JAX_DIR (default ../shared/jax), MIN_SECONDS (1),
# MAX_RUNS (200), DOC, NO_INPUTS=1 (seeded random inputs for every program:
# for an axle-bench without --input, e.g. an older build to compare with),
# WARM_WITH=FILE.hlo (compile FILE first in each process, untimed: the
# compile time is then that of a process that compiled before, as XLA's
# were taken, each program's first compile in one process that had compiled
# the programs before it; by default each program's compile is its fresh
# process's first, which also pays LLVM's one-time set-up).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-bench}
JAX_DIR=${JAX_DIR:-../shared/jax}
MIN_SECONDS=${MIN_SECONDS:-1}
MAX_RUNS=${MAX_RUNS:-200}
[ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target axle-bench >&2
PIN=()
command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ] && PIN=(taskset -c 0,1)

if [ $# -gt 0 ]; then
  NAMES="$*"
else
  NAMES=$(cd "$JAX_DIR" && ls *.hlo | grep -v '\.opt\.hlo$' | sed 's/\.hlo$//')
fi
RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT
for name in $NAMES; do
  inputs=()
  if [ "${NO_INPUTS:-0}" != 1 ]; then
    for f in $(ls "$JAX_DIR/$name".in*.npy 2>/dev/null | sort -V); do inputs+=("--input=$f"); done
  fi
  [ -n "${WARM_WITH:-}" ] && inputs+=("--warm_with=$WARM_WITH")
  line=$(AXLE_NUM_THREADS=2 "${PIN[@]}" "$BUILD/bench/axle-bench" "$JAX_DIR/$name.hlo" \
           --compiles=1 --min_seconds="$MIN_SECONDS" --max_runs="$MAX_RUNS" ${inputs[@]+"${inputs[@]}"} 2>&1 |
         tail -n 1) || true
  echo "$name $line" | tee -a "$RESULTS" >&2
done
/usr/bin/python3 - "$JAX_DIR/summary.json" "$RESULTS" "${DOC:-0}" <<'PY'
import json, math, re, subprocess, sys
summary = json.load(open(sys.argv[1]))["cases"]
rows, ratios, compile_ratios = [], [], []
for line in open(sys.argv[2]):
    name, _, rest = line.strip().partition(" ")
    case = summary.get(name, {})
    xla = (case.get("xla_cpu_ms") or [None])[0]
    xla_cc = case.get("xla_cpu_compile_ms")
    m = dict(re.findall(r"(\w+)=([0-9.]+)", rest))
    if not rest.startswith("ok"):
        rows.append(f"| {name} | {xla and f'{xla:.3g}'} | - | - | {xla_cc and f'{xla_cc:.0f}'} | - | {rest[:80]} |")
        continue
    axle, axle_cc = float(m["min_ms"]), float(m["compile_first_ms"])
    ratio = xla / axle if xla else None
    if ratio: ratios.append(ratio)
    if xla_cc: compile_ratios.append(xla_cc / axle_cc)
    rows.append(f"| {name} | {xla:.3g} | {axle:.3g} | {ratio:.2f} | {xla_cc:.0f} | {axle_cc:.0f} | |")
geo = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")
table = ["| program | XLA:CPU ms | Axle ms | xla/axle | XLA compile ms | Axle compile ms | note |",
         "|---|---|---|---|---|---|---|"] + rows
table.append(f"\nGeomean xla/axle over {len(ratios)} timed programs: **{geo(ratios):.2f}** "
             f"(min {min(ratios):.2f}); compile: Axle {geo(compile_ratios):.1f}x faster.")
print("\n".join(table))
if sys.argv[3] == "1":
    sys.path.insert(0, "bench")
    from doc_section import write_section
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    body = f"Run at {commit}, AXLE_NUM_THREADS=2, pinned to 2 cores; XLA:CPU's times from `../shared/jax/summary.json` (another machine).\n\n" + "\n".join(table)
    write_section("docs/PERFORMANCE.md", "jax-programs", body, "Real JAX programs (`bench/jax_programs.sh`)")
PY
