// Errors met on some processes of a collective step (issue #8): every process must leave the
// step the same way, or the others wait forever in their next collective call.
#pragma once

#ifdef MPMG_HAVE_MPI

#include <mpi.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "mpmg/errors.hpp"

namespace mpmg::dist {

/// The mpmg::Error types a collective step passes on (none: it went well).
enum class ErrorKind : int { none = 0, invalid_input, unsupported, numerical, other };

/// The ErrorKind of `e`'s type.
ErrorKind kind_of(const Error& e);

/// When some process met an error (kind != none), every process throws the error of the lowest
/// such process, of its type and with its message (collective).
void throw_first(ErrorKind kind, const std::string& message, MPI_Comm comm);

/// f() on every process; when it throws an mpmg::Error on some, every process throws the
/// lowest such process's (throw_first). Collective: every process calls it. f returns a value.
template <class F>
auto run_agreed(F&& f, MPI_Comm comm) -> std::invoke_result_t<F> {
    std::optional<std::invoke_result_t<F>> out;
    ErrorKind kind = ErrorKind::none;
    std::string message;
    try {
        out.emplace(std::forward<F>(f)());
    } catch (const Error& e) {
        kind = kind_of(e);
        message = e.what();
    }
    throw_first(kind, message, comm);
    return std::move(*out);
}

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
