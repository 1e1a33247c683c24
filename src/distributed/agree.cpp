#ifdef MPMG_HAVE_MPI

#include "distributed/agree.hpp"

namespace mpmg::dist {

ErrorKind kind_of(const Error& e) {
    if (dynamic_cast<const InvalidInput*>(&e) != nullptr) return ErrorKind::invalid_input;
    if (dynamic_cast<const Unsupported*>(&e) != nullptr) return ErrorKind::unsupported;
    if (dynamic_cast<const NumericalError*>(&e) != nullptr) return ErrorKind::numerical;
    return ErrorKind::other;
}

void throw_first(ErrorKind kind, const std::string& message, MPI_Comm comm) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int holder = kind == ErrorKind::none ? size : rank;
    MPI_Allreduce(MPI_IN_PLACE, &holder, 1, MPI_INT, MPI_MIN, comm);
    if (holder == size) return;
    int head[2] = {static_cast<int>(kind), static_cast<int>(message.size())};
    MPI_Bcast(head, 2, MPI_INT, holder, comm);
    std::string text = message;
    text.resize(static_cast<std::size_t>(head[1]));
    MPI_Bcast(text.data(), head[1], MPI_CHAR, holder, comm);
    switch (static_cast<ErrorKind>(head[0])) {
        case ErrorKind::unsupported:
            throw Unsupported(text);
        case ErrorKind::numerical:
            throw NumericalError(text);
        case ErrorKind::other:
            throw Error(text);
        default:
            throw InvalidInput(text);
    }
}

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
