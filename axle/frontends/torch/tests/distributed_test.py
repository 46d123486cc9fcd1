"""torch.distributed's "axle" backend (torch_axle.distributed): two
processes on localhost run the collectives (and reduce, gather and scatter
with a root, send/recv between the two, both sending first, recv from any
source) on device tensors and a data-parallel training loop (each process
half the batch, gradients all-reduced with AVG); both end with the same
weights, bit for bit, and those of one process training on the whole
batch. The same two processes run over Gloo (started here) and, when the
build has MPI and mpirun is here, over MPI (started by mpirun)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

WORLD = 2

WORKER = r"""
import datetime, json, sys, time, torch, torch_axle, torch_axle.distributed
import torch.distributed as dist
from torch import nn

import os
# argv[1]: the rank, or "mpi": MPI's (mpirun started the processes).
launcher = sys.argv[1]
rank = int(os.environ["OMPI_COMM_WORLD_RANK"]) if launcher == "mpi" else int(launcher)
world, init_file, out = int(sys.argv[2]), sys.argv[3], sys.argv[4] + f"_{rank}.json"
dev = torch_axle.device()
results = {}
if world > 1:
    dist.init_process_group("axle", init_method="file://" + init_file, rank=rank,
                            world_size=world)
    results["backend"] = dist.get_backend()
    results["transport"] = dist.distributed_c10d._get_default_group().transport

    def reduced(op, values, dtype=torch.float32):
        t = torch.tensor(values, dtype=dtype).to(dev)
        dist.all_reduce(t, op=op)
        return t.cpu().tolist()

    mine = [rank + 1.0, -2.0 * rank, 0.5 * (rank + 1)]
    for name in ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]:
        results["all_reduce_" + name] = reduced(getattr(dist.ReduceOp, name), mine)
    results["all_reduce_int_SUM"] = reduced(dist.ReduceOp.SUM, [rank + 3, 7], torch.int64)
    results["all_reduce_int_BXOR"] = reduced(dist.ReduceOp.BXOR, [rank + 1, 6], torch.int32)

    base = torch.zeros(2, 3).to(dev) + rank
    dist.all_reduce(base[:, 1:])          # a view: its base sees the result
    results["all_reduce_view"] = base.cpu().tolist()

    cpu = torch.full((3,), float(rank + 1))
    dist.all_reduce(cpu)
    results["all_reduce_cpu"] = cpu.tolist()

    t = torch.tensor([10.0 * rank, 1.0 + rank]).to(dev)
    dist.broadcast(t, src=1)
    results["broadcast"] = t.cpu().tolist()

    gathered = [torch.zeros(2).to(dev) for _ in range(world)]
    dist.all_gather(gathered, torch.tensor([rank, rank + 0.5]).to(dev))
    results["all_gather"] = [g.cpu().tolist() for g in gathered]

    out_t = torch.zeros(2).to(dev)
    pieces = [torch.tensor([rank + 10.0 * i, 1.0]).to(dev) for i in range(world)]
    dist.reduce_scatter(out_t, pieces)
    results["reduce_scatter"] = out_t.cpu().tolist()

    received = [torch.zeros(1).to(dev) for _ in range(world)]
    dist.all_to_all(received, [torch.tensor([100.0 * rank + i]).to(dev) for i in range(world)])
    results["all_to_all"] = [r.cpu().tolist() for r in received]

    t = torch.tensor([rank + 1.0, 10.0 * rank]).to(dev)
    dist.reduce(t, dst=1, op=dist.ReduceOp.SUM)
    results["reduce_sum"] = t.cpu().tolist()
    t = torch.tensor([rank + 2, -rank], dtype=torch.int32).to(dev)
    dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    results["reduce_max"] = t.cpu().tolist()

    gathered = [torch.zeros(2).to(dev) for _ in range(world)] if rank == 0 else None
    dist.gather(torch.tensor([rank + 0.25, 3.0 * rank]).to(dev), gathered, dst=0)
    results["gather"] = [g.cpu().tolist() for g in gathered] if rank == 0 else None

    mine = torch.full((3,), -1.0).to(dev)
    pieces = [torch.arange(3.0) + 10.0 * i for i in range(world)] if rank == 1 else None
    dist.scatter(mine, [p.to(dev) for p in pieces] if pieces else None, src=1)
    results["scatter"] = mine.cpu().tolist()

    # send/recv: one way, twice on one tag (in order), then back on
    # another; the first on CPU tensors, the rest on the device.
    if rank == 0:
        dist.send(torch.tensor([1.5, 2.5]), dst=1, tag=3)
        dist.send(torch.tensor([3.5, 4.5]).to(dev), dst=1, tag=3)
        back = torch.zeros(2, dtype=torch.int64).to(dev)
        dist.recv(back, src=1, tag=7)
        results["recv"] = [back.cpu().tolist()]
        work = dist.isend(torch.tensor([9.0]).to(dev), dst=1)
        work.wait()
    else:
        first, second = torch.zeros(2), torch.zeros(2).to(dev)
        dist.recv(first, src=0, tag=3)
        dist.recv(second, src=0, tag=3)
        dist.send(torch.tensor([7, 8]).to(dev), dst=0, tag=7)
        late = torch.zeros(1).to(dev)
        dist.irecv(late, src=0).wait()
        results["recv"] = [first.tolist(), second.cpu().tolist(), late.cpu().tolist()]

    # Both send first: isend returns before the peer receives.
    other = 1 - rank
    work = dist.isend(torch.tensor([rank + 0.5, 2.0 * rank]).to(dev), dst=other, tag=11)
    swapped = torch.zeros(2).to(dev)
    dist.recv(swapped, src=other, tag=11)
    work.wait()
    results["swapped"] = swapped.cpu().tolist()

    # recv from any source: its return value (or the work's) names the sender.
    if rank == 0:
        t = torch.zeros(3, dtype=torch.int32)
        source = dist.recv(t, tag=12)
        late = torch.zeros(1).to(dev)
        work = dist.irecv(late, tag=13)
        work.wait()
        results["any_source"] = [source, t.tolist(), work._source_rank(), late.cpu().tolist()]
    else:
        dist.send(torch.tensor([4, 5, 6], dtype=torch.int32).to(dev), dst=0, tag=12)
        dist.send(torch.tensor([-3.0]), dst=0, tag=13)

    # is_completed() never waits: a recv whose sender has not sent yet is
    # in flight; once it says completed, the tensor has its values (no
    # wait() needed).
    group = dist.distributed_c10d._get_default_group()

    def released():
        # Polls until the group has released every message (or 2000 tries).
        for _ in range(2000):
            if group._messages_in_flight() == 0:
                return True
            time.sleep(0.005)
        return False

    if rank == 0:
        early = torch.zeros(2).to(dev)
        work = dist.irecv(early, src=1, tag=20)
        before = work.is_completed()
        dist.barrier()  # rank 1 sends after this
        polls = 0
        while not work.is_completed() and polls < 10**7:
            polls += 1
        results["is_completed"] = [before, work.is_success(), early.cpu().tolist(),
                                   work.wait(), work._source_rank()]
        # wait(timeout): raises when the peer has not sent yet (it sends
        # after the barrier), and the message stays in flight.
        pending = torch.zeros(1)
        work = dist.irecv(pending, src=1, tag=23)
        try:
            work.wait(datetime.timedelta(milliseconds=20))
            timed_out = "no error"
        except RuntimeError as error:
            timed_out = str(error)
        dist.barrier()
        results["wait_timeout"] = [timed_out, work.wait(), pending.tolist()]
        # A dropped isend is released once it has finished.
        dist.isend(torch.tensor([5.0, 6.0]).to(dev), dst=1, tag=21)
        dist.send(torch.tensor([8.0]), dst=1, tag=22)
        dist.barrier()
        results["dropped"] = released()
    else:
        dist.barrier()
        dist.send(torch.tensor([20.0, 21.0]).to(dev), dst=0, tag=20)
        dist.barrier()
        dist.send(torch.tensor([23.0]), dst=0, tag=23)
        got = torch.zeros(2)
        dist.recv(got, src=0, tag=21)
        # A dropped irecv: its tensor gets the values once it has arrived.
        late = torch.zeros(1).to(dev)
        dist.irecv(late, src=0, tag=22)
        dist.barrier()
        results["dropped"] = [released(), got.tolist(), late.cpu().tolist()]

    # A group of its own (Gloo: a new mesh; MPI: a communicator of the members).
    sub = dist.new_group([0, 1])
    t = torch.tensor([rank + 1.0]).to(dev)
    dist.all_reduce(t, group=sub)
    results["new_group"] = t.cpu().tolist()
    dist.barrier()

# Data parallel: the batch is split among the processes.
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)).to(dev)
results["initial"] = [p.detach().cpu().flatten().tolist() for p in model.parameters()]
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
g = torch.Generator().manual_seed(1)
for step in range(5):
    x, y = torch.randn(8, 6, generator=g), torch.randint(0, 3, (8,), generator=g)
    share = 8 // world
    x, y = x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
    loss.backward()
    if world > 1:
        for p in model.parameters():
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
    opt.step()
    torch_axle.sync()
results["weights"] = [p.detach().cpu().flatten().tolist() for p in model.parameters()]
with open(out, "w") as f:
    json.dump(results, f)
if world > 1:
    dist.destroy_process_group()
"""


def finish(proc):
    """The process's output once it has exited (killed after 300 s)."""
    try:
        log, _ = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        log, _ = proc.communicate()
    if proc.returncode != 0:
        raise AssertionError(f"worker exited {proc.returncode}:\n{log}")


def read_results(prefix, world):
    results = []
    for rank in range(world):
        with open(f"{prefix}_{rank}.json") as f:
            results.append(json.load(f))
    return results


def run_processes(world, folder):
    init_file = os.path.join(folder, f"init_{world}")
    prefix = os.path.join(folder, f"out_{world}")
    procs = [subprocess.Popen(
        [sys.executable, "-c", WORKER, str(rank), str(world), init_file, prefix],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for rank in range(world)]
    for proc in procs:
        finish(proc)
    return read_results(prefix, world)


def run_under_mpirun(world, folder):
    init_file = os.path.join(folder, "init_mpi")
    prefix = os.path.join(folder, "out_mpi")
    command = ["mpirun", "--oversubscribe", "-n", str(world)]
    if os.getuid() == 0:
        command.append("--allow-run-as-root")
    command += [sys.executable, "-c", WORKER, "mpi", str(world), init_file, prefix]
    env = dict(os.environ)
    env.pop("AXLE_COLLECTIVES_TRANSPORT", None)  # mpirun alone picks MPI
    finish(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env))
    return read_results(prefix, world)


class DistributedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.environ.setdefault("AXLE_COLLECTIVE_TIMEOUT", "120")
        with tempfile.TemporaryDirectory() as folder:
            cls.ranks = run_processes(WORLD, folder)
            (cls.single,) = run_processes(1, folder)

    def test_backend_is_axle(self):
        for r in self.ranks:
            self.assertEqual(r["backend"], "axle")
            self.assertEqual(r["transport"], "gloo")

    def test_all_reduce_ops(self):
        a, b = [[r + 1.0, -2.0 * r, 0.5 * (r + 1)] for r in range(WORLD)]
        expected = {
            "SUM": [x + y for x, y in zip(a, b)],
            "AVG": [(x + y) / 2 for x, y in zip(a, b)],
            "PRODUCT": [x * y for x, y in zip(a, b)],
            "MIN": [min(x, y) for x, y in zip(a, b)],
            "MAX": [max(x, y) for x, y in zip(a, b)],
        }
        for rank, r in enumerate(self.ranks):
            for name, values in expected.items():
                self.assertEqual(r["all_reduce_" + name], values, name)
            self.assertEqual(r["all_reduce_int_SUM"], [3 + 4, 14])
            self.assertEqual(r["all_reduce_int_BXOR"], [1 ^ 2, 0])
            # Columns 1 and 2 summed (0 + 1); column 0 keeps the rank.
            self.assertEqual(r["all_reduce_view"], [[float(rank), 1.0, 1.0]] * 2)
            self.assertEqual(r["all_reduce_cpu"], [3.0, 3.0, 3.0])

    def test_broadcast_gather_scatter(self):
        for rank, r in enumerate(self.ranks):
            self.assertEqual(r["broadcast"], [10.0, 2.0])
            self.assertEqual(r["all_gather"], [[0.0, 0.5], [1.0, 1.5]])
            self.assertEqual(r["reduce_scatter"], [0.0 + 1.0 + 20.0 * rank, 2.0])
            self.assertEqual(r["all_to_all"], [[100.0 * i + rank] for i in range(WORLD)])

    def test_reduce_gather_scatter_to_a_root(self):
        zero, one = self.ranks
        self.assertEqual(one["reduce_sum"], [1.0 + 2.0, 0.0 + 10.0])
        self.assertEqual(zero["reduce_sum"], [1.0, 0.0])  # not the root: unchanged
        self.assertEqual(zero["reduce_max"], [3, 0])
        self.assertEqual(one["reduce_max"], [3, -1])
        self.assertEqual(zero["gather"], [[0.25, 0.0], [1.25, 3.0]])
        self.assertIsNone(one["gather"])
        for rank, r in enumerate(self.ranks):
            self.assertEqual(r["scatter"], [10.0 * rank, 10.0 * rank + 1, 10.0 * rank + 2])

    def test_send_recv(self):
        check_send_recv(self, self.ranks)

    def test_data_parallel_weights_agree(self):
        self.assertEqual(self.ranks[0]["weights"], self.ranks[1]["weights"])

    def test_data_parallel_matches_whole_batch(self):
        for mine, whole in zip(self.ranks[0]["weights"], self.single["weights"]):
            self.assertEqual(len(mine), len(whole))
            for x, y in zip(mine, whole):
                self.assertAlmostEqual(x, y, delta=1e-5 + 1e-5 * abs(y))
        # Training moved the weights: the comparison is not of the initial ones.
        self.assertEqual(self.ranks[0]["initial"], self.single["initial"])
        self.assertNotEqual(self.single["weights"], self.single["initial"])

    def test_unknown_transport_is_an_error(self):
        env = dict(os.environ, AXLE_COLLECTIVES_TRANSPORT="tcp")
        probe = subprocess.run(
            [sys.executable, "-c", "import torch, torch_axle.distributed\n"
             "try:\n    torch.ops.axle.dist_transport()\nexcept RuntimeError as e:\n"
             "    print(e)"], env=env, capture_output=True, text=True, timeout=300)
        self.assertIn("AXLE_COLLECTIVES_TRANSPORT=tcp: the transports are gloo and mpi",
                      probe.stdout, probe.stderr)


def check_send_recv(test, ranks):
    zero, one = ranks
    test.assertEqual(one["recv"], [[1.5, 2.5], [3.5, 4.5], [9.0]])
    test.assertEqual(zero["recv"], [[7, 8]])
    test.assertEqual(zero["swapped"], [1.5, 2.0])
    test.assertEqual(one["swapped"], [0.5, 0.0])
    test.assertEqual(zero["any_source"], [1, [4, 5, 6], 1, [-3.0]])
    # Not completed before the peer sent; completed (and delivered) after,
    # without a wait.
    test.assertEqual(zero["is_completed"], [False, True, [20.0, 21.0], True, 1])
    timed_out, waited, values = zero["wait_timeout"]
    test.assertIn("the recv did not finish within 0:00:00.020000", timed_out)
    test.assertEqual([waited, values], [True, [23.0]])
    # Dropped works: released once finished; a dropped recv delivers.
    test.assertTrue(zero["dropped"])
    test.assertEqual(one["dropped"], [True, [5.0, 6.0], [8.0]])
    for r in ranks:
        test.assertEqual(r["new_group"], [3.0])


@unittest.skipUnless(os.environ.get("AXLE_TEST_MPI") == "1" and shutil.which("mpirun"),
                     "the build has no MPI transport, or mpirun is not here")
class MpiTest(unittest.TestCase):
    """The same two processes, started by mpirun: the backend picks MPI."""

    @classmethod
    def setUpClass(cls):
        os.environ.setdefault("AXLE_COLLECTIVE_TIMEOUT", "120")
        with tempfile.TemporaryDirectory() as folder:
            cls.ranks = run_under_mpirun(WORLD, folder)

    def test_transport_is_mpi(self):
        for r in self.ranks:
            self.assertEqual(r["backend"], "axle")
            self.assertEqual(r["transport"], "mpi")

    def test_collectives(self):
        for rank, r in enumerate(self.ranks):
            self.assertEqual(r["all_reduce_SUM"], [3.0, -2.0, 1.5])
            self.assertEqual(r["all_gather"], [[0.0, 0.5], [1.0, 1.5]])
            self.assertEqual(r["scatter"], [10.0 * rank, 10.0 * rank + 1, 10.0 * rank + 2])

    def test_send_recv(self):
        check_send_recv(self, self.ranks)

    def test_data_parallel_weights_agree(self):
        self.assertEqual(self.ranks[0]["weights"], self.ranks[1]["weights"])


if __name__ == "__main__":
    unittest.main()
