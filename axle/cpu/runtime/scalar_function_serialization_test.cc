// The thunks that call compiled scalar functions, serialized
// (program_serialization.h) with their functions named by symbol, loaded
// back without their module and run: scatters (the one-row path of an
// embedding's gradient from a filled operand, and a variadic scatter whose
// combiner is called), select-and-scatters (the inline f32 max-pool
// gradient and a padded s32 one whose select and scatter are called) and
// sorts that call their comparator (two keys, one operand by magnitude,
// records too wide to pack). Each agrees bit for bit with the executable
// it came from and with the interpreter. Every truncation of each thunk,
// a combiner the resolver does not know and chosen corrupted fields are
// errors that say what is wrong; every word of each thunk set to other
// values either fails to load or loads into a program that runs.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "axle/cpu/runtime/program_serialization_test_util.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

using ::axle::testing::SeededF32Values;

// Where the thunk named `name` lies in `bytes`: its fields start after
// the last occurrence of its name (the values' names come first) and end
// after the `functions`-th symbol of `symbols` that follows them.
struct ThunkSpan {
  size_t name = std::string::npos;
  size_t fields = 0;
  size_t end = 0;
};
ThunkSpan FindThunk(const std::string& bytes, const std::string& name,
                    const std::vector<std::string>& symbols, int functions) {
  ThunkSpan span;
  span.name = bytes.rfind(name);
  if (span.name == std::string::npos) return span;
  span.fields = span.name + name.size();
  size_t from = span.fields;
  for (int f = 0; f < functions; ++f) {
    size_t first = std::string::npos, length = 0;
    for (const std::string& symbol : symbols) {
      const size_t at = bytes.find(symbol, from);
      if (at < first) {
        first = at;
        length = symbol.size();
      }
    }
    if (first == std::string::npos) return {};
    from = first + length;
  }
  span.end = from;
  return span;
}

// Every truncation inside `span` is an error; every word of it set to
// one of a few values is an error or a program that runs on `arguments`.
void ExpectDamageIsHandled(const std::string& bytes, const KernelResolver& resolver,
                           const ThunkSpan& span, const std::vector<Literal>& arguments) {
  for (size_t size = span.name; size < span.end; ++size) {
    EXPECT_FALSE(LoadProgram(bytes.substr(0, size), resolver).ok()) << size;
  }
  std::vector<const void*> args;
  args.reserve(arguments.size());
  for (const Literal& argument : arguments) args.push_back(argument.untyped_data());
  const int64_t values[] = {-1, 0, 1, 3, int64_t{1} << 40, std::numeric_limits<int64_t>::min()};
  for (size_t offset = span.fields; offset + 8 <= span.end; offset += 8) {
    for (int64_t value : values) {
      absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> runner =
          LoadProgram(WithWord(bytes, offset, value), resolver);
      if (!runner.ok()) {
        EXPECT_FALSE(runner.status().message().empty());
        continue;
      }
      std::vector<std::vector<char>> storage;
      std::vector<void*> results;
      for (int64_t size : (*runner)->result_bytes()) storage.emplace_back(size);
      results.reserve(storage.size());
      for (auto& buffer : storage) results.push_back(buffer.data());
      // Another valid program (another dimension number, another fill):
      // it runs, whatever it computes.
      EXPECT_TRUE((*runner)->Run(args, results).ok()) << offset << " = " << value;
    }
  }
}

// A resolver that knows every symbol of `serialized` but `missing`.
KernelResolver ResolverWithout(const SerializedProgram& serialized, const std::string& missing) {
  KernelResolver all = ResolverOf(serialized);
  return [all, missing](absl::string_view symbol) -> absl::StatusOr<void*> {
    if (symbol == missing) return absl::NotFoundError(std::string(symbol));
    return all(symbol);
  };
}

// The symbol of `serialized` that contains `part`, empty if none.
std::string SymbolWith(const SerializedProgram& serialized, absl::string_view part) {
  for (const std::string& symbol : serialized.symbols) {
    if (absl::StrContains(symbol, part)) return symbol;
  }
  return "";
}

// An embedding's gradient (rows added into a zero table, out-of-range
// and repeated ids) and a variadic scatter (max of f32, min of s32) of
// 2x3 windows whose combiner is called.
constexpr absl::string_view kScatters = R"(
HloModule scatters
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
maxmin {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  m = f32[] maximum(a, c)
  n = s32[] minimum(b, d)
  ROOT t = (f32[], s32[]) tuple(m, n)
}
ENTRY e {
  ids = s32[12] parameter(0)
  rows = f32[12,16] parameter(1)
  zero = f32[] constant(0)
  table = f32[10,16] broadcast(zero), dimensions={}
  embedding_grad = f32[10,16] scatter(table, ids, rows), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  x = f32[6,5] parameter(2)
  y = s32[6,5] parameter(3)
  starts = s32[4,2] parameter(4)
  ux = f32[4,2,3] parameter(5)
  uy = s32[4,2,3] parameter(6)
  windows = (f32[6,5], s32[6,5]) scatter(x, y, starts, ux, uy), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=maxmin
  wx = f32[6,5] get-tuple-element(windows), index=0
  wy = s32[6,5] get-tuple-element(windows), index=1
  ROOT t = (f32[10,16], f32[6,5], s32[6,5]) tuple(embedding_grad, wx, wy)
})";

Literal S32Values(const Shape& shape, const std::vector<int32_t>& values) {
  Literal literal(shape);
  auto* data = static_cast<int32_t*>(literal.untyped_data());
  for (int64_t i = 0; i < ShapeUtil::ElementsIn(shape); ++i) {
    data[i] = values[i % static_cast<int64_t>(values.size())];
  }
  return literal;
}

std::vector<Literal> ScatterArguments() {
  std::vector<Literal> arguments;
  arguments.push_back(S32Values(ShapeUtil::MakeShape(S32, {12}), {3, 0, 9, 3, -1, 10, 7, 3}));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {12, 16}), 1));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {6, 5}), 2));
  arguments.push_back(S32Values(ShapeUtil::MakeShape(S32, {6, 5}), {4, -2, 7, 0, 1, -9, 3}));
  // Windows at (0,0), (4,2) (the last that fits), (5,0) (out) and (1,1).
  arguments.push_back(S32Values(ShapeUtil::MakeShape(S32, {4, 2}), {0, 0, 4, 2, 5, 0, 1, 1}));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {4, 2, 3}), 3));
  arguments.push_back(S32Values(ShapeUtil::MakeShape(S32, {4, 2, 3}), {5, -3, 2, 8, -6}));
  return arguments;
}

TEST(ScalarFunctionSerializationTest, Scatters) {
  std::vector<std::string> symbols = ExpectRoundTrip(kScatters, ScatterArguments());
  EXPECT_FALSE(SymbolWith({"", symbols, {}}, "scatter_combiner").empty());
  ExpectInterpreterAgrees(kScatters, ScatterArguments());
}

TEST(ScalarFunctionSerializationTest, ACorruptedScatterIsAnError) {
  Compiled compiled = Compile(kScatters);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  const ThunkSpan span = FindThunk(serialized->bytes, "embedding_grad", serialized->symbols, 1);
  ASSERT_NE(span.name, std::string::npos);
  // The fields after the name: operand dims (count 2, 10, 16), indices
  // dims (count 1, 12), update dims (count 2, 12, 16), the index type,
  // index_vector_dim, update_window_dims (count 1, 1), inserted (count 1,
  // 0), scatter_dims_to_operand_dims (count 1, 0), the two batching lists
  // (count 0 each), element bytes (count 1, 4), the row op, the element
  // type, operands (count 1, -1: filled), indices, updates (count 1, id),
  // outputs (count 1, id), the fill and the combiner.
  const std::string& bytes = serialized->bytes;
  const size_t f = span.fields;
  ASSERT_EQ(WordAt(bytes, f), 2);
  ASSERT_EQ(WordAt(bytes, f + 8), 10);
  ASSERT_EQ(WordAt(bytes, f + 64), static_cast<int64_t>(S32));
  ASSERT_EQ(WordAt(bytes, f + 72), 1);
  ASSERT_EQ(WordAt(bytes, f + 152), 4);
  ASSERT_EQ(WordAt(bytes, f + 168), static_cast<int64_t>(F32));
  ASSERT_EQ(WordAt(bytes, f + 184), -1);
  const std::vector<Corruption> corruptions = {
      {f + 8, 11, "values whose sizes"},  // an operand its output cannot hold
      {f + 16, -1, "a negative or too large dimension"},
      {f + 16, int64_t{1} << 47, "a negative or too large dimension"},
      {f + 64, static_cast<int64_t>(F32), "indices of type"},
      {f + 72, 5, "index_vector_dim=5"},
      {f + 88, 0, "update scatter dimensions"},
      {f + 104, 2, "account for each operand dimension"},
      {f + 120, 7, "scatter_dims_to_operand_dims"},
      {f + 152, 0, "elements of 0 bytes"},
      {f + 160, 7, "row op 7"},
      {f + 168, static_cast<int64_t>(S8), "a row op on elements"},
      {f + 184, 0, "matches neither a value nor a fill"},
      {f + 192, 1 << 20, "value 1048576"},
  };
  ExpectCorruptionsFail(bytes, resolver, corruptions);
  // A combiner the resolver does not know.
  const std::string combiner = SymbolWith(*serialized, "scatter_combiner");
  ASSERT_FALSE(combiner.empty());
  absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> missing =
      LoadProgram(bytes, ResolverWithout(*serialized, combiner));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(combiner), std::string::npos) << missing.status();
  ExpectDamageIsHandled(bytes, resolver, span, ScatterArguments());
  const ThunkSpan windows = FindThunk(bytes, "windows", serialized->symbols, 1);
  ASSERT_NE(windows.name, std::string::npos);
  ExpectDamageIsHandled(bytes, resolver, windows, ScatterArguments());
}

// A 2x2 max-pool's gradient (f32, select GE and scatter add inline) and a
// padded 3x3 stride-2 one on s32 whose select and scatter are called.
constexpr absl::string_view kSelectAndScatters = R"(
HloModule select_and_scatters
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
gei {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
addi {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  p = f32[2,8,8,3] parameter(0)
  g = f32[2,4,4,3] parameter(1)
  zero = f32[] constant(0)
  pool_grad = f32[2,8,8,3] select-and-scatter(p, g, zero), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=add
  q = s32[9,7] parameter(2)
  h = s32[5,4] parameter(3)
  izero = s32[] constant(0)
  padded_grad = s32[9,7] select-and-scatter(q, h, izero), window={size=3x3 stride=2x2 pad=1_1x1_1}, select=gei, scatter=addi
  ROOT t = (f32[2,8,8,3], s32[9,7]) tuple(pool_grad, padded_grad)
})";

std::vector<Literal> SelectAndScatterArguments() {
  std::vector<Literal> arguments;
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {2, 8, 8, 3}), 4));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {2, 4, 4, 3}), 5));
  // Ties, so that the select's order matters.
  arguments.push_back(S32Values(ShapeUtil::MakeShape(S32, {9, 7}), {3, 1, 3, -2, 0, 3, 5, 5}));
  arguments.push_back(S32Values(ShapeUtil::MakeShape(S32, {5, 4}), {1, 2, -3, 4, 7}));
  return arguments;
}

TEST(ScalarFunctionSerializationTest, SelectAndScatters) {
  ExpectRoundTrip(kSelectAndScatters, SelectAndScatterArguments());
  ExpectInterpreterAgrees(kSelectAndScatters, SelectAndScatterArguments());
}

TEST(ScalarFunctionSerializationTest, ACorruptedSelectAndScatterIsAnError) {
  Compiled compiled = Compile(kSelectAndScatters);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  const ThunkSpan span = FindThunk(serialized->bytes, "padded_grad", serialized->symbols, 2);
  ASSERT_NE(span.name, std::string::npos);
  // The fields after the name: operand dims (count 2, 9, 7), source dims
  // (count 2, 5, 4), the window's rank (2), per dimension a count (7) and
  // size, stride, padding low and high, window and base dilation and
  // reversal, the element bytes, the inline select, the values (count 4,
  // operand, source, init, output), then select and scatter.
  const std::string& bytes = serialized->bytes;
  const size_t f = span.fields;
  ASSERT_EQ(WordAt(bytes, f + 8), 9);
  ASSERT_EQ(WordAt(bytes, f + 48), 2);
  ASSERT_EQ(WordAt(bytes, f + 56), 7);
  ASSERT_EQ(WordAt(bytes, f + 72), 2);
  ASSERT_EQ(WordAt(bytes, f + 64), 3);
  ASSERT_EQ(WordAt(bytes, f + 184), 4);
  ASSERT_EQ(WordAt(bytes, f + 192), 0);
  const std::vector<Corruption> corruptions = {
      {f + 8, 10, "values whose sizes"},
      {f + 32, -4, "a negative or too large dimension"},
      {f + 64, -1, "window dimension 0 out of range"},
      {f + 72, 0, "window dimension 0 out of range"},  // stride 0
      {f + 96, 0, "window dimension 0 out of range"},  // window dilation 0
      {f + 104, int64_t{1} << 30, "window dimension 0 out of range"},
      {f + 112, 1, "window dimension 0 out of range"},  // reversal
      {f + 184, 32, "elements of 32 bytes"},
      {f + 192, 9, "inline select 9"},
      {f + 208, 1 << 20, "value 1048576"},
  };
  ExpectCorruptionsFail(bytes, resolver, corruptions);
  ExpectDamageIsHandled(bytes, resolver, span, SelectAndScatterArguments());
  const ThunkSpan pool = FindThunk(bytes, "pool_grad", serialized->symbols, 2);
  ASSERT_NE(pool.name, std::string::npos);
  ExpectDamageIsHandled(bytes, resolver, pool, SelectAndScatterArguments());
}

// Sorts whose comparator is called: by two keys (s32, then f32), one
// operand by magnitude (ties kept in order) and three operands whose
// elements do not pack into 16 bytes.
constexpr absl::string_view kComparatorSorts = R"(
HloModule comparator_sorts
two_keys {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(a, b), direction=LT
  lt2 = pred[] compare(c, d), direction=LT
  ROOT r = pred[] select(eq, lt2, lt)
}
magnitude {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  aa = f32[] abs(a)
  ab = f32[] abs(b)
  ROOT lt = pred[] compare(aa, ab), direction=LT
}
wide {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  c = s64[] parameter(2)
  d = s64[] parameter(3)
  e = f32[] parameter(4)
  f = f32[] parameter(5)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  k = s32[4,16] parameter(0)
  v = f32[4,16] parameter(1)
  by_two_keys = (s32[4,16], f32[4,16]) sort(k, v), dimensions={1}, to_apply=two_keys, is_stable=true
  x = f32[3,50] parameter(2)
  by_magnitude = f32[3,50] sort(x), dimensions={1}, to_apply=magnitude, is_stable=true
  x64 = f64[3,50] convert(x)
  i64 = s64[3,50] iota(), iota_dimension=1
  records = (f64[3,50], s64[3,50], f32[3,50]) sort(x64, i64, x), dimensions={1}, to_apply=wide, is_stable=true
  k1 = s32[4,16] get-tuple-element(by_two_keys), index=0
  v1 = f32[4,16] get-tuple-element(by_two_keys), index=1
  r0 = f64[3,50] get-tuple-element(records), index=0
  r1 = s64[3,50] get-tuple-element(records), index=1
  r2 = f32[3,50] get-tuple-element(records), index=2
  ROOT t = (s32[4,16], f32[4,16], f32[3,50], f64[3,50], s64[3,50], f32[3,50]) tuple(k1, v1, by_magnitude, r0, r1, r2)
})";

std::vector<Literal> ComparatorSortArguments() {
  std::vector<Literal> arguments;
  arguments.push_back(S32Values(ShapeUtil::MakeShape(S32, {4, 16}), {2, -1, 2, 5, 0, -1, 2}));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {4, 16}), 6));
  arguments.push_back(SeededF32Values(ShapeUtil::MakeShape(F32, {3, 50}), 7));
  return arguments;
}

TEST(ScalarFunctionSerializationTest, SortsThatCallTheirComparator) {
  std::vector<std::string> symbols = ExpectRoundTrip(kComparatorSorts, ComparatorSortArguments());
  EXPECT_FALSE(SymbolWith({"", symbols, {}}, "sort_comparator").empty());
  ExpectInterpreterAgrees(kComparatorSorts, ComparatorSortArguments());
}

TEST(ScalarFunctionSerializationTest, ACorruptedComparatorSortIsAnError) {
  Compiled compiled = Compile(kComparatorSorts);
  ASSERT_NE(compiled.cpu, nullptr);
  absl::StatusOr<SerializedProgram> serialized = SerializeProgram(*compiled.cpu);
  ASSERT_TRUE(serialized.ok()) << serialized.status();
  const KernelResolver resolver = ResolverOf(*serialized);
  ASSERT_TRUE(LoadProgram(serialized->bytes, resolver).ok());
  const ThunkSpan span = FindThunk(serialized->bytes, "by_two_keys", serialized->symbols, 1);
  ASSERT_NE(span.name, std::string::npos);
  // The fields after the name: outer, length, inner, element bytes (count
  // 2, 4, 4), operands (count 2, ids), outputs (count 2, ids), the
  // comparator.
  const std::string& bytes = serialized->bytes;
  const size_t f = span.fields;
  ASSERT_EQ(WordAt(bytes, f), 4);
  ASSERT_EQ(WordAt(bytes, f + 8), 16);
  ASSERT_EQ(WordAt(bytes, f + 24), 2);
  ASSERT_EQ(WordAt(bytes, f + 32), 4);
  const std::vector<Corruption> corruptions = {
      {f, 5, "sizes do not match"},
      {f + 8, -2, "slices of"},
      {f + 16, int64_t{1} << 60, "slices of"},
      {f + 32, 3, "elements of 3 bytes"},
      {f + 40, 8, "sizes do not match"},
      {f + 56, 1 << 20, "value 1048576"},
  };
  ExpectCorruptionsFail(bytes, resolver, corruptions);
  const std::string comparator = SymbolWith(*serialized, "sort_comparator");
  ASSERT_FALSE(comparator.empty());
  absl::StatusOr<std::unique_ptr<SerializedProgramRunner>> missing =
      LoadProgram(bytes, ResolverWithout(*serialized, comparator));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(comparator), std::string::npos) << missing.status();
  ExpectDamageIsHandled(bytes, resolver, span, ComparatorSortArguments());
}

}  // namespace
}  // namespace axle::cpu
