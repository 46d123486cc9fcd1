//===- lapack_ffi.cc - What jaxlib's LAPACK targets share ------------------===//
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axle/base/status_macros.h"
#include "axle/cpu/jaxlib/lapack_ffi_internal.h"

namespace axle::jaxlib {
namespace {

std::string DimsToString(ffi::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims.begin(), dims.end(), ","), "]");
}

}  // namespace

std::vector<int64_t> MatrixBatch::Dims(std::initializer_list<int64_t> trailing) const {
  std::vector<int64_t> dims = batch_dims;
  dims.insert(dims.end(), trailing.begin(), trailing.end());
  return dims;
}

absl::StatusOr<MatrixBatch> SplitMatrices(absl::string_view what, ffi::Span<const int64_t> dims) {
  if (dims.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be a batch of matrices [batch..., rows, cols], got ", DimsToString(dims)));
  }
  constexpr int64_t kMax = std::numeric_limits<lapack_int>::max();
  const int64_t rows = dims[dims.size() - 2];
  const int64_t cols = dims[dims.size() - 1];
  if (rows > kMax || cols > kMax || (rows > 0 && cols > kMax / rows)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", DimsToString(dims), ": a matrix too large for a 32-bit LAPACK"));
  }
  MatrixBatch batch;
  batch.batch_dims.assign(dims.begin(), dims.end() - 2);
  for (int64_t d : batch.batch_dims) batch.count *= d;
  batch.rows = static_cast<lapack_int>(rows);
  batch.cols = static_cast<lapack_int>(cols);
  return batch;
}

absl::StatusOr<MatrixBatch> SplitSquareMatrices(absl::string_view what,
                                                ffi::Span<const int64_t> dims) {
  AXLE_ASSIGN_OR_RETURN(MatrixBatch batch, SplitMatrices(what, dims));
  if (batch.rows != batch.cols) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a batch of square matrices"));
  }
  return batch;
}

absl::Status CheckDims(absl::string_view what, ffi::Span<const int64_t> dims,
                       const std::vector<int64_t>& expected) {
  if (dims.size() == expected.size() && std::equal(dims.begin(), dims.end(), expected.begin())) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(what, " has shape ", DimsToString(dims), " but ",
                                                 DimsToString(expected), " was expected"));
}

}  // namespace axle::jaxlib
