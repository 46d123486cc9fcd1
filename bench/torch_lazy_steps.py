"""Steady training steps on the Axle PyTorch device (issue 14's speed):
the transformer block of axle/frontends/torch/tests/train_mlp_test.py under
Adam and the MLP of examples/torch/train_mlp.py under SGD with momentum.

    GOMP_SPINCOUNT=0 OMP_NUM_THREADS=2 PYTHONPATH=build/python \
        /usr/bin/python3 bench/torch_lazy_steps.py

Per model, after 5 warm-up steps (the compiles): record_med, the median time
to record a step (forward, backward, optimizer; no sync); total_min and
total_med, the whole step (with sync and loss.item()), in ms.
Environment: CPU=1 also times PyTorch's CPU eager; ONLY=block or ONLY=mlp;
STEPS (40); TAG, a label for the axle lines (compare two builds by
alternating PYTHONPATHs in one session: the machine is noisy).
"""
import os
import time

import torch
import torch.nn.functional as F
from torch import nn
import torch_axle

torch.set_num_threads(2)
vocab, seq, width = 24, 8, 16

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(0.1 * torch.randn(seq, width))
        self.norm1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, 2, batch_first=True)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 32), nn.GELU(), nn.Linear(32, width))
        self.head = nn.Linear(width, vocab)
        self.register_buffer("causal", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))
    def forward(self, ids):
        h = self.embed(ids) + self.pos
        a = self.norm1(h)
        h = h + self.attn(a, a, a, attn_mask=self.causal)[0]
        h = h + self.mlp(self.norm2(h))
        return self.head(h).reshape(-1, vocab)

def mlp():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.GELU(), nn.Linear(128, 10))

def run(name, device, steps):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    if name == "block":
        model = Block().to(device); opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        x = torch.randint(0, vocab, (4, seq), generator=g).to(device)
        y = torch.randint(0, vocab, (4 * seq,), generator=g).to(device)
        lossf = F.cross_entropy
    else:
        model = mlp().to(device); opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        x = torch.randn(64, 64, generator=g).to(device); y = torch.randn(64, 10, generator=g).to(device)
        lossf = F.mse_loss
    rec, tot = [], []
    for s in range(steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        t1 = time.perf_counter()
        if device.type == "xla":
            torch_axle.sync()
        loss.item()
        t2 = time.perf_counter()
        if s >= 5:
            rec.append(t1 - t0); tot.append(t2 - t0)
    rec.sort(); tot.sort()
    return rec[len(rec)//2] * 1e3, tot[0] * 1e3, tot[len(tot)//2] * 1e3

steps = int(os.environ.get("STEPS", "40"))
for name in os.environ.get("ONLY", "block,mlp").split(","):
    if os.environ.get("CPU"):
        r = run(name, torch.device("cpu"), steps)
        print(f"{name} cpu   record_med={r[0]:.2f} total_min={r[1]:.2f} total_med={r[2]:.2f}")
    r = run(name, torch_axle.device(), steps)
    print(f"{name} axle[{os.environ.get('TAG','')}] record_med={r[0]:.2f} total_min={r[1]:.2f} total_med={r[2]:.2f}", flush=True)
