"""Times PyTorch's 1024^3 f32 matmul under the current environment.

bench/run.sh runs this once per OPENBLAS_CORETYPE candidate and gives
PyTorch the fastest: Debian's OpenBLAS 0.3.21 misdetects newer CPUs (on a
Sapphire Rapids, unset was 4-5x slower than SkylakeX or Cooperlake), and the
best setting differs from machine to machine (../shared/PEERS.md).

    /usr/bin/python3 bench/torch_blas_probe.py [--threads N]

Prints the best of 10 runs in milliseconds.
"""
import argparse
import time

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(1024, 1024, generator=generator)
    b = torch.randn(1024, 1024, generator=generator)
    for _ in range(3):
        a @ b
    best = float("inf")
    for _ in range(10):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    print(f"{best * 1e3:.2f}")


if __name__ == "__main__":
    main()
