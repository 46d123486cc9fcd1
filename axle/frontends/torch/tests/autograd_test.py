"""The device's autograd overrides (aten_ops.yaml's autograd section,
aten_autograd.cc): each op's value and gradients against PyTorch's CPU, with
the override counted (axle::<op>, axle::<op>_backward) and the composite's
ops not recorded; the inputs it leaves to the composite still work."""
import copy
import unittest

import torch
import torch.nn.functional as F

import torch_axle
import torch_axle.metrics as met


def counter(name):
    return met.counter_value(name) or 0


class LinearTest(unittest.TestCase):
    def setUp(self):
        self.dev = torch_axle.device()
        self.g = torch.Generator().manual_seed(5)
        met.clear_all()

    def randn(self, *shape):
        return torch.randn(*shape, generator=self.g)

    def check(self, input_shape, bias=True, input_grad=True):
        """F.linear on the device against the CPU: value and every gradient
        asked for, through the override alone."""
        x, w = self.randn(*input_shape), self.randn(5, input_shape[-1])
        b = self.randn(5) if bias else None
        upstream = self.randn(*input_shape[:-1], 5)
        cpu = [t.clone().requires_grad_(True) if t is not None else None for t in (x, w, b)]
        cpu[0].requires_grad_(input_grad)
        dev = [t.to(self.dev).requires_grad_(True) if t is not None else None for t in (x, w, b)]
        dev[0].requires_grad_(input_grad)
        expected = F.linear(*cpu)
        (expected * upstream).sum().backward()
        met.clear_all()
        out = F.linear(*dev)
        (out * upstream.to(self.dev)).sum().backward()
        torch.testing.assert_close(out.cpu(), expected.detach())
        for c, d in zip(cpu, dev):
            if c is None:
                continue
            if c.grad is None:
                self.assertIsNone(d.grad)
            else:
                torch.testing.assert_close(d.grad.cpu(), c.grad, rtol=1e-4, atol=1e-5)
        self.assertEqual(counter("axle::linear"), 1)
        self.assertEqual(counter("axle::linear_backward"), 1)
        for op in ("addmm", "mm", "transpose", "bmm", "matmul"):
            self.assertEqual(counter("axle::" + op), 0, op)
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())

    def test_matrix_input(self):
        self.check((4, 3))

    def test_no_bias(self):
        self.check((4, 3), bias=False)

    def test_input_without_gradient(self):
        # A first layer: the gradient of the data is not computed.
        self.check((6, 3), input_grad=False)

    def test_batched_input(self):
        self.check((2, 4, 3))
        self.check((2, 1, 4, 3), bias=False)

    def test_no_grad(self):
        x, w, b = self.randn(4, 3), self.randn(5, 3), self.randn(5)
        with torch.no_grad():
            out = F.linear(x.to(self.dev), w.to(self.dev).requires_grad_(), b.to(self.dev))
        self.assertIsNone(out.grad_fn)
        torch.testing.assert_close(out.cpu(), F.linear(x, w, b))

    def test_vector_input_takes_the_composite(self):
        x, w, b = self.randn(3), self.randn(5, 3), self.randn(5)
        wd = w.to(self.dev).requires_grad_()
        out = F.linear(x.to(self.dev), wd, b.to(self.dev))
        out.sum().backward()
        wc = w.clone().requires_grad_()
        F.linear(x, wc, b).sum().backward()
        torch.testing.assert_close(out.cpu(), F.linear(x, w, b))
        torch.testing.assert_close(wd.grad.cpu(), wc.grad)
        self.assertEqual(counter("axle::linear"), 0)

    def test_double_backward(self):
        # create_graph: the gradients are differentiable (the backward runs
        # PyTorch's ops instead of recording its IR directly).
        x, w, b = self.randn(4, 3), self.randn(5, 3), self.randn(5)

        def second_order(x, w, b):
            out = F.linear(x, w, b)
            gx, gw = torch.autograd.grad((out * out).sum(), (x, w), create_graph=True)
            (gx.pow(2).sum() + gw.pow(2).sum()).backward()
            return x.grad, w.grad, b.grad

        expected = second_order(*(t.clone().requires_grad_() for t in (x, w, b)))
        got = second_order(*(t.to(self.dev).requires_grad_() for t in (x, w, b)))
        for e, d in zip(expected, got):
            torch.testing.assert_close(d.cpu(), e, rtol=1e-4, atol=1e-4)

    def test_modified_weight_is_an_error(self):
        # As on the CPU: the weight the backward needs changed in place.
        w = self.randn(5, 3).to(self.dev).requires_grad_()
        x = self.randn(4, 3).to(self.dev).requires_grad_()
        out = F.linear(x, w)
        with torch.no_grad():
            w.add_(1)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            out.sum().backward()

    def test_training_matches_the_cpu(self):
        # An MLP under SGD with momentum, three synced steps.
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
        x, y = self.randn(16, 6), self.randn(16, 2)
        losses = {}
        for dev in (torch.device("cpu"), self.dev):
            m = copy.deepcopy(model).to(dev)
            opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
            losses[dev.type] = []
            for _ in range(3):
                opt.zero_grad()
                loss = F.mse_loss(m(x.to(dev)), y.to(dev))
                loss.backward()
                opt.step()
                if dev.type == "xla":
                    torch_axle.sync()
                losses[dev.type].append(loss.item())
        torch.testing.assert_close(losses["xla"], losses["cpu"], rtol=1e-4, atol=1e-6)
        self.assertGreater(counter("axle::linear"), 0)


if __name__ == "__main__":
    unittest.main()
