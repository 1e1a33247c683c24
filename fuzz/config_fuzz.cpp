// libFuzzer target for the configuration parser, as `mpmg solve --config` runs it: bytes ->
// nlohmann::json::parse -> options_from_json -> validate. Bad JSON must throw json::parse_error
// (or json::exception); a bad configuration must throw mpmg::Error. Whatever options_from_json
// accepts must survive a round trip through to_json. Built by .ci/fuzz.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "mpmg/errors.hpp"
#include "mpmg/options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(data, data + size);
    } catch (const nlohmann::json::exception&) {  // parse_error; out_of_range for 1e999
        return 0;
    }
    mpmg::SolverOptions o;
    try {
        o = mpmg::options_from_json(j);
    } catch (const mpmg::Error&) {
        return 0;
    }
    // Accepted options print back and read back to the same tree.
    const nlohmann::json out = mpmg::to_json(o);
    try {
        const mpmg::SolverOptions again = mpmg::options_from_json(out);
        if (mpmg::to_json(again) != out) __builtin_trap();
    } catch (const mpmg::Error&) {
        __builtin_trap();
    }
    try {
        mpmg::validate(o);
    } catch (const mpmg::Error&) {
    }
    return 0;
}
