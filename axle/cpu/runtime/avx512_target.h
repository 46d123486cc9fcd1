//===- avx512_target.h - AVX-512 kernels in a baseline x86-64 build --------===//
//
// The runtime kernels written with AVX-512 intrinsics (small_dot.cc,
// vector_activations.cc, fft_lines.cc) compile in a build for the baseline
// x86-64: each such function is marked AXLE_AVX512 (GCC's target attribute)
// and is called only after the host's CPU features say it may run. Include
// it in .cc files only: it brings in <immintrin.h> and turns off GCC 12's
// false maybe-uninitialized warnings from its own avx512fintrin.h
// (_mm512_undefined_ps in max_ps / min_ps) for the rest of the file. On
// other targets it defines nothing.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_AVX512_TARGET_H_
#define AXLE_CPU_RUNTIME_AVX512_TARGET_H_

#ifdef __x86_64__
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#define AXLE_AVX512 __attribute__((target("avx512f")))
#endif

#endif  // AXLE_CPU_RUNTIME_AVX512_TARGET_H_
