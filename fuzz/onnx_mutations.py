#!/usr/bin/python3
# Mutated ONNX models through axle-onnx: none may crash or hang.
#
# Each case takes one of libonnx-testdata's node models, applies one or two
# mutations (an INT/INTS attribute set to an extreme value, an input dropped
# or added, an output added, a graph input's dim or element type changed, an
# initializer truncated or given other dims, a Constant's dims changed, an
# int64 value of an initializer or Constant set to an extreme, a tensor moved
# to external data with a good or bad location, offset or length, or the
# inputs of another model fed), and runs it on cpu or the interpreter with the
# test's inputs. An exit by a signal, or no exit within the timeout, is a
# failure: the model is kept in --keep and named on stdout. Exit status 1
# when any case failed. Errors (status 1 with a message) are what is
# expected.
#   /usr/bin/python3 fuzz/onnx_mutations.py [--tool build/tools/axle-onnx]
#       [--cases 200] [--seed 1] [--keep build-fuzz/onnx]
import argparse
import glob
import os
import random
import shutil
import subprocess
import sys

import onnx
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"
EXTREMES = [-1, 0, 1, 2, 3, -5, 7, 1 << 31, -(1 << 40), 1 << 40, 100000]


def mutate_attribute(graph, rng):
    nodes = [n for n in graph.node if any(a.type in (onnx.AttributeProto.INT,
                                                     onnx.AttributeProto.INTS)
                                          for a in n.attribute)]
    if not nodes:
        return None
    node = rng.choice(nodes)
    attr = rng.choice([a for a in node.attribute
                       if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS)])
    if attr.type == onnx.AttributeProto.INT:
        attr.i = rng.choice(EXTREMES)
    elif attr.ints:
        attr.ints[rng.randrange(len(attr.ints))] = rng.choice(EXTREMES)
    else:
        attr.ints.append(rng.choice(EXTREMES))
    return f"attribute {node.op_type}.{attr.name}"


def mutate_arity(graph, rng):
    if not graph.node:
        return None
    node = rng.choice(graph.node)
    kind = rng.randrange(3)
    if kind == 0 and node.input:
        del node.input[rng.randrange(len(node.input))]
        return f"input dropped from {node.op_type}"
    if kind == 1:
        node.input.append(rng.choice(["", "nonexistent", graph.input[0].name if graph.input else "x"]))
        return f"input added to {node.op_type}"
    node.output.append("extra_output")
    return f"output added to {node.op_type}"


def mutate_input_type(graph, rng):
    if not graph.input:
        return None
    tensor = rng.choice(graph.input).type.tensor_type
    if rng.randrange(2) == 0 and tensor.shape.dim:
        rng.choice(tensor.shape.dim).dim_value = rng.choice([0, 1, 3, 1 << 20])
        return "input dim"
    tensor.elem_type = rng.choice([0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 16, 99])
    return "input element type"


def mutate_tensor(graph, rng):
    tensors = list(graph.initializer)
    for node in graph.node:
        if node.op_type == "Constant":
            tensors += [a.t for a in node.attribute if a.type == onnx.AttributeProto.TENSOR]
    if not tensors:
        return None
    tensor = rng.choice(tensors)
    kind = rng.randrange(3)
    if kind == 0 and tensor.raw_data:
        tensor.raw_data = tensor.raw_data[: len(tensor.raw_data) // 2]
        return "tensor truncated"
    if kind == 1 and tensor.dims:
        tensor.dims[rng.randrange(len(tensor.dims))] = rng.choice([0, 1, 2, 7, -1, -2, 1 << 33])
        return "tensor dims"
    if tensor.data_type in (onnx.TensorProto.INT32, onnx.TensorProto.INT64):
        values = numpy_helper.to_array(tensor).copy()
        if values.size:
            values.reshape(-1)[rng.randrange(values.size)] = rng.choice(
                [-1, -7, 0, 5, 1 << 30, -(1 << 30), 1 << 62])
            tensor.CopyFrom(numpy_helper.from_array(values, tensor.name))
            return "tensor value"
    return None


# The external data file of the case being built (mutate_external), written
# as data.bin beside its model.
EXTERNAL_FILE = {}


def mutate_external(graph, rng):
    tensors = [t for t in graph.initializer if t.raw_data]
    for node in graph.node:
        tensors += [a.t for a in node.attribute
                    if a.type == onnx.AttributeProto.TENSOR and a.t.raw_data]
    if not tensors:
        return None
    tensor = rng.choice(tensors)
    data = b"pad" + tensor.raw_data
    tensor.ClearField("raw_data")
    tensor.data_location = onnx.TensorProto.EXTERNAL
    entries = {
        "location": rng.choice(["data.bin", "data.bin", "../data.bin", "/etc/hostname",
                                "missing.bin", ".", "sub/../data.bin"]),
        "offset": rng.choice([3, 3, 0, len(data), 1 << 40, -1, "x"]),
        "length": rng.choice([None, len(data) - 3, len(data) - 2, len(data) - 4, 1 << 62]),
    }
    if rng.randrange(4) == 0:
        data = data[: rng.randrange(len(data) + 1)]
    for key, value in entries.items():
        if value is not None:
            entry = tensor.external_data.add()
            entry.key, entry.value = key, str(value)
    EXTERNAL_FILE["data"] = data
    return f"tensor external ({entries})"


def inputs_of(model_path):
    folder = os.path.join(os.path.dirname(model_path), "test_data_set_0")
    files = glob.glob(os.path.join(folder, "input_*.pb"))
    return sorted(files, key=lambda f: int(f.rsplit("_", 1)[1].split(".")[0]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", default="build/tools/axle-onnx")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--keep", default="build-fuzz/onnx")
    args = parser.parse_args()
    models = sorted(glob.glob(os.path.join(DATA, "*", "model.onnx")))
    if not models:
        print(f"no models under {DATA} (scripts/setup installs libonnx-testdata)")
        return 77
    os.makedirs(args.keep, exist_ok=True)
    rng = random.Random(args.seed)
    mutations = [mutate_attribute, mutate_arity, mutate_input_type, mutate_tensor,
                 mutate_external]
    failures = errors = 0
    for case in range(args.cases):
        path = rng.choice(models)
        model = onnx.load(path)
        feed = inputs_of(path)
        done = []
        EXTERNAL_FILE.clear()
        for _ in range(rng.randint(1, 2)):
            if rng.randrange(10) == 0:
                feed = inputs_of(rng.choice(models))
                done.append("another model's inputs")
                continue
            what = rng.choice(mutations)(model.graph, rng)
            if what:
                done.append(what)
        if not done:
            continue
        out = os.path.join(args.keep, f"case{case}.onnx")
        if EXTERNAL_FILE:
            # A folder of its own: the model and its data.bin.
            os.makedirs(os.path.join(args.keep, f"case{case}"), exist_ok=True)
            out = os.path.join(args.keep, f"case{case}", "model.onnx")
            with open(os.path.join(args.keep, f"case{case}", "data.bin"), "wb") as f:
                f.write(EXTERNAL_FILE["data"])
        with open(out, "wb") as f:
            f.write(model.SerializeToString())
        command = [args.tool, out, "--platform", rng.choice(["cpu", "interpreter"])]
        command += [f"--input={name}" for name in feed]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            status = result.returncode
            detail = result.stderr[-300:]
        except subprocess.TimeoutExpired:
            status, detail = None, f"no exit in {args.timeout} s"
        if status is None or status < 0 or status >= 128:
            failures += 1
            print(f"FAILED case {case}: {os.path.basename(os.path.dirname(path))}, "
                  f"{'; '.join(done)}: status {status}: {detail.strip()}\n  kept: {' '.join(command)}")
        else:
            errors += status != 0
            if EXTERNAL_FILE:
                shutil.rmtree(os.path.dirname(out))
            else:
                os.remove(out)
    print(f"onnx_mutations: {args.cases} cases, {errors} clear errors, {failures} crashes or hangs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
