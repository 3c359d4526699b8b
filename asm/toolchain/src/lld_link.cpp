// Relocatable objects -> shared object (the .hsaco), through lld's ELF driver in this process, with no file
// on disk:
//  * each input is a memfd (anonymous memory file) that lld opens as /proc/self/fd/N;
//  * the output path is /proc/self/fd/W, the write end of a pipe. llvm::FileOutputBuffer sees a FIFO, keeps
//    the image in memory (it cannot rename a temporary over a FIFO) and, at commit, opens the path and writes
//    it. When the image is sure to fit in the pipe (its size is bounded from the inputs, and the pipe is
//    enlarged with F_SETPIPE_SZ), the pipe is drained after lld returns; otherwise a reader thread drains it
//    during the link, so images larger than the pipe buffer work. Avoiding the thread matters: with a second
//    thread alive, every munmap/madvise lld does costs TLB-shootdown interrupts, which doubled the link's time.
// lld keeps process-global state (CommonLinkerContext, the error handler, the parallel strategy) for the
// length of a link, so links are serialised by one mutex. Assembling (LLVM MC) stays fully parallel.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <lld/Common/Driver.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/raw_ostream.h>

#include "isatune/error.h"
#include "isatune/toolchain/llvm_mc.h"

LLD_HAS_DRIVER(elf)

namespace isatune::toolchain {
namespace {

std::mutex g_lld_mutex;     // lld is not re-entrant: one link at a time in this process
bool g_lld_broken = false;  // set when lldMain says it cannot run again (guarded by g_lld_mutex)

// A file descriptor closed on scope exit.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

Fd memfd_with(const std::vector<uint8_t>& bytes, int index) {
  std::string name = "isatune-lld-in-" + std::to_string(index);
  Fd fd(::memfd_create(name.c_str(), MFD_CLOEXEC));
  if (fd.fd < 0) throw Error(errno_text("memfd_create"));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(errno_text("writing a linker input to memory"));
    done += static_cast<size_t>(n);
  }
  return fd;
}

std::string proc_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// lld treats a malformed ELF file as a fatal error, after which it cannot run again in this process. So every
// input is checked with LLVM's ELF reader first: a 64-bit little-endian AMDGPU relocatable whose headers and
// sections lie inside the buffer. Returns an empty string when fine, else what is wrong. Adds the sections'
// alignments to *align_sum (the most padding the linker can add for them).
std::string check_object(const std::vector<uint8_t>& bytes, uint64_t* align_sum) {
  llvm::MemoryBufferRef ref(llvm::StringRef(reinterpret_cast<const char*>(bytes.data()), bytes.size()), "object");
  auto obj = llvm::object::ELF64LEObjectFile::create(ref);
  if (!obj) return llvm::toString(obj.takeError());
  const auto& elf = obj->getELFFile();
  if (elf.getHeader().e_machine != llvm::ELF::EM_AMDGPU) return "not an AMDGPU object";
  if (elf.getHeader().e_type != llvm::ELF::ET_REL) return "not a relocatable object";
  auto sections = elf.sections();
  if (!sections) return llvm::toString(sections.takeError());
  for (const auto& sec : *sections) {
    *align_sum += std::min<uint64_t>(sec.sh_addralign, uint64_t(1) << 40);
    if (sec.sh_type == llvm::ELF::SHT_NOBITS) continue;
    auto contents = elf.getSectionContents(sec);
    if (!contents) return llvm::toString(contents.takeError());
  }
  auto names = elf.getSectionStringTable(*sections);
  if (!names) return llvm::toString(names.takeError());
  return {};
}

// Replaces the /proc/self/fd/N paths lld prints with "object I" (I: index in the input list).
std::string name_inputs(std::string text, const std::vector<std::string>& paths) {
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string name = "object " + std::to_string(i);
    for (size_t at = 0; (at = text.find(paths[i], at)) != std::string::npos;) {
      // /proc/self/fd/1 must not match inside /proc/self/fd/12.
      size_t end = at + paths[i].size();
      if (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) {
        at = end;
        continue;
      }
      text.replace(at, paths[i].size(), name);
      at += name.size();
    }
  }
  return text;
}

// Turns lld's "ld.lld: error: message" lines into diagnostics.
std::vector<Diagnostic> parse_lld_messages(const std::string& text) {
  std::vector<Diagnostic> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    constexpr std::string_view prefix = "ld.lld: ";
    if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    Diagnostic d;
    d.file = "<link>";
    if (line.rfind("error: ", 0) == 0) {
      d.severity = Diagnostic::Severity::error;
      line.erase(0, 7);
    } else if (line.rfind("warning: ", 0) == 0) {
      d.severity = Diagnostic::Severity::warning;
      line.erase(0, 9);
    } else if (!out.empty()) {
      // A continuation line (">>> referenced by ..."): append to the previous message.
      out.back().message += "\n" + line;
      continue;
    } else {
      d.severity = Diagnostic::Severity::note;
    }
    d.message = line;
    out.push_back(std::move(d));
  }
  return out;
}

} // namespace

std::vector<uint8_t> lld_link_shared(const std::vector<std::vector<uint8_t>>& objects) {
  if (objects.empty()) throw InputError("lld_link_shared: no input objects");

  uint64_t align_sum = 0, input_bytes = 0;
  for (size_t i = 0; i < objects.size(); ++i) {
    input_bytes += objects[i].size();
    if (std::string why = check_object(objects[i], &align_sum); !why.empty())
      throw InputError("lld_link_shared: object " + std::to_string(i) + " is not a valid AMDGPU relocatable: " + why);
  }

  std::vector<Fd> inputs;
  std::vector<std::string> input_paths;
  for (size_t i = 0; i < objects.size(); ++i) {
    inputs.push_back(memfd_with(objects[i], static_cast<int>(i)));
    input_paths.push_back(proc_path(inputs.back().fd));
  }

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error(errno_text("pipe2"));
  Fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  const std::string out_path = proc_path(write_end.fd);

  // A bound on the image: the inputs' bytes twice over (sections, symbol and string tables copied, plus the
  // dynamic symbol, hash and relocation tables derived from them), every section's alignment padding, and
  // 256 KiB for headers and lld's small synthetic sections. Our fixed flags never pad segments to pages.
  // The bound is our reasoning, not an lld guarantee, and a wrong one would block lld's write: so it is
  // doubled again, and anything larger takes the reader-thread path, which is always safe.
  const uint64_t bound = 2 * (2 * input_bytes + align_sum + (uint64_t(256) << 10));
  bool drain_after = false;
  if (bound <= (uint64_t(1) << 20)) { // 1 MiB: Linux's default /proc/sys/fs/pipe-max-size
    uint64_t want = 65536;
    while (want < bound) want *= 2;
    const int got = ::fcntl(read_end.fd, F_SETPIPE_SZ, static_cast<int>(want));
    drain_after = got > 0 && uint64_t(got) >= bound;
  }

  std::vector<const char*> args = {"ld.lld", "-shared", "--no-undefined", "--threads=1", "--no-mmap-output-file",
                                   "-o", out_path.c_str()};
  for (const auto& p : input_paths) args.push_back(p.c_str());

  std::string out_text, err_text;
  out_text.reserve(256);
  err_text.reserve(1024);

  std::vector<uint8_t> image;
  int read_errno = 0;
  auto drain = [&] {
    uint8_t chunk[65536];
    for (;;) {
      ssize_t n = ::read(read_end.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) read_errno = errno;
      if (n <= 0) break;
      image.insert(image.end(), chunk, chunk + n);
    }
  };
  std::thread reader;
  if (!drain_after) reader = std::thread(drain);
  // Closes our write end and joins the reader on every way out of this scope.
  struct ReaderGuard {
    std::thread& thread;
    Fd& write_end;
    ~ReaderGuard() {
      write_end.reset(); // the reader sees EOF once lld's own descriptor for the path is closed too
      if (thread.joinable()) thread.join();
    }
  };
  std::optional<ReaderGuard> guard;
  guard.emplace(reader, write_end);

  lld::Result result{1, true};
  bool was_broken = false;
  {
    std::lock_guard<std::mutex> lock(g_lld_mutex);
    was_broken = g_lld_broken;
    if (!was_broken) {
      // lld reports fatal errors by "exiting"; with crash recovery enabled that returns to lldMain instead
      // of ending the process.
      llvm::CrashRecoveryContext::Enable();
      llvm::raw_string_ostream out_os(out_text), err_os(err_text);
      result = lld::lldMain(args, out_os, err_os, {{lld::Gnu, &lld::elf::link}});
      out_os.flush();
      err_os.flush();
      if (!result.canRunAgain) g_lld_broken = true;
    }
  }
  guard.reset(); // closes our write end (and joins the reader, if any)
  if (drain_after) drain(); // lld has closed its descriptor: the whole image is in the pipe, then EOF

  if (was_broken)
    throw Error("lld cannot link again in this process: an earlier link ended in an unrecoverable state");
  std::vector<Diagnostic> diags = parse_lld_messages(name_inputs(err_text + out_text, input_paths));
  if (result.retCode != 0) {
    if (diags.empty()) {
      Diagnostic d;
      d.file = "<link>";
      d.message = "lld failed with code " + std::to_string(result.retCode);
      diags.push_back(d);
    }
    if (!result.canRunAgain)
      diags.front().message += " (lld cannot run again in this process; further links will fail)";
    throw AssemblyError(std::move(diags));
  }
  if (read_errno != 0) throw Error(std::string("reading the linked image from lld: ") + std::strerror(read_errno));
  if (image.empty()) throw Error("lld produced no output");
  return image;
}

} // namespace isatune::toolchain
