"""The kernels generated from aten_ops.yaml (gen_aten.py, torchgen): each
full_codegen op, functional and in place, on floating and integer inputs,
and its gradient, against PyTorch's CPU; none falls back."""
import unittest

import torch

import torch_axle
import torch_axle.metrics as met

UNARY_FLOAT = ["exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "sin",
               "cos"]
UNARY_SAME = ["floor", "ceil", "round", "sign"]
POSITIVE = {"log", "log1p", "sqrt", "rsqrt"}


class GeneratedOpsTest(unittest.TestCase):
    def setUp(self):
        self.dev = torch_axle.device()
        met.clear_all()

    def inputs(self, name):
        g = torch.Generator().manual_seed(3)
        x = torch.randn(4, 5, generator=g) * 3
        if name in POSITIVE:
            x = x.abs() + 0.1
        return x

    def test_functional_and_in_place(self):
        for name in UNARY_FLOAT + UNARY_SAME:
            with self.subTest(op=name):
                x = self.inputs(name)
                fn = getattr(torch, name)
                torch.testing.assert_close(fn(x.to(self.dev)).cpu(), fn(x))
                y = x.clone().to(self.dev)
                getattr(y, name + "_")()
                torch.testing.assert_close(y.cpu(), getattr(x.clone(), name + "_")())
                # In place through a view reaches the base.
                base = x.clone().to(self.dev)
                getattr(base[1:3], name + "_")()
                expected = x.clone()
                getattr(expected[1:3], name + "_")()
                torch.testing.assert_close(base.cpu(), expected)
                self.assertGreater(met.counter_value("axle::" + name), 0)
                self.assertGreater(met.counter_value("axle::" + name + "_"), 0)
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())

    def test_integer_inputs(self):
        i = torch.tensor([[-3, 0, 2], [5, -1, 7]])
        for name in UNARY_FLOAT:
            with self.subTest(op=name):
                fn = getattr(torch, name)
                x = i.abs() + 1 if name in POSITIVE else i
                out = fn(x.to(self.dev))
                self.assertEqual(out.dtype, torch.float32)
                torch.testing.assert_close(out.cpu(), fn(x))
                with self.assertRaisesRegex(RuntimeError, "can't be cast"):
                    getattr(x.clone().to(self.dev), name + "_")()
        for name in UNARY_SAME:
            with self.subTest(op=name):
                fn = getattr(torch, name)
                out = fn(i.to(self.dev))
                self.assertEqual(out.dtype, torch.int64)
                torch.testing.assert_close(out.cpu(), fn(i))
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())

    def test_gradients(self):
        for name in UNARY_FLOAT:
            with self.subTest(op=name):
                x = self.inputs(name)
                fn = getattr(torch, name)
                a = x.clone().requires_grad_()
                fn(a).sum().backward()
                b = x.clone().to(self.dev).requires_grad_()
                fn(b).sum().backward()
                torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-4, atol=1e-5)
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())


if __name__ == "__main__":
    unittest.main()
