#!/usr/bin/python3
# Exports the real-model tests of issue 13 with Debian's PyTorch 1.13
# (torch.onnx.export, opset 17, random weights from fixed seeds): five
# torchvision CNNs, a TransformerEncoder and two recurrent taggers. Each
# model goes to OUT/NAME/ with its inputs and PyTorch's outputs:
#   OUT/NAME/model.onnx, OUT/NAME/input_K.npy, OUT/NAME/output_K.npy
# The models are tens of MB, so they are generated where they are used (the
# build folder: tests/onnx_torch_models_test.py, bench/onnx_vs_ort.sh),
# never committed. A model whose folder has a stamp newer than this script
# is kept.
#   /usr/bin/python3 export_torch_models.py OUT [NAME ...]   (default: all)
import os
import sys

import numpy as np
import torch
from torch import nn

OPSET = 17


def _bn_stats(model, seed):
    # Fresh BatchNorm layers have mean 0 and variance 1: give them random
    # running statistics so that the folded scale and shift are not trivial.
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)


def resnet18():
    import torchvision
    model = torchvision.models.resnet18(weights=None)
    _bn_stats(model, 1)
    return model, (torch.randn(1, 3, 224, 224),)


def mobilenet_v2():
    import torchvision
    model = torchvision.models.mobilenet_v2(weights=None)
    _bn_stats(model, 2)
    return model, (torch.randn(1, 3, 224, 224),)


def squeezenet1_1():
    # Fire modules: channel Concat of two convolutions' outputs.
    import torchvision
    return torchvision.models.squeezenet1_1(weights=None), (torch.randn(1, 3, 224, 224),)


def googlenet():
    # Inception blocks: channel Concat of four branches, one after a MaxPool.
    import torchvision
    model = torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True)
    _bn_stats(model, 3)
    return model, (torch.randn(1, 3, 224, 224),)


def densenet121():
    # Dense blocks: BatchNormalization (not folded) of a channel Concat of up
    # to 33 feature maps, AveragePool in the transitions.
    import torchvision
    model = torchvision.models.densenet121(weights=None)
    _bn_stats(model, 4)
    return model, (torch.randn(1, 3, 224, 224),)


def transformer():
    layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, dropout=0.0,
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    return model, (torch.randn(2, 32, 128),)


class Tagger(nn.Module):
    """Token ids -> embedding -> LSTM or GRU -> per-token tag logits."""

    def __init__(self, rnn, vocab=1000, embed=64, hidden=128, tags=17, bidirectional=False):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.rnn = rnn(embed, hidden, batch_first=True, bidirectional=bidirectional)
        self.out = nn.Linear(hidden * (2 if bidirectional else 1), tags)

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.out(h)


def lstm_tagger():
    return Tagger(nn.LSTM, bidirectional=True), (torch.randint(0, 1000, (2, 24)),)


def gru_tagger():
    return Tagger(nn.GRU), (torch.randint(0, 1000, (2, 24)),)


MODELS = {f.__name__: f for f in (resnet18, mobilenet_v2, squeezenet1_1, googlenet, densenet121,
                                   transformer, lstm_tagger, gru_tagger)}


def export(name, out):
    folder = os.path.join(out, name)
    stamp = os.path.join(folder, "stamp")
    if os.path.exists(stamp) and os.path.getmtime(stamp) >= os.path.getmtime(__file__):
        return
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(13)
    model, inputs = MODELS[name]()
    model.eval()
    with torch.no_grad():
        outputs = model(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    torch.onnx.export(model, inputs, os.path.join(folder, "model.onnx"), opset_version=OPSET,
                      input_names=[f"input_{k}" for k in range(len(inputs))],
                      output_names=[f"output_{k}" for k in range(len(outputs))])
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for k, t in enumerate(tensors):
            np.save(os.path.join(folder, f"{kind}_{k}.npy"), t.numpy())
    open(stamp, "w").close()


def main():
    if len(sys.argv) < 2:
        sys.exit(f"usage: {sys.argv[0]} OUT [NAME ...] (NAME: {', '.join(MODELS)})")
    names = sys.argv[2:] or list(MODELS)
    for name in names:
        if name not in MODELS:
            sys.exit(f"unknown model '{name}' (known: {', '.join(MODELS)})")
        export(name, sys.argv[1])


if __name__ == "__main__":
    torch.set_num_threads(2)
    main()
