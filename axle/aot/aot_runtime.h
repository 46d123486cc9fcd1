//===- aot_runtime.h - What axle-aot's generated classes call --------------===//
//
// The runtime library (axle_aot_runtime) that the object files written by
// axle-aot (tools/axle_aot.cc) link against. The generated model.cc declares
// these functions itself (extern "C", so it compiles without Axle's
// headers); this header is their definition's contract.
//
// The object holds the model's compiled cpu program, serialized
// (axle/cpu/runtime/program_serialization.h: thunks, plans, constants and
// the arena layout, no HLO), and the machine code of its kernels, whose
// addresses it passes in a table by symbol name. AxleAotLoad rebuilds the
// thunks from those bytes (oneDNN primitives are made again there); no
// HLO is parsed and nothing is compiled. AxleAotRun runs the program on
// the arguments' data (dense, row-major, of the parameters' shapes) into
// the results' storage.
//
// Errors never crash: they return null / nonzero with a message in `error`
// (truncated to error_size, always NUL-terminated when error_size > 0).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_AOT_AOT_RUNTIME_H_
#define AXLE_AOT_AOT_RUNTIME_H_

#include <cstddef>

extern "C" {

// The program of `program` (program_size bytes), its kernels symbols[i] at
// addresses[i] (num_symbols of them), or null with `error` set.
void* AxleAotLoad(const char* program, size_t program_size, const char* const* symbols,
                  void* const* addresses, size_t num_symbols, char* error, size_t error_size);
// Runs `program`: args[k] points at parameter k's data (num_args of them),
// results[k] at room for result k (num_results). Returns 0, or nonzero with
// `error` set.
int AxleAotRun(void* program, const void* const* args, size_t num_args, void* const* results,
               size_t num_results, char* error, size_t error_size);
void AxleAotDestroy(void* program);

}  // extern "C"

#endif  // AXLE_AOT_AOT_RUNTIME_H_
