//===- ptx_text.cc - Small PTX kernels written as text ---------------------===//
#include "axle/gpu/ptx_text.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace axle::gpu {

std::string PtxThreadPerElementKernel(absl::string_view name,
                                      absl::Span<const PtxParameter> parameters,
                                      absl::string_view registers, absl::string_view count,
                                      absl::string_view body) {
  std::vector<std::string> declarations;
  std::string loads;
  for (const PtxParameter& parameter : parameters) {
    declarations.push_back(absl::StrCat(".param .", parameter.type, " ", parameter.name));
    absl::StrAppend(&loads, "  ld.param.", parameter.type, " ", parameter.reg, ", [",
                    parameter.name, "];\n");
  }
  return absl::StrCat(".visible .entry ", name, "(\n    ", absl::StrJoin(declarations, ", "),
                      ")\n{\n", registers,
                      "  .reg .pred %idx_past;\n"
                      "  .reg .b32 %idx_block, %idx_threads, %idx_thread;\n"
                      "  .reg .b64 %idx, %idx_lo;\n",
                      loads,
                      "  mov.u32 %idx_block, %ctaid.x;\n"
                      "  mov.u32 %idx_threads, %ntid.x;\n"
                      "  mov.u32 %idx_thread, %tid.x;\n"
                      "  mul.wide.u32 %idx, %idx_block, %idx_threads;\n"
                      "  cvt.u64.u32 %idx_lo, %idx_thread;\n"
                      "  add.u64 %idx, %idx, %idx_lo;\n"
                      "  setp.ge.u64 %idx_past, %idx, ",
                      count,
                      ";\n"
                      "  @%idx_past bra $L_done;\n",
                      body,
                      "$L_done:\n"
                      "  ret;\n"
                      "}\n");
}

}  // namespace axle::gpu
