// The NCCL side of a communicator (built with NCCL only): the world communicator of the CUDA
// ranks, checked NCCL calls, and a stream wait that honours the communicator's timeout.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "dist/comm_impl.hpp"

namespace kafel::dist {

struct NcclState {
  ncclComm_t world = nullptr;
  int ordinal = 0;  // this rank's CUDA device
  ~NcclState();
};

// Throws kafel::DeviceError "NCCL error: <call>: <NCCL's string> (<its last message>)".
void check_nccl(ncclResult_t res, const char* call);

// Waits for `stream` without blocking in the driver: polls it and the communicators' async
// errors; an NCCL failure throws, the communicator's timeout aborts the job (NCCL first).
void wait_stream(const Communicator::Impl& c, cudaStream_t stream,
                 const std::vector<ncclComm_t>& comms, const std::string& what);

}  // namespace kafel::dist
