#pragma once
// ptxas as the oracle of which PTX is valid: the hand-written sm_90a kernels of the async tests must
// assemble. Without ptxas the check prints why and the test goes on (its emulator assertions still run).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace emu_ptx_test {

inline void expect_ptxas_accepts(const std::string& ptx, const char* arch = "sm_90a") {
  const char* env = std::getenv("PTXAS");
  const std::string ptxas = env ? env : "/usr/local/cuda/bin/ptxas";
  if (::access(ptxas.c_str(), X_OK) != 0) {
    std::printf("[ ptxas ] %s not found: the kernel's validity is not checked by ptxas here\n",
                ptxas.c_str());
    return;
  }
  char dir[] = "/tmp/isatune_ptxas_XXXXXX";
  if (!::mkdtemp(dir)) {
    std::printf("[ ptxas ] no temporary folder: not checked\n");
    return;
  }
  const std::string file = std::string(dir) + "/k.ptx", log = std::string(dir) + "/log";
  std::ofstream(file) << ptx;
  const std::string cmd = ptxas + " -arch=" + arch + " " + file + " -o /dev/null > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream msg;
  msg << std::ifstream(log).rdbuf();
  EXPECT_EQ(rc, 0) << "ptxas rejects the kernel:\n" << msg.str() << "\n" << ptx;
  std::remove(file.c_str());
  std::remove(log.c_str());
  ::rmdir(dir);
}

} // namespace emu_ptx_test
