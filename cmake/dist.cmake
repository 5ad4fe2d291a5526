# kafel::dist (distributed GEMM and covariance): MPI always, NCCL between CUDA GPUs when found.
# Sets KAFEL_WITH_MPI (option, ON when MPI is found) and KAFEL_HAVE_NCCL (NCCL_INCLUDE_DIR/LIBRARY).
# C++ only (the project enables no C): the C API through the C++ wrapper, without the
# deprecated C++ bindings.
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "kafel uses the MPI C API only")
find_package(MPI QUIET COMPONENTS CXX)
set(_mpi_default OFF)
if(MPI_CXX_FOUND)
  set(_mpi_default ON)
endif()
option(KAFEL_WITH_MPI "Build kafel::dist (MPI; Debian: openmpi-bin libopenmpi-dev)" ${_mpi_default})
option(KAFEL_WITH_NCCL "Use NCCL between the CUDA ranks of kafel::dist when it is found" ON)

set(KAFEL_HAVE_NCCL OFF)
if(KAFEL_WITH_MPI)
  find_package(MPI REQUIRED COMPONENTS CXX)
  if(KAFEL_WITH_CUDA AND KAFEL_WITH_NCCL)
    # The CUDA toolkit's copy (this machine: /usr/local/cuda/lib), or the system's (GPU nodes:
    # /usr/include/nccl.h and only libnccl.so.2, no development symlink).
    get_filename_component(_cuda_root "${CUDAToolkit_LIBRARY_DIR}" DIRECTORY)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
    find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2
                 HINTS ${CUDAToolkit_LIBRARY_DIR} ${_cuda_root}/lib ${_cuda_root}/lib64
                       /usr/lib/x86_64-linux-gnu)
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(KAFEL_HAVE_NCCL ON)
    endif()
  endif()
endif()
