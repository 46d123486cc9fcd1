//===- mpi_communicator.h - Collectives over MPI ---------------------------===//
//
// The second transport between processes: MPI (Debian's Open MPI,
// libopenmpi-dev), chosen at run time (AXLE_COLLECTIVES_TRANSPORT=mpi, or
// by starting the processes with mpirun). Rank and size are MPI's
// (MPI_COMM_WORLD, duplicated); the launcher (mpirun) does the rendezvous.
//
// Messages are MPI_Isend / MPI_Irecv on the duplicated communicator with
// the collective's tag (folded into MPI's tag range: messages between two
// ranks with one tag arrive in order, and the collectives run one at a
// time), so the collectives of communicator.h run on them unchanged and
// give the same bits as over Gloo or threads. A wait polls MPI_Testall until
// the deadline (AXLE_COLLECTIVE_TIMEOUT): a peer that never arrives fails
// the call with DeadlineExceeded naming it; one that dies is reported by
// mpirun, which ends the run. A receive from any rank is MPI_ANY_SOURCE
// (the sender read from its MPI_Status). MPI runs MPI_THREAD_SERIALIZED:
// the communicators of a process take turns through one lock, call by
// call.
//
// A timed-out transfer is cancelled. Open MPI cannot cancel a send, so
// every send goes from a copy the transport owns (staging buffers, reused):
// a send left posted (stranded) keeps its copy, whatever becomes of the
// caller's buffer, until its peer takes it or MPI ends; later calls
// release the stranded sends that completed. MPI is finalized when the
// last communicator goes, or at exit, unless a send is still stranded or
// an MPI call failed (then the process ends without it; see the README).
//
//===----------------------------------------------------------------------===//
#ifndef AXLE_COLLECTIVES_MPI_COMMUNICATOR_H_
#define AXLE_COLLECTIVES_MPI_COMMUNICATOR_H_

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "axle/collectives/communicator.h"

namespace axle {

// The sends of this process that timed out, could not be cancelled and
// have not completed since (each keeps a copy of its bytes).
int StrandedMpiSends();

// Whether an MPI launcher (mpirun, srun with PMI) started this process.
bool StartedByMpiLauncher();

// Initializes MPI (once per process; finalized when the last communicator
// goes) and returns a communicator over all of MPI_COMM_WORLD, or, when
// `world_ranks` lists some of its ranks, over those, in that order (then
// only they make the call). MPI_Init is given `timeout`: a rank of the job
// that never starts holds it, and the call then fails (DeadlineExceeded).
absl::StatusOr<std::unique_ptr<Communicator>> ConnectMpi(std::chrono::milliseconds timeout,
                                                         absl::Span<const int> world_ranks = {});

}  // namespace axle

#endif  // AXLE_COLLECTIVES_MPI_COMMUNICATOR_H_
