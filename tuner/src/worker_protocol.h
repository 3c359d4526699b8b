#pragma once
// The device worker's protocol (internal): messages over a stream socket, each one frame:
//   u32 json_length, u32 blob_length (little-endian), JSON text, blob bytes.
// Worker -> parent first: {"op":"hello","properties":{...}} (or {"op":"error","message":...}).
// Parent -> worker: {"op":"run","generator","isa","sig","params","problem","options"} + code object bytes.
// Worker -> parent: {"op":"result", RunResult fields}.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "isatune/loader/device.h"
#include "isatune/tune/variant_runner.h"

namespace isatune::tune::worker {

// Throws Error when the peer is gone.
void write_message(int fd, const nlohmann::json& j, std::span<const uint8_t> blob = {});
enum class ReadStatus { ok, eof, timeout };
// timeout_s < 0: wait for ever. A malformed frame reads as eof.
ReadStatus read_message(int fd, nlohmann::json& j, std::vector<uint8_t>& blob, double timeout_s);

nlohmann::json to_json(const gen::Params& p);
gen::Params params_from_json(const nlohmann::json& j);
nlohmann::json to_json(const loader::DeviceProperties& p);
loader::DeviceProperties properties_from_json(const nlohmann::json& j);
nlohmann::json to_json(const RunOptions& o);
RunOptions run_options_from_json(const nlohmann::json& j);
nlohmann::json to_json(const RunResult& r);
RunResult run_result_from_json(const nlohmann::json& j);

} // namespace isatune::tune::worker
