"""AXLE_CACHE_DIR keeps compiled graphs on disk: a second process running
the same training steps should compile nothing (no UncachedCompile; each
graph a PersistentCacheHit) and computes the same losses. The first holds;
the second is a known bug of the cpu backend's disk cache (below)."""
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

    # Known bug (2026-11-27): the cpu backend finds these graphs' files but
    # rejects them in a new process: "axle: warning: cached compilation of
    # lazy_graph_... not used: INTERNAL: its kernels differ from those its
    # module needs" (cpu_compiler.cc BuildFromArtifact: the module parsed
    # back from its HLO text yields other loop-kernel fingerprints than the
    # module it was printed from). Within one process the disk path works
    # (lazy/ AxleCacheDirServesALaterProcess). When this passes, drop the
    # decorator.
    @unittest.expectedFailure
    def test_second_process_compiles_nothing(self):
        self.assertIsNone(self.second["uncached"], self.second_stderr)
        self.assertEqual(self.second["persistent"], self.first["uncached"])


if __name__ == "__main__":
    unittest.main()
