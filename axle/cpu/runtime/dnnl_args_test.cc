//===- dnnl_args_test.cc - Arguments and per-thread memories for oneDNN ---===//
//
// DnnlThreadMemory hands one thread the same object for an owner and slot,
// pointed at each call's buffer, a separate one per slot, per desc and per
// thread; DnnlArgs runs a primitive with the arguments it was given last.
//
//===----------------------------------------------------------------------===//
#include "axle/cpu/runtime/dnnl_args.h"

#include <thread>
#include <vector>

#include "axle/cpu/runtime/dnnl_engine.h"
#include "gtest/gtest.h"

namespace axle::cpu {
namespace {

dnnl::memory::desc Floats(int64_t n) {
  return dnnl::memory::desc({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
}

TEST(DnnlThreadMemoryTest, OneObjectPerOwnerAndSlotPointedAtEachCallsBuffer) {
  const dnnl::memory::desc desc = Floats(4);
  float a[4], b[4];
  dnnl::memory first = DnnlThreadMemory(&desc, DNNL_ARG_SRC, desc, a);
  EXPECT_EQ(first.get_data_handle(), a);
  dnnl::memory again = DnnlThreadMemory(&desc, DNNL_ARG_SRC, desc, b);
  EXPECT_EQ(again.get(), first.get());
  EXPECT_EQ(again.get_data_handle(), b);
  // Another slot of the same owner: its own object, the first one kept.
  dnnl::memory other = DnnlThreadMemory(&desc, DNNL_ARG_DST, desc, a);
  EXPECT_NE(other.get(), first.get());
  EXPECT_EQ(first.get_data_handle(), b);
}

TEST(DnnlThreadMemoryTest, ANewDescAtAnOwnersAddressGetsANewObject) {
  const dnnl::memory::desc desc = Floats(4);
  float a[8];
  dnnl::memory first = DnnlThreadMemory(&desc, DNNL_ARG_SRC, desc, a);
  dnnl::memory wider = DnnlThreadMemory(&desc, DNNL_ARG_SRC, Floats(8), a);
  EXPECT_NE(wider.get(), first.get());
  EXPECT_EQ(wider.get_desc(), Floats(8));
}

TEST(DnnlThreadMemoryTest, EachThreadHasItsOwnObjects) {
  const dnnl::memory::desc desc = Floats(4);
  float a[4], b[4];
  dnnl::memory here = DnnlThreadMemory(&desc, DNNL_ARG_SRC, desc, a);
  dnnl_memory_t there = nullptr;
  std::thread([&] { there = DnnlThreadMemory(&desc, DNNL_ARG_SRC, desc, b).get(); }).join();
  EXPECT_NE(there, here.get());
  EXPECT_EQ(here.get_data_handle(), a);
}

TEST(DnnlArgsTest, RunsAPrimitiveWithTheLastArgumentsSet) {
  const dnnl::memory::desc desc = Floats(4);
  const dnnl::reorder copy = DnnlReorder(desc, desc);
  std::vector<float> from = {1, 2, 3, 4}, wrong = {9, 9, 9, 9}, to(4, 0);
  DnnlArgs args;
  args.Set(DNNL_ARG_FROM, DnnlThreadMemory(&from, DNNL_ARG_FROM, desc, wrong.data()));
  args.Set(DNNL_ARG_FROM, DnnlThreadMemory(&from, DNNL_ARG_FROM, desc, from.data()));
  args.Set(DNNL_ARG_TO, DnnlThreadMemory(&to, DNNL_ARG_TO, desc, to.data()));
  dnnl::stream stream(DnnlEngine());
  args.Execute(copy, stream);
  stream.wait();
  EXPECT_EQ(to, from);
}

}  // namespace
}  // namespace axle::cpu
