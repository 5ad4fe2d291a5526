// Typed exceptions thrown by every part of kafel.
// The CLI turns any of them into one line on stderr and a non-zero exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace kafel {

// Base of every kafel error; what() is a complete, one-line message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A caller passed something that cannot be valid (bad size, unknown name, mismatched shapes).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A file is missing, truncated, malformed or not writable.
class IoError : public Error {
 public:
  using Error::Error;
};

// The request is valid but this kernel/device cannot do it (a type, a size limit).
class Unsupported : public Error {
 public:
  using Error::Error;
};

// A device or runtime call failed; the message carries the runtime's own error string.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// An OpenCL program failed to compile; log() holds the full build log.
class BuildError : public DeviceError {
 public:
  BuildError(const std::string& what, std::string log) : DeviceError(what), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

// The problem does not fit in the memory of the host or the device.
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

// A result did not match the reference within its tolerance.
class VerificationError : public Error {
 public:
  using Error::Error;
};

}  // namespace kafel
