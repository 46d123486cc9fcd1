"""torch_axle: PyTorch on Axle through lazy tensors, torch-xla's way.

    import torch, torch_axle
    dev = torch_axle.device()           # torch.device('xla', 0)
    model = model.to(dev)
    ...                                 # ops record a graph
    torch_axle.sync()                   # compile (cached) and run the step

Ops with no lowering run on PyTorch's CPU (counted as aten::<op> in
torch_axle.metrics). Environment: AXLE_DEBUG=1 reports each compile with its
reason and each CPU fallback; AXLE_CACHE_DIR keeps compilations on disk;
AXLE_DUMP_TO=<dir> receives the HLO of a graph that failed to compile;
AXLE_LAZY_PLATFORM picks the platform (cpu by default, or interpreter);
AXLE_PROFILE=1 prints each compiled graph's time per thunk when the process
exits (or at clear_compile_cache()).
"""
import os

import torch

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_axle_torch.so")
if not os.path.exists(_LIBRARY):
    raise ImportError(f"torch_axle: {_LIBRARY} is missing (build the axle_torch target)")
torch.ops.load_library(_LIBRARY)

from . import metrics  # noqa: E402  (needs the library)

if os.environ.get("AXLE_PROFILE", "") not in ("", "0"):
    import atexit

    # A compiled graph prints its thunk table when it is destroyed, and the
    # cache lives as long as the process (past Python's finalization).
    atexit.register(lambda: torch.ops.axle.clear_compile_cache())

__all__ = ["device", "sync", "mark_step", "manual_seed", "clear_compile_cache", "metrics"]


def device(index=0):
    """The Axle device as a torch.device: torch.device('xla', index)."""
    if index != 0:
        raise ValueError(f"torch_axle: there is one device, index 0; got {index}")
    return torch.device("xla", index)


def sync():
    """The step marker: computes every tensor with pending operations in one
    graph (compiled once per distinct graph) and makes their values current."""
    torch.ops.axle.sync()


def mark_step():
    """torch-xla's name for sync()."""
    sync()


def manual_seed(seed):
    """Restarts the device's random stream (dropout masks, bernoulli_,
    uniform_, normal_) at `seed`. The values are drawn on the device, inside
    the step's graph, so they differ from the CPU's for the same seed;
    torch.manual_seed seeds the CPU's stream only."""
    torch.ops.axle.manual_seed(int(seed))


def clear_compile_cache():
    """Drops every compiled graph (the next step compiles again, or loads
    from AXLE_CACHE_DIR). With AXLE_PROFILE=1 each prints its time per thunk."""
    torch.ops.axle.clear_compile_cache()
