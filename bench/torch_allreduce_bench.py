"""torch.distributed's all-reduce: the "axle" backend against Gloo's own.

    PYTHONPATH=build/python /usr/bin/python3 bench/torch_allreduce_bench.py \
        [--elements 16777216] [--iterations 10]

Starts 2 processes on this machine (the peer runs in the same run). Each
joins two process groups over loopback TCP: torch's own "gloo" backend
(ProcessGroupGloo: Gloo's ring all-reduce) and torch_axle's "axle" backend
(Axle's Communicator on Gloo's transport: fixed-order reduce-scatter +
all-gather), and times them alternately (gloo, axle, gloo, axle, ...) on
the same CPU tensor of f32 ELEMENTS (16M = 64 MB), then on one element
(latency). Process 0 prints the medians in milliseconds. Under mpirun
(`mpirun -n 2 python3 bench/torch_allreduce_bench.py`) the axle group runs
on MPI instead (the rank comes from MPI; Gloo's group still on TCP).

A benchmark, not a test: nothing is asserted, but both results are checked
against the expected sum so that a broken path cannot look fast.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

WORLD = 2


def worker(rank, init_method, elements, iterations):
    import torch
    import torch.distributed as dist
    import torch_axle.distributed  # noqa: F401  (registers "axle")

    dist.init_process_group("gloo", init_method=init_method, rank=rank,
                            world_size=WORLD)
    groups = {"gloo": dist.group.WORLD, "axle": dist.new_group(backend="axle")}
    transport = groups["axle"].transport

    def median_ms(numel):
        tensor = torch.full((numel,), float(rank + 1))
        times = {name: [] for name in groups}
        for i in range(iterations + 1):  # the first round warms up
            for name, group in groups.items():
                tensor.fill_(float(rank + 1))
                dist.barrier(group=groups["gloo"])
                start = time.perf_counter()
                dist.all_reduce(tensor, group=group)
                elapsed = time.perf_counter() - start
                expected = float(WORLD * (WORLD + 1) // 2)
                if tensor[0].item() != expected or tensor[-1].item() != expected:
                    raise SystemExit(f"{name}: wrong sum {tensor[0].item()}")
                if i > 0:
                    times[name].append(elapsed * 1e3)
        return {name: statistics.median(t) for name, t in times.items()}

    large = median_ms(elements)
    small = median_ms(1)
    if rank == 0:
        print(f"torch all_reduce, {WORLD} processes, f32 sum, median of {iterations} "
              f"(axle transport: {transport})")
        print(f"  {elements * 4 / 2**20:.0f} MB: gloo {large['gloo']:.1f} ms, "
              f"axle {large['axle']:.1f} ms, axle/gloo {large['axle'] / large['gloo']:.2f}x")
        print(f"  1 f32: gloo {small['gloo'] * 1e3:.0f} us, axle {small['axle'] * 1e3:.0f} us")
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=16 * 2**20)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--init-method", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        # mpirun started both processes; torch's groups meet at a TCP store
        # (AXLE_BENCH_PORT, default 29517) on loopback.
        port = os.environ.get("AXLE_BENCH_PORT", "29517")
        worker(int(os.environ["OMPI_COMM_WORLD_RANK"]), "tcp://127.0.0.1:" + port,
               args.elements, args.iterations)
        return
    if args.rank is not None:
        worker(args.rank, args.init_method, args.elements, args.iterations)
        return
    with tempfile.TemporaryDirectory() as folder:
        init_file = "file://" + os.path.join(folder, "init")
        peers = [subprocess.Popen([sys.executable, __file__, "--rank", str(rank), "--init-method",
                                   init_file, "--elements", str(args.elements), "--iterations",
                                   str(args.iterations)]) for rank in range(WORLD)]
        status = 0
        for peer in peers:
            status = status or peer.wait(timeout=600)
        sys.exit(status)


if __name__ == "__main__":
    main()
