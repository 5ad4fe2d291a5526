// The MPI suite's shared state: the communicator every test runs on (made in main.cpp over
// MPI_COMM_WORLD, device from $KAFEL_DEVICE, 120 s timeout on every collective).
#pragma once

#include "kafel/dist.hpp"

const kafel::dist::Communicator& test_comm();
