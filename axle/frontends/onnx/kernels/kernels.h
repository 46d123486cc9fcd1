//===- kernels.h - Keeping the ONNX kernel files in the link ----------------===//
//
// Kernels register themselves from static initializers, which a static
// library drops unless something references their object file. Each kernel
// file (kernels/ and host_kernels/) ends with AXLE_ONNX_KERNEL_FILE(name);
// LinkOnnxKernels() (called by Session) references every one. A new kernel
// file adds a line to both.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_ONNX_KERNELS_KERNELS_H_
#define AXLE_FRONTENDS_ONNX_KERNELS_KERNELS_H_

namespace axle::onnx {

#define AXLE_ONNX_KERNEL_FILE(name) \
  int LinkKernelFile_##name() { return 0; }

#define AXLE_ONNX_KERNEL_FILES(X) \
  X(activation)                   \
  X(cast)                         \
  X(control_flow)                 \
  X(conv)                         \
  X(einsum)                       \
  X(elementwise)                  \
  X(grid_sample)                  \
  X(index)                        \
  X(linalg)                       \
  X(loss)                         \
  X(lrn)                          \
  X(matmul)                       \
  X(normalization)                \
  X(pooling)                      \
  X(quantize)                     \
  X(random)                       \
  X(reduction)                    \
  X(resize)                       \
  X(rnn)                          \
  X(roi_align)                    \
  X(scatter)                      \
  X(sequence)                     \
  X(shape)                        \
  X(signal)                       \
  X(slicing)                      \
  X(sort)                         \
  X(tfidf)                        \
  X(training)                     \
  X(unpool)

// Host kernels (graph/host_kernel.h) run nodes outside every cluster on
// Literals: the ONNX ops whose output shape depends on the data, and those
// on strings.
#define AXLE_ONNX_HOST_KERNEL_FILES(X) \
  X(data_dependent)                    \
  X(non_max_suppression)               \
  X(string)

#define AXLE_ONNX_DECLARE_KERNEL_FILE(name) int LinkKernelFile_##name();
AXLE_ONNX_KERNEL_FILES(AXLE_ONNX_DECLARE_KERNEL_FILE)
AXLE_ONNX_HOST_KERNEL_FILES(AXLE_ONNX_DECLARE_KERNEL_FILE)
#undef AXLE_ONNX_DECLARE_KERNEL_FILE

// Makes sure every kernel file is linked (and so registered).
inline int LinkOnnxKernels() {
#define AXLE_ONNX_CALL_KERNEL_FILE(name) LinkKernelFile_##name() +
  return AXLE_ONNX_KERNEL_FILES(AXLE_ONNX_CALL_KERNEL_FILE)
      AXLE_ONNX_HOST_KERNEL_FILES(AXLE_ONNX_CALL_KERNEL_FILE) 0;
#undef AXLE_ONNX_CALL_KERNEL_FILE
}

}  // namespace axle::onnx

#endif  // AXLE_FRONTENDS_ONNX_KERNELS_KERNELS_H_
