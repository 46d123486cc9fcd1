"""The Axle device's basics: tensors move to and from it, ops are lowered
(axle:: counters), unlowered ops fall back to the CPU (aten:: counters),
sync() computes pending values, and errors are clear."""
import os
import subprocess
import sys
import unittest

import torch

import torch_axle
import torch_axle.metrics as met


class DeviceTest(unittest.TestCase):
    def setUp(self):
        self.dev = torch_axle.device()

    def test_device(self):
        self.assertEqual(self.dev, torch.device("xla", 0))
        self.assertEqual(torch_axle.device(0), self.dev)
        with self.assertRaises(ValueError):
            torch_axle.device(1)

    def test_round_trip_and_arithmetic(self):
        a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        b = torch.full((3,), 2.0)
        x = a.to(self.dev)
        self.assertEqual(x.device, self.dev)
        self.assertEqual(x.shape, (2, 3))
        y = (x + b.to(self.dev)) * 3 - x / 2
        torch.testing.assert_close(y.cpu(), (a + b) * 3 - a / 2)
        z = x.t().mm(x).sum(dim=0, keepdim=True).mean()
        torch.testing.assert_close(z.cpu(), a.t().mm(a).sum(dim=0, keepdim=True).mean())
        self.assertAlmostEqual(x.sum().item(), 15.0)
        self.assertGreater(met.counter_value("axle::mm"), 0)

    def test_factories_and_in_place(self):
        z = torch.zeros(2, 2, device=self.dev)
        z.add_(torch.ones(2, 2, device=self.dev), alpha=2.5)
        z.mul_(2)
        torch.testing.assert_close(z.cpu(), torch.full((2, 2), 5.0))
        torch_axle.sync()
        torch.testing.assert_close(z.cpu(), torch.full((2, 2), 5.0))

    def test_comparisons_are_bool_tensors(self):
        a = torch.tensor([[-1.0, 0.5, 2.0], [3.0, -4.0, 0.5]])
        b = torch.tensor([0.5, 0.5, 3.0])
        x, y = a.to(self.dev), b.to(self.dev)
        for op in ("gt", "lt", "ge", "le", "eq", "ne"):
            f = getattr(torch, op)
            with self.subTest(op=op):
                for got, want in ((f(x, y), f(a, b)), (f(x, 0.5), f(a, 0.5)),
                                  (f(x, torch.tensor(0.5)), f(a, torch.tensor(0.5)))):
                    self.assertEqual(got.dtype, torch.bool)
                    torch.testing.assert_close(got.cpu(), want)
        # Used inside a step, not only as its result.
        torch.testing.assert_close((x > 0).float().mul(x).cpu(), (a > 0).float() * a)
        torch.testing.assert_close(torch.where(x > y, x, y).cpu(), torch.where(a > b, a, b))

    def test_scalar_operands_broadcast(self):
        # Python numbers and 0-dim tensors on either side of each binary op,
        # in place too: the scalar is not broadcast in the IR (the lowering's
        # binary op does it).
        a = torch.tensor([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]])
        s = torch.tensor(4.0)
        x, xs = a.to(self.dev), s.to(self.dev)
        torch.testing.assert_close((x * 0.5 + 3).cpu(), a * 0.5 + 3)
        torch.testing.assert_close((2 - x).cpu(), 2 - a)
        torch.testing.assert_close((8 / x).cpu(), 8 / a)
        torch.testing.assert_close((x ** 3).cpu(), a ** 3)
        torch.testing.assert_close(torch.maximum(x, xs).cpu(), torch.maximum(a, s))
        torch.testing.assert_close((xs - x).cpu(), s - a)
        torch.testing.assert_close((x / xs).cpu(), a / s)
        torch.testing.assert_close((xs * 2).cpu(), s * 2)
        y, b = x.clone(), a.clone()
        y.add_(x, alpha=0.25).mul_(0.9).addcmul_(x, x, value=0.01).addcdiv_(x, y, value=-0.5)
        b.add_(a, alpha=0.25).mul_(0.9).addcmul_(a, a, value=0.01).addcdiv_(a, b, value=-0.5)
        torch.testing.assert_close(y.cpu(), b)
        torch.testing.assert_close((x.int() * 3).cpu(), a.int() * 3)
        torch.testing.assert_close((x.int() / 3).cpu(), a.int() / 3)

    def test_fallback_is_counted(self):
        x = torch.tensor([3.0, 1.0, 2.0]).to(self.dev)
        values, _ = torch.sort(x)  # no lowering: runs on the CPU
        self.assertEqual(values.device, self.dev)
        torch.testing.assert_close(values.cpu(), torch.tensor([1.0, 2.0, 3.0]))
        self.assertGreaterEqual(met.counter_value("aten::sort") or 0, 1)
        self.assertIn("aten::sort", met.fallback_ops())

    def test_sync_compiles_once_per_graph(self):
        met.clear_all()
        w = torch.ones(4, device=self.dev)
        for _ in range(5):
            w.mul_(torch.tensor(2.0).to(self.dev)).add_(1)
            torch_axle.mark_step()
        torch.testing.assert_close(w.cpu(), torch.full((4,), 63.0))
        self.assertLessEqual(met.counter_value("UncachedCompile"), 2)
        self.assertEqual(met.counter_value("MarkStep"), 5)
        # From the second step on, w's old value dies: its buffer takes the new one.
        self.assertGreaterEqual(met.counter_value("DonatedBuffers") or 0, 4)
        self.assertIsNotNone(met.metric_data("ExecuteTime"))
        self.assertIn("CompileTime", met.metrics_report())

    def test_clear_compile_cache_compiles_again(self):
        def step(w):
            w.mul_(torch.tensor(3.0).to(self.dev)).add_(2)
            torch_axle.sync()

        w = torch.ones(3, device=self.dev)
        step(w)
        step(w)  # the steady graph (the first step's donates nothing)
        met.clear_all()
        step(w)
        self.assertIsNone(met.counter_value("UncachedCompile"))  # cached
        torch_axle.clear_compile_cache()
        step(w)
        self.assertEqual(met.counter_value("UncachedCompile"), 1)
        step(w)
        self.assertEqual(met.counter_value("UncachedCompile"), 1)
        # 1 -> 5 -> 17 -> 53 -> 161 -> 485: the dropped executable's buffers live on.
        torch.testing.assert_close(w.cpu(), torch.full((3,), 485.0))

    def test_axle_profile_prints_each_graph_at_exit(self):
        script = ("import torch, torch_axle\n"
                  "x = torch.ones(8, device=torch_axle.device())\n"
                  "for _ in range(3):\n"
                  "    x.mul_(2).add_(1)\n"
                  "    torch_axle.sync()\n"
                  "print(x.cpu()[0].item())\n")
        env = dict(os.environ, AXLE_PROFILE="1")
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip().splitlines()[-1], "15.0")
        self.assertRegex(done.stdout + done.stderr, r"AXLE_PROFILE lazy_graph_[0-9a-f]+: \d+ runs")

    def test_wrong_device_is_a_clear_error(self):
        x = torch.ones(2, device=self.dev)
        with self.assertRaisesRegex(RuntimeError, "xla"):
            torch.mm(x.reshape(1, 2), torch.ones(2, 1))

    def test_unsupported_dtype_is_a_clear_error(self):
        with self.assertRaisesRegex(RuntimeError, "does not support dtype"):
            torch.zeros(2, dtype=torch.complex64, device=self.dev)

    def test_autograd(self):
        a = torch.randn(3, 4)
        x = a.to(self.dev).requires_grad_()
        (x.relu() * 2).sum().backward()
        torch.testing.assert_close(x.grad.cpu(), (a > 0).float() * 2)

    def test_in_place_updates_of_views_reach_the_base(self):
        def updates(x):
            x[:, 0].add_(1)
            x.view(3, 8).mul_(2)
            x[1:3, ::2] = 7
            x.t()[2].zero_()
            row = x[1]
            x.add_(10)  # the base changes: so does the view
            x.unsqueeze(0).transpose(1, 2)[0, 2:5].sub_(row[:4] * 3)
            x[2].copy_(torch.full((6,), -1.0))  # from the CPU into a view
            x.detach()[0, 0] = 100
            return row.clone()

        a = torch.arange(24, dtype=torch.float32).reshape(4, 6)
        x = a.to(self.dev)
        row_cpu, row = updates(a), updates(x)
        torch.testing.assert_close(x.cpu(), a)
        torch.testing.assert_close(row.cpu(), row_cpu)

    def test_views_of_views_follow_their_base(self):
        # A view of a view is its parent's current value one step further
        # (the parent recomputed from the base first when that changed).
        def chain(x, sync):
            v = x.view(4, 6)[1:3]
            v.mul_(2)  # v's value is the update; the base takes it too
            sync()
            w = v.t()[::2]
            x.add_(1)  # the base changes: v and w follow
            u = w.unsqueeze(0).transpose(1, 2)
            u.sub_(5)
            sync()
            r = u[0, 1]
            x.mul_(3)
            return torch.cat([w.reshape(-1), u.reshape(-1), r.reshape(-1), v.reshape(-1)])

        a = torch.arange(24, dtype=torch.float32).reshape(2, 12)
        base = a.clone()
        want = chain(base, lambda: None)
        for sync in (lambda: None, torch_axle.sync):
            x = a.to(self.dev)
            got = chain(x, sync)
            torch.testing.assert_close(got.cpu(), want)
            torch.testing.assert_close(x.cpu(), base)

    def test_a_view_is_computed_through_its_base(self):
        # sync() computes a view's base, not the view too (a weight's
        # gradient is the transpose of a matmul's result): one output.
        m = torch.ones(2, 3, device=self.dev) * 3
        v = m.t()
        torch_axle.sync()
        outputs = met.counter_value("GraphOutputs") or 0
        v.add_(1)  # reaches m
        torch_axle.sync()
        self.assertEqual(met.counter_value("GraphOutputs") - outputs, 1)
        torch.testing.assert_close(m.cpu(), torch.full((2, 3), 4.0))
        torch.testing.assert_close(v.cpu(), torch.full((3, 2), 4.0))
        m.mul_(2)  # and back: the view is recomputed from its base
        torch_axle.sync()
        torch.testing.assert_close(v.cpu(), torch.full((3, 2), 8.0))
        # A weight's gradient (a view of a matmul's result) across steps.
        w_cpu = torch.randn(4, 5, generator=torch.Generator().manual_seed(3))
        x_cpu = torch.randn(6, 5, generator=torch.Generator().manual_seed(4))
        w = w_cpu.to(self.dev).requires_grad_()
        w_cpu.requires_grad_()
        for _ in range(3):
            for weight, x in ((w_cpu, x_cpu), (w, x_cpu.to(self.dev))):
                (x @ weight.t()).square().sum().backward()
                with torch.no_grad():
                    weight.sub_(0.01 * weight.grad)
            torch_axle.sync()
        torch.testing.assert_close(w.grad.cpu(), w_cpu.grad, rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(w.detach().cpu(), w_cpu.detach(), rtol=1e-4, atol=1e-4)

    def test_a_view_whose_base_nothing_else_holds_takes_its_place(self):
        # A detached transpose of a temporary: only the view holds the base
        # (as AccumulateGrad's weight gradient), so the view's own value
        # becomes the one the step computes and the base is dropped.
        live = torch.ops.axle.live_tensors()
        v = (torch.ones(2, 3, device=self.dev) * 3).t().detach()
        alias = v.detach()
        # One value, shared by v and its alias: no base besides.
        self.assertEqual(torch.ops.axle.live_tensors(), live + 1)
        outputs = met.counter_value("GraphOutputs") or 0
        torch_axle.sync()
        self.assertEqual(met.counter_value("GraphOutputs") - outputs, 1)
        v.add_(1)
        torch_axle.sync()
        torch.testing.assert_close(v.cpu(), torch.full((3, 2), 4.0))
        alias.mul_(2)  # an alias still shares the value
        torch.testing.assert_close(v.cpu(), torch.full((3, 2), 8.0))
        torch.testing.assert_close(alias.cpu(), torch.full((3, 2), 8.0))
        # A slice of an unheld base: only its elements remain.
        s = torch.arange(6.0, device=self.dev).reshape(2, 3).detach()[1, 1:]
        s.mul_(10)
        torch.testing.assert_close(s.cpu(), torch.tensor([40.0, 50.0]))
        # An expanded view stays a view: writing it is still refused.
        e = torch.zeros(3, device=self.dev).expand(2, 3).detach()
        with self.assertRaisesRegex(RuntimeError, "expanded view"):
            e.add_(1)

    def test_linear_gradients_under_momentum_match_the_cpu(self):
        # zero_grad() then accumulation into the adopted gradients, and
        # momentum buffers cloned from them, across steps.
        torch.manual_seed(5)
        cpu = torch.nn.Sequential(torch.nn.Linear(12, 70), torch.nn.ReLU(),
                                  torch.nn.Linear(70, 66))
        dev = torch.nn.Sequential(torch.nn.Linear(12, 70), torch.nn.ReLU(),
                                  torch.nn.Linear(70, 66))
        dev.load_state_dict(cpu.state_dict())
        dev.to(self.dev)
        g = torch.Generator().manual_seed(6)
        x, y = torch.randn(9, 12, generator=g), torch.randn(9, 66, generator=g)
        optimizers = [torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for m in (cpu, dev)]
        for _ in range(5):
            for model, opt, xs, ys in ((cpu, optimizers[0], x, y),
                                       (dev, optimizers[1], x.to(self.dev), y.to(self.dev))):
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(xs), ys).backward()
                opt.step()
            torch_axle.sync()
        for (name, a), b in zip(cpu.named_parameters(), dev.parameters()):
            torch.testing.assert_close(b.detach().cpu(), a.detach(), rtol=1e-4, atol=1e-5, msg=name)
            torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-4, atol=1e-5, msg=name)

    def test_autograd_through_an_updated_view(self):
        def loss(a, w):
            y = a * 2
            y[:, 1].mul_(w[:, 1])
            return (y * w).sum()

        g = torch.Generator().manual_seed(10)
        a, w = torch.randn(3, 4, generator=g), torch.randn(3, 4, generator=g)
        a_cpu = a.clone().requires_grad_()
        loss(a_cpu, w).backward()
        met.clear_all()
        a_dev = a.to(self.dev).requires_grad_()
        loss(a_dev, w.to(self.dev)).backward()
        torch.testing.assert_close(a_dev.grad.cpu(), a_cpu.grad)
        self.assertEqual(met.fallback_ops(), [])

    def test_in_place_update_of_an_expanded_view_is_refused(self):
        x = torch.zeros(2, 3, device=self.dev)
        with self.assertRaisesRegex(RuntimeError, "expanded view"):
            x.expand(4, 2, 3).add_(1)

    def check_grads(self, fn, *args):
        """fn's value and its inputs' gradients on the device match the CPU's."""
        cpu_args = [a.clone().requires_grad_() for a in args]
        dev_args = [a.clone().to(self.dev).requires_grad_() for a in args]
        out_cpu, out_dev = fn(*cpu_args), fn(*dev_args)
        g = torch.randn(out_cpu.shape, generator=torch.Generator().manual_seed(7))
        out_cpu.backward(g)
        out_dev.backward(g.to(self.dev))
        torch.testing.assert_close(out_dev.cpu(), out_cpu, rtol=1e-4, atol=1e-4)
        for i, (a, b) in enumerate(zip(cpu_args, dev_args)):
            torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-4, atol=1e-4,
                                       msg=f"gradient of argument {i}")

    def test_grouped_and_transposed_convolution(self):
        F = torch.nn.functional
        g = torch.Generator().manual_seed(8)
        x = torch.randn(2, 4, 9, 9, generator=g)
        met.clear_all()
        self.check_grads(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
                         x, torch.randn(6, 2, 3, 3, generator=g), torch.randn(6, generator=g))
        self.check_grads(lambda x, w: F.conv2d(x, w, padding=2, dilation=2, groups=4),
                         x, torch.randn(8, 1, 3, 3, generator=g))
        self.check_grads(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                            output_padding=1),
                         x, torch.randn(4, 3, 3, 3, generator=g), torch.randn(3, generator=g))
        self.check_grads(lambda x, w: F.conv_transpose2d(x, w, stride=2, groups=2),
                         x, torch.randn(4, 3, 2, 2, generator=g))
        self.check_grads(lambda x, w: F.conv_transpose2d(x, w, stride=3, output_padding=2),
                         x, torch.randn(4, 2, 3, 3, generator=g))
        self.check_grads(lambda x, w: F.conv1d(x, w, stride=2, groups=2),
                         torch.randn(2, 4, 11, generator=g), torch.randn(4, 2, 3, generator=g))
        self.assertEqual(met.fallback_ops(), [])

    def test_max_pool2d(self):
        F = torch.nn.functional
        g = torch.Generator().manual_seed(9)
        x = torch.randn(2, 3, 9, 9, generator=g)
        met.clear_all()
        self.check_grads(lambda x: F.max_pool2d(x, 2), x)
        self.check_grads(lambda x: F.max_pool2d(x, 3, stride=2, padding=1), x)
        self.check_grads(lambda x: F.max_pool2d(x, 2, ceil_mode=True), x)
        self.check_grads(lambda x: F.max_pool2d(x, (2, 3), stride=(1, 2)),
                         torch.randn(3, 7, 8, generator=g))
        for kwargs in ({"padding": 1}, {"padding": 1, "dilation": 2, "ceil_mode": True}):
            out, idx = F.max_pool2d(x.to(self.dev), 3, 2, return_indices=True, **kwargs)
            out_cpu, idx_cpu = F.max_pool2d(x, 3, 2, return_indices=True, **kwargs)
            torch.testing.assert_close(out.cpu(), out_cpu)
            torch.testing.assert_close(idx.cpu(), idx_cpu)
        # Dilated windows: the backward scatters by the forward's indices.
        self.check_grads(lambda x: F.max_pool2d(x, 3, dilation=2), x)
        self.check_grads(lambda x: F.max_pool2d(x, 2, stride=1, padding=1, dilation=2), x)
        self.check_grads(lambda x: F.max_pool2d(x, (3, 2), stride=(2, 1), dilation=(2, 3),
                                                ceil_mode=True),
                         torch.randn(3, 10, 11, generator=g))
        # Ties (overlapping windows share a maximum): each window's gradient
        # goes to its first maximum, as on the CPU.
        ties = torch.tensor([[[[1.0, 1, 2, 2], [1, 1, 2, 2], [0, 0, 3, 3], [0, 0, 3, 3]]]])
        self.check_grads(lambda x: F.max_pool2d(x, 2, stride=1, dilation=2), ties)
        self.check_grads(lambda x: F.max_pool2d(x, 2, stride=1), ties)
        self.assertGreater(met.counter_value("axle::max_pool2d_with_indices_backward"), 0)
        self.assertEqual(met.fallback_ops(), [])

    def test_avg_pool2d(self):
        F = torch.nn.functional
        g = torch.Generator().manual_seed(11)
        x = torch.randn(2, 3, 9, 9, generator=g)
        met.clear_all()
        for kwargs in ({"kernel_size": 2},
                       {"kernel_size": 3, "stride": 2, "padding": 1},
                       {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
                       {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
                       {"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True,
                        "count_include_pad": False},
                       {"kernel_size": (2, 3), "stride": (1, 2), "divisor_override": 5}):
            with self.subTest(**kwargs):
                self.check_grads(lambda x: F.avg_pool2d(x, **kwargs), x)
        self.check_grads(lambda x: F.adaptive_avg_pool2d(x, 1), x)  # a mean
        self.assertGreater(met.counter_value("axle::avg_pool2d_backward"), 0)
        self.assertEqual(met.fallback_ops(), [])

    def test_adaptive_avg_pool2d(self):
        """Output sizes other than 1: PyTorch's bins [floor(i*in/out),
        ceil((i+1)*in/out)), which overlap when out does not divide in."""
        F = torch.nn.functional
        g = torch.Generator().manual_seed(12)
        x = torch.randn(2, 3, 9, 7, generator=g)
        met.clear_all()
        for size in ((3, 7), (4, 5), (2, 3), (9, 7), (1, 4), (5, 1), (12, 10)):
            with self.subTest(size=size):
                self.check_grads(lambda x: F.adaptive_avg_pool2d(x, size), x)
        self.check_grads(lambda x: F.adaptive_avg_pool2d(x, (3, None)), x)
        self.check_grads(lambda x: F.adaptive_avg_pool2d(x, 4), torch.randn(5, 6, 6, generator=g))
        self.check_grads(lambda x: F.adaptive_avg_pool1d(x, 4), torch.randn(2, 3, 10, generator=g))
        self.check_grads(lambda x: torch.nn.AdaptiveAvgPool2d((2, 2))(x).flatten(1), x)
        self.assertGreater(met.counter_value("axle::_adaptive_avg_pool2d_backward"), 0)
        self.assertEqual(met.fallback_ops(), [])

    def test_index_select_of_every_dtype(self):
        g = torch.Generator().manual_seed(13)
        met.clear_all()
        for dtype in (torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8,
                      torch.bool, torch.bfloat16):
            for index_dtype in (torch.int64, torch.int32):
                with self.subTest(dtype=dtype, index_dtype=index_dtype):
                    x = (torch.randn(5, 4, 3, generator=g) * 10).to(dtype)
                    for dim in (0, 1, -1):
                        idx = torch.randint(0, x.size(dim), (7,), generator=g, dtype=index_dtype)
                        torch.testing.assert_close(
                            torch.index_select(x.to(self.dev), dim, idx.to(self.dev)).cpu(),
                            torch.index_select(x, dim, idx))
        # A 0-D index, an empty index, a 0-D tensor.
        x = torch.arange(12).reshape(3, 4)
        idx = torch.tensor(2)
        torch.testing.assert_close(x.to(self.dev).index_select(1, idx.to(self.dev)).cpu(),
                                   x.index_select(1, idx))
        empty = torch.zeros(0, dtype=torch.int64)
        torch.testing.assert_close(x.to(self.dev).index_select(0, empty.to(self.dev)).cpu(),
                                   x.index_select(0, empty))
        s = torch.tensor(5)
        torch.testing.assert_close(s.to(self.dev).index_select(0, torch.tensor([0]).to(self.dev))
                                   .cpu(), s.index_select(0, torch.tensor([0])))
        # Gradients (index_select's backward is index_add, of floats).
        self.check_grads(lambda w: torch.index_select(w, 1, torch.tensor([3, 0, 3]).to(w.device)),
                         torch.randn(4, 5, generator=g))
        # Integer embeddings: index_select of int64 rows.
        table = torch.arange(20).reshape(10, 2)
        ids = torch.tensor([[1, 9], [4, 4]])
        torch.testing.assert_close(
            torch.nn.functional.embedding(ids.to(self.dev), table.to(self.dev)).cpu(),
            torch.nn.functional.embedding(ids, table))
        with self.assertRaisesRegex(RuntimeError, "integer"):
            x.to(self.dev).index_select(0, torch.tensor([0.0]).to(self.dev))
        self.assertGreater(met.counter_value("axle::index_select"), 0)

    def test_a_view_of_a_resized_base_is_a_clear_error(self):
        b = torch.zeros(4, 4, device=self.dev)
        v = b[0]
        alias = b.detach()
        b.resize_(8, 8)
        self.assertEqual(b.shape, (8, 8))
        with self.assertRaisesRegex(RuntimeError, "resize_"):
            v.cpu()
        with self.assertRaisesRegex(RuntimeError, "resize_"):
            v.add_(1)
        with self.assertRaisesRegex(RuntimeError, "resize_"):
            alias.cpu()
        # The resized tensor and views made of it afterwards work.
        b.fill_(2)
        w = b[1, 2:4]
        w.add_(1)
        self.assertEqual(b.sum().item(), 2 * 64 + 2)
        # Resizing to the same shape keeps the views.
        c = torch.zeros(3, device=self.dev)
        u = c[1:]
        c.resize_(3)
        c.add_(1)
        torch.testing.assert_close(u.cpu(), torch.ones(2))
        # A tensor without views or aliases resizes freely.
        d = torch.ones(2, device=self.dev)
        d.resize_(5)
        self.assertEqual(d.shape, (5,))


if __name__ == "__main__":
    unittest.main()
