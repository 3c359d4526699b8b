#pragma once
// Helpers for the PTX emulator tests: a device, PTX text loaded as a module, buffers, launches, and random
// inputs (fresh per run, ragged sizes, never zero).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isatune/emu/ptx/device.h"
#include "isatune/loader/device.h"

namespace emu_ptx_test {

using isatune::emu::HazardKind;
using isatune::emu::HazardReport;
namespace eptx = isatune::emu::ptx;

inline std::mt19937_64& rng() {
  static std::mt19937_64 g{std::random_device{}()};
  return g;
}
inline uint32_t rand_u32() {
  return uint32_t(rng()());
}
inline uint64_t rand_u64() {
  return rng()();
}
// Nonzero in [lo, hi].
inline int64_t rand_int(int64_t lo, int64_t hi) {
  for (;;) {
    int64_t v = std::uniform_int_distribution<int64_t>(lo, hi)(rng());
    if (v)
      return v;
  }
}
inline float rand_float(float lo = -4, float hi = 4) {
  for (;;) {
    float v = std::uniform_real_distribution<float>(lo, hi)(rng());
    if (v != 0)
      return v;
  }
}

// The PTX module prologue for a target.
inline std::string header(const char* target = "sm_90a") {
  return std::string(".version 8.0\n.target ") + target + "\n.address_size 64\n";
}

class Runner {
public:
  explicit Runner(eptx::PtxEmuOptions o = {}) : dev(eptx::make_ptx_emu_device(o)) {}

  void load(const std::string& ptx) {
    code = eptx::ptx_code_object(ptx, "", "test.ptx");
    module = dev->load(code);
  }
  template <class T> uint64_t upload(const std::vector<T>& v) {
    uint64_t p = dev->alloc(std::max<size_t>(v.size() * sizeof(T), 1));
    if (!v.empty())
      dev->copy_to_device(p, v.data(), v.size() * sizeof(T));
    return p;
  }
  template <class T> std::vector<T> download(uint64_t p, size_t n) {
    std::vector<T> v(n);
    if (n)
      dev->copy_to_host(v.data(), p, n * sizeof(T));
    return v;
  }
  // Arguments packed in order, each at its natural alignment.
  struct Args {
    std::vector<uint8_t> bytes;
    template <class T> Args& add(T v) {
      size_t a = alignof(T);
      bytes.resize((bytes.size() + a - 1) / a * a);
      size_t o = bytes.size();
      bytes.resize(o + sizeof(T));
      std::memcpy(bytes.data() + o, &v, sizeof(T));
      return *this;
    }
  };
  void launch(const std::string& kernel, isatune::loader::Dim3 grid, isatune::loader::Dim3 block,
              const Args& args, uint32_t dynamic_shared = 0, isatune::loader::Dim3 cluster = {}) {
    auto f = module->function(kernel);
    isatune::loader::LaunchConfig c;
    c.grid = grid, c.block = block, c.dynamic_shared_bytes = dynamic_shared, c.cluster = cluster;
    dev->launch(*f, c, args.bytes);
  }
  std::vector<HazardReport> reports() { return dev->reports(); }
  bool has(HazardKind k) {
    for (auto& r : dev->reports())
      if (r.kind == k)
        return true;
    return false;
  }
  const HazardReport* find(HazardKind k) {
    static HazardReport last;
    for (auto& r : dev->reports())
      if (r.kind == k)
        return &(last = r);
    return nullptr;
  }
  std::string all_reports() {
    std::string s;
    for (auto& r : dev->reports())
      s += r.str() + "\n";
    return s;
  }

  std::unique_ptr<eptx::PtxEmuDevice> dev;
  isatune::CodeObject code;
  std::shared_ptr<isatune::loader::Module> module;
};

} // namespace emu_ptx_test

namespace emu_ptx_test {

// An elementwise kernel: thread i loads a[i], b[i], c[i] (in_bits wide each, into %a %b %c), runs `body`, and
// stores %d (out_bits wide) to d[i]. Scratch registers: %p %q (pred), %t %u (b32), %x %y (b64), %h %k (b16).
inline std::string ew_kernel(unsigned in_bits, unsigned out_bits, const std::string& body,
                             const char* target = "sm_90a") {
  auto b = [](unsigned bits) { return std::to_string(bits < 16 ? 16 : bits); };
  std::string s = header(target);
  s += ".visible .entry ew(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u32 "
       "n)\n{\n";
  s += "  .reg .pred %p, %q, %done;\n  .reg .b32 %i, %n, %t, %u;\n  .reg .b64 %off, %ra, %rb, %rc, %rd, %x, "
       "%y;\n";
  s += "  .reg .b16 %h, %k;\n";
  s += "  .reg .b" + b(in_bits) + " %a, %b, %c;\n  .reg .b" + b(out_bits) + " %d;\n";
  s += "  mov.u32 %i, %ctaid.x;\n  mov.u32 %t, %ntid.x;\n  mov.u32 %u, %tid.x;\n  mad.lo.u32 %i, %i, %t, "
       "%u;\n";
  s += "  ld.param.u32 %n, [n];\n  setp.ge.u32 %done, %i, %n;\n  @%done bra END;\n";
  s += "  ld.param.u64 %ra, [pa];\n  ld.param.u64 %rb, [pb];\n  ld.param.u64 %rc, [pc];\n  ld.param.u64 %rd, "
       "[pd];\n";
  s += "  mul.wide.u32 %off, %i, " + std::to_string(in_bits / 8) + ";\n";
  s += "  add.s64 %ra, %ra, %off;\n  add.s64 %rb, %rb, %off;\n  add.s64 %rc, %rc, %off;\n";
  s += "  ld.global.b" + std::to_string(in_bits) + " %a, [%ra];\n  ld.global.b" + std::to_string(in_bits) +
       " %b, [%rb];\n  ld.global.b" + std::to_string(in_bits) + " %c, [%rc];\n";
  s += body + "\n";
  s += "  mul.wide.u32 %off, %i, " + std::to_string(out_bits / 8) + ";\n  add.s64 %rd, %rd, %off;\n";
  s += "  st.global.b" + std::to_string(out_bits) + " [%rd], %d;\nEND:\n  ret;\n}\n";
  return s;
}

// Runs ew_kernel over the inputs (sizes equal); returns d.
template <class TIn, class TOut>
std::vector<TOut> run_ew(const std::string& body, const std::vector<TIn>& a, const std::vector<TIn>& b,
                         const std::vector<TIn>& c, eptx::PtxEmuOptions o = {}) {
  Runner r(o);
  r.load(ew_kernel(sizeof(TIn) * 8, sizeof(TOut) * 8, body, o.target.c_str()));
  const uint32_t n = uint32_t(a.size());
  uint64_t pa = r.upload(a), pb = r.upload(b), pc = r.upload(c), pd = r.upload(std::vector<TOut>(n));
  const uint32_t block = 96;
  r.launch("ew", {(n + block - 1) / block, 1, 1}, {block, 1, 1},
           Runner::Args().add(pa).add(pb).add(pc).add(pd).add(n));
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  return r.download<TOut>(pd, n);
}

// A ragged size: between lo and hi, not a multiple of 32.
inline uint32_t ragged(uint32_t lo = 300, uint32_t hi = 900) {
  for (;;) {
    uint32_t n = lo + rand_u32() % (hi - lo);
    if (n % 32)
      return n;
  }
}

template <class T, class G> std::vector<T> random_vec(size_t n, G gen) {
  std::vector<T> v(n);
  for (auto& x : v)
    x = T(gen());
  return v;
}

} // namespace emu_ptx_test
