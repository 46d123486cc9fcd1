#!/usr/bin/python3
# Real models exported by PyTorch 1.13 (issue 13): runs one model of
# axle/frontends/onnx/testdata/export_torch_models.py through axle-onnx on
# the cpu platform and checks that
#   - its outputs agree with PyTorch's: |axle - torch| <= 1e-4 * (|torch| +
#     max |torch|) elementwise (rtol 1e-4, with an absolute floor of 1e-4 of
#     the output's scale, as PyTorch and oneDNN sum convolutions in
#     different orders);
#   - the model compiles as one cluster with no host fallback.
# The model is exported into OUT_DIR (the build folder) on first use.
#   onnx_torch_models_test.py AXLE_ONNX EXPORT_SCRIPT OUT_DIR MODEL
# Exit 0: passed; 1: failed; 77 (CTest's SKIP_RETURN_CODE): PyTorch or
# torchvision missing, or a model in EXPECTED_MISSING failed on exactly the
# op named there (no kernel yet).
import os
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77
# Models whose op has no kernel on this branch yet: model -> op.
EXPECTED_MISSING: dict = {}


def main():
    if len(sys.argv) != 5:
        sys.exit(f"usage: {sys.argv[0]} AXLE_ONNX EXPORT_SCRIPT OUT_DIR MODEL")
    tool, exporter, out_dir, name = sys.argv[1:]
    folder = os.path.join(out_dir, name)
    stamp = os.path.join(folder, "stamp")
    # Importing torch takes seconds: only when the model is missing or stale.
    if not os.path.exists(stamp) or os.path.getmtime(stamp) < os.path.getmtime(exporter):
        cnns = ("resnet18", "mobilenet_v2", "squeezenet1_1", "googlenet", "densenet121")
        needs = "import torch" + (", torchvision" if name in cnns else "")
        if subprocess.run([sys.executable, "-c", needs], capture_output=True).returncode != 0:
            print(f"SKIPPED: '{needs}' fails under {sys.executable} (scripts/setup installs them)")
            return SKIP
        export = subprocess.run([sys.executable, exporter, out_dir, name], capture_output=True,
                                text=True)
        if export.returncode != 0:
            print(f"FAILED: exporting {name}:\n{export.stderr[-4000:]}")
            return 1
    inputs = sorted(f for f in os.listdir(folder) if f.startswith("input_"))
    expected = sorted(f for f in os.listdir(folder) if f.startswith("output_"))
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([tool, os.path.join(folder, "model.onnx"), "--platform=cpu",
                              f"--output_dir={tmp}"] +
                             [f"--input={os.path.join(folder, f)}" for f in inputs],
                             capture_output=True, text=True)
        print(run.stdout, end="")
        if run.returncode != 0:
            op = EXPECTED_MISSING.get(name)
            if op and f"no kernel for op '{op}'" in run.stderr:
                print(f"SKIPPED (expected-missing): {name} needs a kernel for ONNX op '{op}', "
                      f"not on this branch yet: {run.stderr.strip()}")
                return SKIP
            print(f"FAILED: axle-onnx exited {run.returncode}: {run.stderr.strip()}")
            return 1
        failed = 0
        if "cluster" in run.stdout or "host:" in run.stdout:
            print(f"FAILED: {name} is not one cluster without host fallbacks")
            failed += 1
        for k, file in enumerate(expected):
            want = np.load(os.path.join(folder, file))
            got = np.load(os.path.join(tmp, f"out_{k}.npy"))
            if got.shape != want.shape or got.dtype != want.dtype:
                print(f"FAILED: output {k}: {got.dtype}{list(got.shape)}, "
                      f"PyTorch's is {want.dtype}{list(want.shape)}")
                failed += 1
                continue
            scale = float(np.abs(want).max())
            err = np.abs(got.astype(np.float64) - want)
            bound = 1e-4 * (np.abs(want) + scale)
            worst = np.unravel_index(np.argmax(err - bound), err.shape)
            print(f"output {k}: max |axle - torch| {err.max():.3g} (output scale {scale:.3g})")
            if (err > bound).any():
                print(f"FAILED: output {k}: {int((err > bound).sum())} of {err.size} elements "
                      f"off; worst at {tuple(int(i) for i in worst)}: axle {got[worst]}, "
                      f"torch {want[worst]}")
                failed += 1
    if name in EXPECTED_MISSING and not failed:
        print(f"note: {name} passes now; remove it from EXPECTED_MISSING")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
