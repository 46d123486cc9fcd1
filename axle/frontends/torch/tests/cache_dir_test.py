"""AXLE_CACHE_DIR keeps compiled graphs on disk: a second process running
the same training steps should compile nothing (no UncachedCompile; each
graph a PersistentCacheHit) and computes the same losses."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = r"""
import json, torch, torch_axle
import torch_axle.metrics as met
from torch import nn
dev = torch_axle.device()
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
g = torch.Generator().manual_seed(1)
losses = []
for _ in range(4):
    x, y = torch.randn(4, 8, generator=g), torch.randint(0, 3, (4,), generator=g)
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
    loss.backward()
    opt.step()
    torch_axle.sync()
    losses.append(loss.item())
print(json.dumps({"losses": losses,
                  "uncached": met.counter_value("UncachedCompile"),
                  "persistent": met.counter_value("PersistentCacheHit")}))
"""


def run_steps(cache_dir):
    env = dict(os.environ, AXLE_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


class CacheDirTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as cache_dir:
            cls.first, _ = run_steps(cache_dir)
            cls.files = os.listdir(cache_dir)
            cls.second, cls.second_stderr = run_steps(cache_dir)

    def test_first_process_writes_the_cache(self):
        self.assertGreaterEqual(self.first["uncached"], 1)
        self.assertIsNone(self.first["persistent"])
        self.assertTrue(any(f.endswith(".axle-exe") for f in self.files), self.files)

    def test_second_process_computes_the_same(self):
        self.assertEqual(self.second["losses"], self.first["losses"])
        compiles = (self.second["uncached"] or 0) + (self.second["persistent"] or 0)
        self.assertEqual(compiles, self.first["uncached"])

    # The module a new process parses back lays its kernels out in another
    # order than the first process did; the cpu backend compiles them from
    # it (from the object cache) instead of rejecting the file.
    def test_second_process_compiles_nothing(self):
        self.assertIsNone(self.second["uncached"], self.second_stderr)
        self.assertEqual(self.second["persistent"], self.first["uncached"])


if __name__ == "__main__":
    unittest.main()
