//===- environment_options.cc - The environment variables Axle reads --------===//
#include "axle/base/environment_options.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "absl/strings/numbers.h"

namespace axle {
namespace {

// The variable's value, or "" when it is unset.
std::string Get(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
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
  return options;
}

}  // namespace axle
