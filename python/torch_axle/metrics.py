"""Counters and timers of the Axle device (torch_xla.debug.metrics' API).

Counters: UncachedCompile, CachedCompile, MarkStep, CreateTensor,
DestroyTensor, axle::<op> per lowered op, aten::<op> per CPU fallback.
Timers: CompileTime, ExecuteTime, TransferToDeviceTime,
TransferFromDeviceTime.
"""
import torch


def metrics_report():
    """Every counter and timer, as text."""
    return torch.ops.axle.metrics_report()


def counter_value(name):
    """The counter's value, or None when it was never incremented."""
    return torch.ops.axle.counter_value(name)


def counter_names():
    return list(torch.ops.axle.counter_names())


def metric_names():
    return list(torch.ops.axle.metric_names())


def metric_data(name):
    """(count, total seconds, [min seconds, max seconds]) of a timer, or None."""
    data = torch.ops.axle.metric_data(name)
    if not data:
        return None
    return int(data[0]), data[1], [data[2], data[3]]


def clear_all():
    """Forgets every counter and timer."""
    torch.ops.axle.clear_all()


def fallback_ops():
    """The aten:: counters: ops that ran on the CPU."""
    return [n for n in counter_names() if n.startswith("aten::")]
