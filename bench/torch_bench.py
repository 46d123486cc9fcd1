"""PyTorch 1.13 (eager) on the workloads of bench/modules, the peer in run.sh.

    ATEN_CPU_CAPABILITY=avx512 GLIBC_TUNABLES=... /usr/bin/python3 \
        bench/torch_bench.py --threads N [WORKLOAD ...]

Each workload is written the way a PyTorch user writes it; it runs once to
warm up, then at least 5 and at most --max_runs (50) times until --min_seconds
have passed.
Prints one line per workload, as axle-bench does:
    WORKLOAD ok runs=.. min_ms=.. median_ms=..
The environment variables must be set by the caller (run.sh): PyTorch reads
ATEN_CPU_CAPABILITY when it is imported, glibc its tunables at start-up.
"""
import argparse
import time

import torch
import torch.nn.functional as F


def chain():
    a, b, c = (torch.rand(16 << 20) * 2 - 1 for _ in range(3))
    return lambda: ((a * b + c).relu() * 0.5) - a


def softmax():
    x = torch.randn(4096, 4096)
    return lambda: torch.softmax(x, dim=-1)


def layernorm():
    x = torch.randn(8192, 1024)
    gamma, beta = torch.randn(1024), torch.randn(1024)
    return lambda: F.layer_norm(x, (1024,), gamma, beta, eps=1e-5)


def matmul(dtype):
    def make():
        a = torch.randn(1024, 1024).to(dtype)
        b = torch.randn(1024, 1024).to(dtype)
        return lambda: torch.matmul(a, b)

    return make


def mlp_step():
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 784)
    labels = torch.randint(0, 10, (256,))

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        optimizer.step()
        return loss

    return step


def conv_block():
    x = torch.randn(8, 64, 56, 56).to(memory_format=torch.channels_last)
    k1, k2 = (torch.randn(64, 64, 3, 3).to(memory_format=torch.channels_last) * 0.05
              for _ in range(2))
    mean, var = torch.zeros(64), torch.ones(64)
    scale1, offset1, scale2, offset2 = (torch.randn(64) for _ in range(4))

    def block():
        with torch.no_grad():
            y = F.relu(F.batch_norm(F.conv2d(x, k1, padding=1), mean, var, scale1, offset1))
            y = F.batch_norm(F.conv2d(y, k2, padding=1), mean, var, scale2, offset2)
            return F.relu(y + x)

    return block


WORKLOADS = {
    "chain": chain,
    "softmax": softmax,
    "layernorm": layernorm,
    "matmul_f32": matmul(torch.float32),
    "matmul_bf16": matmul(torch.bfloat16),
    "mlp_step": mlp_step,
    "conv_block": conv_block,
}


def measure(fn, min_runs=5, max_runs=50, min_seconds=1.0):
    fn()
    times = []
    first = time.perf_counter()
    while len(times) < max_runs:
        if len(times) >= min_runs and time.perf_counter() - first >= min_seconds:
            break
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return len(times), times[0], times[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--min_seconds", type=float, default=1.0)
    parser.add_argument("--max_runs", type=int, default=50)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    for name in args.workloads:
        runs, best, median = measure(WORKLOADS[name](), max_runs=args.max_runs,
                                     min_seconds=args.min_seconds)
        print(f"{name} ok runs={runs} min_ms={best:.3f} median_ms={median:.3f}", flush=True)


if __name__ == "__main__":
    main()
