//===- aot_runtime.h - What axle-aot's generated classes call --------------===//
//
// The runtime library (axle_aot_runtime) that the object files written by
// axle-aot (tools/axle_aot.cc) link against. The generated model.cc declares
// these three functions itself (extern "C", so it compiles without Axle's
// headers); this header is their definition's contract.
//
// A program is made once from the HLO module text embedded in the object
// (the computation XlaCompiler built for the model's static signature,
// weights as constants, parameters in graph input order, the result a tuple
// in graph output order). AxleAotCreate parses and compiles it for the cpu
// platform, so the HLO parser and the cpu compiler (LLVM) are still linked
// and run once per created program: see docs/graph_frontend.md, "AOT".
// AxleAotRun copies each argument (dense, row-major, of the parameter's
// shape) in, runs, and copies each result element out.
//
// Errors never crash: they return null / nonzero with a message in `error`
// (truncated to error_size, always NUL-terminated when error_size > 0).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_AOT_AOT_RUNTIME_H_
#define AXLE_AOT_AOT_RUNTIME_H_

#include <cstddef>

extern "C" {

// A program for `hlo` (HLO module text), or null with `error` set.
void* AxleAotCreate(const char* hlo, size_t hlo_size, char* error, size_t error_size);
// Runs `program`: args[k] points at parameter k's data, results[k] at room
// for result tuple element k. Returns 0, or nonzero with `error` set.
int AxleAotRun(void* program, const void* const* args, void* const* results, char* error,
               size_t error_size);
void AxleAotDestroy(void* program);

}  // extern "C"

#endif  // AXLE_AOT_AOT_RUNTIME_H_
