"""The multi-tensor _foreach_* ops (aten_foreach.cc): each against PyTorch's
CPU on lists of differently shaped tensors, recorded through the device's
per-tensor kernels with no CPU fallback; and torch.optim's foreach=True
path (SGD with momentum, Adam) training an MLP on the device as the CPU
trains it, compiling no more than the per-parameter path."""
import copy
import unittest

import torch
import torch.nn.functional as F
from torch import nn

import torch_axle
import torch_axle.metrics as met

SHAPES = [(3, 4), (5,), (2, 3, 2)]


def counter(name):
    return met.counter_value(name) or 0


class ForeachOpsTest(unittest.TestCase):
    def setUp(self):
        self.dev = torch_axle.device()
        self.g = torch.Generator().manual_seed(3)

    def lists(self, positive=False):
        """The same random tensors on the CPU and on the device."""
        cpu = [torch.rand(*s, generator=self.g) + 0.5 if positive
               else torch.randn(*s, generator=self.g) for s in SHAPES]
        return cpu, [t.to(self.dev) for t in cpu]

    def same(self, dev, cpu):
        self.assertEqual(len(dev), len(cpu))
        for d, c in zip(dev, cpu):
            self.assertEqual(d.device.type, "xla")
            torch.testing.assert_close(d.cpu(), c, rtol=1e-5, atol=1e-6)

    def check(self, op, *args, positive=False, lists=1, **kwargs):
        """op(list, [list, ...], *args) on both devices: the results, and the
        in-place variant's updated first list, agree; nothing falls back."""
        inputs = [self.lists(positive) for _ in range(lists)]
        met.clear_all()
        out_of_place = getattr(torch, op)
        self.same(out_of_place(*[d for _, d in inputs], *args, **kwargs),
                  out_of_place(*[c for c, _ in inputs], *args, **kwargs))
        in_place = getattr(torch, op + "_")
        in_place(*[d for _, d in inputs], *args, **kwargs)
        in_place(*[c for c, _ in inputs], *args, **kwargs)
        self.same(inputs[0][1], inputs[0][0])
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())

    def test_binary_with_a_scalar(self):
        for op in ("_foreach_add", "_foreach_sub", "_foreach_mul", "_foreach_div"):
            with self.subTest(op=op):
                self.check(op, 0.75)

    def test_binary_with_a_scalar_each(self):
        for op in ("_foreach_add", "_foreach_sub", "_foreach_mul", "_foreach_div"):
            with self.subTest(op=op):
                self.check(op, [0.5, -2.0, 3.0])

    def test_binary_of_two_lists(self):
        for op in ("_foreach_mul", "_foreach_div"):
            with self.subTest(op=op):
                self.check(op, lists=2)
        for op in ("_foreach_add", "_foreach_sub"):
            with self.subTest(op=op):
                self.check(op, lists=2, alpha=-0.25)

    def test_unary(self):
        for op in ("exp", "expm1", "sqrt", "log", "log1p", "tanh", "sigmoid", "erf", "sin", "cos",
                   "floor", "ceil", "round"):
            with self.subTest(op=op):
                self.check("_foreach_" + op, positive=op in ("sqrt", "log", "log1p"))

    def test_abs_and_neg_out_of_place(self):
        for op in ("_foreach_abs", "_foreach_neg"):
            cpu, dev = self.lists()
            met.clear_all()
            self.same(getattr(torch, op)(dev), getattr(torch, op)(cpu))
            self.assertEqual(met.fallback_ops(), [], met.metrics_report())

    def test_addcmul_and_addcdiv(self):
        for op in ("_foreach_addcmul", "_foreach_addcdiv"):
            with self.subTest(op=op):
                self.check(op, 0.3, lists=3)
                self.check(op, [0.5, -1.0, 2.0], lists=3)

    def test_maximum_and_minimum(self):
        for op in ("_foreach_maximum", "_foreach_minimum"):
            with self.subTest(op=op):
                self.check(op, lists=2)

    def test_zero(self):
        cpu, dev = self.lists()
        met.clear_all()
        torch._foreach_zero_(dev)
        self.same(dev, [torch.zeros_like(t) for t in cpu])
        self.assertEqual(counter("axle::zero_"), len(SHAPES))
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())

    def test_lists_of_different_lengths_are_an_error(self):
        _, a = self.lists()
        with self.assertRaises(RuntimeError):
            torch._foreach_add(a, a[:2])


def mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(),
                         nn.Linear(16, 3))


class ForeachOptimizerTest(unittest.TestCase):
    """foreach=True on the device trains as the CPU's per-parameter path."""

    def train(self, make_optimizer, device, foreach, steps=10):
        torch.manual_seed(0)
        model = mlp()
        g = torch.Generator().manual_seed(1)
        x, y = torch.randn(8, 6, generator=g), torch.randint(0, 3, (8,), generator=g)
        model = copy.deepcopy(model).to(device)
        x, y = x.to(device), y.to(device)
        opt = make_optimizer(model.parameters(), foreach)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if device.type == "xla":
                torch_axle.sync()
            losses.append(loss.item())
        return losses, [p.detach().cpu() for p in model.parameters()]

    def check(self, make_optimizer):
        expected, expected_params = self.train(make_optimizer, torch.device("cpu"), foreach=False)
        met.clear_all()
        losses, params = self.train(make_optimizer, torch_axle.device(), foreach=True)
        torch.testing.assert_close(torch.tensor(losses), torch.tensor(expected), rtol=1e-3,
                                   atol=1e-5)
        for p, e in zip(params, expected_params):
            torch.testing.assert_close(p, e, rtol=1e-3, atol=1e-4)
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())
        self.assertLessEqual(counter("UncachedCompile"), 3, met.metrics_report())

    def test_sgd_with_momentum(self):
        self.check(lambda params, foreach: torch.optim.SGD(
            params, lr=0.1, momentum=0.9, foreach=foreach))

    def test_adam(self):
        self.check(lambda params, foreach: torch.optim.Adam(params, lr=1e-2, foreach=foreach))

    def test_adam_with_weight_decay(self):
        self.check(lambda params, foreach: torch.optim.Adam(
            params, lr=1e-2, weight_decay=0.1, foreach=foreach))


if __name__ == "__main__":
    unittest.main()
