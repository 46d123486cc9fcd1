// onnxruntime's side of bench/onnx_vs_ort.sh: runs one ONNX model on
// onnxruntime-node (CPU execution provider) and prints the same timing line
// as `axle-onnx --iterations`:
//   node onnx_ort_bench.js MODEL.onnx --iterations=N [--threads=T]
//        [--spin=0|1] [--expect=OUT.npy ...] IN.npy ...
// Session options: intraOpNumThreads T (default 2), interOpNumThreads 1,
// sequential execution, graphOptimizationLevel 'all', and
// session.intra_op.allow_spinning from --spin (default 1, onnxruntime's). One untimed run
// first (it also checks outputs against --expect files: max abs error),
// then N timed runs of session.run, inputs to output tensors.
// NODE_PATH must reach onnxruntime-node (onnx_vs_ort.sh sets it).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

const TYPES = {
  '<f4': ['float32', Float32Array],
  '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array],
};

// Reads a little-endian, C-order .npy file (versions 1-3) into an ort.Tensor.
function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order`);
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter((s) => s.trim())
      .map(Number);
  if (!(descr in TYPES)) throw new Error(`${path}: unsupported dtype ${descr}`);
  const [type, Array] = TYPES[descr];
  const bytes = buf.subarray(start);
  const data = new Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  return new ort.Tensor(type, data, dims);
}

async function main() {
  const args = process.argv.slice(2);
  const flag = (name, def) => {
    const a = args.find((s) => s.startsWith(`--${name}=`));
    return a ? a.slice(name.length + 3) : def;
  };
  const model = args.find((s) => !s.startsWith('--') && s.endsWith('.onnx'));
  const inputs = args.filter((s) => !s.startsWith('--') && s.endsWith('.npy'));
  const expects = args.filter((s) => s.startsWith('--expect=')).map((s) => s.slice(9));
  const iterations = Number(flag('iterations', '20'));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(flag('threads', '2')),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    extra: {session: {intra_op: {allow_spinning: flag('spin', '1')}}},
  });
  if (inputs.length !== session.inputNames.length) {
    throw new Error(`${model} has ${session.inputNames.length} inputs, ${inputs.length} given`);
  }
  const feeds = {};
  session.inputNames.forEach((name, k) => { feeds[name] = readNpy(inputs[k]); });
  const first = await session.run(feeds);
  expects.forEach((path, k) => {
    const want = readNpy(path).data;
    const got = first[session.outputNames[k]].data;
    let err = 0;
    for (let i = 0; i < want.length; ++i) err = Math.max(err, Math.abs(got[i] - want[i]));
    console.log(`output ${k}: max |ort - torch| ${err.toPrecision(3)}`);
  });
  const times = [];
  for (let i = 0; i < iterations; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`time per run: min ${times[0].toFixed(3)} ms, ` +
              `median ${times[Math.floor(times.length / 2)].toFixed(3)} ms`);
}

main().catch((e) => {
  console.error(`onnx_ort_bench: error: ${e.message}`);
  process.exit(1);
});
