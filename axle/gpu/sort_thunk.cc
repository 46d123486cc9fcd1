//===- sort_thunk.cc - sort as Axle's own GPU kernels ----------------------===//
#include "axle/gpu/sort_thunk.h"

#include <algorithm>
#include <bit>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "axle/base/status_macros.h"
#include "axle/core/shape_util.h"
#include "axle/gpu/kernel_builder.h"
#include "axle/gpu/ptx_module.h"
#include "axle/gpu/ptx_thunk.h"
#include "axle/hlo/ir/hlo_instructions.h"

namespace axle::gpu {
namespace {

namespace pu = primitive_util;

// Static shared memory a block may use without opting in (48 KiB).
constexpr int64_t kSharedBytes = 48 << 10;
constexpr int64_t kMaxTile = 4096;
constexpr int kStepBlock = 256;

struct SortGeometry {
  // Rows: `outer` x `inner` rows of `length` elements, element k of row
  // (o, i) at linear index (o * length + k) * inner + i.
  int64_t outer = 1;
  int64_t length = 1;
  int64_t inner = 1;
  // The row's length rounded up to a power of two, the tile (a power of
  // two, at most `padded`) and the tiles of a row.
  int64_t padded = 1;
  int64_t tile = 1;
  int64_t tiles_per_row = 1;
  // Threads of a tile's block.
  int tile_threads = 32;

  int64_t rows() const { return outer * inner; }
  bool multi_launch() const { return padded > tile; }
};

int Log2(int64_t power_of_two) { return std::countr_zero(static_cast<uint64_t>(power_of_two)); }

// Emits the sort's kernels: sort_tile always, sort_step when rows span
// several tiles.
class SortEmitter {
 public:
  SortEmitter(const HloInstruction& sort, const SortGeometry& geometry, llvm::Module* module)
      : sort_(sort),
        comparator_(*sort.to_apply()),
        g_(geometry),
        kb_(module),
        n_(static_cast<int>(sort.operand_count())) {
    for (int i = 0; i < n_; ++i) types_.push_back(sort.operand(i)->shape().element_type());
  }

  // sort_tile(in..., out..., positions, i64 first_merge_log2, i64
  // last_merge_log2, i64 read_positions): block b sorts tile
  // b % tiles_per_row of row b / tiles_per_row, running merges of sizes
  // 2^first .. 2^last (each from step min(size, tile) / 2 down to 1).
  // Reads records from `in` (positions: their index in the row, or from
  // `positions` when read_positions), writes them to `out` (positions to
  // `positions` when it is not null).
  absl::Status EmitTileKernel();
  // sort_step(out..., positions, i64 merge, i64 step_log2): one
  // compare-exchange step in global memory, a thread per pair.
  absl::Status EmitStepKernel();

 private:
  struct Record {
    std::vector<llvm::Value*> bits;    // storage type, per operand
    std::vector<llvm::Value*> values;  // value type, per operand
    llvm::Value* position = nullptr;   // i32
  };
  // Whether `a` goes before `b`: the comparator, then the position.
  absl::StatusOr<llvm::Value*> Less(const Record& a, const Record& b);
  // `lower` and `upper` are positions lower < upper; their records swap
  // when `upper`'s goes first. load(at) reads a record, store(at, r)
  // writes one.
  absl::Status CompareExchange(llvm::Value* lower, llvm::Value* upper,
                               const std::function<Record(llvm::Value*)>& load,
                               const std::function<void(llvm::Value*, const Record&)>& store);
  // The partner positions of pair `t` in a step of `merge` (2^merge_log2
  // elements) whose partners are `2^step_log2` apart: (lower, upper).
  std::pair<llvm::Value*, llvm::Value*> Pair(llvm::Value* t, llvm::Value* merge_log2,
                                             llvm::Value* step_log2);

  const HloInstruction& sort_;
  const HloComputation& comparator_;
  const SortGeometry& g_;
  KernelBuilder kb_;
  int n_;
  std::vector<PrimitiveType> types_;
};

absl::StatusOr<llvm::Value*> SortEmitter::Less(const Record& a, const Record& b) {
  llvm::IRBuilder<>& b_ = kb_.b();
  std::vector<llvm::Value*> ab, ba;
  for (int i = 0; i < n_; ++i) {
    ab.push_back(a.values[i]);
    ab.push_back(b.values[i]);
    ba.push_back(b.values[i]);
    ba.push_back(a.values[i]);
  }
  AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> a_first,
                        kb_.elemental().EmitScalarComputation(comparator_, ab));
  AXLE_ASSIGN_OR_RETURN(std::vector<llvm::Value*> b_first,
                        kb_.elemental().EmitScalarComputation(comparator_, ba));
  // Neither goes first: the original order.
  llvm::Value* tie =
      b_.CreateAnd(b_.CreateNot(b_first[0]), b_.CreateICmpULT(a.position, b.position));
  return b_.CreateOr(a_first[0], tie, "less");
}

absl::Status SortEmitter::CompareExchange(
    llvm::Value* lower, llvm::Value* upper, const std::function<Record(llvm::Value*)>& load,
    const std::function<void(llvm::Value*, const Record&)>& store) {
  const Record low = load(lower);
  const Record high = load(upper);
  AXLE_ASSIGN_OR_RETURN(llvm::Value * swap, Less(high, low));
  return kb_.If(swap, "swap", [&]() -> absl::Status {
    store(lower, high);
    store(upper, low);
    return absl::OkStatus();
  });
}

std::pair<llvm::Value*, llvm::Value*> SortEmitter::Pair(llvm::Value* t, llvm::Value* merge_log2,
                                                        llvm::Value* step_log2) {
  llvm::IRBuilder<>& b = kb_.b();
  llvm::Value* one = kb_.I64(1);
  llvm::Value* step = b.CreateShl(one, step_log2);
  // The pair's lower position: t with a 0 inserted at bit step_log2.
  llvm::Value* lower =
      b.CreateOr(b.CreateShl(b.CreateLShr(t, step_log2), b.CreateAdd(step_log2, one)),
                 b.CreateAnd(t, b.CreateSub(step, one)), "lower");
  // The first step of a merge compares mirrored positions (flip), the
  // others positions a step apart.
  llvm::Value* flip = b.CreateICmpEQ(b.CreateAdd(step_log2, one), merge_log2);
  llvm::Value* mirrored = b.CreateXor(lower, b.CreateSub(b.CreateShl(one, merge_log2), one));
  llvm::Value* upper = b.CreateSelect(flip, mirrored, b.CreateAdd(lower, step), "upper");
  return {lower, upper};
}

absl::Status SortEmitter::EmitTileKernel() {
  kb_.BeginKernel("sort_tile", 2 * n_ + 1, 3, g_.tile_threads);
  llvm::IRBuilder<>& b = kb_.b();
  llvm_ir::ElementalIrEmitter& e = kb_.elemental();
  llvm::Value* positions = kb_.pointer(2 * n_);
  llvm::Value* first_merge = kb_.integer(0);
  llvm::Value* last_merge = kb_.integer(1);
  llvm::Value* read_positions = b.CreateICmpNE(kb_.integer(2), kb_.I64(0));
  std::vector<llvm::GlobalVariable*> shared;
  shared.reserve(n_);
  for (int i = 0; i < n_; ++i) {
    shared.push_back(kb_.SharedArray(e.StorageType(types_[i]), g_.tile, absl::StrCat("keys", i)));
  }
  llvm::GlobalVariable* shared_positions = kb_.SharedArray(b.getInt32Ty(), g_.tile, "positions");

  llvm::Value* block = kb_.BlockIndex();
  llvm::Value* row = b.CreateUDiv(block, kb_.I64(g_.tiles_per_row), "row");
  llvm::Value* first =
      b.CreateMul(b.CreateURem(block, kb_.I64(g_.tiles_per_row)), kb_.I64(g_.tile), "first");
  llvm::Value* left = b.CreateSub(kb_.I64(g_.length), first);
  llvm::Value* valid =
      b.CreateSelect(b.CreateICmpULT(left, kb_.I64(g_.tile)), left, kb_.I64(g_.tile), "valid");
  llvm::Value* row_base =
      b.CreateAdd(b.CreateMul(b.CreateUDiv(row, kb_.I64(g_.inner)), kb_.I64(g_.length * g_.inner)),
                  b.CreateURem(row, kb_.I64(g_.inner)), "row_base");
  llvm::Value* row_positions = b.CreateMul(row, kb_.I64(g_.length));
  llvm::Value* thread = kb_.ThreadIndex();
  llvm::Value* threads = kb_.BlockSize();
  // The element of the row at `position` in global memory.
  auto global_index = [&](llvm::Value* position) {
    return b.CreateAdd(row_base, b.CreateMul(position, kb_.I64(g_.inner)));
  };

  AXLE_RETURN_IF_ERROR(kb_.For(thread, valid, threads, "load", [&](llvm::Value* q) -> absl::Status {
    llvm::Value* position = b.CreateAdd(first, q);
    llvm::Value* at = global_index(position);
    for (int i = 0; i < n_; ++i) {
      llvm::Type* storage = e.StorageType(types_[i]);
      b.CreateStore(b.CreateLoad(storage, b.CreateInBoundsGEP(storage, kb_.pointer(i), at)),
                    b.CreateInBoundsGEP(storage, shared[i], q));
    }
    llvm::Value* slot = b.CreateInBoundsGEP(b.getInt32Ty(), shared_positions, q);
    b.CreateStore(b.CreateTrunc(position, b.getInt32Ty()), slot);
    return kb_.If(read_positions, "read_positions", [&]() -> absl::Status {
      llvm::Value* stored = b.CreateLoad(
          b.getInt32Ty(),
          b.CreateInBoundsGEP(b.getInt32Ty(), positions, b.CreateAdd(row_positions, position)));
      b.CreateStore(stored, slot);
      return absl::OkStatus();
    });
  }));
  kb_.Barrier();

  auto load = [&](llvm::Value* q) {
    Record record;
    for (int i = 0; i < n_; ++i) {
      llvm::Type* storage = e.StorageType(types_[i]);
      record.bits.push_back(b.CreateLoad(storage, b.CreateInBoundsGEP(storage, shared[i], q)));
      record.values.push_back(e.LoadElement(shared[i], q, types_[i]));
    }
    record.position =
        b.CreateLoad(b.getInt32Ty(), b.CreateInBoundsGEP(b.getInt32Ty(), shared_positions, q));
    return record;
  };
  auto store = [&](llvm::Value* q, const Record& record) {
    for (int i = 0; i < n_; ++i) {
      llvm::Type* storage = e.StorageType(types_[i]);
      b.CreateStore(record.bits[i], b.CreateInBoundsGEP(storage, shared[i], q));
    }
    b.CreateStore(record.position, b.CreateInBoundsGEP(b.getInt32Ty(), shared_positions, q));
  };
  const int tile_log2 = Log2(g_.tile);
  AXLE_RETURN_IF_ERROR(kb_.For(
      first_merge, b.CreateAdd(last_merge, kb_.I64(1)), kb_.I64(1), "merge",
      [&](llvm::Value* merge_log2) -> absl::Status {
        // Steps 2^top .. 2^0 with top = min(merge_log2, tile_log2) - 1.
        llvm::Value* top =
            b.CreateSub(b.CreateSelect(b.CreateICmpULT(merge_log2, kb_.I64(tile_log2)), merge_log2,
                                       kb_.I64(tile_log2)),
                        kb_.I64(1));
        return kb_.For(
            kb_.I64(0), b.CreateAdd(top, kb_.I64(1)), kb_.I64(1), "step",
            [&](llvm::Value* r) -> absl::Status {
              llvm::Value* step_log2 = b.CreateSub(top, r);
              AXLE_RETURN_IF_ERROR(
                  kb_.For(thread, kb_.I64(g_.tile / 2), threads, "pair", [&](llvm::Value* t) {
                    const auto [lower_position, upper_position] = Pair(t, merge_log2, step_log2);
                    llvm::Value* lower = lower_position;
                    llvm::Value* upper = upper_position;
                    return kb_.If(b.CreateICmpULT(upper, valid), "in_row",
                                  [&]() { return CompareExchange(lower, upper, load, store); });
                  }));
              kb_.Barrier();
              return absl::OkStatus();
            });
      }));

  llvm::Value* write_positions =
      b.CreateICmpNE(positions, llvm::ConstantPointerNull::get(b.getPtrTy()));
  AXLE_RETURN_IF_ERROR(
      kb_.For(thread, valid, threads, "store", [&](llvm::Value* q) -> absl::Status {
        llvm::Value* position = b.CreateAdd(first, q);
        llvm::Value* at = global_index(position);
        for (int i = 0; i < n_; ++i) {
          llvm::Type* storage = e.StorageType(types_[i]);
          b.CreateStore(b.CreateLoad(storage, b.CreateInBoundsGEP(storage, shared[i], q)),
                        b.CreateInBoundsGEP(storage, kb_.pointer(n_ + i), at));
        }
        return kb_.If(write_positions, "write_positions", [&]() -> absl::Status {
          b.CreateStore(
              b.CreateLoad(b.getInt32Ty(),
                           b.CreateInBoundsGEP(b.getInt32Ty(), shared_positions, q)),
              b.CreateInBoundsGEP(b.getInt32Ty(), positions, b.CreateAdd(row_positions, position)));
          return absl::OkStatus();
        });
      }));
  kb_.EndKernel();
  return absl::OkStatus();
}

absl::Status SortEmitter::EmitStepKernel() {
  kb_.BeginKernel("sort_step", n_ + 1, 2, kStepBlock);
  llvm::IRBuilder<>& b = kb_.b();
  llvm_ir::ElementalIrEmitter& e = kb_.elemental();
  llvm::Value* positions = kb_.pointer(n_);
  llvm::Value* merge_log2 = kb_.integer(0);
  llvm::Value* step_log2 = kb_.integer(1);
  llvm::Value* pair = kb_.GlobalThreadIndex();
  const int64_t half = g_.padded / 2;
  AXLE_RETURN_IF_ERROR(
      kb_.If(b.CreateICmpULT(pair, kb_.I64(g_.rows() * half)), "pair", [&]() -> absl::Status {
        llvm::Value* row = b.CreateUDiv(pair, kb_.I64(half), "row");
        llvm::Value* t = b.CreateURem(pair, kb_.I64(half));
        llvm::Value* row_base = b.CreateAdd(
            b.CreateMul(b.CreateUDiv(row, kb_.I64(g_.inner)), kb_.I64(g_.length * g_.inner)),
            b.CreateURem(row, kb_.I64(g_.inner)), "row_base");
        llvm::Value* row_positions = b.CreateMul(row, kb_.I64(g_.length));
        const auto [lower_position, upper_position] = Pair(t, merge_log2, step_log2);
        llvm::Value* lower = lower_position;
        llvm::Value* upper = upper_position;
        auto load = [&](llvm::Value* position) {
          Record record;
          llvm::Value* at = b.CreateAdd(row_base, b.CreateMul(position, kb_.I64(g_.inner)));
          for (int i = 0; i < n_; ++i) {
            llvm::Type* storage = e.StorageType(types_[i]);
            record.bits.push_back(
                b.CreateLoad(storage, b.CreateInBoundsGEP(storage, kb_.pointer(i), at)));
            record.values.push_back(e.LoadElement(kb_.pointer(i), at, types_[i]));
          }
          record.position = b.CreateLoad(
              b.getInt32Ty(),
              b.CreateInBoundsGEP(b.getInt32Ty(), positions, b.CreateAdd(row_positions, position)));
          return record;
        };
        auto store = [&](llvm::Value* position, const Record& record) {
          llvm::Value* at = b.CreateAdd(row_base, b.CreateMul(position, kb_.I64(g_.inner)));
          for (int i = 0; i < n_; ++i) {
            llvm::Type* storage = e.StorageType(types_[i]);
            b.CreateStore(record.bits[i], b.CreateInBoundsGEP(storage, kb_.pointer(i), at));
          }
          b.CreateStore(record.position, b.CreateInBoundsGEP(b.getInt32Ty(), positions,
                                                             b.CreateAdd(row_positions, position)));
        };
        return kb_.If(b.CreateICmpULT(upper, kb_.I64(g_.length)), "in_row",
                      [&]() { return CompareExchange(lower, upper, load, store); });
      }));
  kb_.EndKernel();
  return absl::OkStatus();
}

class SortThunk final : public PtxThunk {
 public:
  SortThunk(std::string name, GpuThunkValues values, std::string ptx,
            std::vector<std::string> kernels, SortGeometry geometry,
            std::vector<int64_t> element_bytes)
      : PtxThunk(std::move(name), std::move(values), std::move(ptx), std::move(kernels)),
        g_(geometry),
        element_bytes_(std::move(element_bytes)) {}

  absl::Status Execute(const GpuThunkContext& context) const override;
  int64_t scratch_bytes() const override {
    return g_.multi_launch() ? g_.rows() * g_.length * 4 : 0;
  }

 private:
  SortGeometry g_;
  std::vector<int64_t> element_bytes_;
};

absl::Status SortThunk::Execute(const GpuThunkContext& context) const {
  const GpuThunkValues& v = values();
  const size_t n = v.outputs.size();
  const int64_t elements = g_.rows() * g_.length;
  if (elements == 0) return absl::OkStatus();
  if (g_.length < 2) {
    for (size_t i = 0; i < n; ++i) {
      AXLE_RETURN_IF_ERROR(CopyUnlessSame(context.stream, context.buffer(v.operands[i]),
                                          context.buffer(v.outputs[i]),
                                          elements * element_bytes_[i]));
    }
    return absl::OkStatus();
  }
  std::vector<Argument> tile_arguments;
  for (size_t i = 0; i < n; ++i) {
    tile_arguments.push_back(Argument::Pointer(context.address(v.operands[i])));
  }
  for (size_t i = 0; i < n; ++i) {
    tile_arguments.push_back(Argument::Pointer(context.address(v.outputs[i])));
  }
  CUdeviceptr positions = 0;
  if (g_.multi_launch()) {
    if (context.scratch.size() < static_cast<uint64_t>(scratch_bytes())) {
      return absl::InvalidArgumentError(absl::StrCat("CUDA: ", name(), ": ", context.scratch.size(),
                                                     " bytes of scratch memory, needs ",
                                                     scratch_bytes()));
    }
    positions = DevicePointer(context.scratch);
  }
  tile_arguments.push_back(Argument::Pointer(positions));
  // Every tile sorted: merges 2 .. tile.
  tile_arguments.push_back(Argument::Int(1));
  tile_arguments.push_back(Argument::Int(Log2(g_.tile)));
  tile_arguments.push_back(Argument::Int(0));
  const int64_t tiles = g_.rows() * g_.tiles_per_row;
  AXLE_RETURN_IF_ERROR(Launch(context.stream, 0, tiles, g_.tile_threads, tile_arguments));
  if (!g_.multi_launch()) return absl::OkStatus();
  // The tiles now read the outputs and positions.
  for (size_t i = 0; i < n; ++i) tile_arguments[i] = tile_arguments[n + i];
  tile_arguments[2 * n + 3] = Argument::Int(1);
  std::vector<Argument> step_arguments(
      tile_arguments.begin() + static_cast<std::ptrdiff_t>(n),
      tile_arguments.begin() + static_cast<std::ptrdiff_t>(2 * n + 1));
  step_arguments.push_back(Argument::Int(0));
  step_arguments.push_back(Argument::Int(0));
  const int64_t pairs = g_.rows() * (g_.padded / 2);
  const int64_t step_grid = (pairs + kStepBlock - 1) / kStepBlock;
  for (int merge = Log2(g_.tile) + 1; merge <= Log2(g_.padded); ++merge) {
    // Steps whose partners are a tile or more apart, in global memory.
    for (int step = merge - 1; step >= Log2(g_.tile); --step) {
      step_arguments[n + 1] = Argument::Int(merge);
      step_arguments[n + 2] = Argument::Int(step);
      AXLE_RETURN_IF_ERROR(Launch(context.stream, 1, step_grid, kStepBlock, step_arguments));
    }
    // The rest inside each tile.
    tile_arguments[2 * n + 1] = Argument::Int(merge);
    tile_arguments[2 * n + 2] = Argument::Int(merge);
    AXLE_RETURN_IF_ERROR(Launch(context.stream, 0, tiles, g_.tile_threads, tile_arguments));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> MakeSortThunk(const HloInstruction& instruction,
                                                        GpuThunkValues values,
                                                        const PtxOptions& options,
                                                        int64_t max_tile) {
  const auto* sort = dyn_cast<HloSortInstruction>(&instruction);
  if (sort == nullptr) return InvalidKernelOp(instruction, "is not a sort");
  const int64_t n = instruction.operand_count();
  if (n == 0) return InvalidKernelOp(instruction, "needs at least one operand");
  const Shape& keys = instruction.operand(0)->shape();
  const int64_t dimension = sort->sort_dimension();
  if (!keys.IsArray() || dimension < 0 || dimension >= std::max<int64_t>(keys.rank(), 1)) {
    return InvalidKernelOp(instruction, absl::StrCat("dimension ", dimension, " is out of range"));
  }
  const HloComputation* comparator = instruction.to_apply();
  if (comparator == nullptr || comparator->num_parameters() != 2 * n) {
    return InvalidKernelOp(instruction, absl::StrCat("the comparator must take ", 2 * n,
                                                     " scalars (lhs and rhs of each operand)"));
  }
  const Shape& root = comparator->root_instruction()->shape();
  if (!root.IsArray() || root.rank() != 0 || root.element_type() != PRED) {
    return InvalidKernelOp(instruction, "the comparator must return a pred scalar");
  }
  std::vector<int64_t> element_bytes;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& shape = instruction.operand(i)->shape();
    if (!shape.IsArray() || shape.dimensions() != keys.dimensions()) {
      return InvalidKernelOp(
          instruction, absl::StrCat("operand ", i, " has shape ", shape.ToString(), ", the keys ",
                                    keys.ToString()));
    }
    for (int64_t side = 0; side < 2; ++side) {
      const Shape& parameter = comparator->parameter_instruction(2 * i + side)->shape();
      if (!parameter.IsArray() || parameter.rank() != 0 ||
          parameter.element_type() != shape.element_type()) {
        return InvalidKernelOp(
            instruction,
            absl::StrCat("comparator parameter ", 2 * i + side, " is ", parameter.ToString(),
                         " but operand ", i, " is ", shape.ToString()));
      }
    }
    const PrimitiveType type = shape.element_type();
    element_bytes.push_back(type == PRED || pu::IsSubByteType(type) ? 1 : pu::ByteWidth(type));
  }
  if (static_cast<int64_t>(values.operands.size()) != n ||
      static_cast<int64_t>(values.outputs.size()) != n) {
    return InvalidKernelOp(
        instruction, absl::StrCat("given ", values.operands.size(), " operand and ",
                                  values.outputs.size(), " result values for ", n, " operands"));
  }
  AXLE_RETURN_IF_ERROR(CheckKernelTypes(instruction, {comparator}));

  SortGeometry g;
  g.length = keys.rank() == 0 ? 1 : keys.dimensions(dimension);
  for (int64_t d = 0; d < keys.rank(); ++d) {
    if (d < dimension) g.outer *= keys.dimensions(d);
    if (d > dimension) g.inner *= keys.dimensions(d);
  }
  if (g.length >= (int64_t{1} << 31)) {
    return absl::UnimplementedError(absl::StrCat("CUDA: sort ", instruction.name(), ": rows of ",
                                                 g.length, " elements (2^31 or more)"));
  }
  g.padded =
      static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(g.length, 2))));
  int64_t record_bytes = 4;
  for (int64_t bytes : element_bytes) record_bytes += bytes;
  int64_t tile = kMaxTile;
  while (tile > 2 && tile * record_bytes > kSharedBytes) tile /= 2;
  if (tile * record_bytes > kSharedBytes) {
    return absl::UnimplementedError(absl::StrCat("CUDA: sort ", instruction.name(), ": records of ",
                                                 record_bytes, " bytes do not fit shared memory"));
  }
  if (max_tile > 0) {
    if (!std::has_single_bit(static_cast<uint64_t>(max_tile)) || max_tile < 2) {
      return absl::InvalidArgumentError(absl::StrCat("CUDA: sort ", instruction.name(), ": tile ",
                                                     max_tile, " is not a power of two >= 2"));
    }
    tile = std::min(tile, max_tile);
  }
  g.tile = std::min(tile, g.padded);
  g.tiles_per_row = (g.length + g.tile - 1) / g.tile;
  g.tile_threads = static_cast<int>(std::clamp<int64_t>(g.tile / 2, 32, 1024));

  llvm::LLVMContext context;
  const std::string module_name = absl::StrCat("sort_", instruction.name());
  AXLE_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                        NewNvptxModule(module_name, context, options));
  SortEmitter emitter(instruction, g, module.get());
  std::vector<std::string> kernels = {"sort_tile"};
  AXLE_RETURN_IF_ERROR(emitter.EmitTileKernel());
  if (g.multi_launch()) {
    AXLE_RETURN_IF_ERROR(emitter.EmitStepKernel());
    kernels.push_back("sort_step");
  }
  AXLE_ASSIGN_OR_RETURN(std::string ptx, CompileNvptxModule(module.get(), module_name, options));
  return std::make_unique<SortThunk>(instruction.name(), std::move(values), std::move(ptx),
                                     std::move(kernels), g, std::move(element_bytes));
}

}  // namespace axle::gpu
