"""Steady training steps on the Axle PyTorch device (issue 14's speed), on
two toy models where both sides are all dispatch overhead and two small
realistic ones:
  block     the transformer block of axle/frontends/torch/tests/train_mlp_test.py
            (width 16, 2 heads, seq 8, batch 4, vocabulary 24) under Adam;
  mlp       the MLP of examples/torch/train_mlp.py (64-128-128-10, batch 64,
            MSE) under SGD with momentum;
  mnist     an MNIST-sized MLP (784-256-256-10, batch 64, cross-entropy)
            under SGD with momentum;
  block128  the same transformer block at d_model 128, 4 heads, MLP 512,
            seq 64, batch 8, vocabulary 256, under Adam.

    GOMP_SPINCOUNT=0 OMP_NUM_THREADS=2 PYTHONPATH=build/python \
        /usr/bin/python3 bench/torch_lazy_steps.py

Per model, after 5 warm-up steps (the compiles): record_med, the median time
to record a step (forward, backward, optimizer; no sync); total_min and
total_med, the whole step (with sync and loss.item()); sync_med, the step
marker (graph walk, hash, cache lookup, run, results); execute_med, the
compiled graph's run within it (ExecuteTime), in ms.
Environment: CPU=1 also times PyTorch's CPU eager; ONLY=<models, comma-separated> (default all four);
FOREACH=1 gives both sides' optimizers foreach=True (torch.optim's multi-tensor path: one
_foreach_* call per update step over all parameters, where the default makes one per parameter);
STEPS (40); TAG, a label for the axle lines (compare two builds by
alternating PYTHONPATHs in one session: the machine is noisy).

COMPARE=1: the device against PyTorch's CPU eager at its best settings on
this machine, measured in this run (../shared/PEERS.md: they differ between
CPUs by up to 5x). Each candidate -- the OpenBLAS builds present (openmp,
pthread: /usr/lib/x86_64-linux-gnu/openblas-*, put first on
LD_LIBRARY_PATH) times OPENBLAS_CORETYPE (unset, Haswell, SkylakeX,
Cooperlake, Zen) times OMP_WAIT_POLICY (unset, PASSIVE: spinning OpenMP
workers cost eager 30x on a busy 2-core machine; GOMP_SPINCOUNT is removed
from both sides' environment, so unset means libgomp's spinning default) -- runs each model's eager
steps in a fresh process (all are read at load time) with ATEN_CPU_CAPABILITY=avx512 where the CPU has
it, 2 threads and malloc keeping its memory; the fastest per model is the
peer. The device runs under both wait policies too (libgomp's spinning
default, which oneDNN's dots run on, and PASSIVE), the faster is kept. Then eager at
its setting and the device at its own alternate ROUNDS (3) times; the best median of each gives the ratio
eager / axle (above 1: the device is faster), and the fastest single steps
theirs (on a busy machine, the least disturbed). Prints one line per model:
    MODEL eager_ms=.. axle_ms=.. ratio=.. (fastest steps: ...) peer=<blas>,<coretype>,<wait policy> axle_wait=<policy>
"""
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn
import torch_axle

torch.set_num_threads(2)
MODELS = ("block", "mlp", "mnist", "block128")
# Transformer sizes: vocabulary, sequence, width, heads, MLP width, batch.
BLOCK_SIZES = {"block": (24, 8, 16, 2, 32, 4), "block128": (256, 64, 128, 4, 512, 8)}


class Block(nn.Module):
    def __init__(self, vocab, seq, width, heads, hidden):
        super().__init__()
        self.vocab = vocab
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(0.1 * torch.randn(seq, width))
        self.norm1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))
        self.head = nn.Linear(width, vocab)
        self.register_buffer("causal", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))
    def forward(self, ids):
        h = self.embed(ids) + self.pos
        a = self.norm1(h)
        h = h + self.attn(a, a, a, attn_mask=self.causal)[0]
        h = h + self.mlp(self.norm2(h))
        return self.head(h).reshape(-1, self.vocab)

def mlp(sizes, activations):
    """Linear layers of `sizes`, each but the last followed by its activation."""
    layers = []
    for i, act in enumerate(activations):
        layers += [nn.Linear(sizes[i], sizes[i + 1]), act()]
    return nn.Sequential(*layers, nn.Linear(sizes[-2], sizes[-1]))

FOREACH = os.environ.get("FOREACH", "") not in ("", "0")


def setup(name, device, g):
    """The model, its optimizer, a batch (x, y) and the loss function."""
    if name in BLOCK_SIZES:
        vocab, seq, width, heads, hidden, batch = BLOCK_SIZES[name]
        model = Block(vocab, seq, width, heads, hidden).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2 if name == "block" else 1e-3,
                               foreach=FOREACH)
        x = torch.randint(0, vocab, (batch, seq), generator=g).to(device)
        y = torch.randint(0, vocab, (batch * seq,), generator=g).to(device)
        return model, opt, x, y, F.cross_entropy
    if name == "mlp":
        model = mlp([64, 128, 128, 10], [nn.ReLU, nn.GELU]).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, foreach=FOREACH)
        x = torch.randn(64, 64, generator=g).to(device); y = torch.randn(64, 10, generator=g).to(device)
        return model, opt, x, y, F.mse_loss
    if name == "mnist":
        model = mlp([784, 256, 256, 10], [nn.ReLU, nn.ReLU]).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=FOREACH)
        x = torch.randn(64, 784, generator=g).to(device)
        y = torch.randint(0, 10, (64,), generator=g).to(device)
        return model, opt, x, y, F.cross_entropy
    raise SystemExit(f"unknown model {name!r} (one of {', '.join(MODELS)})")

def run(name, device, steps):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    model, opt, x, y, lossf = setup(name, device, g)
    rec, tot, syn, exe = [], [], [], []
    lazy = device.type == "xla"
    for s in range(steps):
        e0 = torch_axle.metrics.metric_data("ExecuteTime") if lazy else None
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        t1 = time.perf_counter()
        if lazy:
            torch_axle.sync()
        ts = time.perf_counter()
        loss.item()
        t2 = time.perf_counter()
        if s >= 5:
            rec.append(t1 - t0); tot.append(t2 - t0); syn.append(ts - t1)
            if lazy:
                exe.append(torch_axle.metrics.metric_data("ExecuteTime")[1] - (e0[1] if e0 else 0))
    for v in (rec, tot, syn, exe):
        v.sort()
    med = lambda v: v[len(v) // 2] * 1e3 if v else 0.0
    return med(rec), tot[0] * 1e3, med(tot), med(syn), med(exe)

def loaded_blas():
    """The BLAS library this process loaded (from /proc/self/maps)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "blas" in line:
                return line.split()[-1]
    return "?"


BLAS_ROOT = "/usr/lib/x86_64-linux-gnu"
CORETYPES = ["", "Haswell", "SkylakeX", "Cooperlake", "Zen"]


def worker(kind, name, steps, blas="", coretype="", wait=""):
    """One model's steps in a fresh process: (total_med ms, total_min ms, loaded BLAS)."""
    env = dict(os.environ, WORKER=kind, ONLY=name, STEPS=str(steps), OMP_NUM_THREADS="2",
               GLIBC_TUNABLES="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295")
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("GOMP_SPINCOUNT", None)
    if wait:
        env["OMP_WAIT_POLICY"] = wait
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    if blas:
        env["LD_LIBRARY_PATH"] = os.path.join(BLAS_ROOT, blas) + ":" + env.get("LD_LIBRARY_PATH", "")
    with open("/proc/cpuinfo") as f:
        if "avx512f" in f.read():
            env["ATEN_CPU_CAPABILITY"] = "avx512"
    out = subprocess.run([sys.executable, os.path.abspath(__file__)], env=env, check=True,
                         capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["total_med"], result["total_min"], result["blas"]


def compare():
    steps = int(os.environ.get("STEPS", "40"))
    rounds = int(os.environ.get("ROUNDS", "3"))
    blases = [b for b in ("openblas-openmp", "openblas-pthread")
              if os.path.isdir(os.path.join(BLAS_ROOT, b))] or [""]
    for name in os.environ.get("ONLY", ",".join(MODELS)).split(","):
        tried = []
        for blas in blases:
            for coretype in CORETYPES:
                for wait in ("", "PASSIVE"):
                    ms, _, loaded = worker("cpu", name, 12, blas, coretype, wait)
                    tried.append((ms, blas, coretype, wait, loaded))
                    print(f"# {name} eager blas={loaded} "
                          f"OPENBLAS_CORETYPE={coretype or '(unset)'} "
                          f"OMP_WAIT_POLICY={wait or '(unset)'}: {ms:.2f} ms", flush=True)
        _, blas, coretype, wait, loaded = min(tried)
        # The device under both wait policies too (its dots run on
        # libgomp's team).
        axle_tried = []
        for axle_wait in ("", "PASSIVE"):
            ms = worker("axle", name, 12, wait=axle_wait)[0]
            axle_tried.append((ms, axle_wait))
            print(f"# {name} axle OMP_WAIT_POLICY={axle_wait or '(unset)'}: {ms:.2f} ms", flush=True)
        axle_wait = min(axle_tried)[1]
        eager, axle = [], []
        for _ in range(rounds):
            eager.append(worker("cpu", name, steps, blas, coretype, wait)[:2])
            axle.append(worker("axle", name, steps, wait=axle_wait)[:2])
        e, a = min(m for m, _ in eager), min(m for m, _ in axle)
        e_min, a_min = min(m for _, m in eager), min(m for _, m in axle)
        print(f"{name} eager_ms={e:.2f} axle_ms={a:.2f} ratio={e / a:.2f} "
              f"(fastest steps: eager {e_min:.2f} axle {a_min:.2f} ratio {e_min / a_min:.2f}) "
              f"peer={os.path.basename(os.path.dirname(loaded))},{coretype or 'unset'},"
              f"{wait or 'unset'} axle_wait={axle_wait or 'unset'}", flush=True)


steps = int(os.environ.get("STEPS", "40"))
if os.environ.get("WORKER"):
    name = os.environ["ONLY"]
    device = torch_axle.device() if os.environ["WORKER"] == "axle" else torch.device("cpu")
    r = run(name, device, steps)
    print(json.dumps({"record_med": r[0], "total_min": r[1], "total_med": r[2],
                      "blas": loaded_blas()}))
    sys.exit(0)
if os.environ.get("COMPARE"):
    compare()
    sys.exit(0)
for name in os.environ.get("ONLY", ",".join(MODELS)).split(","):
    if os.environ.get("CPU"):
        r = run(name, torch.device("cpu"), steps)
        print(f"{name} cpu   record_med={r[0]:.2f} total_min={r[1]:.2f} total_med={r[2]:.2f}")
    r = run(name, torch_axle.device(), steps)
    print(f"{name} axle[{os.environ.get('TAG','')}] record_med={r[0]:.2f} total_min={r[1]:.2f} "
          f"total_med={r[2]:.2f} sync_med={r[3]:.2f} execute_med={r[4]:.2f}", flush=True)
