#!/usr/bin/env bash
# Axle against onnxruntime 1.30 on the real models of issue 13 (PyTorch 1.13
# exports: axle/frontends/onnx/testdata/export_torch_models.py).
#
#   bench/onnx_vs_ort.sh [NAME ...]      (default: every model there)
#
# Builds axle-onnx in $BUILD (default build-bench), exports the models into
# $BUILD/onnx_torch_models (kept while the exporter is unchanged), then for
# each model, ROUNDS times, alternately: onnxruntime-node (scripts/setup
# installs it into third_party/npm; bench/onnx_ort_bench.js: 2 intra-op
# threads, 1 inter-op, graph optimization 'all') and `axle-onnx
# --iterations` on the cpu platform (AXLE_NUM_THREADS=2), both pinned to
# cores 0,1 when taskset is there, on the same inputs. On a loaded machine
# spinning workers can cost either side several times: onnxruntime runs
# with its intra-op spinning on and off, Axle with OpenMP's default wait
# policy and OMP_WAIT_POLICY=PASSIVE (oneDNN's team); each side keeps its
# faster setting. Prints one line per run and a table of best (min over
# rounds) and median (of the rounds' medians) ms per model, with
# ort/axle > 1 when Axle is faster; DOC=1 rewrites the ONNX section of
# docs/PERFORMANCE.md.
#
# Environment: BUILD, ROUNDS (3), ITERATIONS (timed runs per run, 20), DOC.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-bench}
ROUNDS=${ROUNDS:-3}
ITERATIONS=${ITERATIONS:-20}
PYTHON=/usr/bin/python3
export NODE_PATH=$PWD/third_party/npm/node_modules
[ -d "$NODE_PATH/onnxruntime-node" ] || bash scripts/setup
[ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target axle-onnx >&2
MODELS=$BUILD/onnx_torch_models
"$PYTHON" axle/frontends/onnx/testdata/export_torch_models.py "$MODELS" "$@" 2>/dev/null
PIN=()
command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ] && PIN=(taskset -c 0,1)

RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT
record() { echo "$*" | tee -a "$RESULTS" >&2; }
record "env load_before=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)"
record "env cpu=$(lscpu | sed -n 's/^Model name: *//p' | tr ' ' _)" \
  "date=$(date -u +%Y-%m-%dT%H:%MZ) commit=$(git rev-parse --short HEAD)"
for name in ${*:-$(ls "$MODELS")}; do
  dir=$MODELS/$name
  inputs=$(ls "$dir"/input_*.npy | sort -V)
  for round in $(seq "$ROUNDS"); do
    for spin in 1 0; do
      line=$("${PIN[@]}" node bench/onnx_ort_bench.js "$dir/model.onnx" --threads=2 \
               --spin="$spin" --iterations="$ITERATIONS" $inputs 2>&1 | tail -n 1) || true
      record "ort $name spin=$spin $line"
    done
    for policy in default PASSIVE; do
      env=(AXLE_NUM_THREADS=2)
      [ "$policy" = PASSIVE ] && env+=(OMP_WAIT_POLICY=PASSIVE)
      line=$(env "${env[@]}" "${PIN[@]}" "$BUILD/tools/axle-onnx" "$dir/model.onnx" \
               --iterations="$ITERATIONS" $(printf -- '--input=%s ' $inputs) 2>&1 | tail -n 1) || true
      record "axle $name omp=$policy $line"
    done
  done
done
record "env load_after=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)"

"$PYTHON" - "$RESULTS" "${DOC:-0}" <<'PY'
import collections, re, statistics, sys
runs = collections.defaultdict(list)  # (side, model, setting) -> [(min, median)]
errors, env, order = {}, [], []
for line in open(sys.argv[1]):
    side, name, rest = (line.strip().split(" ", 2) + [""])[:3]
    if side == "env":
        env.append(f"{name} {rest}".strip())
        continue
    setting, _, result = rest.partition(" ")
    if name not in order: order.append(name)
    m = re.search(r"min ([0-9.]+) ms, median ([0-9.]+) ms", result)
    if m:
        runs[side, name, setting].append((float(m.group(1)), float(m.group(2))))
    else:
        errors[side, name] = result[:120]

def best(side, name):  # the faster setting's (best min, median of medians, setting)
    cands = [(min(t[0] for t in v), statistics.median(t[1] for t in v), s)
             for (sd, n, s), v in runs.items() if sd == side and n == name]
    return min(cands) if cands else None

rows = ["| model | onnxruntime best / median ms | Axle best / median ms | ort/axle (best) | note |",
        "|---|---|---|---|---|"]
for name in order:
    o, a = best("ort", name), best("axle", name)
    cell = lambda r: f"{r[0]:.2f} / {r[1]:.2f} ({r[2]})" if r else "-"
    note = "; ".join(f"{side}: {errors[side, name]}" for side in ("ort", "axle")
                     if (side, name) in errors and not best(side, name))
    ratio = f"{o[0] / a[0]:.2f}" if o and a else "-"
    rows.append(f"| {name} | {cell(o)} | {cell(a)} | {ratio} | {note} |")
print("\n".join(rows))
if sys.argv[2] == "1":
    sys.path.insert(0, "bench")
    from doc_section import write_section
    e = dict(kv.split("=", 1) for line in env for kv in line.split() if "=" in kv)
    load = lambda key: e.get(key, "").replace(",", ", ")
    head = (f"Run of {e.get('date')} at {e.get('commit')} on "
            f"{e.get('cpu', '').replace('_', ' ')}, 2 threads pinned to 2 cores; load average "
            f"(1, 5, 15 min) before {load('load_before')}, after {load('load_after')}.")
    write_section("docs/PERFORMANCE.md", "onnx-ort", f"{head}\n\n" + "\n".join(rows),
                  "ONNX models against onnxruntime (`bench/onnx_vs_ort.sh`)")
PY
