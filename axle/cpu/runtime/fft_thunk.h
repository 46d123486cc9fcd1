//===- fft_thunk.h - fft as O(n log n) line transforms ---------------------===//
//
// The fft thunk (fft_thunk.cc: the transforms, the threads, the scratch
// memory) as its emitter (fft_thunk_emitter.cc) and its loader
// (thunk_serialization.h) make it: `batch` transforms of `type` over
// `lengths` (1 to 3 innermost axes, each in [1, 2^28]) from value
// `operand_value` into `result_value`, of c128 / f64 when `f64`, else c64 /
// f32.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_FFT_THUNK_H_
#define AXLE_CPU_RUNTIME_FFT_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "axle/core/xla_data.h"
#include "axle/cpu/runtime/thunk.h"

namespace axle::cpu {

std::unique_ptr<Thunk> MakeFftThunk(std::string name, bool f64, FftType type,
                                    std::vector<int64_t> lengths, int64_t batch,
                                    int64_t operand_value, int64_t result_value);

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_FFT_THUNK_H_
