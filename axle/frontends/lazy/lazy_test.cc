#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "axle/core/literal.h"
#include "axle/core/shape_util.h"
#include "axle/frontends/lazy/graph_executor.h"
#include "axle/frontends/lazy/ir.h"
#include "axle/frontends/lazy/lazy_tensor.h"
#include "axle/frontends/lazy/lowering.h"
#include "axle/frontends/lazy/metrics.h"
#include "axle/frontends/lazy/rng.h"
#include "axle/runtime/compilation_cache.h"
#include "gtest/gtest.h"

namespace axle::lazy {
namespace {

Shape VecF32(const std::vector<int64_t>& dims) { return ShapeUtil::MakeShape(F32, dims); }

Value Leaf(const std::vector<float>& values) {
  auto data = std::make_shared<DeviceData>(LiteralUtil::CreateR1<float>(values));
  return Value{Node::MakeDeviceData(std::move(data)), 0};
}

// a * b + 2 over vectors.
Value AxpyGraph(const Value& a, const Value& b) {
  const Shape& s = a.shape();
  Value mul = MakeValue("mul", {a, b}, s);
  return MakeValue("add", {mul, Value{Node::MakeConstant(2.0, s), 0}}, s);
}

std::vector<float> ToVector(DeviceData& data) {
  absl::StatusOr<Literal> literal = data.ToLiteral();
  EXPECT_TRUE(literal.ok()) << literal.status();
  if (!literal.ok()) return {};
  auto span = literal->data<float>();
  return {span.begin(), span.end()};
}

int64_t Counter(const char* name) { return metrics::CounterValue(name).value_or(0); }

TEST(LazyIrTest, HashIsStructural) {
  Value a = AxpyGraph(Leaf({1, 2}), Leaf({3, 4}));
  Value b = AxpyGraph(Leaf({5, 6}), Leaf({7, 8}));
  EXPECT_EQ(a.hash(), b.hash());  // leaves hash by shape only
  Value c = AxpyGraph(Leaf({1, 2, 3}), Leaf({3, 4, 5}));
  EXPECT_NE(a.hash(), c.hash());  // shapes differ
  Value x = Leaf({1, 2});
  Value d = MakeValue("add", {x, Value{Node::MakeConstant(3.0, x.shape()), 0}}, x.shape());
  Value e = MakeValue("add", {x, Value{Node::MakeConstant(4.0, x.shape()), 0}}, x.shape());
  EXPECT_NE(d.hash(), e.hash());  // a constant's value is an attribute
  Value f = MakeValue("sub", {x, Value{Node::MakeConstant(3.0, x.shape()), 0}}, x.shape());
  EXPECT_NE(d.hash(), f.hash());
}

TEST(LazyIrTest, ShapesAreInterned) {
  const Shape& a = InternShape(F32, {2, 3});
  EXPECT_EQ(&a, &InternShape(F32, {2, 3}));
  EXPECT_EQ(a, ShapeUtil::MakeShape(F32, {2, 3}));
  EXPECT_EQ(&InternShape(VecF32({2, 3})), &InternShape(VecF32({2, 3})));
  EXPECT_NE(&a, &InternShape(F32, {3, 2}));
  EXPECT_NE(&a, &InternShape(S32, {2, 3}));
  // Layouts tell apart shapes of one element type and dimensions.
  Shape column_major = ShapeUtil::MakeShapeWithDenseLayout(F32, {2, 3}, {0, 1});
  const Shape& interned = InternShape(column_major);
  EXPECT_EQ(interned, column_major);
  EXPECT_NE(interned, InternShape(VecF32({2, 3})));
  Shape tuple = ShapeUtil::MakeTupleShape({VecF32({2}), ShapeUtil::MakeShape(S64, {2})});
  EXPECT_EQ(&InternShape(tuple), &InternShape(tuple));
  EXPECT_EQ(InternShape(tuple), tuple);
  // Nodes and device data share them.
  Value x = Leaf({1, 2});
  Value y = MakeValue("neg", {x}, VecF32({2}));
  EXPECT_EQ(&x.shape(), &y.shape());
  EXPECT_EQ(&x.node->data()->shape(), &InternShape(F32, {2}));
}

TEST(LazyIrTest, InternedShapesKeepTheirHash) {
  // Each form of InternShape, arrays, layouts and tuples: the hash kept is
  // HashShape's.
  Shape column_major = ShapeUtil::MakeShapeWithDenseLayout(F32, {4, 5}, {0, 1});
  Shape tuple = ShapeUtil::MakeTupleShape({VecF32({7}), ShapeUtil::MakeShape(S64, {7, 1})});
  for (const Shape* shape : {&InternShape(F32, {6, 7}), &InternShape(VecF32({7, 6})),
                             &InternShape(ShapeUtil::MakeShape(PRED, {})),
                             &InternShape(column_major), &InternShape(tuple)}) {
    EXPECT_EQ(InternedShapeHash(*shape), HashShape(*shape)) << shape->ToString();
  }
  EXPECT_NE(InternedShapeHash(InternShape(F32, {6, 7})),
            InternedShapeHash(InternShape(F32, {7, 6})));
}

TEST(LazyIrTest, GraphHashSeesSharedParameters) {
  Value x = Leaf({1, 2});
  Value y = Leaf({3, 4});
  Value same = MakeValue("mul", {x, x}, x.shape());
  Value different = MakeValue("mul", {x, y}, x.shape());
  EXPECT_EQ(same.hash(), different.hash());
  PostOrder o1 = ComputePostOrder({same});
  PostOrder o2 = ComputePostOrder({different});
  EXPECT_EQ(o1.parameters.size(), 1u);
  EXPECT_EQ(o2.parameters.size(), 2u);
  EXPECT_NE(GraphExecutor::GraphHash({same}, o1), GraphExecutor::GraphHash({different}, o2));
}

TEST(LazyExecutorTest, ComputesAndCachesByStructure) {
  GraphExecutor executor;
  int64_t uncached = Counter("UncachedCompile");
  int64_t cached = Counter("CachedCompile");
  auto r1 = executor.Execute({AxpyGraph(Leaf({1, 2}), Leaf({3, 4}))});
  ASSERT_TRUE(r1.ok()) << r1.status();
  EXPECT_EQ(ToVector(*(*r1)[0]), (std::vector<float>{5, 10}));
  auto r2 = executor.Execute({AxpyGraph(Leaf({5, 6}), Leaf({7, 8}))});
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(ToVector(*(*r2)[0]), (std::vector<float>{37, 50}));
  EXPECT_EQ(Counter("UncachedCompile") - uncached, 1);
  EXPECT_EQ(Counter("CachedCompile") - cached, 1);
  EXPECT_EQ(executor.cache_size(), 1u);
  ASSERT_TRUE(metrics::Metric("CompileTime").has_value());
  EXPECT_GE(metrics::Metric("ExecuteTime")->count, 2);
}

TEST(LazyExecutorTest, LeastRecentlyUsedIsEvicted) {
  GraphExecutor executor(/*cache_capacity=*/1);
  int64_t uncached = Counter("UncachedCompile");
  Value x = Leaf({1, 2});
  auto add = [&] { return MakeValue("add", {x, x}, x.shape()); };
  auto mul = [&] { return MakeValue("mul", {x, x}, x.shape()); };
  ASSERT_TRUE(executor.Execute({add()}).ok());
  ASSERT_TRUE(executor.Execute({add()}).ok());
  ASSERT_TRUE(executor.Execute({mul()}).ok());
  ASSERT_TRUE(executor.Execute({add()}).ok());
  EXPECT_EQ(Counter("UncachedCompile") - uncached, 3);
  EXPECT_EQ(executor.cache_size(), 1u);
}

TEST(LazyExecutorTest, RootsThatRepeatOrAreLeavesAreHandled) {
  GraphExecutor executor;
  Value x = Leaf({1, 2});
  Value y = MakeValue("neg", {x}, x.shape());
  auto results = executor.Execute({y, x, y});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0], (*results)[2]);
  EXPECT_EQ((*results)[1], x.node->data());
  EXPECT_EQ(ToVector(*(*results)[0]), (std::vector<float>{-1, -2}));
}

TEST(LazyExecutorTest, RepeatedRootsInAnyOrderShareOneResult) {
  GraphExecutor executor;
  Value x = Leaf({1, 2});
  Value a = MakeValue("neg", {x}, x.shape());
  Value b = MakeValue("exp", {x}, x.shape());
  auto results = executor.Execute({b, a, x, b, a, a});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 6u);
  EXPECT_EQ((*results)[0], (*results)[3]);
  EXPECT_EQ((*results)[1], (*results)[4]);
  EXPECT_EQ((*results)[1], (*results)[5]);
  EXPECT_NE((*results)[0], (*results)[1]);
  EXPECT_EQ((*results)[2], x.node->data());
  EXPECT_EQ(ToVector(*(*results)[1]), (std::vector<float>{-1, -2}));
  EXPECT_NEAR(ToVector(*(*results)[0])[1], 7.389056f, 1e-5);
}

TEST(LazyIrTest, PostOrderWalksAgainWithItsOwnMarks) {
  // The walk marks nodes in place: a second walk of the same graph (and a
  // walk of a graph sharing nodes with it) sees every node again.
  Value x = Leaf({1, 2});
  Value y = Leaf({3, 4});
  Value m = MakeValue("mul", {x, y}, x.shape());
  Value s = MakeValue("add", {m, x}, x.shape());
  PostOrder first = ComputePostOrder({s});
  PostOrder again;
  PostOrderScratch scratch;
  ComputePostOrder({s}, &again, &scratch);
  EXPECT_EQ(first.nodes, again.nodes);
  EXPECT_EQ(first.nodes.size(), 4u);  // x, y, mul, add
  ASSERT_EQ(again.parameters.size(), 2u);
  EXPECT_EQ(again.parameters[0], x.node->data());
  EXPECT_EQ(again.parameters[1], y.node->data());
  EXPECT_EQ(first.leaf_parameters_hash, again.leaf_parameters_hash);
  ComputePostOrder({m}, &again, &scratch);  // reuses `again`
  EXPECT_EQ(again.nodes.size(), 3u);
  EXPECT_EQ(again.parameters.size(), 2u);
}

TEST(LazyExecutorTest, DotReduceBroadcastTranspose) {
  GraphExecutor executor;
  auto a = std::make_shared<DeviceData>(LiteralUtil::CreateR2<float>({{1, 2}, {3, 4}}));
  Value va{Node::MakeDeviceData(a), 0};
  Value at = MakeValue("transpose", {va}, VecF32({2, 2}), {std::vector<int64_t>{1, 0}});
  Value dot = MakeValue("dot_general", {va, at}, VecF32({2, 2}),
                        {std::vector<int64_t>{1}, std::vector<int64_t>{0}, std::vector<int64_t>{},
                         std::vector<int64_t>{}});
  Value sum =
      MakeValue("reduce", {dot}, VecF32({2}), {std::vector<int64_t>{0}, std::string("sum")});
  Value b = MakeValue("broadcast_in_dim", {sum}, VecF32({3, 2}), {std::vector<int64_t>{1}});
  Value flat = MakeValue("reshape", {b}, VecF32({6}));
  auto results = executor.Execute({flat});
  ASSERT_TRUE(results.ok()) << results.status();
  // a a^T = {{5, 11}, {11, 25}}; column sums {16, 36}.
  EXPECT_EQ(ToVector(*(*results)[0]), (std::vector<float>{16, 36, 16, 36, 16, 36}));
}

// Which graphs run on more than the calling thread: a dot of 2M
// multiply-adds or more, or a value of 256K elements or more.
TEST(LazyExecutorTest, SplitsPayOnlyForLargeDotsOrValues) {
  auto leaf = [](const std::vector<int64_t>& dims) {
    return Value{Node::MakeDeviceData(
                     std::make_shared<DeviceData>(Literal(ShapeUtil::MakeShape(F32, dims)))),
                 0};
  };
  auto dot = [](const Value& a, const Value& b, int64_t m, int64_t n) {
    return MakeValue("dot_general", {a, b}, VecF32({m, n}),
                     {std::vector<int64_t>{1}, std::vector<int64_t>{0}, std::vector<int64_t>{},
                      std::vector<int64_t>{}});
  };
  auto pays = [](const Value& root) {
    PostOrder order = ComputePostOrder({root});
    return GraphExecutor::SplitsPay(order);
  };
  // 64 x 128 x 128 = 1M multiply-adds (the MLP example's largest dot).
  Value small = dot(leaf({64, 128}), leaf({128, 128}), 64, 128);
  EXPECT_FALSE(pays(MakeValue("add", {small, small}, small.shape())));
  // 64 x 256 x 128 = 2M: worth splitting.
  EXPECT_TRUE(pays(dot(leaf({64, 256}), leaf({256, 128}), 64, 128)));
  // No dot, but 512 x 512 elements.
  Value big = leaf({512, 512});
  EXPECT_TRUE(pays(MakeValue("mul", {big, big}, big.shape())));
  Value under = leaf({511, 512});
  EXPECT_FALSE(pays(MakeValue("mul", {under, under}, under.shape())));
  // A convolution counts its output's elements times its kernel's (an
  // upper bound): 2x4x8x8 x 4x4x3x3 = 74K, 2x16x16x16 x 16x4x3x3 = 4.7M.
  EXPECT_FALSE(pays(
      MakeValue("convolution", {leaf({2, 4, 8, 8}), leaf({4, 4, 3, 3})}, VecF32({2, 4, 8, 8}))));
  Value wide = MakeValue("convolution", {leaf({2, 4, 16, 16}), leaf({16, 4, 3, 3})},
                         VecF32({2, 16, 16, 16}));
  EXPECT_TRUE(pays(wide));
}

// A 1-D window of 2 by stride 2 over {1, 5, 5, 2, 7, 7}, padded by one on
// the high side: the maxima and the first index of each.
TEST(LazyExecutorTest, ReduceWindowArgmaxAndSelectAndScatter) {
  GraphExecutor executor;
  Value x = Leaf({1, 5, 5, 2, 7, 7});
  auto index = std::make_shared<DeviceData>(LiteralUtil::CreateR1<int64_t>({0, 1, 2, 3, 4, 5}));
  Value i{Node::MakeDeviceData(index), 0};
  using Ints = std::vector<int64_t>;
  Shape out = ShapeUtil::MakeTupleShape({VecF32({4}), ShapeUtil::MakeShape(S64, {4})});
  auto node =
      std::make_shared<Node>("reduce_window_argmax", std::vector<Value>{x, i}, out,
                             std::vector<Attr>{Ints{2}, Ints{2}, Ints{1}, Ints{1}, Ints{1}});
  Value source = Leaf({10, 20, 30, 40});
  Value grad = MakeValue("select_and_scatter", {x, source}, VecF32({6}),
                         {Ints{2}, Ints{2}, Ints{1}, Ints{1}});
  auto results = executor.Execute({Value{node, 0}, Value{node, 1}, grad});
  ASSERT_TRUE(results.ok()) << results.status();
  // Windows {pad, 1}, {5, 5}, {2, 7}, {7, pad}.
  EXPECT_EQ(ToVector(*(*results)[0]), (std::vector<float>{1, 5, 7, 7}));
  absl::StatusOr<Literal> indices = (*results)[1]->ToLiteral();
  ASSERT_TRUE(indices.ok()) << indices.status();
  auto span = indices->data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(span.begin(), span.end()), (std::vector<int64_t>{0, 1, 4, 5}));
  EXPECT_EQ(ToVector(*(*results)[2]), (std::vector<float>{10, 20, 0, 0, 30, 40}));
}

// With AXLE_CACHE_DIR, a graph compiled once is loaded by a later compile
// whose in-memory caches are empty (as in a fresh process: the Python test
// cache_dir_test.py uses two): a PersistentCacheHit, not an UncachedCompile.
TEST(LazyExecutorTest, AxleCacheDirServesALaterProcess) {
  std::string dir = ::testing::TempDir() + "/lazy_cache_dir";
  std::filesystem::remove_all(dir);
  setenv("AXLE_CACHE_DIR", dir.c_str(), 1);
  CompilationCache::Global().Clear();
  int64_t uncached = Counter("UncachedCompile");
  int64_t persistent = Counter("PersistentCacheHit");
  {
    GraphExecutor first;
    auto r = first.Execute({AxpyGraph(Leaf({1, 2, 3, 4, 5}), Leaf({3, 4, 5, 6, 7}))});
    ASSERT_TRUE(r.ok()) << r.status();
  }
  EXPECT_EQ(Counter("UncachedCompile") - uncached, 1);
  EXPECT_EQ(Counter("PersistentCacheHit") - persistent, 0);
  CompilationCache::Global().Clear();
  GraphExecutor second;
  auto r = second.Execute({AxpyGraph(Leaf({2, 2, 2, 2, 2}), Leaf({1, 2, 3, 4, 5}))});
  unsetenv("AXLE_CACHE_DIR");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToVector(*(*r)[0]), (std::vector<float>{4, 6, 8, 10, 12}));
  EXPECT_EQ(Counter("UncachedCompile") - uncached, 1);
  EXPECT_EQ(Counter("PersistentCacheHit") - persistent, 1);
  std::filesystem::remove_all(dir);
}

TEST(LazyExecutorTest, UnknownOpIsUnimplemented) {
  GraphExecutor executor;
  Value x = Leaf({1});
  auto results = executor.Execute({MakeValue("frobnicate", {x}, x.shape())});
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(results.status().message().find("frobnicate"), std::string::npos);
}

TEST(LazyExecutorTest, BadGraphIsAnError) {
  GraphExecutor executor;
  Value x = Leaf({1, 2});
  Value y = Leaf({1, 2, 3});
  auto results = executor.Execute({MakeValue("add", {x, y}, x.shape())});
  ASSERT_FALSE(results.ok());
  EXPECT_NE(results.status().message().find("add"), std::string::npos) << results.status();
}

TEST(LazyExecutorTest, FailedGraphIsDumpedUnderAxleDumpTo) {
  std::string dir = ::testing::TempDir() + "/axle_lazy_dump";
  std::filesystem::create_directories(dir);
  setenv("AXLE_DUMP_TO", dir.c_str(), 1);
  GraphExecutor executor;
  Value x = Leaf({1, 2});
  auto results = executor.Execute({MakeValue("add", {x, Leaf({1, 2, 3})}, x.shape())});
  unsetenv("AXLE_DUMP_TO");
  ASSERT_FALSE(results.ok());
  std::string message(results.status().message());
  size_t at = message.find(dir);
  ASSERT_NE(at, std::string::npos) << message;
  std::string path = message.substr(at, message.find(')', at) - at);
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("add("), std::string::npos) << text;
}

TEST(LazyTensorTest, InPlaceUpdatesAndMarkStep) {
  int64_t steps = Counter("MarkStep");
  auto w = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({1, 2, 3}));
  int64_t uncached = Counter("UncachedCompile");
  int64_t donated = Counter("DonatedBuffers");
  for (int step = 0; step < 4; ++step) {
    Value v = w->GetIrValue();
    w->SetIrValue(AxpyGraph(v, v));  // w = w * w + 2
    ASSERT_TRUE(w->has_pending_ir());
    ASSERT_TRUE(SyncLiveTensors().ok());
    ASSERT_FALSE(w->has_pending_ir());
  }
  // One graph for every step: the data leaf replaces the IR each time.
  EXPECT_EQ(Counter("UncachedCompile") - uncached, 1);
  // w's old value dies at each step: its buffer is donated to the new one.
  EXPECT_EQ(Counter("DonatedBuffers") - donated, 4);
  EXPECT_EQ(Counter("MarkStep") - steps, 4);
  auto literal = w->ToLiteral();
  ASSERT_TRUE(literal.ok());
  // 1 -> 3 -> 11 -> 123 -> 15131.
  EXPECT_EQ(literal->data<float>()[0], 15131.0f);
}

TEST(LazyTensorTest, SecondIdenticalStepCompilesNothingAndReusesBuffers) {
  // Two weights updated in place each step, and a value read back.
  auto w = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({1, 2, 3}));
  auto v = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({0.5f, 0.25f, 0}));
  auto step = [&] {
    Value wv = w->GetIrValue();
    Value vv = v->GetIrValue();
    Value grad = MakeValue("mul", {wv, vv}, wv.shape());
    v->SetIrValue(MakeValue("add", {vv, grad}, vv.shape()));  // v += w * v
    w->SetIrValue(MakeValue("sub", {wv, grad}, wv.shape()));  // w -= w * v
    return SyncLiveTensors();
  };
  auto address = [](LazyTensor& t) {
    absl::StatusOr<const ShapedBuffer*> buffer = t.data()->Buffer();
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    return buffer.ok() ? (*buffer)->root_buffer().opaque() : nullptr;
  };
  ASSERT_TRUE(step().ok());
  const void* w_buffer = address(*w);
  const void* v_buffer = address(*v);
  int64_t uncached = Counter("UncachedCompile");
  int64_t cached = Counter("CachedCompile");
  int64_t donated = Counter("DonatedBuffers");
  ASSERT_TRUE(step().ok());
  ASSERT_TRUE(step().ok());
  // Nothing compiled: both steps found the first one's executable.
  EXPECT_EQ(Counter("UncachedCompile") - uncached, 0);
  EXPECT_EQ(Counter("CachedCompile") - cached, 2);
  // Each step's old weights were donated and written in place: the weights
  // stay in the buffers they had.
  EXPECT_EQ(Counter("DonatedBuffers") - donated, 4);
  EXPECT_EQ(address(*w), w_buffer);
  EXPECT_EQ(address(*v), v_buffer);
  // The values are the three steps' (computed on the host).
  std::vector<float> wh = {1, 2, 3};
  std::vector<float> vh = {0.5f, 0.25f, 0};
  for (int s = 0; s < 3; ++s) {
    for (size_t i = 0; i < wh.size(); ++i) {
      float grad = wh[i] * vh[i];
      vh[i] += grad;
      wh[i] -= grad;
    }
  }
  EXPECT_EQ(ToVector(*w->data()), wh);
  EXPECT_EQ(ToVector(*v->data()), vh);
}

TEST(LazyTensorTest, EachUpdateGetsTheBufferItUpdates) {
  // A momentum step: v' = w * w + v * v, w' = w - v'. Both buffers die and
  // both results have their shape; each result gets the buffer it reads
  // nearest (w' reads w directly, v' reads v through one op), so after a
  // single step each tensor is still in its own buffer.
  // (v is made first, so its update is the first root, and that root
  // reads w's buffer first: pairing by shape alone in root order would
  // give w's buffer to v'.)
  auto v = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({0.5f, 0.25f, 0}));
  auto w = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({1, 2, 3}));
  auto step = [&] {
    Value vv = v->GetIrValue();
    Value wv = w->GetIrValue();
    Value grad = MakeValue("mul", {wv, wv}, wv.shape());
    Value v1 = MakeValue("add", {grad, MakeValue("mul", {vv, vv}, vv.shape())}, vv.shape());
    v->SetIrValue(v1);
    w->SetIrValue(MakeValue("sub", {wv, v1}, wv.shape()));
    return SyncLiveTensors();
  };
  auto address = [](LazyTensor& t) {
    absl::StatusOr<const ShapedBuffer*> buffer = t.data()->Buffer();
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    return buffer.ok() ? (*buffer)->root_buffer().opaque() : nullptr;
  };
  ASSERT_TRUE(step().ok());
  const void* w_buffer = address(*w);
  const void* v_buffer = address(*v);
  ASSERT_NE(w_buffer, v_buffer);
  int64_t donated = Counter("DonatedBuffers");
  ASSERT_TRUE(step().ok());
  EXPECT_EQ(Counter("DonatedBuffers") - donated, 2);
  EXPECT_EQ(address(*w), w_buffer);
  EXPECT_EQ(address(*v), v_buffer);
  std::vector<float> wh = {1, 2, 3};
  std::vector<float> vh = {0.5f, 0.25f, 0};
  for (int s = 0; s < 2; ++s) {
    for (size_t i = 0; i < wh.size(); ++i) {
      vh[i] = vh[i] * vh[i] + wh[i] * wh[i];
      wh[i] -= vh[i];
    }
  }
  EXPECT_EQ(ToVector(*w->data()), wh);
  EXPECT_EQ(ToVector(*v->data()), vh);
}

TEST(LazyTensorTest, BuffersStillHeldAreNotDonated) {
  auto a = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({1, 2}));
  ASSERT_TRUE(a->data()->Buffer().ok());
  auto b = LazyTensor::FromIr(MakeValue("neg", {a->GetIrValue()}, a->shape()));
  int64_t donated = Counter("DonatedBuffers");
  ASSERT_TRUE(SyncLiveTensors().ok());
  EXPECT_EQ(Counter("DonatedBuffers") - donated, 0);  // a still holds its value
  auto literal = a->ToLiteral();
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->data<float>()[1], 2.0f);
  EXPECT_EQ(b->ToLiteral()->data<float>()[1], -2.0f);
}

TEST(LazyTensorTest, ViewsOfABaseAreLeftPendingByTheStepMarker) {
  // b = -a, and v a view of b (here: b + 0, as a view's steps would give):
  // the step computes b alone; v stays pending until its owner replaces it.
  auto a = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({1, 2}));
  auto b = LazyTensor::FromIr(MakeValue("neg", {a->GetIrValue()}, a->shape()));
  Value b_ir = b->GetIrValue();
  auto v = LazyTensor::FromIr(
      MakeValue("add", {b_ir, Value{Node::MakeConstant(0.0, b_ir.shape()), 0}}, b_ir.shape()));
  v->MarkViewOfBase();
  EXPECT_TRUE(v->is_view_of_base());
  ASSERT_TRUE(SyncLiveTensors().ok());
  EXPECT_FALSE(b->has_pending_ir());
  EXPECT_TRUE(v->has_pending_ir());  // left out of the step
  EXPECT_EQ(ToVector(*b->data()), (std::vector<float>{-1, -2}));
  // Its owner recomputes it from the base's new value: a plain value, synced.
  v->SetIrValue(MakeValue("neg", {b->GetIrValue()}, a->shape()));
  EXPECT_FALSE(v->is_view_of_base());
  ASSERT_TRUE(SyncLiveTensors().ok());
  EXPECT_FALSE(v->has_pending_ir());
  EXPECT_EQ(ToVector(*v->data()), (std::vector<float>{1, 2}));
  // A view read back on its own is computed (Sync of the tensor) and loses
  // the mark with its pending value.
  v->SetIrValue(MakeValue("neg", {b->GetIrValue()}, a->shape()));
  v->MarkViewOfBase();
  absl::StatusOr<Literal> read = v->ToLiteral();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->data<float>()[1], 2.0f);
  EXPECT_FALSE(v->is_view_of_base());
  // Data cannot be marked (the mark is for pending values only).
  v->MarkViewOfBase();
  EXPECT_FALSE(v->is_view_of_base());
}

TEST(LazyTensorTest, DonatedValueHeldOutsideATensorIsAClearError) {
  // The old value of w, held by no tensor, is donated to w's new value: the
  // buffer is reused and the old DeviceData refuses to be read.
  auto w = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({1, 2, 3}));
  ASSERT_TRUE(w->data()->Buffer().ok());
  std::shared_ptr<DeviceData> old = w->data();
  const void* address = (*old->Buffer())->root_buffer().opaque();
  Value v = w->GetIrValue();
  w->SetIrValue(AxpyGraph(v, v));  // w = w * w + 2
  ASSERT_TRUE(SyncLiveTensors().ok());
  EXPECT_TRUE(old->donated());
  EXPECT_EQ((*w->data()->Buffer())->root_buffer().opaque(), address);
  EXPECT_EQ(ToVector(*w->data()), (std::vector<float>{3, 6, 11}));
  absl::StatusOr<Literal> read = old->ToLiteral();
  EXPECT_EQ(read.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(read.status().message().find("donated to an earlier execution"), std::string::npos)
      << read.status();
  EXPECT_EQ(old->Memory().status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(LazyTensorTest, ZeroElementValuesRunAndAreDonated) {
  // f32[0] has no bytes: its buffers are null, donated or not.
  auto w = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({}));
  auto x = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({1, 2}));
  for (int step = 0; step < 2; ++step) {
    Value v = w->GetIrValue();
    w->SetIrValue(AxpyGraph(v, v));
    Value xv = x->GetIrValue();
    x->SetIrValue(AxpyGraph(xv, xv));
    ASSERT_TRUE(SyncLiveTensors().ok());
  }
  absl::StatusOr<Literal> empty = w->ToLiteral();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), VecF32({0}));
  EXPECT_EQ(ToVector(*x->data()), (std::vector<float>{11, 38}));  // 1 -> 3 -> 11, 2 -> 6 -> 38
}

int64_t Transfers() {
  auto m = metrics::Metric("TransferToDeviceTime");
  return m.has_value() ? m->count : 0;
}

Value Scalar(float value) {
  return Value{Node::MakeDeviceData(ScalarData(LiteralUtil::CreateR0<float>(value))), 0};
}

TEST(LazyTensorTest, ScalarsAreTransferredOnceAndNeverDonated) {
  auto t = LazyTensor::FromLiteral(LiteralUtil::CreateR0<float>(1));
  int64_t uncached = Counter("UncachedCompile");
  auto step = [&t](float a, float b) {  // t = t * a + b
    Value v = t->GetIrValue();
    Value mul = MakeValue("mul", {v, Scalar(a)}, v.shape());
    t->SetIrValue(MakeValue("add", {mul, Scalar(b)}, v.shape()));
    return SyncLiveTensors();
  };
  ASSERT_TRUE(step(2, 3).ok());  // 5
  int64_t transfers = Transfers();
  ASSERT_TRUE(step(2, 3).ok());  // 13
  // Equal scalars share a DeviceData but stay two parameters: same graph.
  ASSERT_TRUE(step(2, 2).ok());       // 28
  EXPECT_EQ(Transfers(), transfers);  // 2 and 3 were on the device already
  EXPECT_EQ(Counter("UncachedCompile") - uncached, 1);
  // The scalars' f32[] buffers were not donated to t's f32[] result.
  auto literal = t->ToLiteral();
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->data<float>()[0], 28.0f);
  auto two = ScalarData(LiteralUtil::CreateR0<float>(2));
  EXPECT_TRUE(two->shared());
  EXPECT_FALSE(two->donated());
  EXPECT_EQ(two->ToLiteral()->data<float>()[0], 2.0f);
  EXPECT_EQ(ScalarData(LiteralUtil::CreateR0<float>(2)), two);
  EXPECT_NE(ScalarData(LiteralUtil::CreateR0<double>(2)), two);  // by type too
  EXPECT_GE(ScalarDataCacheSize(), 3u);
}

TEST(LazyTensorTest, ToLiteralSyncsPendingValue) {
  auto x = LazyTensor::FromLiteral(LiteralUtil::CreateR1<float>({1, 2}));
  auto y = LazyTensor::FromIr(MakeValue("exp", {x->GetIrValue()}, x->shape()));
  auto literal = y->ToLiteral();
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_NEAR(literal->data<float>()[1], 7.389056f, 1e-5);
  EXPECT_FALSE(y->has_pending_ir());
}

TEST(LazyRngTest, UniformValuesAdvanceEachStepWithoutRecompiling) {
  SetRngSeed(7);
  const Shape& shape = InternShape(F32, {4096});
  int64_t uncached = Counter("UncachedCompile");
  std::vector<std::vector<float>> draws;
  for (int step = 0; step < 3; ++step) {
    absl::StatusOr<Value> u = RngUniform(shape);
    ASSERT_TRUE(u.ok()) << u.status();
    auto t = LazyTensor::FromIr(*u);
    ASSERT_TRUE(SyncLiveTensors().ok());  // also computes the advanced state
    auto literal = t->ToLiteral();
    ASSERT_TRUE(literal.ok()) << literal.status();
    auto values = literal->data<float>();
    double sum = 0;
    for (float v : values) {
      ASSERT_GE(v, 0.0f);
      ASSERT_LT(v, 1.0f);
      sum += v;
    }
    EXPECT_NEAR(sum / static_cast<double>(values.size()), 0.5, 0.02);
    draws.emplace_back(values.begin(), values.end());
  }
  EXPECT_NE(draws[0], draws[1]);  // the state advanced
  EXPECT_NE(draws[1], draws[2]);
  // The state is a parameter: one graph for every step.
  EXPECT_EQ(Counter("UncachedCompile") - uncached, 1);
  // The same seed draws the same values again; two draws in one graph differ.
  SetRngSeed(7);
  absl::StatusOr<Value> a = RngUniform(shape);
  absl::StatusOr<Value> b = RngUniform(shape);
  ASSERT_TRUE(a.ok() && b.ok());
  auto ta = LazyTensor::FromIr(*a);
  auto tb = LazyTensor::FromIr(*b);
  ASSERT_TRUE(SyncLiveTensors().ok());
  auto la = ta->ToLiteral();
  auto lb = tb->ToLiteral();
  ASSERT_TRUE(la.ok() && lb.ok());
  EXPECT_EQ(std::vector<float>(la->data<float>().begin(), la->data<float>().end()), draws[0]);
  EXPECT_NE(std::vector<float>(lb->data<float>().begin(), lb->data<float>().end()), draws[0]);
  EXPECT_FALSE(RngUniform(InternShape(S32, {2})).ok());  // not a floating type
}

TEST(LazyMetricsTest, CountersAndReport) {
  metrics::IncrementCounter("axle::test_op", 2);
  EXPECT_EQ(metrics::CounterValue("axle::test_op"), 2);
  EXPECT_EQ(metrics::CounterValue("never_used"), std::nullopt);
  metrics::RecordTime("TestTime", 0.5);
  EXPECT_NE(metrics::Report().find("axle::test_op"), std::string::npos);
  EXPECT_NE(metrics::Report().find("TestTime"), std::string::npos);
  metrics::Counter* handle = metrics::GetCounter("axle::test_handle");
  EXPECT_EQ(metrics::CounterValue("axle::test_handle"), std::nullopt);  // not used yet
  handle->Increment(3);
  EXPECT_EQ(metrics::CounterValue("axle::test_handle"), 3);
  EXPECT_EQ(metrics::GetCounter("axle::test_handle"), handle);
  metrics::ClearAll();  // the handle stays valid, the counter unused
  EXPECT_EQ(metrics::CounterValue("axle::test_handle"), std::nullopt);
  EXPECT_EQ(metrics::Report().find("axle::test_handle"), std::string::npos);
  handle->Increment();
  EXPECT_EQ(metrics::CounterValue("axle::test_handle"), 1);
}

}  // namespace
}  // namespace axle::lazy
