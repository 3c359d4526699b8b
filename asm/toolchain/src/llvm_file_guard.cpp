// The files `.include` and `.incbin` make LLVM read, bounded. LLVM reads a named file whole into memory before
// it looks at it, so `.incbin "/dev/zero"` grew llvm-mc-22 to 2.2 GB in a second and never ends, and a FIFO
// blocks it forever. The text path gives LLVM's SourceMgr this file system (LLVM 22 reads included files through
// one; LLVM 19's reads them itself, unbounded): it opens only regular files, at most 64 MiB in all, and at most
// 1,000 of them per object (a file that includes itself would otherwise be read again without end). A refused
// file reaches LLVM as one it cannot open, and explain() then turns LLVM's "Could not find ... file" into the
// reason.
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <llvm/Support/VirtualFileSystem.h>

#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {
namespace {

constexpr uint64_t kFileLimitBytes = uint64_t(64) << 20;
constexpr int kMaxFiles = 1000;

class FileGuard final : public llvm::vfs::ProxyFileSystem {
public:
  FileGuard() : ProxyFileSystem(llvm::vfs::getRealFileSystem()) {}

  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForRead(const llvm::Twine& path) override {
    const std::string name = path.str();
    llvm::ErrorOr<llvm::vfs::Status> st = getUnderlyingFS().status(name);
    if (!st) return st.getError(); // LLVM says it could not find it, which is so
    if (!st->isRegularFile()) return refuse(name, "not a regular file");
    if (st->getSize() > kFileLimitBytes - read_)
      return refuse(name, std::to_string(st->getSize()) + " bytes, past the 64 MiB isatune reads for .include "
                                                          "and .incbin in one object");
    if (++opened_ > kMaxFiles) return refuse(name, "more than 1000 files included in one object");
    read_ += st->getSize();
    return getUnderlyingFS().openFileForRead(name);
  }
#if ISATUNE_LLVM_MAJOR >= 22
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>> openFileForReadBinary(const llvm::Twine& path) override {
    return openFileForRead(path);
  }
#endif

  // LLVM's "Could not find include file 'P'" / "Could not find incbin file 'P'" for a file refused here.
  void explain(std::vector<Diagnostic>& diags) const {
    for (Diagnostic& d : diags)
      for (const auto& [name, why] : refused_)
        if (d.message.size() > name.size() + 2 && d.message.rfind("Could not find", 0) == 0 &&
            d.message.compare(d.message.size() - name.size() - 2, std::string::npos, "'" + name + "'") == 0)
          d.message = "isatune does not read '" + name + "': " + why;
  }

private:
  std::error_code refuse(const std::string& name, std::string why) {
    refused_.emplace_back(name, std::move(why));
    return std::make_error_code(std::errc::permission_denied);
  }

  uint64_t read_ = 0;
  int opened_ = 0;
  std::vector<std::pair<std::string, std::string>> refused_;
};

} // namespace

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> make_file_guard() { return llvm::makeIntrusiveRefCnt<FileGuard>(); }

void explain_refused_files(const llvm::vfs::FileSystem& guard, std::vector<Diagnostic>& diags) {
  static_cast<const FileGuard&>(guard).explain(diags);
}

} // namespace isatune::toolchain::detail
