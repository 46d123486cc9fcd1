//===- environment_options.cc - The environment variables Axle reads --------===//
#include "axle/base/environment_options.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"

namespace axle {
namespace {

// The variable's value, or "" when it is unset.
std::string Get(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// 1, true, on or yes: true; 0, false, off or no: false (any case); anything
// else, or unset: nullopt.
std::optional<bool> Switch(const char* name) {
  const std::string text = absl::AsciiStrToLower(Get(name));
  if (text == "0" || text == "false" || text == "off" || text == "no") return false;
  if (text == "1" || text == "true" || text == "on" || text == "yes") return true;
  return std::nullopt;
}

}  // namespace

EnvironmentOptions EnvironmentOptions::Read() {
  EnvironmentOptions options;
  options.dump_to = Get("AXLE_DUMP_TO");
  const std::string profile = Get("AXLE_PROFILE");
  options.profile = !profile.empty() && profile != "0";
  options.cache_dir = Get("AXLE_CACHE_DIR");
  int threads = 0;
  if (absl::SimpleAtoi(Get("AXLE_COMPILE_THREADS"), &threads)) {
    options.compile_threads = std::max(0, threads);
  }
  std::istringstream llvm(Get("AXLE_LLVM_OPTIONS"));
  for (std::string word; llvm >> word;) options.llvm_options.push_back(word);
  if (const char* num_threads = std::getenv("AXLE_NUM_THREADS"); num_threads != nullptr) {
    options.num_threads = num_threads;
  }
  options.cpu_dot_split = absl::AsciiStrToLower(Get("AXLE_CPU_DOT_SPLIT"));
  options.cpu_thread_team = absl::AsciiStrToLower(Get("AXLE_CPU_THREAD_TEAM"));
  int dot_pieces = 0, dot_threads = 0;
  if (absl::SimpleAtoi(Get("AXLE_CPU_DOT_PIECES"), &dot_pieces)) {
    options.cpu_dot_pieces = std::clamp(dot_pieces, 0, 16);
  }
  if (absl::SimpleAtoi(Get("AXLE_CPU_DOT_THREADS"), &dot_threads)) {
    options.cpu_dot_threads = std::clamp(dot_threads, 0, 1024);
  }
  int64_t pack_rows = 0;
  if (absl::SimpleAtoi(Get("AXLE_CPU_DOT_PACK_ROWS"), &pack_rows)) {
    options.cpu_dot_pack_rows = std::max<int64_t>(0, pack_rows);
  }
  double timeout = 0;
  if (absl::SimpleAtod(Get("AXLE_COLLECTIVE_TIMEOUT"), &timeout) && timeout > 0) {
    options.collective_timeout_s = timeout;
  }
  int process_id = -1, num_processes = 0;
  if (absl::SimpleAtoi(Get("AXLE_PROCESS_ID"), &process_id) &&
      absl::SimpleAtoi(Get("AXLE_NUM_PROCESSES"), &num_processes) && num_processes > 0 &&
      process_id >= 0 && process_id < num_processes) {
    options.process_id = process_id;
    options.num_processes = num_processes;
  }
  options.rendezvous_dir = Get("AXLE_RENDEZVOUS_DIR");
  options.coordinator = Get("AXLE_COORDINATOR");
  options.collectives_transport = Get("AXLE_COLLECTIVES_TRANSPORT");
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(name) != nullptr) options.started_by_mpi_launcher = true;
  }
  int64_t feed_timeout_ms = 0;
  if (absl::SimpleAtoi(Get("AXLE_FEED_TIMEOUT"), &feed_timeout_ms) && feed_timeout_ms > 0) {
    options.feed_timeout = std::chrono::milliseconds(feed_timeout_ms);
  }
  if (std::string tmp = Get("TMPDIR"); !tmp.empty()) options.temporary_directory = tmp;

  const std::string debug = Get("AXLE_DEBUG");
  options.debug = !debug.empty() && debug != "0";
  options.lazy_platform = Get("AXLE_LAZY_PLATFORM");

  options.cuda_driver = Get("AXLE_CUDA_DRIVER");
  options.cuda_libdevice = Get("AXLE_CUDA_LIBDEVICE");
  options.cuda_ptxas = Get("AXLE_CUDA_PTXAS");
  options.cublas = Get("AXLE_CUBLAS");
  options.cublaslt = Get("AXLE_CUBLASLT");
  options.cusolver = Get("AXLE_CUSOLVER");
  options.cufft = Get("AXLE_CUFFT");
  options.nccl = Get("AXLE_NCCL");
  options.cudnn = Get("AXLE_CUDNN");
  options.cpu_concat_in_place = Switch("AXLE_CPU_CONCAT_IN_PLACE");
  options.cpu_conv_chain = Switch("AXLE_CPU_CONV_CHAIN");
  options.cpu_spin_between_thunks = Switch("AXLE_CPU_SPIN_BETWEEN_THUNKS");
  options.cpu_winograd = Switch("AXLE_CPU_WINOGRAD");
  options.gpu_tf32 = Switch("AXLE_GPU_TF32");
  options.gpu_unroll = Switch("AXLE_GPU_UNROLL");
  options.gpu_select_conditionals = Switch("AXLE_GPU_SELECT_CONDITIONALS");
  options.gpu_graphs = Switch("AXLE_GPU_GRAPHS");
  options.gpu_split_columns = Switch("AXLE_GPU_SPLIT_COLUMNS");
  options.gpu_collectives_on_one_device = Get("AXLE_GPU_COLLECTIVES_ON_ONE_DEVICE") == "1";

  options.cxx = Get("CXX");
  return options;
}

}  // namespace axle
