// kafel's typed C++ errors as Python exceptions: kafel.Error and one subclass per C++ type, each
// also deriving from the built-in exception a Python caller would catch (ValueError ...).
#include "binding.hpp"
#include "kafel/error.hpp"

namespace kafel::py {
namespace {

struct PyErrors {
  PyObject *error, *invalid, *unsupported, *device, *build, *memory, *io, *verification;
};
PyErrors errors;

PyObject* new_error(nb::module_& m, const char* name, const char* doc, nb::handle bases) {
  const std::string qualified = "kafel." + std::string(name);
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), /*dict=*/nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

nb::tuple bases(PyObject* a, PyObject* b = nullptr) {
  return b ? nb::make_tuple(nb::handle(a), nb::handle(b)) : nb::make_tuple(nb::handle(a));
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const BuildError& e) {
    nb::object exc = nb::steal(PyObject_CallOneArg(errors.build, nb::str(e.what()).ptr()));
    if (!exc.is_valid()) return;  // the call's own error stays set
    nb::setattr(exc, "log", nb::str(e.log().c_str()));
    PyErr_SetObject(errors.build, exc.ptr());
  } catch (const InvalidArgument& e) {
    PyErr_SetString(errors.invalid, e.what());
  } catch (const Unsupported& e) {
    PyErr_SetString(errors.unsupported, e.what());
  } catch (const DeviceError& e) {
    PyErr_SetString(errors.device, e.what());
  } catch (const OutOfMemory& e) {
    PyErr_SetString(errors.memory, e.what());
  } catch (const IoError& e) {
    PyErr_SetString(errors.io, e.what());
  } catch (const VerificationError& e) {
    PyErr_SetString(errors.verification, e.what());
  } catch (const Error& e) {
    PyErr_SetString(errors.error, e.what());
  }
}

}  // namespace

void bind_errors(nb::module_& m) {
  errors.error = new_error(m, "Error", "Base of every kafel error; the message is one line.",
                           bases(PyExc_Exception));
  errors.invalid = new_error(m, "InvalidArgument",
                             "A value that cannot be valid: bad size, type, name or shapes.",
                             bases(errors.error, PyExc_ValueError));
  errors.unsupported = new_error(m, "Unsupported", "Valid, but this kernel or device cannot do it.",
                                 bases(errors.error));
  errors.device = new_error(m, "DeviceError", "A device or runtime call failed.",
                            bases(errors.error, PyExc_RuntimeError));
  errors.build =
      new_error(m, "BuildError", "An OpenCL program failed to compile; .log holds the build log.",
                bases(errors.device));
  errors.memory = new_error(m, "OutOfMemory", "The problem does not fit in host or device memory.",
                            bases(errors.error, PyExc_MemoryError));
  errors.io = new_error(m, "IoError", "A file is missing, malformed or not writable.",
                        bases(errors.error, PyExc_OSError));
  errors.verification = new_error(
      m, "VerificationError", "A result did not match the float64 reference within its tolerance.",
      bases(errors.error));
  nb::register_exception_translator(translate);
}

}  // namespace kafel::py
