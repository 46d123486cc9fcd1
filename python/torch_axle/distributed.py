"""torch.distributed's "axle" backend: a process group on Axle's collectives.

    import torch.distributed as dist, torch_axle.distributed
    dist.init_process_group("axle", init_method=..., rank=r, world_size=n)
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)

The collectives run on Axle's Communicator (axle/collectives) over Gloo's
TCP transport or MPI, whose fixed reduction order gives every process the
same bits. Tensors may be on the Axle device (torch_axle.device()) or on
the CPU. A collective is a step boundary: the device's pending values are
computed first (as mark_step does), then the values travel through the
host (see axle/frontends/torch/distributed.cc).

Supported: all_reduce (SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR) and
all_reduce_coalesced, broadcast, all_gather, _all_gather_base,
reduce_scatter, _reduce_scatter_base, all_to_all, reduce, gather, scatter,
send/recv (and isend/irecv, and recv from any source: recv(t) returns the
sender's rank), barrier; new_group makes a communicator of its own.

The collectives are synchronous: one has finished when it returns, so its
work is already complete. send and recv are not: they start the message
and return a work whose wait() finishes it (a recv's tensor gets its
values then), so two processes may both isend before they recv, as with
Gloo's own backend. is_completed() never waits: it says whether the
message has finished (then it finishes the work as wait() would: a recv's
tensor has its values; a failure makes is_success() False, exception()
the error, and wait() raise it). wait(timeout) with a timeout shorter than
the group's raises when it passes first and leaves the message in flight. A work dropped unwaited releases its
message (and its host copy) once the message has finished, at the group's
next call (a dropped recv's tensor gets its values then), or when the
group is destroyed.

Transport: AXLE_COLLECTIVES_TRANSPORT=gloo|mpi, as for axle-run; unset,
MPI when mpirun started the process, else Gloo. Under MPI the default
group's rank and world_size must be MPI's (init_method="env://" with
RANK=$OMPI_COMM_WORLD_RANK, or any other rendezvous giving those), and a
new_group becomes an MPI communicator of its members.

Rendezvous (Gloo): the group's rank 0 makes a fresh folder under
AXLE_RENDEZVOUS_DIR (default: the temporary folder) and passes its path to
the others through torch.distributed's store; Gloo's file store meets
there, so processes on several hosts need that folder shared. Timeout:
AXLE_COLLECTIVE_TIMEOUT (seconds) when set, else the process group's.
"""
import os
import shutil
import tempfile
import threading
import time

import torch
import torch.distributed as dist

__all__ = ["ProcessGroupAxle", "BACKEND"]

BACKEND = "axle"
_RENDEZVOUS_KEY = "axle/rendezvous_dir"
_WORLD_RANK_KEY = "axle/world_rank/"


class _DoneWork(dist._Work):
    """The collectives are synchronous: their work is done when returned."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True


_IN_FLIGHT = -2  # torch.ops.axle.dist_test: not finished yet


class _MessageWork(dist._Work):
    """A send or recv in flight: wait() finishes it, is_completed() tests it.

    The message is finished once, by whichever comes first; its result (the
    peer, or the error) stays here. A lock keeps two threads from finishing
    it twice; is_completed() does not wait for it (a wait in progress means
    not completed yet)."""

    def __init__(self, comm, message, kind):
        super().__init__()
        self._kind = kind  # "send" or "recv"
        self._comm = comm
        self._message = message  # None once finished
        self._peer = None
        self._error = None
        self._lock = threading.Lock()

    def _finish(self, operation):
        """Runs dist_wait or dist_test on the message; False: still in flight."""
        try:
            peer = operation(self._comm, self._message)
        except RuntimeError as error:
            self._error = error
        else:
            if peer == _IN_FLIGHT:
                return False
            self._peer = peer
        self._message = None
        return True

    def wait(self, timeout=None):
        """Finishes the message. A positive timeout (a timedelta) shorter
        than the group's: a RuntimeError when it passes first, and the
        message stays in flight (wait again, or test it)."""
        if timeout is not None and timeout.total_seconds() > 0:
            deadline = time.monotonic() + timeout.total_seconds()
            while not self.is_completed():
                if time.monotonic() >= deadline:
                    raise RuntimeError(
                        f"axle distributed: the {self._kind} did not finish within {timeout} "
                        "(wait's timeout); it is still in flight")
                time.sleep(0.0005)
        with self._lock:
            if self._message is not None:
                self._finish(torch.ops.axle.dist_wait)
        if self._error is not None:
            raise self._error
        return True

    def is_completed(self):
        if not self._lock.acquire(blocking=False):
            return False  # another thread is finishing it
        try:
            return self._message is None or self._finish(torch.ops.axle.dist_test)
        finally:
            self._lock.release()

    def is_success(self):
        return self.is_completed() and self._error is None

    def exception(self):
        return self._error

    def _source_rank(self):
        """The rank a recv's values came from (after wait)."""
        self.wait()
        return self._peer

    source_rank = _source_rank

    def __del__(self):
        # Dropped unwaited: the group releases the message once finished.
        if getattr(self, "_message", None) is not None and torch is not None:
            torch.ops.axle.dist_release(self._comm, self._message)


def _op_name(opts):
    return opts.reduceOp.op.name.lower()


class ProcessGroupAxle(dist.ProcessGroup):
    """c10d's ProcessGroup over one Axle communicator (torch.ops.axle.dist_*)."""

    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        transport = torch.ops.axle.dist_transport()
        seconds = -1.0 if "AXLE_COLLECTIVE_TIMEOUT" in os.environ else timeout.total_seconds()
        folder, world_ranks = "", []
        if transport == "mpi":
            if dist.is_initialized():
                # A new_group: its members' ranks in the default group
                # (MPI's), in group order.
                store.set(_WORLD_RANK_KEY + str(rank), str(dist.get_rank()))
                world_ranks = [int(store.get(_WORLD_RANK_KEY + str(i))) for i in range(size)]
        elif rank == 0:
            base = os.environ.get("AXLE_RENDEZVOUS_DIR") or None
            folder = tempfile.mkdtemp(prefix="axle_pg_", dir=base)
            store.set(_RENDEZVOUS_KEY, folder)
        else:
            folder = store.get(_RENDEZVOUS_KEY).decode()
        self._comm = torch.ops.axle.dist_connect(
            rank, size, transport, folder, world_ranks, seconds)
        # Everyone has met: the folder is no longer needed.
        torch.ops.axle.dist_barrier(self._comm)
        if rank == 0 and folder:
            shutil.rmtree(folder, ignore_errors=True)
        self._transport = transport

    @property
    def transport(self):
        """"gloo" or "mpi"."""
        return self._transport

    def __del__(self):
        comm = getattr(self, "_comm", None)
        if comm is not None and torch is not None:
            torch.ops.axle.dist_disconnect(comm)

    def _messages_in_flight(self):
        """The sends and recvs this group has not released yet."""
        return torch.ops.axle.dist_in_flight(self._comm)

    def getBackendName(self):
        return BACKEND

    def allreduce(self, tensors, opts=None):
        op = "sum" if opts is None else _op_name(opts)
        torch.ops.axle.dist_all_reduce(self._comm, tensors, op)
        return _DoneWork()

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(tensors, opts)

    def broadcast(self, tensors, opts):
        torch.ops.axle.dist_broadcast(self._comm, tensors, opts.rootRank)
        return _DoneWork()

    def allgather(self, output_lists, inputs, opts=None):
        for outputs, tensor in zip(output_lists, inputs):
            torch.ops.axle.dist_all_gather(self._comm, outputs, tensor)
        return _DoneWork()

    def _allgather_base(self, output, input, opts=None):
        torch.ops.axle.dist_all_gather(self._comm, list(output.chunk(self.size())), input)
        return _DoneWork()

    def reduce_scatter(self, outputs, input_lists, opts):
        for output, inputs in zip(outputs, input_lists):
            torch.ops.axle.dist_reduce_scatter(self._comm, output, inputs, _op_name(opts))
        return _DoneWork()

    def _reduce_scatter_base(self, output, input, opts):
        torch.ops.axle.dist_reduce_scatter(
            self._comm, output, list(input.chunk(self.size())), _op_name(opts))
        return _DoneWork()

    def alltoall(self, outputs, inputs, opts=None):
        torch.ops.axle.dist_all_to_all(self._comm, outputs, inputs)
        return _DoneWork()

    def reduce(self, tensors, opts):
        torch.ops.axle.dist_reduce(self._comm, tensors, opts.rootRank, _op_name(opts))
        return _DoneWork()

    def gather(self, output_lists, inputs, opts):
        (tensor,) = inputs
        outputs = output_lists[0] if output_lists else []
        torch.ops.axle.dist_gather(self._comm, outputs, tensor, opts.rootRank)
        return _DoneWork()

    def scatter(self, outputs, input_lists, opts):
        (tensor,) = outputs
        inputs = input_lists[0] if input_lists else []
        torch.ops.axle.dist_scatter(self._comm, tensor, inputs, opts.rootRank)
        return _DoneWork()

    def send(self, tensors, dst, tag):
        message = torch.ops.axle.dist_send(self._comm, tensors, dst, tag)
        return _MessageWork(self._comm, message, "send")

    def recv(self, tensors, src, tag):
        message = torch.ops.axle.dist_recv(self._comm, tensors, src, tag)
        return _MessageWork(self._comm, message, "recv")

    def recv_anysource(self, tensors, tag):
        message = torch.ops.axle.dist_recv(self._comm, tensors, -1, tag)
        return _MessageWork(self._comm, message, "recv")

    def barrier(self, opts=None):
        torch.ops.axle.dist_barrier(self._comm)
        return _DoneWork()


if not hasattr(dist.Backend, BACKEND.upper()):
    dist.Backend.register_backend(BACKEND, ProcessGroupAxle)
