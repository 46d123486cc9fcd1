#!/usr/bin/env bash
# axle-run across processes (Gloo over loopback): results, and the failures
# that must end every process with a clear error instead of a hang: a
# process that never arrives, processes running different modules, a
# process that leaves early; the same on the cpu backend, and over Open MPI
# (mpirun) when axle-run has it; reductions over other types and kinds,
# and every group mode on a grid of replicas x partitions, bit for bit the
# threads mode on each transport. Usage: multi_process_test.sh BUILD_DIR [mpi]
set -u
run="$1/tools/axle-run"
mpi="${2:-}"
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

cat >"$tmp/sum.hlo" <<'HLO'
HloModule sum
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  id = u32[] replica-id()
  f = f32[] convert(id)
  v = f32[4] broadcast(f), dimensions={}
  ROOT r = f32[4] all-reduce(v), replica_groups={}, to_apply=add
}
HLO

# Three processes: 0 + 1 + 2 everywhere, and the same as the threads mode.
"$run" --num_processes=3 --print_literals --reference_platform=interpreter "$tmp/sum.hlo" \
  --output_dir="$tmp/out" >"$tmp/log" 2>&1
check "3 processes exit 0" test $? -eq 0
check "process 2 prints the sum" grep -q "process 2: f32\[4\] {3, 3, 3, 3}" "$tmp/log"
check "each process matches the threads mode" test "$(grep -c 'bit for bit' "$tmp/log")" -eq 3
check "each process writes its outputs" test -f "$tmp/out/process_1/out_0.npy"

# A process that never arrives: the one that did fails after the timeout.
mkdir "$tmp/rdv1"
AXLE_PROCESS_ID=0 AXLE_NUM_PROCESSES=2 AXLE_RENDEZVOUS_DIR="$tmp/rdv1" AXLE_COLLECTIVE_TIMEOUT=1 \
  "$run" "$tmp/sum.hlo" >"$tmp/log" 2>&1
check "a lone process exits 1" test $? -eq 1
check "the error names the rank and the timeout" grep -q "gloo rank 0 of 2.*AXLE_COLLECTIVE_TIMEOUT" "$tmp/log"

# Different modules (another shape) in the two processes.
sed 's/f32\[4\]/f32[8]/g' "$tmp/sum.hlo" >"$tmp/sum8.hlo"
mkdir "$tmp/rdv2"
AXLE_PROCESS_ID=0 AXLE_NUM_PROCESSES=2 AXLE_RENDEZVOUS_DIR="$tmp/rdv2" AXLE_COLLECTIVE_TIMEOUT=20 \
  "$run" "$tmp/sum.hlo" >"$tmp/log0" 2>&1 &
AXLE_PROCESS_ID=1 AXLE_NUM_PROCESSES=2 AXLE_RENDEZVOUS_DIR="$tmp/rdv2" AXLE_COLLECTIVE_TIMEOUT=20 \
  "$run" "$tmp/sum8.hlo" >"$tmp/log1" 2>&1
code1=$?
wait $!
code0=$?
check "mismatched modules fail in both processes" test $code0 -eq 1 -a $code1 -eq 1
check "the mismatch is reported as such" grep -q "different collective or operand shapes" "$tmp/log0"

# Process 1 skips the all-reduce and finishes; process 0 must not hang.
cat >"$tmp/skip.hlo" <<'HLO'
HloModule skip
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
reduce {
  p = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(p), replica_groups={}, to_apply=add
}
keep {
  ROOT p = f32[4] parameter(0)
}
ENTRY e {
  p = f32[4] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[4] conditional(first, p, p), true_computation=reduce, false_computation=keep
}
HLO
AXLE_COLLECTIVE_TIMEOUT=20 "$run" --num_processes=2 "$tmp/skip.hlo" >"$tmp/log" 2>&1
check "a process that leaves early fails the run" test $? -eq 1
check "and the error says why" grep -q "still at a collective\|different collective" "$tmp/log"

# A data-parallel training step: each process takes its half of the batch,
# the gradients are all-reduced, and every process ends with the weights one
# process computes on the whole batch. (Small integers and a power-of-two
# learning rate keep every sum exact, so the comparison is bit for bit.)
cat >"$tmp/dp.hlo" <<'HLO'
HloModule dp
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
ENTRY e {
  x = f32[4,3] constant({{1,2,0},{0,1,3},{2,2,1},{1,0,1}})
  y = f32[4] constant({3,1,2,4})
  w = f32[3] constant({1,-1,2})
  id = u32[] replica-id()
  two = u32[] constant(2)
  start = u32[] multiply(id, two)
  zero = u32[] constant(0)
  xs = f32[2,3] dynamic-slice(x, start, zero), dynamic_slice_sizes={2,3}
  ys = f32[2] dynamic-slice(y, start), dynamic_slice_sizes={2}
  pred = f32[2] dot(xs, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  err = f32[2] subtract(pred, ys)
  g = f32[3] dot(err, xs), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  gsum = f32[3] all-reduce(g), replica_groups={}, to_apply=add
  lr = f32[3] constant({0.125,0.125,0.125})
  step = f32[3] multiply(lr, gsum)
  ROOT w2 = f32[3] subtract(w, step)
}
HLO
cat >"$tmp/whole.hlo" <<'HLO'
HloModule whole
ENTRY e {
  x = f32[4,3] constant({{1,2,0},{0,1,3},{2,2,1},{1,0,1}})
  y = f32[4] constant({3,1,2,4})
  w = f32[3] constant({1,-1,2})
  pred = f32[4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  err = f32[4] subtract(pred, y)
  g = f32[3] dot(err, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  lr = f32[3] constant({0.125,0.125,0.125})
  step = f32[3] multiply(lr, g)
  ROOT w2 = f32[3] subtract(w, step)
}
HLO
"$run" "$tmp/whole.hlo" --output_dir="$tmp/whole" >/dev/null 2>&1
check "the whole-batch step runs" test $? -eq 0
"$run" --num_processes=2 --reference_platform=interpreter "$tmp/dp.hlo" --output_dir="$tmp/dp" \
  >"$tmp/log" 2>&1
check "the data-parallel step runs in 2 processes" test $? -eq 0
check "process 0 has the whole-batch weights" cmp -s "$tmp/whole/out_0.npy" "$tmp/dp/process_0/out_0.npy"
check "process 1 has the whole-batch weights" cmp -s "$tmp/whole/out_0.npy" "$tmp/dp/process_1/out_0.npy"

# A launcher of its own: AXLE_COORDINATOR=host:port, process 0 serves the
# rendezvous there (Gloo has no TCP store of its own).
port=$((20000 + $$ % 20000))
for i in 0 1; do
  AXLE_COORDINATOR=127.0.0.1:$port AXLE_PROCESS_ID=$i AXLE_NUM_PROCESSES=2 \
    "$run" --output_dir="$tmp/coord" "$tmp/dp.hlo" >"$tmp/coord$i.log" 2>&1 &
done
wait %1
code0=$?
wait %2
code1=$?
check "processes meet at AXLE_COORDINATOR" test $code0 -eq 0 -a $code1 -eq 0
check "and compute the same step" cmp -s "$tmp/whole/out_0.npy" "$tmp/coord/process_1/out_0.npy"
AXLE_COLLECTIVE_TIMEOUT=1 AXLE_COORDINATOR=127.0.0.1:$((port + 1)) AXLE_PROCESS_ID=1 \
  AXLE_NUM_PROCESSES=2 "$run" "$tmp/dp.hlo" >"$tmp/log" 2>&1
check "no coordinator: exit 1" test $? -eq 1
check "no coordinator: the error says so" grep -q "no rendezvous server at 127.0.0.1" "$tmp/log"

# The cpu backend: compiled for the grid, its collective thunks on the
# same communicator, bit for bit the interpreter's threads mode.
"$run" --num_processes=3 --platform=cpu --print_literals --reference_platform=interpreter \
  "$tmp/sum.hlo" >"$tmp/log" 2>&1
check "cpu: 3 processes exit 0" test $? -eq 0
check "cpu: process 1 prints the sum" grep -q "process 1: f32\[4\] {3, 3, 3, 3}" "$tmp/log"
check "cpu: each process matches the threads mode" test "$(grep -c 'bit for bit' "$tmp/log")" -eq 3
"$run" --num_processes=2 --platform=cpu --reference_platform=interpreter "$tmp/dp.hlo" \
  --output_dir="$tmp/dpcpu" >"$tmp/log" 2>&1
check "cpu: the data-parallel step runs in 2 processes" test $? -eq 0
check "cpu: process 0 has the whole-batch weights" \
  cmp -s "$tmp/whole/out_0.npy" "$tmp/dpcpu/process_0/out_0.npy"
check "cpu: process 1 has the whole-batch weights" \
  cmp -s "$tmp/whole/out_0.npy" "$tmp/dpcpu/process_1/out_0.npy"
mkdir "$tmp/rdv3"
AXLE_PROCESS_ID=0 AXLE_NUM_PROCESSES=2 AXLE_RENDEZVOUS_DIR="$tmp/rdv3" AXLE_COLLECTIVE_TIMEOUT=20 \
  "$run" --platform=cpu "$tmp/sum.hlo" >"$tmp/log0" 2>&1 &
AXLE_PROCESS_ID=1 AXLE_NUM_PROCESSES=2 AXLE_RENDEZVOUS_DIR="$tmp/rdv3" AXLE_COLLECTIVE_TIMEOUT=20 \
  "$run" --platform=cpu "$tmp/sum8.hlo" >"$tmp/log1" 2>&1
code1=$?
wait $!
code0=$?
check "cpu: mismatched modules fail in both processes" test $code0 -eq 1 -a $code1 -eq 1
check "cpu: the mismatch is reported as such" grep -q "different module or argument shapes" "$tmp/log0"

# A grid of 2 replicas x 2 partitions in 4 processes on the cpu backend:
# send/recv whose pairs name partitions (channel 1) and replicas (channel
# 0), and collective-permute's in-place form; bit for bit the threads mode.
cat >"$tmp/grid.hlo" <<'HLO'
HloModule grid, replica_count=2, num_partitions=2
ENTRY e {
  r = u32[] replica-id()
  q = u32[] partition-id()
  ten = u32[] constant(10)
  r10 = u32[] multiply(r, ten)
  id = u32[] add(r10, q)
  f = f32[] convert(id)
  v = f32[3,2] broadcast(f), dimensions={}
  t0 = token[] after-all()
  rp = (f32[3,2], u32[], token[]) recv(t0), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,0}}"}
  sp = (f32[3,2], u32[], token[]) send(v, t0), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,0}}"}
  rr = (f32[3,2], u32[], token[]) recv(t0), channel_id=0,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  sr = (f32[3,2], u32[], token[]) send(v, t0), channel_id=0,
      frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  rpd = (f32[3,2], token[]) recv-done(rp), channel_id=1
  rrd = (f32[3,2], token[]) recv-done(rr), channel_id=0
  spd = token[] send-done(sp), channel_id=1
  srd = token[] send-done(sr), channel_id=0
  a = f32[3,2] get-tuple-element(rpd), index=0
  b = f32[3,2] get-tuple-element(rrd), index=0
  z = f32[] constant(-1)
  out = f32[4,2] broadcast(z), dimensions={}
  c0 = s32[] constant(0)
  c1 = s32[] constant(1)
  i = (s32[], s32[]) tuple(c1, c0)
  o = (s32[], s32[]) tuple(c0, c0)
  ip = f32[4,2] collective-permute(a, out, i, o), channel_id=2,
      source_target_pairs={{0,1},{1,0}}, slice_sizes={{2,2}}
  ROOT t = (f32[3,2], f32[3,2], f32[4,2]) tuple(a, b, ip)
}
HLO
"$run" --num_processes=4 --platform=cpu --print_literals --reference_platform=interpreter \
  "$tmp/grid.hlo" >"$tmp/log" 2>&1
check "cpu grid: 4 processes exit 0" test $? -eq 0
check "cpu grid: each process matches the threads mode" \
  test "$(grep -c 'bit for bit' "$tmp/log")" -eq 4

# Reductions over other element types and kinds (bf16 sum, c64 product,
# u64 xor in iota groups, pred and, s8 product as a reduce-scatter, f16
# maximum with its parameters swapped, an f64 computation of two ops) in
# 3 processes, bit for bit the threads mode, on both platforms.
cat >"$tmp/kinds.hlo" <<'HLO'
HloModule kinds, replica_count=3
addb {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT r = bf16[] add(x, y)
}
mulc {
  x = c64[] parameter(0)
  y = c64[] parameter(1)
  ROOT r = c64[] multiply(x, y)
}
xoru {
  x = u64[] parameter(0)
  y = u64[] parameter(1)
  ROOT r = u64[] xor(x, y)
}
andp {
  x = pred[] parameter(0)
  y = pred[] parameter(1)
  ROOT r = pred[] and(x, y)
}
muls {
  x = s8[] parameter(0)
  y = s8[] parameter(1)
  ROOT r = s8[] multiply(x, y)
}
maxh {
  x = f16[] parameter(0)
  y = f16[] parameter(1)
  ROOT r = f16[] maximum(y, x)
}
fma {
  x = f64[] parameter(0)
  y = f64[] parameter(1)
  m = f64[] multiply(x, y)
  ROOT r = f64[] add(m, x)
}
ENTRY e {
  a = bf16[7] parameter(0)
  b = c64[5] parameter(1)
  c = u64[4] parameter(2)
  d = pred[6] parameter(3)
  e = s8[6] parameter(4)
  f = f16[6] parameter(5)
  g = f64[3] parameter(6)
  ra = bf16[7] all-reduce(a), replica_groups={}, to_apply=addb
  rb = c64[5] all-reduce(b), replica_groups={{2,0,1}}, to_apply=mulc
  rc = u64[4] all-reduce(c), replica_groups=[1,3]<=[3], to_apply=xoru
  rd = pred[6] all-reduce(d), replica_groups={}, to_apply=andp
  re = s8[2] reduce-scatter(e), dimensions={0}, replica_groups={{1,2,0}}, to_apply=muls
  rf = f16[6] all-reduce(f), replica_groups={}, to_apply=maxh
  rg = f64[3] all-reduce(g), replica_groups={}, to_apply=fma
  ROOT t = (bf16[7], c64[5], u64[4], pred[6], s8[2], f16[6], f64[3]) tuple(ra, rb, rc, rd, re, rf, rg)
}
HLO
for platform in interpreter cpu; do
  "$run" --num_processes=3 --platform=$platform --reference_platform=interpreter \
    "$tmp/kinds.hlo" >"$tmp/log" 2>&1
  check "$platform kinds: 3 processes exit 0" test $? -eq 0
  check "$platform kinds: each process matches the threads mode" \
    test "$(grep -c 'bit for bit' "$tmp/log")" -eq 3
done

# A bf16 sum over 4 processes computes in f32 and rounds once, as XLA:CPU
# promotes it (all_reduce_promotion.h): 256 + 1 + 1 + 1 is 260 in bf16,
# not the 256 a bf16 fold gives; as an all-reduce and as a reduce-scatter.
cat >"$tmp/bf16sum.hlo" <<'HLO'
HloModule bf16sum, replica_count=4
addb {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT r = bf16[] add(x, y)
}
ENTRY e {
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  big = bf16[] constant(256)
  one = bf16[] constant(1)
  s = bf16[] select(first, big, one)
  v = bf16[4] broadcast(s), dimensions={}
  a = bf16[4] all-reduce(v), replica_groups={}, to_apply=addb
  r = bf16[1] reduce-scatter(v), dimensions={0}, replica_groups={}, to_apply=addb
  ROOT t = (bf16[4], bf16[1]) tuple(a, r)
}
HLO
for platform in interpreter cpu; do
  "$run" --num_processes=4 --platform=$platform --print_literals \
    --reference_platform=interpreter "$tmp/bf16sum.hlo" >"$tmp/log" 2>&1
  check "$platform bf16 sum: 4 processes exit 0" test $? -eq 0
  check "$platform bf16 sum: rounded once" \
    test "$(grep -c -e '^bf16\[4\] {260, 260, 260, 260},$' -e '^bf16\[1\] {260}$' "$tmp/log")" -eq 8
  check "$platform bf16 sum: each process matches the threads mode" \
    test "$(grep -c 'bit for bit' "$tmp/log")" -eq 4
done

# Every group mode on 2 replicas x 3 partitions (6 processes): no channel
# (cross-replica), a channel on all-to-all, collective-broadcast and
# collective-permute (cross-partition), use_global_device_ids=false
# (cross-replica-and-partition) and =true (flattened ids, listed and iota),
# the -start forms and async-start wrapping reduce-scatter and all-to-all.
cat >"$tmp/modes.hlo" <<'HLO'
HloModule modes, replica_count=2, num_partitions=3
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT a = f32[] add(x, y)
}
scatter {
  s = f32[6] parameter(0)
  ROOT r = f32[1] reduce-scatter(s), channel_id=20, replica_groups={}, dimensions={0}, to_apply=add
}
exchange {
  s = f32[6] parameter(0)
  ROOT r = f32[6] all-to-all(s), channel_id=21, replica_groups={{0,1,2}}, dimensions={0}
}
ENTRY e {
  p = f32[6] parameter(0)
  ag_r = f32[12] all-gather(p), dimensions={0}, replica_groups={}
  ag_rp = f32[18] all-gather(p), channel_id=1, replica_groups={{1},{0}}, dimensions={0}, use_global_device_ids=false
  rs_f = f32[3] reduce-scatter(p), channel_id=4, replica_groups=[3,2]<=[2,3]T(1,0), dimensions={0}, to_apply=add, use_global_device_ids=true
  ar_f = f32[6] all-reduce(p), channel_id=5, replica_groups={{0,4},{5,1},{2,3}}, use_global_device_ids=true, to_apply=add
  a2a_p = f32[6] all-to-all(p), channel_id=6, replica_groups={{2,0,1}}, dimensions={0}
  cb_p = f32[6] collective-broadcast(p), channel_id=8, replica_groups={{2,1,0}}
  cp_r = f32[6] collective-permute(p), source_target_pairs={{1,0}}
  cp_p = f32[6] collective-permute(p), channel_id=9, source_target_pairs={{0,2},{2,1}}
  ars = f32[6] all-reduce-start(p), channel_id=10, replica_groups={{0,1}}, to_apply=add
  ard = f32[6] all-reduce-done(ars)
  rss = ((f32[6]), f32[1], s32[]) async-start(p), calls=scatter
  rsd = f32[1] async-done(rss), calls=scatter
  a2s = ((f32[6]), f32[6], s32[]) async-start(p), calls=exchange
  a2d = f32[6] async-done(a2s), calls=exchange
  ROOT t = (f32[12], f32[18], f32[3], f32[6], f32[6], f32[6], f32[6], f32[6], f32[6], f32[1], f32[6]) tuple(ag_r, ag_rp, rs_f, ar_f, a2a_p, cb_p, cp_r, cp_p, ard, rsd, a2d)
}
HLO
for platform in interpreter cpu; do
  "$run" --num_processes=6 --platform=$platform --reference_platform=interpreter \
    "$tmp/modes.hlo" >"$tmp/log" 2>&1
  check "$platform modes: 6 processes exit 0" test $? -eq 0
  check "$platform modes: each process matches the threads mode" \
    test "$(grep -c 'bit for bit' "$tmp/log")" -eq 6
done

AXLE_COLLECTIVES_TRANSPORT=tcp "$run" "$tmp/sum.hlo" --num_processes=1 >"$tmp/log" 2>&1
check "a transport that does not exist: exit 1" test $? -eq 1
check "and the error names the transports" grep -q "the transports are gloo and mpi" "$tmp/log"

# Open MPI as the transport: mpirun starts the processes (when axle-run was
# built with MPI and mpirun is here).
if [ "$mpi" = mpi ] && command -v mpirun >/dev/null; then
  mpirun=(mpirun --oversubscribe -n 2)
  [ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
  "${mpirun[@]}" "$run" --print_literals --reference_platform=interpreter "$tmp/sum.hlo" \
    >"$tmp/log" 2>&1
  check "mpi: 2 processes exit 0" test $? -eq 0
  check "mpi: process 1 prints the sum" grep -q "process 1: f32\[4\] {1, 1, 1, 1}" "$tmp/log"
  check "mpi: each process matches the threads mode" test "$(grep -c 'bit for bit' "$tmp/log")" -eq 2
  "${mpirun[@]}" "$run" --platform=cpu --reference_platform=interpreter "$tmp/dp.hlo" \
    --output_dir="$tmp/dpmpi" >"$tmp/log" 2>&1
  check "mpi: the cpu data-parallel step runs" test $? -eq 0
  check "mpi: process 1 has the whole-batch weights" \
    cmp -s "$tmp/whole/out_0.npy" "$tmp/dpmpi/process_1/out_0.npy"
  mpirun_one=(mpirun --oversubscribe)
  [ "$(id -u)" -eq 0 ] && mpirun_one+=(--allow-run-as-root)
  "${mpirun_one[@]}" -n 3 "$run" --platform=cpu --reference_platform=interpreter "$tmp/kinds.hlo" \
    >"$tmp/log" 2>&1
  check "mpi kinds: 3 processes exit 0" test $? -eq 0
  check "mpi kinds: each process matches the threads mode" \
    test "$(grep -c 'bit for bit' "$tmp/log")" -eq 3
  "${mpirun_one[@]}" -n 6 "$run" --platform=cpu --reference_platform=interpreter "$tmp/modes.hlo" \
    >"$tmp/log" 2>&1
  check "mpi modes: 6 processes exit 0" test $? -eq 0
  check "mpi modes: each process matches the threads mode" \
    test "$(grep -c 'bit for bit' "$tmp/log")" -eq 6
  # Different modules (one rank each), and a rank that leaves early.
  AXLE_COLLECTIVE_TIMEOUT=20 "${mpirun_one[@]}" -n 1 "$run" --platform=cpu "$tmp/sum.hlo" : \
    -n 1 "$run" --platform=cpu "$tmp/sum8.hlo" >"$tmp/log" 2>&1
  check "mpi: mismatched modules exit 1" test $? -eq 1
  check "mpi: the mismatch is reported as such" \
    grep -q "different module or argument shapes" "$tmp/log"
  AXLE_COLLECTIVE_TIMEOUT=2 "${mpirun[@]}" "$run" --platform=cpu "$tmp/skip.hlo" >"$tmp/log" 2>&1
  check "mpi: a rank that leaves early fails the run" test $? -ne 0
  # Process 1's end-of-module exchange meets process 0's all-reduce, which
  # is reported as a mismatch (as over Gloo), or, where the transport cannot
  # pair them, as process 0's timeout.
  check "mpi: and the error says why" \
    grep -q "still at a collective\|different collective\|AXLE_COLLECTIVE_TIMEOUT" "$tmp/log"
  # A rank that never starts: Open MPI's MPI_Init waits for every rank, so
  # rank 0 gives it AXLE_COLLECTIVE_TIMEOUT, then fails saying why, and
  # mpirun ends the job (the sleeping rank included).
  AXLE_COLLECTIVE_TIMEOUT=2 "${mpirun_one[@]}" -n 1 "$run" --platform=cpu "$tmp/sum.hlo" : \
    -n 1 sleep 120 >"$tmp/log" 2>&1
  check "mpi: a rank that never starts fails the run" test $? -eq 1
  check "mpi: and the error says so" grep -q "MPI_Init did not return within 2 s" "$tmp/log"
  # A rank that dies (SIGKILL) while rank 0 waits at the all-reduce with a
  # timeout far off: mpirun sees it and ends the job, rank 0 included.
  AXLE_COLLECTIVE_TIMEOUT=600 "${mpirun_one[@]}" -n 1 "$run" --platform=cpu "$tmp/sum.hlo" : \
    -n 1 sh -c 'kill -9 $$' >"$tmp/log" 2>&1
  rc=$?
  check "mpi: a rank that dies fails the run" test $rc -ne 0
  # mpirun exits with 128 + the signal; under load it sometimes prints only
  # "the job has been aborted" without naming the signal, so either counts.
  check "mpi: and mpirun reports the signal" \
    sh -c "[ $rc -eq 137 ] || grep -qi 'signal 9\\|killed' '$tmp/log'"
fi

report multi_process_test
