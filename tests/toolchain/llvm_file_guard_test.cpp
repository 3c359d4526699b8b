// `.include` and `.incbin` read regular files only, at most 64 MiB in all and 1,000 files per object: LLVM reads
// a named file whole before it looks at it, so `/dev/zero` never ends and a FIFO blocks. Below the bounds they
// make what LLVM makes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "isatune/toolchain/llvm_mc.h"
#include "toolchain_test_util.h"

namespace isatune::toolchain {
namespace {

const std::string kHead = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.data\n";

// LLVM 19's SourceMgr reads included files itself, so the guard needs LLVM 22's file system hook.
bool guarded() { return std::stoi(llvm_version()) >= 22; }

// The first diagnostic of assembling `text`, which must fail.
Diagnostic refusal(const std::string& text) {
  try {
    llvm_assemble_object(text, {"gfx942", "f.s"});
  } catch (const AssemblyError& e) {
    if (!e.diagnostics().empty()) return e.diagnostics().front();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return {};
}

void sparse_file(const std::string& path, off_t size) {
  { std::ofstream(path) << ""; }
  ASSERT_EQ(::truncate(path.c_str(), size), 0) << path;
}

TEST(LlvmFileGuard, WhatIsNotARegularFileIsRefusedAtItsName) {
  if (!guarded()) GTEST_SKIP() << "LLVM " << llvm_version() << " reads .include/.incbin files itself (needs 22)";
  testing::TempDir dir;
  const std::string fifo = (dir.path / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string directive : {".incbin", ".include", ".INCBIN"})
    for (const std::string& name : {std::string("/dev/zero"), fifo, dir.path.string()}) {
      const Diagnostic d = refusal(kHead + directive + " \"" + name + "\"\n");
      EXPECT_EQ(d.line, 3) << d.str();
      EXPECT_EQ(d.column, int(directive.size()) + 2) << d.str();
      EXPECT_EQ(d.message, "isatune does not read '" + name + "': not a regular file") << d.str();
    }
}

TEST(LlvmFileGuard, FilesPast64MiBInAllAreRefused) {
  if (!guarded()) GTEST_SKIP() << "LLVM " << llvm_version() << " reads .include/.incbin files itself (needs 22)";
  testing::TempDir dir;
  const std::string big = (dir.path / "big.bin").string(), half = (dir.path / "half.bin").string();
  sparse_file(big, (off_t(64) << 20) + 1);
  sparse_file(half, off_t(40) << 20);
  Diagnostic d = refusal(kHead + ".incbin \"" + big + "\"\n");
  EXPECT_EQ(d.message, "isatune does not read '" + big + "': 67108865 bytes, past the 64 MiB isatune reads for "
                       ".include and .incbin in one object") << d.str();
  // 40 MiB fits once, not twice.
  d = refusal(kHead + ".incbin \"" + half + "\", 0, 4\n.incbin \"" + half + "\", 0, 4\n");
  EXPECT_EQ(d.line, 4) << d.str();
  EXPECT_NE(d.message.find("41943040 bytes, past the 64 MiB"), std::string::npos) << d.str();
}

TEST(LlvmFileGuard, AFileThatIncludesItselfStopsAt1000) {
  if (!guarded()) GTEST_SKIP() << "LLVM " << llvm_version() << " reads .include/.incbin files itself (needs 22)";
  testing::TempDir dir;
  const std::string self = (dir.path / "self.s").string();
  { std::ofstream(self) << ".byte 1\n.include \"" << self << "\"\n"; }
  const Diagnostic d = refusal(kHead + ".include \"" + self + "\"\n");
  EXPECT_EQ(d.file, self) << d.str(); // the diagnostic names the included file it is in
  EXPECT_EQ(d.line, 2) << d.str();
  EXPECT_EQ(d.message, "isatune does not read '" + self + "': more than 1000 files included in one object");
}

TEST(LlvmFileGuard, SmallFilesMakeWhatLlvmMakes) {
  testing::TempDir dir;
  const std::string bin = (dir.path / "b.bin").string(), inc = (dir.path / "i.s").string();
  { std::ofstream(bin, std::ios::binary) << "0123456789"; }
  { std::ofstream(inc) << ".byte 0xab, 0xcd\n"; }
  const std::string text = kHead + "begin:\n.incbin \"" + bin + "\", 2, 3\n.include \"" + inc + "\"\n.incbin \"" +
                           bin + "\",,2\nend:\n.long end - begin\n";
  const std::vector<uint8_t> object = llvm_assemble_object(text, {"gfx942", "f.s"});
  const std::vector<uint8_t> want = {'2', '3', '4', 0xab, 0xcd, '0', '1', 7, 0, 0, 0};
  EXPECT_NE(std::search(object.begin(), object.end(), want.begin(), want.end()), object.end())
      << "the .data bytes are not in the object";
  // A file that is not there is still LLVM's own error.
  const Diagnostic d = refusal(kHead + ".incbin \"" + (dir.path / "absent").string() + "\"\n");
  EXPECT_NE(d.message.find("Could not find incbin file"), std::string::npos) << d.str();
}

} // namespace
} // namespace isatune::toolchain
