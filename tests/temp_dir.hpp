// A test process's scratch folder, removed when the process exits: before, every test process
// left its folder in /tmp (1.5 GB of them on a developer's machine after many runs).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace mpmg::test {

/// The folder `prefix` + `id` (by default this process's id) under the system's temporary
/// directory, made when constructed and removed with its contents when destroyed; one held in a
/// function's static is removed at exit. `owner` false: only the path (the processes of an MPI
/// test that share rank 0's folder).
class TempDir {
public:
    explicit TempDir(const std::string& prefix, long id = static_cast<long>(::getpid()),
                     bool owner = true)
        : path_(std::filesystem::temp_directory_path() / (prefix + std::to_string(id))),
          owner_(owner) {
        if (owner_) std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ignored;  // nothing to report at exit; a folder left is harmless
        if (owner_) std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
    bool owner_;
};

}  // namespace mpmg::test
