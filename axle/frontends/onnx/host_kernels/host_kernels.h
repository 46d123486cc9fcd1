//===- host_kernels.h - Keeping the ONNX host kernel files in the link ------===//
//
// Host kernels (graph/host_kernel.h) run nodes outside every cluster on
// Literals: the ONNX ops whose output shape depends on the data. As with
// kernels/kernels.h, each file ends with AXLE_ONNX_HOST_KERNEL_FILE(name)
// and is listed here so that the static library keeps it.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_FRONTENDS_ONNX_HOST_KERNELS_HOST_KERNELS_H_
#define AXLE_FRONTENDS_ONNX_HOST_KERNELS_HOST_KERNELS_H_

namespace axle::onnx {

#define AXLE_ONNX_HOST_KERNEL_FILE(name) \
  int LinkHostKernelFile_##name() { return 0; }

#define AXLE_ONNX_HOST_KERNEL_FILES(X) \
  X(data_dependent)                    \
  X(non_max_suppression)               \
  X(string)

#define AXLE_ONNX_DECLARE_HOST_KERNEL_FILE(name) int LinkHostKernelFile_##name();
AXLE_ONNX_HOST_KERNEL_FILES(AXLE_ONNX_DECLARE_HOST_KERNEL_FILE)
#undef AXLE_ONNX_DECLARE_HOST_KERNEL_FILE

inline int LinkOnnxHostKernels() {
#define AXLE_ONNX_CALL_HOST_KERNEL_FILE(name) LinkHostKernelFile_##name() +
  return AXLE_ONNX_HOST_KERNEL_FILES(AXLE_ONNX_CALL_HOST_KERNEL_FILE) 0;
#undef AXLE_ONNX_CALL_HOST_KERNEL_FILE
}

}  // namespace axle::onnx

#endif  // AXLE_FRONTENDS_ONNX_HOST_KERNELS_HOST_KERNELS_H_
