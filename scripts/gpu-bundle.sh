#!/usr/bin/env bash
# Prepares and uses the .gpu/ bundle of Debian packages for an air-gapped NVIDIA GPU node:
# OpenCL ICD loader + headers, CLBlast and clinfo (plus whatever lies in .gpu/deps/).
#
#   scripts/gpu-bundle.sh download      # on a machine with apt: fills .gpu/ (git ignores it)
#   source scripts/gpu-bundle.sh env    # on the GPU node: unpacks to /tmp/cl, exports the paths
#
# `env` sets CPATH, LIBRARY_PATH, LD_LIBRARY_PATH, CMAKE_PREFIX_PATH and OCL_ICD_VENDORS (an
# ICD file pointing at NVIDIA's libnvidia-opencl.so.1), as /work/shared/GPU.md describes.
_kafel_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_kafel_bundle="${KAFEL_GPU_BUNDLE:-$_kafel_root/.gpu}"
_kafel_prefix="${KAFEL_GPU_PREFIX:-/tmp/cl}"

_kafel_download() {
  mkdir -p "$_kafel_bundle" && cd "$_kafel_bundle" &&
    apt-get download ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers \
      opencl-clhpp-headers libclblast1 libclblast-dev clinfo &&
    echo "bundle ready in $_kafel_bundle: $(ls "$_kafel_bundle"/*.deb | wc -l) packages"
}

_kafel_env() {
  local f lib
  mkdir -p "$_kafel_prefix/vendors"
  for f in "$_kafel_bundle"/*.deb "$_kafel_bundle"/deps/*.deb; do
    [ -e "$f" ] && dpkg -x "$f" "$_kafel_prefix"
  done
  lib="$_kafel_prefix/usr/lib/x86_64-linux-gnu"
  export CPATH="$_kafel_prefix/usr/include${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export CMAKE_PREFIX_PATH="$_kafel_prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  local nv
  for nv in /usr/local/nvidia/lib64/libnvidia-opencl.so.1 \
            /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1; do
    if [ -e "$nv" ]; then echo "$nv" > "$_kafel_prefix/vendors/nvidia.icd"; break; fi
  done
  export OCL_ICD_VENDORS="$_kafel_prefix/vendors"
}

case "${1:-download}" in
  download) _kafel_download ;;
  env) _kafel_env ;;
  *) echo "usage: $0 download | source $0 env" >&2; false ;;
esac
