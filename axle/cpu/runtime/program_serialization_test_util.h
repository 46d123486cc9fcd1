//===- program_serialization_test_util.h - Round trips of cpu programs ----===//
//
// What the serialized-program tests share (program_serialization_test.cc,
// scalar_function_serialization_test.cc, rng_ and custom_call_serialization_test.cc): compile HLO
// text for the cpu platform keeping what serialization needs, serialize, load with the executable's
// own symbols, run, and compare bytes; corrupt one word of the bytes and expect a clear error.
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_CPU_RUNTIME_PROGRAM_SERIALIZATION_TEST_UTIL_H_
#define AXLE_CPU_RUNTIME_PROGRAM_SERIALIZATION_TEST_UTIL_H_

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "axle/cpu/runtime/cpu_executable.h"
#include "axle/cpu/runtime/platform_test_util.h"
#include "axle/cpu/runtime/program_serialization.h"
#include "gtest/gtest.h"

namespace axle::cpu {

struct Compiled {
  std::unique_ptr<LocalExecutable> executable;
  const CpuExecutable* cpu = nullptr;
};

inline Compiled Compile(absl::string_view text) {
  SetKeepSerializableState(true);
  Compiled compiled;
  absl::StatusOr<std::unique_ptr<LocalExecutable>> executable =
      ::axle::testing::CompileOn("cpu", text);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return compiled;
  compiled.executable = std::move(*executable);
  compiled.cpu = dynamic_cast<const CpuExecutable*>(compiled.executable->executable());
  EXPECT_NE(compiled.cpu, nullptr);
  return compiled;
}

// A resolver over the symbols and addresses SerializeProgram reported.
inline KernelResolver ResolverOf(const SerializedProgram& serialized) {
  std::map<std::string, void*> table;
  for (size_t i = 0; i < serialized.symbols.size(); ++i) {
    table[serialized.symbols[i]] = serialized.addresses[i];
  }
  return [table](absl::string_view symbol) -> absl::StatusOr<void*> {
    auto it = table.find(std::string(symbol));
    if (it == table.end()) return absl::NotFoundError(std::string(symbol));
    return it->second;
  };
}

// The array leaves of `literal` in pre-order.
inline std::vector<Literal> Leaves(const Literal& literal) {
  std::vector<Literal> leaves;
  ShapeUtil::ForEachLeafShape(literal.shape(), [&](const Shape& shape, const ShapeIndex& index) {
    if (shape.IsArray()) leaves.push_back(literal.GetSubliteral(index).Clone());
  });
  return leaves;
}

// The cpu executable and the interpreter give the same bytes for `text` on
// `arguments`, leaf by leaf.
inline void ExpectInterpreterAgrees(absl::string_view text, const std::vector<Literal>& arguments) {
  absl::StatusOr<Literal> cpu = ::axle::testing::RunOn("cpu", text, arguments);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  absl::StatusOr<Literal> reference = ::axle::testing::RunOn("interpreter", text, arguments);
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<Literal> cpu_leaves = Leaves(*cpu), reference_leaves = Leaves(*reference);
  ASSERT_EQ(cpu_leaves.size(), reference_leaves.size());
  for (size_t i = 0; i < cpu_leaves.size(); ++i) {
    ASSERT_EQ(cpu_leaves[i].size_bytes(), reference_leaves[i].size_bytes()) << "leaf " << i;
    EXPECT_EQ(std::memcmp(cpu_leaves[i].untyped_data(), reference_leaves[i].untyped_data(),
                          cpu_leaves[i].size_bytes()),
              0)
        << "leaf " << i << ": cpu " << cpu_leaves[i] << " interpreter " << reference_leaves[i];
  }
}

// Serializes `text`'s program, loads it, runs both on `arguments` (twice
// for the loaded one) and expects the same bytes. Returns the serialized
// program's symbols.
inline std::vector<std::string> ExpectRoundTrip(absl::string_view text,
                                                const std::vector<Literal>& arguments) {
  Compiled compiled = Compile(text);
  if (compiled.cpu == nullptr) return {};
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  EXPECT_TRUE(serialized.ok()) << serialized.status();
  if (!serialized.ok()) return {};
  absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> runner =
      LoadProgram(serialized->bytes, ResolverOf(*serialized));
  EXPECT_TRUE(runner.ok()) << runner.status();
  if (!runner.ok()) return {};
  absl::StatusOr<Literal> expected =
      ::axle::testing::RunExecutable("cpu", *compiled.executable, arguments);
  EXPECT_TRUE(expected.ok()) << expected.status();
  if (!expected.ok()) return {};
  std::vector<Literal> expected_leaves = Leaves(*expected);
  EXPECT_EQ((*runner)->argument_bytes().size(), arguments.size());
  EXPECT_EQ((*runner)->result_bytes().size(), expected_leaves.size());
  if ((*runner)->result_bytes().size() != expected_leaves.size()) return {};
  std::vector<const void*> args;
  args.reserve(arguments.size());
  for (const Literal& argument : arguments) args.push_back(argument.untyped_data());
  for (int run = 0; run < 2; ++run) {
    std::vector<std::vector<char>> storage;
    std::vector<void*> results;
    for (int64_t bytes : (*runner)->result_bytes()) storage.emplace_back(bytes, '\x5a');
    results.reserve(storage.size());
    for (auto& buffer : storage) results.push_back(buffer.data());
    absl::Status status = (*runner)->Run(args, results);
    EXPECT_TRUE(status.ok()) << status;
    for (size_t i = 0; i < expected_leaves.size(); ++i) {
      const Literal& leaf = expected_leaves[i];
      EXPECT_EQ(static_cast<int64_t>(storage[i].size()), leaf.size_bytes()) << "leaf " << i;
      if (static_cast<int64_t>(storage[i].size()) != leaf.size_bytes()) continue;
      EXPECT_EQ(std::memcmp(storage[i].data(), leaf.untyped_data(), leaf.size_bytes()), 0)
          << "leaf " << i << " of run " << run << " differs from the executable's " << leaf;
    }
  }
  return serialized->symbols;
}

// The little-endian 8-byte integer at `offset` of `bytes`, and a copy of
// `bytes` with it replaced.
inline int64_t WordAt(const std::string& bytes, size_t offset) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes.at(offset + i))) << (8 * i);
  }
  return static_cast<int64_t>(value);
}
inline std::string WithWord(std::string bytes, size_t offset, int64_t value) {
  for (int i = 0; i < 8; ++i) {
    bytes.at(offset + i) = static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xff);
  }
  return bytes;
}

// One word of a serialized program set to another value, and what the
// error must say.
struct Corruption {
  size_t offset;
  int64_t value;
  const char* what;
};

// Each corruption of `bytes` alone is an InvalidArgument saying its `what`.
inline void ExpectCorruptionsFail(const std::string& bytes, const KernelResolver& resolver,
                                  const std::vector<Corruption>& corruptions) {
  for (const Corruption& corruption : corruptions) {
    absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> runner =
        LoadProgram(WithWord(bytes, corruption.offset, corruption.value), resolver);
    ASSERT_FALSE(runner.ok()) << corruption.what;
    EXPECT_EQ(runner.status().code(), absl::StatusCode::kInvalidArgument) << runner.status();
    EXPECT_NE(runner.status().message().find(corruption.what), std::string::npos)
        << runner.status();
  }
}

}  // namespace axle::cpu

#endif  // AXLE_CPU_RUNTIME_PROGRAM_SERIALIZATION_TEST_UTIL_H_
