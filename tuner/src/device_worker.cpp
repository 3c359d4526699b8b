#include "isatune/tune/device_worker.h"

#include <cstdlib>
#include <string>

#include "isatune/codeobj/reader.h"
#include "isatune/error.h"
#include "isatune/toolchain/ptx_text_object.h"
#include "isatune/tune/variant_runner.h"
#include "worker_protocol.h"

namespace isatune::tune {

int report_device_worker_error(int out_fd, const std::string& message) {
  try {
    worker::write_message(out_fd, {{"op", "error"}, {"message", message}});
  } catch (const Error&) {
  }
  return 1;
}

int serve_device_worker(loader::Device& device, int in_fd, int out_fd) {
  long crash_at = 0;
  if (const char* c = std::getenv("ISATUNE_WORKER_TEST_CRASH")) {
    const char* restarts = std::getenv("ISATUNE_WORKER_RESTARTS");
    if (!restarts || std::string(restarts) == "0") crash_at = std::atol(c);
  }
  try {
    worker::write_message(out_fd, {{"op", "hello"}, {"properties", worker::to_json(device.properties())}});
  } catch (const Error&) {
    return 1;
  }
  long served = 0;
  for (;;) {
    nlohmann::json request;
    std::vector<uint8_t> blob;
    if (worker::read_message(in_fd, request, blob, -1) != worker::ReadStatus::ok) return 0;
    if (request.value("op", "") != "run") {
      worker::write_message(out_fd, {{"op", "error"}, {"message", "unknown request"}});
      continue;
    }
    if (++served == crash_at) std::abort();
    RunResult r;
    try {
      VariantSpec spec;
      spec.generator = &gen::find_generator(request.at("generator").get<std::string>());
      spec.isa = request.at("isa");
      spec.sig = request.at("sig").get<gen::Signature>();
      spec.params = worker::params_from_json(request.at("params"));
      const gen::Problem problem = request.at("problem").get<gen::Problem>();
      Compiled compiled;
      // An ELF (hsaco, cubin) or PTX text (the PTX emulator's input; the NUL the driver wants at its end).
      const bool elf = blob.size() >= 4 && blob[0] == 0x7f && blob[1] == 'E' && blob[2] == 'L' && blob[3] == 'F';
      if (elf) {
        compiled.code = codeobj::read_code_object(blob, "request");
      } else {
        std::string_view text(reinterpret_cast<const char*>(blob.data()), blob.size());
        if (!text.empty() && text.back() == '\0') text.remove_suffix(1);
        compiled.code = toolchain::ptx_text_object(text, spec.isa, "request.ptx");
      }
      r = run_variant(device, compiled, spec, problem, worker::run_options_from_json(request.at("options")));
    } catch (const std::exception& e) {
      r = RunResult{};
      r.status = Status::runtime;
      r.message = std::string("device worker: ") + e.what();
    }
    try {
      worker::write_message(out_fd, worker::to_json(r));
    } catch (const Error&) {
      return 1;
    }
  }
}

} // namespace isatune::tune
