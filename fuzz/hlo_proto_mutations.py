#!/usr/bin/python3
# Mutated binary HloModuleProto files through axle-run: none may crash or hang.
#
# Seeds are the conformance corpus's exec modules and ../shared/jax's
# programs, written as .pb by `axle-opt -o NAME.pb`. Each case parses one
# seed with Python's protobuf (messages compiled from axle/hlo/proto/hlo.proto
# by protoc), then either changes one to three fields anywhere in the module
# (an integer to an extreme, a repeated field shortened, lengthened or given
# an extreme element, an opcode or name replaced, a submessage cleared or
# duplicated), or damages the serialized bytes (bytes overwritten, the file
# truncated). It runs on cpu and on the interpreter with random arguments.
# An exit by a signal, or no exit within the timeout, is a failure: the case
# is kept in --keep and named on stdout. Exit status 1 when any case failed.
# Errors (status 1 with a message) are what is expected.
#   /usr/bin/python3 fuzz/hlo_proto_mutations.py [--opt build/tools/axle-opt]
#       [--run build/tools/axle-run] [--cases 200] [--seed 1]
#       [--keep build-fuzz/hlo_proto]
import argparse
import glob
import importlib
import os
import random
import subprocess
import sys
import tempfile

from google.protobuf.descriptor import FieldDescriptor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "..", "shared", "conformance", "hlo", "exec")
JAX = os.path.join(ROOT, "..", "shared", "jax")
OPCODES = ["add", "multiply", "reduce", "broadcast", "transpose", "reshape", "slice", "dot",
           "convolution", "gather", "scatter", "while", "conditional", "call", "fusion",
           "tuple", "get-tuple-element", "parameter", "constant", "concatenate", "pad",
           "dynamic-slice", "dynamic-update-slice", "sort", "iota", "select", "compare",
           "convert", "bitcast", "copy", "reduce-window", "select-and-scatter", "rng",
           "custom-call", "all-reduce", "fft", "map", "reverse", "clamp", "no-such-op", ""]
EXTREMES = [0, 1, -1, 2, 3, 7, 64, 1 << 20, 1 << 31, (1 << 31) - 1, -(1 << 31), 1 << 40,
            1 << 62, -(1 << 62), (1 << 63) - 1]
FD = FieldDescriptor


def compile_proto(workdir):
    proto_dir = os.path.join(ROOT, "axle", "hlo", "proto")
    subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={workdir}",
                    os.path.join(proto_dir, "hlo.proto")], check=True)
    sys.path.insert(0, workdir)
    return importlib.import_module("hlo_pb2")


def write_seeds(opt, workdir, rng, count):
    modules = sorted(glob.glob(os.path.join(CORPUS, "*.hlo")))
    modules = rng.sample(modules, min(count, len(modules)))
    modules += [m for m in sorted(glob.glob(os.path.join(JAX, "*.hlo")))
                if not m.endswith(".opt.hlo")]
    seeds = []
    for module in modules:
        out = os.path.join(workdir, os.path.basename(module)[:-4] + ".pb")
        result = subprocess.run([opt, module, "-o", out], capture_output=True, timeout=60)
        if result.returncode == 0:
            seeds.append(out)
    return seeds


def messages(message, found):
    found.append(message)
    for field, value in message.ListFields():
        if field.type != FD.TYPE_MESSAGE or field.message_type.GetOptions().map_entry:
            continue
        for child in (value if field.label == FD.LABEL_REPEATED else [value]):
            messages(child, found)
    return found


def extreme(field, rng):
    value = rng.choice(EXTREMES + [rng.randint(-5, 70)])
    if field.type in (FD.TYPE_UINT32, FD.TYPE_FIXED32):
        return value & 0xffffffff
    if field.type in (FD.TYPE_UINT64, FD.TYPE_FIXED64):
        return value & 0xffffffffffffffff
    if field.type in (FD.TYPE_INT32, FD.TYPE_SINT32, FD.TYPE_SFIXED32, FD.TYPE_ENUM):
        return max(-(1 << 31), min((1 << 31) - 1, value))
    return max(-(1 << 63), min((1 << 63) - 1, value))


def new_scalar(field, rng):
    if field.type == FD.TYPE_STRING:
        if field.name == "opcode" or rng.random() < 0.5:
            return rng.choice(OPCODES)
        return "x" * rng.randint(0, 3)
    if field.type == FD.TYPE_BYTES:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 12)))
    if field.type == FD.TYPE_BOOL:
        return rng.random() < 0.5
    if field.type in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
        return rng.choice([0.0, -1.0, float("nan"), float("inf"), 1e30])
    return extreme(field, rng)


def mutate_field(message, rng):
    present = [field for field, _ in message.ListFields()]
    if present and rng.random() < 0.8:
        field = rng.choice(present)
    else:
        field = rng.choice(list(message.DESCRIPTOR.fields))
    value = getattr(message, field.name)
    repeated = field.label == FD.LABEL_REPEATED
    if field.type == FD.TYPE_MESSAGE:
        if field.message_type.GetOptions().map_entry or not repeated:
            message.ClearField(field.name)
        elif len(value) and rng.random() < 0.5:
            del value[rng.randrange(len(value))]
        elif len(value):
            value.add().CopyFrom(value[rng.randrange(len(value))])
        else:
            value.add()
        return f"{message.DESCRIPTOR.name}.{field.name}"
    new = new_scalar(field, rng)
    try:
        if not repeated:
            setattr(message, field.name, new)
        elif len(value) and rng.random() < 0.3:
            del value[rng.randrange(len(value))]
        elif len(value) and rng.random() < 0.6:
            value[rng.randrange(len(value))] = new
        else:
            value.append(new)
    except (TypeError, ValueError):
        return None
    return f"{message.DESCRIPTOR.name}.{field.name} <- {new!r}"


def mutate(hlo_pb2, seed_path, rng):
    module = hlo_pb2.HloModuleProto()
    with open(seed_path, "rb") as f:
        module.ParseFromString(f.read())
    if rng.random() < 0.1:
        data = bytearray(module.SerializeToString())
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            data = data[:rng.randrange(len(data) + 1)]
        return bytes(data), "bytes damaged"
    found = messages(module, [])
    what = [mutate_field(rng.choice(found), rng) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    return module.SerializeToString(), "; ".join(w for w in what if w)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt", default="build/tools/axle-opt")
    parser.add_argument("--run", default="build/tools/axle-run")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=150, help="corpus modules to seed from")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--keep", default="build-fuzz/hlo_proto")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.keep, exist_ok=True)
    failures = 0
    ran = 0
    slow_seeds = set()  # (seed, platform) whose unmutated module also runs past the limit

    def run(path, platform):
        command = [args.run, "--platform", platform, "--seed=1", path]
        try:
            result = subprocess.run(command, capture_output=True, text=True,
                                    errors="replace", timeout=args.timeout)
            return result.returncode, result.stderr.strip()[-300:]
        except subprocess.TimeoutExpired:
            return None, f"no exit in {args.timeout} s"

    with tempfile.TemporaryDirectory() as workdir:
        hlo_pb2 = compile_proto(workdir)
        seeds = write_seeds(args.opt, workdir, rng, args.seeds)
        if not seeds:
            sys.exit("no seed module could be written as .pb")
        case_path = os.path.join(workdir, "case.pb")
        for case in range(args.cases):
            seed_path = rng.choice(seeds)
            data, what = mutate(hlo_pb2, seed_path, rng)
            with open(case_path, "wb") as f:
                f.write(data)
            for platform in ("cpu", "interpreter"):
                if (seed_path, platform) in slow_seeds:
                    continue
                status, detail = run(case_path, platform)
                ran += status == 0
                # A timeout is a hang only when the seed itself finishes in
                # time: some corpus modules are just big (a 10^12-MAC
                # convolution on the interpreter).
                if status is None and run(seed_path, platform)[0] is None:
                    slow_seeds.add((seed_path, platform))
                    print(f"skip {os.path.basename(seed_path)} on {platform}: the unmutated "
                          f"module also runs past {args.timeout} s", flush=True)
                    continue
                if status is None or status < 0 or status >= 128:
                    failures += 1
                    kept = os.path.join(args.keep, f"case{case}_{platform}.pb")
                    with open(kept, "wb") as f:
                        f.write(data)
                    print(f"FAIL case {case} ({os.path.basename(seed_path)}: {what}) on "
                          f"{platform}: status {status}: {detail} -> {kept}", flush=True)
                    break
    print(f"{args.cases} cases from {len(seeds)} seeds: {failures} failed, "
          f"{ran} runs completed without error")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
