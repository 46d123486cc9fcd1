"""Trains a small MLP on the Axle device and on PyTorch's CPU, and prints both
losses, the compile counters and the per-step time.

    /usr/bin/python3 examples/torch/train_mlp.py

after building (make build, or the torch_axle target): the package is taken
from build/python unless torch_axle is installed.
"""
import os
import sys
import time

# libgomp's idle workers (PyTorch's and oneDNN's) spin for a while after each
# parallel region and, on a small machine, starve Axle's own threads; Axle's
# executables stop that at startup, a Python module cannot. So the script
# restarts itself with spinning off unless the user chose a policy.
if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
    os.environ["GOMP_SPINCOUNT"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn.functional as F
from torch import nn

try:
    import torch_axle
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "build", "python"))
    import torch_axle
import torch_axle.metrics as met  # noqa: E402


def train(device, steps, batches):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.GELU(),
                          nn.Linear(128, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    start = None
    for step in range(steps):
        if step == 3:  # after the compiles
            start = time.perf_counter()
        x, y = (t.to(device) for t in batches[step])
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        if device.type == "xla":
            torch_axle.sync()
        losses.append(loss.item())
    per_step = (time.perf_counter() - start) / (steps - 3)
    return losses, per_step


def main():
    steps = 20
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(64, 64, generator=g), torch.randn(64, 10, generator=g))
               for _ in range(steps)]
    cpu_losses, cpu_time = train(torch.device("cpu"), steps, batches)
    met.clear_all()
    axle_losses, axle_time = train(torch_axle.device(), steps, batches)
    print("step  cpu loss    axle loss")
    for i, (c, a) in enumerate(zip(cpu_losses, axle_losses)):
        print(f"{i:4d}  {c:.6f}  {a:.6f}")
    print(f"compiles: {met.counter_value('UncachedCompile')} uncached, "
          f"{met.counter_value('CachedCompile')} cached; CPU fallbacks: {met.fallback_ops()}")
    print(f"steady step: cpu {cpu_time * 1e3:.2f} ms, axle {axle_time * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
