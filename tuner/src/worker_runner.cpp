#include "isatune/tune/worker_runner.h"

#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "isatune/error.h"
#include "worker_protocol.h"

extern char** environ;

namespace isatune::tune {

namespace {

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return std::string("killed by signal ") + (abbrev ? std::string("SIG") + abbrev : std::to_string(sig)) + " (" +
           strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

} // namespace

WorkerRunner::WorkerRunner(WorkerOptions options) : options_(std::move(options)) {
  if (options_.command.empty()) throw InputError("device worker: no command");
  start();
}

WorkerRunner::~WorkerRunner() {
  if (pid_ > 0) stop(false);
}

void WorkerRunner::start() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(std::string("device worker: socketpair: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "ISATUNE_WORKER_RESTARTS=", 24) != 0) env_store.push_back(*e);
  env_store.push_back("ISATUNE_WORKER_RESTARTS=" + std::to_string(starts_));
  std::vector<char*> envp, argv;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = options_.command;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    throw Error("device worker: cannot start " + options_.command[0] + ": " + std::strerror(rc));
  }
  pid_ = pid;
  fd_ = sv[0];
  ++starts_;
  nlohmann::json hello;
  std::vector<uint8_t> blob;
  const auto got = worker::read_message(fd_, hello, blob, options_.start_timeout_s);
  if (got != worker::ReadStatus::ok) {
    const std::string how = stop(got == worker::ReadStatus::timeout);
    throw Error("device worker (" + options_.command[0] + ") did not start: " + how);
  }
  if (hello.value("op", "") == "error") {
    stop(false);
    throw InputError(hello.value("message", "device worker failed"));
  }
  if (hello.value("op", "") != "hello") {
    stop(true);
    throw Error("device worker: unexpected greeting");
  }
  properties_ = worker::properties_from_json(hello.at("properties"));
}

std::string WorkerRunner::stop(bool kill) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ <= 0) return "not running";
  if (kill) ::kill(pid_, SIGKILL);
  int status = 0;
  // A worker whose input closed exits on its own; give it two seconds before the SIGKILL.
  for (int i = 0; i < 200; ++i) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || r < 0) {
      pid_ = -1;
      return r < 0 ? "gone" : describe_exit(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return describe_exit(status);
}

RunResult WorkerRunner::run(const Compiled& compiled, const VariantSpec& spec, const gen::Problem& problem,
                            const RunOptions& options, double timeout_s) {
  const auto t0 = std::chrono::steady_clock::now();
  if (pid_ <= 0) start();
  ++requests_;
  nlohmann::json request = {{"op", "run"},
                            {"generator", spec.generator->name()},
                            {"isa", spec.isa},
                            {"sig", spec.sig},
                            {"params", worker::to_json(spec.params)},
                            {"problem", problem},
                            {"options", worker::to_json(options)}};
  nlohmann::json reply;
  std::vector<uint8_t> blob;
  worker::ReadStatus got = worker::ReadStatus::eof;
  try {
    worker::write_message(fd_, request, compiled.code_for(properties()).bytes);
    got = worker::read_message(fd_, reply, blob, timeout_s);
  } catch (const Error&) {
    got = worker::ReadStatus::eof; // the worker is gone
  }
  RunResult r;
  if (got == worker::ReadStatus::ok && reply.value("op", "") == "result") {
    try {
      return worker::run_result_from_json(reply);
    } catch (const std::exception& e) {
      r.status = Status::runtime;
      r.message = std::string("device worker: bad reply: ") + e.what();
      stop(true);
    }
  } else if (got == worker::ReadStatus::timeout) {
    ++timeouts_;
    stop(true);
    char buf[160];
    std::snprintf(buf, sizeof buf, "no answer within %.3g s: the device worker was killed and restarted",
                  timeout_s);
    r.status = Status::timeout;
    r.message = buf;
  } else {
    ++deaths_;
    r.status = Status::runtime;
    r.message = "the device worker " + stop(false) + " while running this variant; restarted";
  }
  r.run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

} // namespace isatune::tune
