//===- distributed.cc - torch.distributed's collectives on Axle's ---------===//
//
// The operators behind torch_axle.distributed (python/torch_axle), the
// "axle" backend of torch.distributed: a process group whose collectives
// run on Axle's Communicator (axle/collectives: Gloo over TCP, or MPI), so
// that every transport's fixed reduction order applies (every process
// receives the same bits, the interpreter's fold order):
//
//   dist_transport() -> str                  "gloo" or "mpi", as axle-run
//                                            picks (AXLE_COLLECTIVES_TRANSPORT)
//   dist_connect(rank, size, transport, rendezvous_dir, world_ranks,
//                timeout_s) -> int           a handle; gloo meets in the
//                                            folder, mpi makes a communicator
//                                            of world_ranks (empty: all)
//   dist_all_reduce(comm, tensors, op)        op: sum avg product min max
//                                             band bor bxor, in place
//   dist_broadcast(comm, tensors, root)       in place
//   dist_all_gather(comm, outputs, input)     outputs[i] = rank i's input
//   dist_reduce_scatter(comm, output, inputs, op)
//                                             output = inputs[rank] reduced
//   dist_all_to_all(comm, outputs, inputs)    outputs[i] = rank i's inputs[rank]
//   dist_reduce(comm, tensors, root, op)      all_reduce's result, at root only
//   dist_gather(comm, outputs, input, root)   root's outputs[i] = rank i's input
//   dist_scatter(comm, output, inputs, root)  output = root's inputs[rank]
//   dist_send(comm, tensors, peer, tag) -> int     point to point, started
//   dist_recv(comm, tensors, peer, tag) -> int     (a message handle): the
//                                             n-th send of a tag meets the
//                                             peer's n-th recv of it; recv's
//                                             peer -1: from any rank
//   dist_wait(comm, message) -> int           finishes a send or recv (recv:
//                                             the tensors get the values);
//                                             returns the peer (the source)
//   dist_test(comm, message) -> int           never waits: -2 while in
//                                             flight, else finishes it as
//                                             dist_wait does
//   dist_release(comm, message)               its work was dropped unwaited:
//                                             finished and released once it
//                                             completes (by the next call on
//                                             the group), or with the group
//   dist_in_flight(comm) -> int               messages not yet released
//   dist_barrier(comm)   dist_disconnect(comm)
//
// Design: a collective is a step boundary. Its device tensors' pending
// values are computed first (the step marker: one graph for everything
// pending, as mark_step does), their values are read to the host, the
// communicator runs on the host copies (several tensors of one dtype go as
// one message), and the results are written back with copy_ (so a view
// updates its base). torch-xla instead lowers a collective into the step's
// graph (an all-reduce HLO in the compiled program); that needs XlaBuilder's
// collectives and the lazy executor compiling for a grid of replicas,
// neither of which exists yet. On the cpu platform the device's memory is
// host memory, so the copies are memcpys.
//
// Tensors may be on the Axle device or on the CPU (then reduced in place
// when contiguous). Autograd is off inside (parameters that require grad
// are broadcast in place, as c10d's own backends do).
//
//===----------------------------------------------------------------------===//
#include <ATen/ATen.h>
#include <torch/library.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "axle/base/environment_options.h"
#include "axle/collectives/communicator.h"
#include "axle/frontends/lazy/lazy_tensor.h"
#include "axle/frontends/torch/tensor_impl.h"

#ifdef AXLE_HAVE_GLOO
#include "axle/collectives/gloo_communicator.h"
#endif
#ifdef AXLE_HAVE_MPI
#include "axle/collectives/mpi_communicator.h"
#endif

namespace axle::torch_device {
namespace {

void Check(const absl::Status& status) {
  TORCH_CHECK(status.ok(), "axle distributed: ", std::string(status.message()));
}

// A send or recv started and not yet waited for: the host copy it reads
// or fills (declared first: the message goes, and stops using it, first),
// and for a recv the tensors that get the values.
struct PendingMessage {
  at::Tensor packed;
  std::vector<at::Tensor> targets;
  std::unique_ptr<Communicator::Message> message;
};

// One connected process group: its communicator, used by one call at a time.
struct Group {
  std::mutex mutex;  // the communicator, `pending` and `next_message`
  std::unique_ptr<Communicator> communicator;
  std::vector<int> members;  // 0..size-1: the communicator is the group's own
  // Declared after the communicator: dropped (abandoned) before it goes.
  std::map<int64_t, PendingMessage> pending;
  int64_t next_message = 1;
  // Messages whose works were dropped unwaited (dist_release), to release
  // once finished. A lock of their own: a work's finalizer never waits for
  // a call in progress.
  std::mutex dropped_mutex;
  std::vector<int64_t> dropped;
  std::vector<int64_t> dropped_in_flight;  // under `mutex`
};

std::mutex groups_mutex;
std::map<int64_t, std::shared_ptr<Group>>& Groups() {
  static auto* groups = new std::map<int64_t, std::shared_ptr<Group>>();
  return *groups;
}
int64_t next_handle = 1;

std::shared_ptr<Group> GetGroup(int64_t handle) {
  std::lock_guard<std::mutex> lock(groups_mutex);
  auto it = Groups().find(handle);
  TORCH_CHECK(it != Groups().end(), "axle distributed: no process group ", handle,
              " (not connected, or destroyed)");
  return it->second;
}

// The transport AXLE_COLLECTIVES_TRANSPORT names (gloo or mpi); unset, mpi
// when an MPI launcher (mpirun) started this process, else gloo: the rule
// axle-run follows (tools/multi_process.cc), less its AXLE_NUM_PROCESSES.
std::string Transport() {
  const EnvironmentOptions environment = EnvironmentOptions::Read();
  const std::string& named = environment.collectives_transport;
  TORCH_CHECK(named.empty() || named == "gloo" || named == "mpi",
              "axle distributed: AXLE_COLLECTIVES_TRANSPORT=", named,
              ": the transports are gloo and mpi");
  if (!named.empty()) return named;
#ifdef AXLE_HAVE_MPI
  if (environment.started_by_mpi_launcher) return "mpi";
#endif
  return "gloo";
}

std::unique_ptr<Communicator> ConnectTransport(int rank, int size, const std::string& transport,
                                               const std::string& rendezvous_dir,
                                               const std::vector<int>& world_ranks,
                                               std::chrono::milliseconds timeout) {
  if (transport == "mpi") {
#ifdef AXLE_HAVE_MPI
    TORCH_CHECK(StartedByMpiLauncher(), "axle distributed: AXLE_COLLECTIVES_TRANSPORT=mpi: ",
                "start the processes with mpirun -n N");
    TORCH_CHECK(world_ranks.empty() || static_cast<int>(world_ranks.size()) == size,
                "axle distributed: ", world_ranks.size(), " MPI ranks for a group of ", size);
    absl::StatusOr<std::unique_ptr<Communicator>> communicator = ConnectMpi(timeout, world_ranks);
    Check(communicator.status());
    TORCH_CHECK((*communicator)->rank() == rank && (*communicator)->size() == size,
                "axle distributed: torch.distributed's rank ", rank, " of ", size,
                " is MPI's rank ", (*communicator)->rank(), " of ", (*communicator)->size(),
                ": under mpirun, init_process_group's rank and world_size must be MPI's "
                "(OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE)");
    return *std::move(communicator);
#else
    TORCH_CHECK(false,
                "axle distributed: AXLE_COLLECTIVES_TRANSPORT=mpi: this build has no MPI transport "
                "(libopenmpi-dev; AXLE_MPI)");
#endif
  }
  TORCH_CHECK(transport == "gloo", "axle distributed: no transport ", transport, " (gloo, mpi)");
#ifdef AXLE_HAVE_GLOO
  GlooOptions options;
  options.rank = rank;
  options.size = size;
  options.rendezvous_dir = rendezvous_dir;
  options.timeout = timeout;
  absl::StatusOr<std::unique_ptr<Communicator>> communicator = ConnectGloo(options);
  Check(communicator.status());
  return *std::move(communicator);
#else
  TORCH_CHECK(false,
              "axle distributed: this build has no Gloo transport (libgloo-dev; "
              "AXLE_COLLECTIVES)");
  return nullptr;
#endif
}

int64_t Connect(int64_t rank, int64_t size, c10::string_view transport,
                c10::string_view rendezvous_dir, std::vector<int64_t> world_ranks,
                double timeout_s) {
  TORCH_CHECK(size >= 1 && rank >= 0 && rank < size, "axle distributed: rank ", rank,
              " is not in a group of ", size);
  const std::chrono::milliseconds timeout =
      timeout_s > 0 ? std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000))
                    : CollectiveTimeoutFromEnvironment();
  auto group = std::make_shared<Group>();
  group->communicator =
      ConnectTransport(static_cast<int>(rank), static_cast<int>(size), std::string(transport),
                       std::string(rendezvous_dir),
                       std::vector<int>(world_ranks.begin(), world_ranks.end()), timeout);
  group->members.resize(size);
  std::iota(group->members.begin(), group->members.end(), 0);
  std::lock_guard<std::mutex> lock(groups_mutex);
  const int64_t handle = next_handle++;
  Groups().emplace(handle, std::move(group));
  return handle;
}

void Disconnect(int64_t handle) {
  std::lock_guard<std::mutex> lock(groups_mutex);
  Groups().erase(handle);
}

// --- Host staging ------------------------------------------------------------

// Computes whatever is pending on the device once, so that reading each
// tensor afterwards runs no graph of its own.
void SyncIfOnDevice(at::TensorList tensors) {
  for (const at::Tensor& t : tensors) {
    if (!t.device().is_cpu()) {
      Check(lazy::SyncLiveTensors());
      return;
    }
  }
}

void CheckDense(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.defined(), "axle distributed: ", op, ": an undefined tensor");
  TORCH_CHECK(t.layout() == at::kStrided, "axle distributed: ", op,
              ": only dense (strided) tensors, got ", t.layout());
}

// The tensors' values side by side in one contiguous CPU buffer of their
// dtype (they must share it). One contiguous CPU tensor is its own buffer
// (a collective on it runs in place, as in c10d's backends).
at::Tensor Pack(at::TensorList tensors, const char* op) {
  if (tensors.size() == 1 && tensors[0].defined() && tensors[0].device().is_cpu() &&
      tensors[0].layout() == at::kStrided && tensors[0].is_contiguous()) {
    return tensors[0].detach().view({-1});
  }
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors) {
    CheckDense(t, op);
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(), "axle distributed: ", op,
                ": tensors of different dtypes (", tensors[0].scalar_type(), " and ",
                t.scalar_type(), ")");
    flat.push_back(t.detach().to(at::kCPU).reshape({-1}));
  }
  return at::cat(flat).contiguous();
}

// Writes consecutive pieces of `packed` back into `tensors` (not into a
// tensor that is its own buffer: Pack's in-place case).
void Unpack(const at::Tensor& packed, at::TensorList tensors) {
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) {
    const int64_t n = t.numel();
    at::Tensor piece = packed.narrow(0, offset, n).view(t.sizes());
    if (!(t.device().is_cpu() && t.is_contiguous() && piece.data_ptr() == t.data_ptr())) {
      const_cast<at::Tensor&>(t).copy_(piece);
    }
    offset += n;
  }
}

int64_t ElementBytes(const at::Tensor& t) { return static_cast<int64_t>(t.element_size()); }

// --- Messages whose works were dropped -----------------------------------------

// What dist_test returns for a message still in flight.
constexpr int64_t kInFlight = -2;

// Finishes the dropped messages that have completed (a recv's tensors get
// their values, as they would have from the transport directly) and
// releases them: their host copies and transport state. Those in flight
// wait for a later call. A failure is not reported here (no work is left
// to report it to); it left the communicator unusable, which the next
// call reports. Holds group.mutex.
void ReleaseDropped(Group& group) {
  at::NoGradGuard no_grad;
  {
    std::lock_guard<std::mutex> lock(group.dropped_mutex);
    group.dropped_in_flight.insert(group.dropped_in_flight.end(), group.dropped.begin(),
                                   group.dropped.end());
    group.dropped.clear();
  }
  std::vector<int64_t> still;
  for (int64_t id : group.dropped_in_flight) {
    auto it = group.pending.find(id);
    if (it == group.pending.end()) continue;
    absl::StatusOr<bool> done = group.communicator->Test(*it->second.message);
    if (done.ok() && !*done) {
      still.push_back(id);
      continue;
    }
    PendingMessage pending = std::move(it->second);
    group.pending.erase(it);
    if (done.ok() && group.communicator->Finish(*pending.message).ok() &&
        !pending.targets.empty()) {
      try {
        Unpack(pending.packed, pending.targets);
      } catch (const std::exception& error) {
        TORCH_WARN("axle distributed: a dropped recv's values were not written: ", error.what());
      }
    }
  }
  group.dropped_in_flight = std::move(still);
}

// The group's lock, taken after a call's other work (staging) is done;
// first it releases the dropped messages that have finished.
std::unique_lock<std::mutex> Lock(Group& group) {
  std::unique_lock<std::mutex> lock(group.mutex);
  ReleaseDropped(group);
  return lock;
}

// --- Reductions --------------------------------------------------------------

struct Reduction {
  ReductionKind kind;
  bool average = false;
};

Reduction ReductionOf(c10::string_view op) {
  const std::string name(op);
  if (name == "sum") return {ReductionKind::kSum};
  if (name == "avg") return {ReductionKind::kSum, true};
  if (name == "product") return {ReductionKind::kProduct};
  if (name == "min") return {ReductionKind::kMin};
  if (name == "max") return {ReductionKind::kMax};
  if (name == "band") return {ReductionKind::kAnd};
  if (name == "bor") return {ReductionKind::kOr};
  if (name == "bxor") return {ReductionKind::kXor};
  TORCH_CHECK(false, "axle distributed: reduce op ", name,
              " is not supported (sum, avg, product, min, max, band, bor, bxor)");
  return {};
}

Reducer ReducerFor(const Reduction& reduction, at::ScalarType dtype) {
  TORCH_CHECK(!reduction.average || at::isFloatingType(dtype),
              "axle distributed: ReduceOp.AVG needs floating-point tensors, got ", dtype);
  absl::StatusOr<Reducer> reducer = MakeReducer(reduction.kind, ToPrimitiveType(dtype));
  Check(reducer.status());
  return *std::move(reducer);
}

void FinishAverage(const Reduction& reduction, at::Tensor& packed, int size) {
  if (reduction.average) packed.div_(size);
}

// --- The collectives ---------------------------------------------------------

void AllReduce(int64_t handle, at::TensorList tensors, c10::string_view op) {
  if (tensors.empty()) return;
  at::NoGradGuard no_grad;
  const Reduction reduction = ReductionOf(op);
  const Reducer reducer = ReducerFor(reduction, tensors[0].scalar_type());
  std::shared_ptr<Group> group = GetGroup(handle);
  SyncIfOnDevice(tensors);
  at::Tensor packed = Pack(tensors, "all_reduce");
  {
    std::unique_lock<std::mutex> lock = Lock(*group);
    Check(group->communicator->AllReduce(group->members, packed.data_ptr(), packed.data_ptr(),
                                         packed.numel(), ElementBytes(packed), reducer));
  }
  FinishAverage(reduction, packed, group->communicator->size());
  Unpack(packed, tensors);
}

void Broadcast(int64_t handle, at::TensorList tensors, int64_t root) {
  if (tensors.empty()) return;
  at::NoGradGuard no_grad;
  std::shared_ptr<Group> group = GetGroup(handle);
  TORCH_CHECK(root >= 0 && root < group->communicator->size(), "axle distributed: broadcast root ",
              root, " is not in a group of ", group->communicator->size());
  SyncIfOnDevice(tensors);
  at::Tensor packed = Pack(tensors, "broadcast");
  {
    std::unique_lock<std::mutex> lock = Lock(*group);
    Check(group->communicator->Broadcast(group->members, static_cast<int>(root), packed.data_ptr(),
                                         packed.nbytes()));
  }
  if (group->communicator->rank() != root) Unpack(packed, tensors);
}

// The members' pieces must all have `piece`'s dtype and number of elements.
void CheckPieces(at::TensorList pieces, const at::Tensor& piece, int size, const char* op) {
  TORCH_CHECK(static_cast<int>(pieces.size()) == size, "axle distributed: ", op, ": ",
              pieces.size(), " tensors for a group of ", size);
  for (const at::Tensor& t : pieces) {
    CheckDense(t, op);
    TORCH_CHECK(t.scalar_type() == piece.scalar_type() && t.numel() == piece.numel(),
                "axle distributed: ", op, ": every member's tensor must have ", piece.scalar_type(),
                " and ", piece.numel(), " elements, got ", t.scalar_type(), " and ", t.numel());
  }
}

// A collective's own tensor `mine` and its `pieces`, one per member (what
// it gathers into or scatters from): checked, and their device values
// computed.
void StagePieces(at::TensorList pieces, const at::Tensor& mine, int size, const char* op) {
  CheckDense(mine, op);
  CheckPieces(pieces, mine, size, op);
  SyncIfOnDevice(pieces);
  SyncIfOnDevice({mine});
}

void AllGather(int64_t handle, at::TensorList outputs, const at::Tensor& input) {
  at::NoGradGuard no_grad;
  std::shared_ptr<Group> group = GetGroup(handle);
  const int size = group->communicator->size();
  StagePieces(outputs, input, size, "all_gather");
  at::Tensor mine = Pack({input}, "all_gather");
  at::Tensor all = at::empty({size * mine.numel()}, mine.options());
  {
    std::unique_lock<std::mutex> lock = Lock(*group);
    Check(group->communicator->AllGather(group->members, mine.data_ptr(), all.data_ptr(),
                                         mine.nbytes()));
  }
  Unpack(all, outputs);
}

void ReduceScatter(int64_t handle, const at::Tensor& output, at::TensorList inputs,
                   c10::string_view op) {
  at::NoGradGuard no_grad;
  std::shared_ptr<Group> group = GetGroup(handle);
  const int size = group->communicator->size();
  StagePieces(inputs, output, size, "reduce_scatter");
  const Reduction reduction = ReductionOf(op);
  const Reducer reducer = ReducerFor(reduction, output.scalar_type());
  at::Tensor packed = Pack(inputs, "reduce_scatter");
  at::Tensor mine = at::empty({output.numel()}, packed.options());
  {
    std::unique_lock<std::mutex> lock = Lock(*group);
    Check(group->communicator->ReduceScatter(group->members, packed.data_ptr(), mine.data_ptr(),
                                             output.numel(), ElementBytes(packed), reducer));
  }
  FinishAverage(reduction, mine, size);
  Unpack(mine, {output});
}

void AllToAll(int64_t handle, at::TensorList outputs, at::TensorList inputs) {
  at::NoGradGuard no_grad;
  std::shared_ptr<Group> group = GetGroup(handle);
  const int size = group->communicator->size();
  TORCH_CHECK(!inputs.empty(), "axle distributed: all_to_all: no input tensors");
  CheckPieces(inputs, inputs[0], size, "all_to_all");
  CheckPieces(outputs, inputs[0], size, "all_to_all");
  SyncIfOnDevice(inputs);
  SyncIfOnDevice(outputs);
  at::Tensor packed = Pack(inputs, "all_to_all");
  at::Tensor received = at::empty_like(packed);
  {
    std::unique_lock<std::mutex> lock = Lock(*group);
    Check(group->communicator->AllToAll(group->members, packed.data_ptr(), received.data_ptr(),
                                        inputs[0].numel() * ElementBytes(packed)));
  }
  Unpack(received, outputs);
}

void CheckRoot(const Group& group, int64_t root, const char* op) {
  TORCH_CHECK(root >= 0 && root < group.communicator->size(), "axle distributed: ", op, " root ",
              root, " is not in a group of ", group.communicator->size());
}

// StagePieces for a rooted collective, whose pieces (`role`: gather's
// outputs, scatter's inputs) only the root passes. Whether this process is
// the root.
bool StageRootedPieces(const Group& group, int64_t root, at::TensorList pieces,
                       const at::Tensor& mine, const char* op, const char* role) {
  CheckRoot(group, root, op);
  const bool is_root = group.communicator->rank() == root;
  if (is_root) {
    StagePieces(pieces, mine, group.communicator->size(), op);
  } else {
    CheckDense(mine, op);
    TORCH_CHECK(pieces.empty(), "axle distributed: ", op, ": only the root (rank ", root,
                ") takes ", role, " tensors");
    SyncIfOnDevice({mine});
  }
  return is_root;
}

void Reduce(int64_t handle, at::TensorList tensors, int64_t root, c10::string_view op) {
  if (tensors.empty()) return;
  at::NoGradGuard no_grad;
  const Reduction reduction = ReductionOf(op);
  const Reducer reducer = ReducerFor(reduction, tensors[0].scalar_type());
  std::shared_ptr<Group> group = GetGroup(handle);
  CheckRoot(*group, root, "reduce");
  SyncIfOnDevice(tensors);
  at::Tensor packed = Pack(tensors, "reduce");
  {
    std::unique_lock<std::mutex> lock = Lock(*group);
    Check(group->communicator->Reduce(group->members, static_cast<int>(root), packed.data_ptr(),
                                      packed.data_ptr(), packed.numel(), ElementBytes(packed),
                                      reducer));
  }
  if (group->communicator->rank() != root) return;
  FinishAverage(reduction, packed, group->communicator->size());
  Unpack(packed, tensors);
}

// outputs: the root's, one per member; empty elsewhere.
void Gather(int64_t handle, at::TensorList outputs, const at::Tensor& input, int64_t root) {
  at::NoGradGuard no_grad;
  std::shared_ptr<Group> group = GetGroup(handle);
  const bool is_root = StageRootedPieces(*group, root, outputs, input, "gather", "output");
  const int size = group->communicator->size();
  at::Tensor mine = Pack({input}, "gather");
  at::Tensor all = at::empty({is_root ? size * mine.numel() : 0}, mine.options());
  {
    std::unique_lock<std::mutex> lock = Lock(*group);
    Check(group->communicator->Gather(group->members, static_cast<int>(root), mine.data_ptr(),
                                      all.data_ptr(), mine.nbytes()));
  }
  if (is_root) Unpack(all, outputs);
}

// inputs: the root's, one per member; empty elsewhere.
void Scatter(int64_t handle, const at::Tensor& output, at::TensorList inputs, int64_t root) {
  at::NoGradGuard no_grad;
  std::shared_ptr<Group> group = GetGroup(handle);
  const bool is_root = StageRootedPieces(*group, root, inputs, output, "scatter", "input");
  at::Tensor packed =
      is_root ? Pack(inputs, "scatter") : at::empty({0}, output.options().device(at::kCPU));
  at::Tensor mine = at::empty({output.numel()}, output.options().device(at::kCPU));
  {
    std::unique_lock<std::mutex> lock = Lock(*group);
    Check(group->communicator->Scatter(group->members, static_cast<int>(root), packed.data_ptr(),
                                       mine.data_ptr(), mine.nbytes()));
  }
  Unpack(mine, {output});
}

// send/recv: `tag` pairs a send with the peer's recv of the same tag. Each
// call starts its message and returns its handle at once; dist_wait
// finishes it. So two processes may both send before they receive.

// A send's or recv's arguments checked, and the host copy it sends from or
// receives into.
PendingMessage StageMessage(const Group& group, at::TensorList tensors, int64_t peer, int64_t tag,
                            const char* op) {
  const Communicator& communicator = *group.communicator;
  TORCH_CHECK(!tensors.empty(), "axle distributed: ", op, ": no tensors");
  TORCH_CHECK((peer >= 0 && peer < communicator.size() && peer != communicator.rank()) ||
                  (peer == -1 && std::string(op) == "recv"),
              "axle distributed: ", op, ": rank ", peer, " is not another member of a group of ",
              communicator.size());
  TORCH_CHECK(tag >= 0 && tag < (int64_t{1} << 48), "axle distributed: ", op, ": tag ", tag,
              " is not in [0, 2^48)");
  SyncIfOnDevice(tensors);
  PendingMessage pending;
  pending.packed = Pack(tensors, op);
  return pending;
}

// Keeps a started send or recv (`message`, reading or filling
// pending.packed) until it is waited for; its id. Holds group.mutex.
int64_t Keep(Group& group, PendingMessage pending,
             absl::StatusOr<std::unique_ptr<Communicator::Message>> message) {
  Check(message.status());
  pending.message = *std::move(message);
  const int64_t id = group.next_message++;
  group.pending.emplace(id, std::move(pending));
  return id;
}

int64_t Send(int64_t handle, at::TensorList tensors, int64_t peer, int64_t tag) {
  std::shared_ptr<Group> group = GetGroup(handle);
  PendingMessage pending = StageMessage(*group, tensors, peer, tag, "send");
  std::unique_lock<std::mutex> lock = Lock(*group);
  absl::StatusOr<std::unique_ptr<Communicator::Message>> message =
      group->communicator->StartSend(static_cast<int>(peer), pending.packed.data_ptr(),
                                     pending.packed.nbytes(), static_cast<uint64_t>(tag));
  return Keep(*group, std::move(pending), std::move(message));
}

// peer -1: from any rank.
int64_t Recv(int64_t handle, at::TensorList tensors, int64_t peer, int64_t tag) {
  std::shared_ptr<Group> group = GetGroup(handle);
  PendingMessage pending = StageMessage(*group, tensors, peer, tag, "recv");
  pending.targets.assign(tensors.begin(), tensors.end());
  std::unique_lock<std::mutex> lock = Lock(*group);
  absl::StatusOr<std::unique_ptr<Communicator::Message>> message =
      group->communicator->StartRecv(static_cast<int>(peer), pending.packed.data_ptr(),
                                     pending.packed.nbytes(), static_cast<uint64_t>(tag));
  return Keep(*group, std::move(pending), std::move(message));
}

// The message `id` in flight, taken out of the group. Holds group.mutex.
PendingMessage TakeMessage(Group& group, int64_t id) {
  auto it = group.pending.find(id);
  TORCH_CHECK(it != group.pending.end(), "axle distributed: no message ", id,
              " in flight (waited for already?)");
  PendingMessage pending = std::move(it->second);
  group.pending.erase(it);
  return pending;
}

// A finished message's result: its peer; a recv's tensors get the values.
int64_t Delivered(const absl::StatusOr<int>& peer, const PendingMessage& pending) {
  Check(peer.status());
  if (!pending.targets.empty()) Unpack(pending.packed, pending.targets);
  return *peer;
}

int64_t Wait(int64_t handle, int64_t id) {
  at::NoGradGuard no_grad;
  std::shared_ptr<Group> group = GetGroup(handle);
  PendingMessage pending;
  absl::StatusOr<int> peer;
  {
    std::unique_lock<std::mutex> lock = Lock(*group);
    pending = TakeMessage(*group, id);
    peer = group->communicator->Finish(*pending.message);
  }
  return Delivered(peer, pending);
}

// Never waits: neither for the message nor for a call in progress on the
// group (another thread's wait or collective holds the communicator; the
// message is not known to have finished then).
int64_t Test(int64_t handle, int64_t id) {
  at::NoGradGuard no_grad;
  std::shared_ptr<Group> group = GetGroup(handle);
  PendingMessage pending;
  absl::StatusOr<int> peer;
  {
    std::unique_lock<std::mutex> lock(group->mutex, std::try_to_lock);
    if (!lock.owns_lock()) return kInFlight;
    ReleaseDropped(*group);
    auto it = group->pending.find(id);
    TORCH_CHECK(it != group->pending.end(), "axle distributed: no message ", id,
                " in flight (waited for already?)");
    absl::StatusOr<bool> done = group->communicator->Test(*it->second.message);
    if (done.ok() && !*done) return kInFlight;
    pending = TakeMessage(*group, id);
    peer = done.ok() ? group->communicator->Finish(*pending.message) : done.status();
  }
  return Delivered(peer, pending);
}

// A work dropped unwaited (its finalizer): the message is released once
// finished. Never waits, never fails (the group may be gone).
void Release(int64_t handle, int64_t id) {
  std::shared_ptr<Group> group;
  {
    std::lock_guard<std::mutex> lock(groups_mutex);
    auto it = Groups().find(handle);
    if (it == Groups().end()) return;
    group = it->second;
  }
  {
    std::lock_guard<std::mutex> lock(group->dropped_mutex);
    group->dropped.push_back(id);
  }
  std::unique_lock<std::mutex> lock(group->mutex, std::try_to_lock);
  if (lock.owns_lock()) ReleaseDropped(*group);
}

// The number of messages in flight (tests: dropped works are released).
int64_t InFlight(int64_t handle) {
  std::shared_ptr<Group> group = GetGroup(handle);
  std::unique_lock<std::mutex> lock = Lock(*group);
  return static_cast<int64_t>(group->pending.size());
}

void Barrier(int64_t handle) {
  std::shared_ptr<Group> group = GetGroup(handle);
  std::unique_lock<std::mutex> lock = Lock(*group);
  Check(group->communicator->Barrier(group->members));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(axle, m) {
  m.def("dist_transport() -> str", &Transport);
  m.def(
      "dist_connect(int rank, int size, str transport, str rendezvous_dir, int[] world_ranks, "
      "float timeout_s) -> int",
      &Connect);
  m.def("dist_disconnect(int comm) -> ()", &Disconnect);
  m.def("dist_all_reduce(int comm, Tensor[] tensors, str op) -> ()", &AllReduce);
  m.def("dist_broadcast(int comm, Tensor[] tensors, int root) -> ()", &Broadcast);
  m.def("dist_all_gather(int comm, Tensor[] outputs, Tensor input) -> ()", &AllGather);
  m.def("dist_reduce_scatter(int comm, Tensor output, Tensor[] inputs, str op) -> ()",
        &ReduceScatter);
  m.def("dist_all_to_all(int comm, Tensor[] outputs, Tensor[] inputs) -> ()", &AllToAll);
  m.def("dist_reduce(int comm, Tensor[] tensors, int root, str op) -> ()", &Reduce);
  m.def("dist_gather(int comm, Tensor[] outputs, Tensor input, int root) -> ()", &Gather);
  m.def("dist_scatter(int comm, Tensor output, Tensor[] inputs, int root) -> ()", &Scatter);
  m.def("dist_send(int comm, Tensor[] tensors, int peer, int tag) -> int", &Send);
  m.def("dist_recv(int comm, Tensor[] tensors, int peer, int tag) -> int", &Recv);
  m.def("dist_wait(int comm, int message) -> int", &Wait);
  m.def("dist_test(int comm, int message) -> int", &Test);
  m.def("dist_release(int comm, int message) -> ()", &Release);
  m.def("dist_in_flight(int comm) -> int", &InFlight);
  m.def("dist_barrier(int comm) -> ()", &Barrier);
}

}  // namespace axle::torch_device
