"""Random ops on the Axle device: dropout in training (its mask drawn on the
device from an rng-bit-generator whose state is a parameter of the step's
graph), bernoulli_/uniform_/normal_, the device's seed. Statistics against
what PyTorch's CPU gives (the fraction kept, the 1/(1-p) scaling), eval mode
is the identity, a training loop with dropout matches the CPU replaying the
device's masks, and the loop compiles once: no recompilation across steps."""
import unittest

import torch
import torch.nn.functional as F
from torch import nn

import torch_axle
import torch_axle.metrics as met


def counter(name):
    return met.counter_value(name) or 0


class RandomTest(unittest.TestCase):
    def setUp(self):
        self.dev = torch_axle.device()
        torch_axle.manual_seed(1)

    def test_bernoulli_fraction(self):
        for p in (0.1, 0.3, 0.9):
            x = torch.empty(1000, 1000, device=self.dev).bernoulli_(p).cpu()
            self.assertTrue(((x == 0) | (x == 1)).all())
            self.assertAlmostEqual(x.mean().item(), p, delta=0.003)  # 6 standard deviations
        probs = torch.tensor([0.0, 0.25, 1.0]).expand(100000, 3).contiguous()
        drawn = torch.bernoulli(probs.to(self.dev)).cpu()
        torch.testing.assert_close(drawn.mean(0), torch.tensor([0.0, 0.25, 1.0]), atol=0.005,
                                   rtol=0)
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())

    def test_dropout_keeps_one_minus_p_scaled(self):
        for p in (0.25, 0.5):
            x = torch.randn(1000, 1000) + 3  # no zeros
            y = F.dropout(x.to(self.dev), p=p, training=True).cpu()
            kept = y != 0
            self.assertAlmostEqual(kept.float().mean().item(), 1 - p, delta=0.003)
            # The kept elements are scaled by 1/(1-p), as on the CPU.
            expected = F.dropout(x, p=0.0, training=True) * (1.0 / (1 - p))
            torch.testing.assert_close(y[kept], expected[kept])
        # p = 0 and p = 1
        x = torch.randn(64, 64, device=self.dev)
        torch.testing.assert_close(F.dropout(x, p=0.0, training=True).cpu(), x.cpu())
        self.assertEqual(F.dropout(x, p=1.0, training=True).cpu().abs().sum().item(), 0)

    def test_eval_mode_is_the_identity(self):
        drop = nn.Dropout(0.5).to(self.dev)
        drop.eval()
        before = counter("axle::bernoulli_")
        x = torch.randn(32, 16)
        torch.testing.assert_close(drop(x.to(self.dev)).cpu(), x)
        self.assertEqual(counter("axle::bernoulli_"), before)

    def test_feature_dropout_drops_whole_channels(self):
        x = torch.randn(64, 32, 4, 4) + 5
        y = nn.Dropout2d(0.5)(x.to(self.dev)).cpu()
        per_channel = (y != 0).float().mean(dim=(2, 3))
        self.assertTrue(((per_channel == 0) | (per_channel == 1)).all())
        self.assertAlmostEqual(per_channel.mean().item(), 0.5, delta=0.05)
        kept = y != 0
        torch.testing.assert_close(y[kept], (x * 2)[kept])

    def test_native_dropout_and_its_backward(self):
        x = (torch.randn(200, 50) + 4).to(self.dev).requires_grad_()
        out, mask = torch.native_dropout(x, 0.4, True)
        self.assertEqual(mask.dtype, torch.bool)
        out.sum().backward()
        m = mask.cpu()
        torch.testing.assert_close(out.detach().cpu(), x.detach().cpu() * m / 0.6)
        torch.testing.assert_close(x.grad.cpu(), m.float() / 0.6)
        self.assertAlmostEqual(m.float().mean().item(), 0.6, delta=0.03)

    def test_uniform_and_normal(self):
        u = torch.empty(500, 1000, device=self.dev).uniform_(-2, 3).cpu()
        self.assertGreaterEqual(u.min().item(), -2)
        self.assertLess(u.max().item(), 3)
        self.assertAlmostEqual(u.mean().item(), 0.5, delta=0.02)
        self.assertAlmostEqual(u.var().item(), 25 / 12, delta=0.03)
        n = torch.randn(500, 1000, device=self.dev).cpu()
        self.assertAlmostEqual(n.mean().item(), 0.0, delta=0.01)
        self.assertAlmostEqual(n.std().item(), 1.0, delta=0.01)
        # The fraction within one standard deviation, as for a normal law.
        self.assertAlmostEqual((n.abs() < 1).float().mean().item(), 0.6827, delta=0.005)
        r = torch.rand(1000, device=self.dev, dtype=torch.float64).cpu()
        self.assertEqual(r.dtype, torch.float64)
        self.assertTrue(((r >= 0) & (r < 1)).all())
        h = torch.empty(4096, device=self.dev, dtype=torch.bfloat16).uniform_().cpu()
        self.assertTrue(((h >= 0) & (h < 1)).all())
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())

    def test_seed_repeats_the_stream(self):
        torch_axle.manual_seed(5)
        a = torch.rand(100, device=self.dev).cpu()
        b = torch.rand(100, device=self.dev).cpu()
        torch_axle.manual_seed(5)
        c = torch.rand(100, device=self.dev).cpu()
        torch_axle.manual_seed(6)
        d = torch.rand(100, device=self.dev).cpu()
        torch.testing.assert_close(a, c)
        self.assertFalse(torch.equal(a, b))
        self.assertFalse(torch.equal(a, d))

    def test_a_generator_is_a_clear_error(self):
        with self.assertRaisesRegex(RuntimeError, "generator"):
            torch.empty(3, device=self.dev).bernoulli_(0.5, generator=torch.Generator())

    def test_training_with_dropout_matches_the_cpu_and_compiles_once(self):
        """The device trains an MLP with dropout; the CPU trains the same
        model with each step's mask the device drew (read after the step)."""
        p = 0.3
        torch.manual_seed(0)
        steps = 10
        inputs = [torch.randn(32, 20) for _ in range(steps)]
        targets = [torch.randint(0, 5, (32,)) for _ in range(steps)]

        class Net(nn.Module):
            def __init__(self, dropout):
                super().__init__()
                self.fc1 = nn.Linear(20, 64)
                self.drop = dropout
                self.fc2 = nn.Linear(64, 5)

            def forward(self, x):
                h = self.fc1(x)
                self.pre = h.detach()
                h = self.drop(h)
                self.post = h.detach()
                return self.fc2(torch.relu(h))

        torch.manual_seed(0)
        dev_model = Net(nn.Dropout(p)).to(self.dev)
        opt = torch.optim.SGD(dev_model.parameters(), lr=0.1, momentum=0.9)
        met.clear_all()
        dev_losses, masks, compiles = [], [], []
        for x, y in zip(inputs, targets):
            opt.zero_grad()
            loss = F.cross_entropy(dev_model(x.to(self.dev)), y.to(self.dev))
            loss.backward()
            opt.step()
            torch_axle.sync()
            dev_losses.append(loss.item())
            masks.append((dev_model.post.cpu() != 0).float() / (1 - p))
            compiles.append(counter("UncachedCompile"))
        self.assertEqual(met.fallback_ops(), [], met.metrics_report())
        self.assertLessEqual(compiles[-1], 3, met.metrics_report())
        self.assertEqual(compiles[3], compiles[-1], compiles)  # no recompilation across steps
        for i in range(1, steps):  # a new mask each step
            self.assertFalse(torch.equal(masks[i], masks[i - 1]))
        for m in masks:
            self.assertAlmostEqual((m != 0).float().mean().item(), 1 - p, delta=0.05)

        class Replay(nn.Module):
            def __init__(self):
                super().__init__()
                self.step = 0

            def forward(self, h):
                m = masks[self.step]
                self.step += 1
                return h * m

        torch.manual_seed(0)
        cpu_model = Net(Replay())
        opt = torch.optim.SGD(cpu_model.parameters(), lr=0.1, momentum=0.9)
        cpu_losses = []
        for x, y in zip(inputs, targets):
            opt.zero_grad()
            loss = F.cross_entropy(cpu_model(x), y)
            loss.backward()
            opt.step()
            cpu_losses.append(loss.item())
        for step, (c, d) in enumerate(zip(cpu_losses, dev_losses)):
            self.assertAlmostEqual(c, d, delta=1e-3 * abs(c) + 1e-6,
                                   msg=f"step {step}: cpu {cpu_losses} axle {dev_losses}")


if __name__ == "__main__":
    unittest.main()
