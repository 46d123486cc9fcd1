#!/usr/bin/python3
# Builds the small whole-model tests (mlp/, cnn/, and the clustering models
# nonzero_gather/, dynamic_resize/, unique_compress/, and control_flow/: If
# and Loop with captured outer values; external_data/: the same model with its
# tensors inline and in a separate file) with python3-onnx's helper,
# random weights from a fixed seed, and their expected outputs computed here
# with numpy (independently of Axle). Layout as ONNX's own test cases:
# NAME/model.onnx, NAME/test_data_set_0/{input,output}_0.pb.
#   /usr/bin/python3 make_models.py   (rewrites both folders)
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(13)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32) * 0.5


def save(name, graph, inputs, outputs, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="axle make_models.py")
    onnx.checker.check_model(model)
    folder = os.path.join(HERE, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for k, t in enumerate(tensors):
            with open(os.path.join(folder, "test_data_set_0", f"{kind}_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t).SerializeToString())


def log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def mlp():
    # x[N,4,4] -> Reshape to [N,16] with a shape computed in the graph
    # (Shape -> Gather -> Unsqueeze -> Concat) -> Gemm+Relu -> MatMul+Add
    # -> LogSoftmax. w1 (1536 elements) becomes a parameter, the rest
    # constants.
    w1, b1, w2, b2 = rand(16, 96), rand(96), rand(96, 10), rand(10)
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"]),
        helper.make_node("Concat", ["batch1", "minus_one"], ["new_shape"], axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "w1", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["hr"]),
        helper.make_node("MatMul", ["hr", "w2"], ["logits0"]),
        helper.make_node("Add", ["logits0", "b2"], ["logits"]),
        helper.make_node("LogSoftmax", ["logits"], ["y"], axis=-1),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"),
        (np.array(0, np.int64), "zero"), (np.array([0], np.int64), "axes0"),
        (np.array([-1], np.int64), "minus_one")]]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])], inits)
    x = rand(3, 4, 4)
    h = np.maximum(x.reshape(3, 16) @ w1 + b1, 0)
    save("mlp", graph, [x], [log_softmax(h @ w2 + b2).astype(np.float32)])


def conv2d(x, w, b, pad):
    n, c, hh, ww = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = hh + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    out = np.zeros((n, m, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out + b.reshape(1, m, 1, 1)


def cnn():
    # Conv -> BatchNormalization -> Relu -> MaxPool -> Conv -> Relu ->
    # GlobalAveragePool -> Flatten -> Gemm -> Softmax.
    w1, b1 = rand(8, 3, 3, 3), rand(8)
    scale, bias, mean = rand(8) + 1.0, rand(8), rand(8)
    var = np.abs(rand(8)) + 0.5
    w2, b2 = rand(16, 8, 3, 3), rand(16)
    w3, b3 = rand(5, 16), rand(5)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "scale", "bias", "mean", "var"], ["bn"],
                         epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], kernel_shape=[3, 3],
                         auto_pad="SAME_UPPER"),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w1, "w1"), (b1, "b1"), (scale, "scale"), (bias, "bias"), (mean, "mean"), (var, "var"),
        (w2, "w2"), (b2, "b2"), (w3, "w3"), (b3, "b3")]]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits)
    x = rand(2, 3, 8, 8)
    c1 = conv2d(x, w1, b1, 1)
    bn = (c1 - mean.reshape(1, 8, 1, 1)) / np.sqrt(var.reshape(1, 8, 1, 1) + 1e-5)
    bn = bn * scale.reshape(1, 8, 1, 1) + bias.reshape(1, 8, 1, 1)
    r1 = np.maximum(bn, 0)
    p1 = r1.reshape(2, 8, 4, 2, 4, 2).max(axis=(3, 5))
    r2 = np.maximum(conv2d(p1, w2, b2, 1), 0)
    logits = r2.mean(axis=(2, 3)) @ w3.T + b3
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    save("cnn", graph, [x], [(e / e.sum(axis=1, keepdims=True)).astype(np.float32)])


def nonzero_gather():
    # MatMul -> ReduceSum -> Greater | NonZero (host) | Squeeze -> Gather ->
    # MatMul: the rows of x whose projection sums to more than 0, projected.
    # Two clusters around the NonZero.
    w1, w2 = rand(4, 4), rand(4, 3)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("ReduceSum", ["h", "axes1"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["positive"]),
        helper.make_node("NonZero", ["positive"], ["nz"], name="nz"),
        helper.make_node("Squeeze", ["nz", "axes0"], ["rows"]),
        helper.make_node("Gather", ["x", "rows"], ["g"], axis=0),
        helper.make_node("MatMul", ["g", "w2"], ["y"]),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w1, "w1"), (w2, "w2"), (np.array(0, np.float32), "zero"),
        (np.array([1], np.int64), "axes1"), (np.array([0], np.int64), "axes0")]]
    graph = helper.make_graph(
        nodes, "nonzero_gather",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["K", 3])], inits)
    x = rand(6, 4)
    rows = np.nonzero((x @ w1).sum(axis=1) > 0)[0]
    save("nonzero_gather", graph, [x], [(x[rows] @ w2).astype(np.float32)])


def dynamic_resize():
    # A nearest Resize whose sizes depend on the data: the factor is
    # ceil(max(x)), so the Resize compiles per factor in a cluster of its own
    # and the first cluster computes the sizes.
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
        helper.make_node("Ceil", ["m"], ["mc"]),
        helper.make_node("Cast", ["mc"], ["k"], to=TensorProto.INT64),
        helper.make_node("Unsqueeze", ["k", "axes0"], ["k1"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Slice", ["shape", "two", "four"], ["hw"]),
        helper.make_node("Mul", ["hw", "k1"], ["hw2"]),
        helper.make_node("Concat", ["ones", "hw2"], ["sizes"], axis=0),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize", mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (np.array([0], np.int64), "axes0"), (np.array([2], np.int64), "two"),
        (np.array([4], np.int64), "four"), (np.array([1, 1], np.int64), "ones")]]
    graph = helper.make_graph(
        nodes, "dynamic_resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, "H2", "W2"])], inits)
    x = (rng.uniform(0.1, 1.9, (1, 1, 2, 3))).astype(np.float32)
    k = int(np.ceil(x.max()))
    save("dynamic_resize", graph, [x], [np.repeat(np.repeat(x, k, axis=2), k, axis=3)])


def unique_compress():
    # Greater | Compress, Unique (host) | Mul: the distinct positive values
    # of x, doubled, and how often each occurs.
    nodes = [
        helper.make_node("Greater", ["x", "zero"], ["positive"]),
        helper.make_node("Compress", ["x", "positive"], ["c"], name="compress"),
        helper.make_node("Unique", ["c"], ["u", "", "", "counts"], name="unique", sorted=1),
        helper.make_node("Mul", ["u", "two"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array(v, np.float32), n)
             for v, n in [(0, "zero"), (2, "two")]]
    graph = helper.make_graph(
        nodes, "unique_compress", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["U"]),
         helper.make_tensor_value_info("counts", TensorProto.INT64, ["U"])], inits)
    x = (rng.integers(-3, 4, 12) * 0.5).astype(np.float32)
    u, counts = np.unique(x[x > 0], return_counts=True)
    save("unique_compress", graph, [x], [(u * 2).astype(np.float32), counts.astype(np.int64)])


def tool_models():
    # Models that must be rejected with a clear error (tests/onnx_tool_test.sh):
    # tool/NAME.onnx, not run through the checker.
    os.makedirs(os.path.join(HERE, "tool"), exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    cases = {
        "cycle": ([helper.make_node("Add", ["x", "b"], ["a"], name="first"),
                   helper.make_node("Add", ["a", "x"], ["b"], name="second"),
                   helper.make_node("Relu", ["b"], ["y"], name="last")], 13),
        "dangling": ([helper.make_node("Add", ["x", "missing"], ["y"], name="add")], 13),
        # Against ONNX's schemas: an input too few, a required input left
        # empty, a required attribute missing, an attribute of the wrong type.
        "too_few_inputs": ([helper.make_node("Add", ["x"], ["y"], name="add")], 13),
        "empty_input": ([helper.make_node("Add", ["", "x"], ["y"], name="add")], 13),
        "missing_attribute": ([helper.make_node("Cast", ["x"], ["y"], name="cast")], 13),
        "attribute_type": ([helper.make_node("Flatten", ["x"], ["y"], name="flat", axis=1.5)], 13),
        "unsupported_op": ([helper.make_node("Frobnicate", ["x"], ["y"], name="frob")], 13),
        "future_opset": ([helper.make_node("Relu", ["x"], ["y"], name="relu")], 99),
    }
    for name, (nodes, opset) in cases.items():
        graph = helper.make_graph(nodes, name, [x], [y])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="axle make_models.py")
        onnx.save(model, os.path.join(HERE, "tool", name + ".onnx"))
    # An input for them, one of another element type, and mlp's input as .npy.
    with open(os.path.join(HERE, "mlp", "test_data_set_0", "input_0.pb"), "rb") as f:
        mlp_x = numpy_helper.to_array(onnx.load_tensor_from_string(f.read()))
    np.save(os.path.join(HERE, "tool", "mlp_x.npy"), mlp_x)
    np.save(os.path.join(HERE, "tool", "x2.npy"), np.array([1.5, -2], np.float32))
    np.save(os.path.join(HERE, "tool", "x2_int.npy"), np.array([1, 2], np.int32))

def control_flow():
    # If on a condition computed from data, both branches reading the outer
    # x and initializer w (captures); then a Loop of static trip count 3
    # (cond omitted) whose body reads x and stacks a scan output:
    # acc <- acc * x.
    x = np.array([0.5, 1.5, -1.0], np.float32)
    w = np.array([1.0, 2.0, 3.0], np.float32)
    f3 = [3]
    then_g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["t"])], "then_branch", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, f3)])
    else_g = helper.make_graph([helper.make_node("Sub", ["x", "w"], ["e"])], "else_branch", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, f3)])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Mul", ["acc_in", "x"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, f3)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, f3),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, f3)])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trip", "", "y"], ["final", "steps"], name="loop", body=body),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(0, np.float32), "zero"),
             numpy_helper.from_array(np.array(3, np.int64), "trip")]
    graph = helper.make_graph(nodes, "control_flow",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, f3)],
                              [helper.make_tensor_value_info("final", TensorProto.FLOAT, f3),
                               helper.make_tensor_value_info("steps", TensorProto.FLOAT, [3, 3])],
                              inits)
    y = x + w if x.sum() > 0 else x - w
    steps = np.stack([y * x, y * x * x, y * x * x * x]).astype(np.float32)
    save("control_flow", graph, [x], [steps[-1], steps])


def external_data():
    # The same model twice: inline.onnx with its tensors in the file, and
    # model.onnx with every tensor (initializers, the Constant node's
    # attribute, the If branches' own initializers) in weights.bin, as
    # onnx.save_model(save_as_external_data=True) writes large models.
    # x[2,4] @ w + c (Constant) -> Reshape to shape (an int64 initializer,
    # a compile-time constant) -> If (sum > 0) adds tb, else subtracts eb.
    x = rand(2, 4)
    w, c, tb, eb = rand(4, 3), rand(3), rand(3, 2), rand(3, 2)
    shape = np.array([3, 2], np.int64)
    f32 = TensorProto.FLOAT
    then_g = helper.make_graph([helper.make_node("Add", ["r", "tb"], ["t"])], "then_branch", [],
                               [helper.make_tensor_value_info("t", f32, [3, 2])],
                               [numpy_helper.from_array(tb, "tb")])
    else_g = helper.make_graph([helper.make_node("Sub", ["r", "eb"], ["e"])], "else_branch", [],
                               [helper.make_tensor_value_info("e", f32, [3, 2])],
                               [numpy_helper.from_array(eb, "eb")])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Constant", [], ["c"], name="bias", value=numpy_helper.from_array(c, "c")),
        helper.make_node("Add", ["m", "c"], ["h"]),
        helper.make_node("Reshape", ["h", "shape"], ["r"]),
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["cond"]),
        helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(shape, "shape"),
             numpy_helper.from_array(np.array(0, np.float32), "zero")]
    graph = helper.make_graph(nodes, "external_data", [helper.make_tensor_value_info("x", f32, [2, 4])],
                              [helper.make_tensor_value_info("y", f32, [3, 2])], inits)
    r = (x @ w + c).reshape(3, 2)
    save("external_data", graph, [x], [(r + tb if x.sum() > 0 else r - eb).astype(np.float32)])
    folder = os.path.join(HERE, "external_data")
    os.replace(os.path.join(folder, "model.onnx"), os.path.join(folder, "inline.onnx"))
    model = onnx.load(os.path.join(folder, "inline.onnx"))
    onnx.save_model(model, os.path.join(folder, "model.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="weights.bin", size_threshold=0,
                    convert_attribute=True)


if __name__ == "__main__":
    mlp()
    cnn()
    nonzero_gather()
    dynamic_resize()
    unique_compress()
    tool_models()
    control_flow()
    external_data()
