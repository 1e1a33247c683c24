// mpmg error types. The library never exits or aborts; it throws one of these and the CLI
// (apps/mpmg) maps them to exit codes: InvalidInput/Unsupported -> 2, NumericalError -> 3.
#pragma once

#include <stdexcept>
#include <string>

namespace mpmg {

/// Base of every exception mpmg throws. what() is one sentence: what, where, what to do.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Bad input from the user: a file (with line), an option or JSON path, a size.
class InvalidInput : public Error {
public:
    using Error::Error;
};

/// A valid request that this build or this algorithm does not support.
class Unsupported : public Error {
public:
    using Error::Error;
};

/// Numerical trouble: overflow, zero pivot, non-finite value, breakdown. The message names
/// the level or iteration and the quantity.
class NumericalError : public Error {
public:
    using Error::Error;
};

}  // namespace mpmg
