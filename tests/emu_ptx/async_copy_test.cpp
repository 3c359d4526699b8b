// cp.async: sizes, zero fill and ragged src-size, ignore-src, per-thread groups and wait_group N, the
// async_pending check (data used before the issuing thread's wait lands it: a report and the old data),
// bar.sync completing nothing, copies never waited, and the forms ptxas accepts.
#include <algorithm>

#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

long line_of(const std::string& s, const std::string& what) {
  size_t at = s.find(what);
  EXPECT_NE(at, std::string::npos) << what;
  return std::count(s.begin(), s.begin() + long(at), '\n') + 1;
}

// Thread t copies from src + 16t into shared sm + 16t with `copy` (operands %dst, %src, %n = n[t], %ign =
// n[t] odd, %pol), waits, and stores the `size` bytes of its slot to out + 16t.
std::string size_kernel(const std::string& copy, unsigned size) {
  std::string s = header("sm_80");
  s += ".visible .entry cpk(.param .u64 psrc, .param .u64 pn, .param .u64 pout)\n{\n";
  s += "  .reg .b32 %t, %n, %dst, %v;\n  .reg .b64 %src, %pn, %out, %x, %pol;\n  .reg .pred %ign;\n";
  s += "  .shared .align 16 .b8 sm[2048];\n";
  s += "  mov.u32 %t, %tid.x;\n  ld.param.u64 %src, [psrc];\n  ld.param.u64 %pn, [pn];\n  ld.param.u64 %out, "
       "[pout];\n";
  s += "  mul.wide.u32 %x, %t, 16;\n  add.s64 %src, %src, %x;\n  add.s64 %out, %out, %x;\n";
  s += "  mul.wide.u32 %x, %t, 4;\n  add.s64 %x, %pn, %x;\n  ld.global.b32 %n, [%x];\n";
  s += "  and.b32 %v, %n, 1;\n  setp.ne.u32 %ign, %v, 0;\n  mov.b64 %pol, 0;\n";
  s += "  mov.u32 %dst, sm;\n  shl.b32 %v, %t, 4;\n  add.u32 %dst, %dst, %v;\n";
  s += "  " + copy + "\n  cp.async.commit_group;\n  cp.async.wait_group 0;\n";
  for (unsigned i = 0; i < size / 4; ++i)
    s += "  ld.shared.b32 %v, [%dst+" + std::to_string(4 * i) + "];\n  st.global.b32 [%out+" +
         std::to_string(4 * i) + "], %v;\n";
  s += "  ret;\n}\n";
  return s;
}

TEST(EmuPtxAsyncCopy, SizesZeroFillAndRaggedSrcSize) {
  struct Form {
    std::string copy;
    unsigned size;
    int src; // 0: full, 1: src-size %n, 2: ignore-src %ign
  };
  std::vector<Form> forms;
  for (unsigned size : {4u, 8u, 16u}) {
    const std::string z = std::to_string(size);
    forms.push_back({"cp.async.ca.shared.global [%dst], [%src], " + z + ";", size, 0});
    forms.push_back({"cp.async.ca.shared::cta.global [%dst], [%src], " + z + ", %n;", size, 1});
    forms.push_back(
        {"cp.async.ca.shared.global.L2::cache_hint [%dst], [%src], " + z + ", %ign, %pol;", size, 2});
  }
  forms.push_back({"cp.async.cg.shared.global.L2::128B [%dst], [%src], 16, %n;", 16, 1});
  forms.push_back({"cp.async.cg.shared.global.L2::cache_hint.L2::256B [%dst], [%src], 16, %n, %pol;", 16, 1});
  forms.push_back({"cp.async.cg.shared.global [%dst], [%src], 16, %ign;", 16, 2});
  for (const Form& f : forms) {
    SCOPED_TRACE(f.copy);
    Runner r;
    r.load(size_kernel(f.copy, f.size));
    const uint32_t T = 33 + rand_u32() % 95;
    auto src = random_vec<uint8_t>(16 * T, [] { return 1 + rand_u32() % 255; });
    auto n = random_vec<uint32_t>(T, [&] { return rand_u32() % (f.size + 1); });
    uint64_t ps = r.upload(src), pn = r.upload(n), po = r.upload(std::vector<uint8_t>(16 * T, 0xee));
    r.launch("cpk", {1, 1, 1}, {T, 1, 1}, Runner::Args().add(ps).add(pn).add(po));
    auto out = r.download<uint8_t>(po, 16 * T);
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
    for (uint32_t t = 0; t < T; ++t) {
      const uint32_t copied = f.src == 0 ? f.size : f.src == 1 ? n[t] : (n[t] & 1) ? 0 : f.size;
      for (uint32_t j = 0; j < f.size; ++j)
        ASSERT_EQ(out[16 * t + j], j < copied ? src[16 * t + j] : 0) << "thread " << t << " byte " << j;
    }
  }
}

// src-size above cp-size is undefined behaviour: reported (naming the thread), cp-size bytes copied.
TEST(EmuPtxAsyncCopy, SrcSizeAboveCpSizeIsReported) {
  Runner r;
  r.load(size_kernel("cp.async.cg.shared.global [%dst], [%src], 16, %n;", 16));
  const uint32_t T = 33 + rand_u32() % 95, bad = rand_u32() % T;
  auto src = random_vec<uint8_t>(16 * T, [] { return 1 + rand_u32() % 255; });
  std::vector<uint32_t> n(T, 16);
  n[bad] = 17 + rand_u32() % 100;
  uint64_t ps = r.upload(src), pn = r.upload(n), po = r.upload(std::vector<uint8_t>(16 * T));
  r.launch("cpk", {1, 1, 1}, {T, 1, 1}, Runner::Args().add(ps).add(pn).add(po));
  const HazardReport* h = r.find(HazardKind::out_of_bounds);
  ASSERT_NE(h, nullptr) << r.all_reports();
  EXPECT_EQ(h->thread[0], bad) << h->str();
  EXPECT_NE(h->message.find("exceeds cp-size"), std::string::npos) << h->str();
  EXPECT_EQ(r.download<uint8_t>(po, 16 * T), src);
}

// Thread t has three 16-byte slots, holding a sentinel; it copies src slot k into slot k: k = 0 and 1 in
// two committed groups, k = 2 uncommitted. `steps` follow (waits and reads "R<k>", each read storing the
// slot to out).
std::string group_kernel(const std::vector<std::string>& steps) {
  std::string s = header("sm_80");
  s += ".visible .entry grp(.param .u64 psrc, .param .u64 pout)\n{\n";
  s += "  .reg .b32 %t, %dst, %v<4>;\n  .reg .b64 %src, %out, %x;\n";
  s += "  .shared .align 16 .b8 sm[6144];\n";
  s += "  mov.u32 %t, %tid.x;\n  ld.param.u64 %src, [psrc];\n  ld.param.u64 %out, [pout];\n";
  s += "  mul.wide.u32 %x, %t, 48;\n  add.s64 %src, %src, %x;\n  add.s64 %out, %out, %x;\n";
  s += "  mov.u32 %dst, sm;\n  mul.lo.u32 %v0, %t, 48;\n  add.u32 %dst, %dst, %v0;\n";
  s += "  mov.b32 %v0, 0x5e5e5e5e;\n";
  for (int k = 0; k < 3; ++k)
    s += "  st.shared.v4.b32 [%dst+" + std::to_string(16 * k) + "], {%v0, %v0, %v0, %v0};\n";
  s += "  cp.async.cg.shared.global [%dst+0], [%src+0], 16;\n  cp.async.commit_group;\n";
  s += "  cp.async.cg.shared.global [%dst+16], [%src+16], 16;\n  cp.async.commit_group;\n";
  s += "  cp.async.cg.shared.global [%dst+32], [%src+32], 16;\n";
  for (const std::string& st : steps) {
    if (st[0] == 'R') {
      const std::string k = std::to_string(16 * (st[1] - '0'));
      s += "  ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%dst+" + k + "];\n";
      s += "  st.global.v4.b32 [%out+" + k + "], {%v0, %v1, %v2, %v3};\n";
    } else {
      s += "  " + st + "\n";
    }
  }
  s += "  ret;\n}\n";
  return s;
}

struct GroupRun {
  std::vector<uint8_t> src, out;
  std::vector<HazardReport> reports;
  std::string text;
};
GroupRun run_groups(const std::vector<std::string>& steps, eptx::Scheduler sched) {
  GroupRun g;
  g.text = group_kernel(steps);
  eptx::PtxEmuOptions o;
  o.scheduler = sched;
  Runner r(o);
  r.load(g.text);
  const uint32_t T = 40 + rand_u32() % 88;
  g.src = random_vec<uint8_t>(48 * T, [] { return rand_u32() % 256; });
  for (auto& b : g.src)
    b = b == 0x5e ? 0x5f : b; // never equal to the sentinel
  uint64_t ps = r.upload(g.src), po = r.upload(std::vector<uint8_t>(48 * T));
  r.launch("grp", {1, 1, 1}, {T, 1, 1}, Runner::Args().add(ps).add(po));
  g.out = r.download<uint8_t>(po, 48 * T);
  g.reports = r.reports();
  return g;
}
// Slot k of every thread holds the copied data (true) or the sentinel (false).
void expect_slot(const GroupRun& g, int k, bool landed) {
  for (size_t t = 0; t < g.out.size() / 48; ++t)
    for (int j = 0; j < 16; ++j) {
      const size_t i = 48 * t + 16 * size_t(k) + size_t(j);
      ASSERT_EQ(g.out[i], landed ? g.src[i] : 0x5e) << "slot " << k << " thread " << t << " byte " << j;
    }
}
const HazardReport* pending_at(const GroupRun& g, long line) {
  for (auto& h : g.reports)
    if (h.kind == HazardKind::async_pending && long(h.line) == line)
      return &h;
  return nullptr;
}

TEST(EmuPtxAsyncCopy, GroupsAndWaitGroupN) {
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    // Correct: each slot read after the wait that retires its copy.
    GroupRun ok = run_groups(
        {"cp.async.wait_group 1;", "R0", "cp.async.wait_group 0;", "R1", "cp.async.wait_all;", "R2"}, sched);
    EXPECT_TRUE(ok.reports.empty()) << ok.reports.front().str();
    for (int k = 0; k < 3; ++k)
      expect_slot(ok, k, true);

    // wait_group 2 leaves both committed groups pending; wait_group 1 only the most recent; wait_group 0
    // waits for committed groups only, not for the uncommitted copy.
    struct Mutant {
      std::vector<std::string> steps;
      int early;           // slot read too early
      const char* reading; // its read
    };
    for (const Mutant& m :
         {Mutant{{"cp.async.wait_group 2;", "R0", "cp.async.wait_all;", "R1", "R2"}, 0, "[%dst+0]"},
          Mutant{{"cp.async.wait_group 1;", "R0", "R1", "cp.async.wait_all;", "R2"}, 1, "[%dst+16]"},
          Mutant{{"cp.async.wait_group 0;", "R0", "R1", "R2", "cp.async.wait_all;"}, 2, "[%dst+32]"}}) {
      GroupRun g = run_groups(m.steps, sched);
      const long read = line_of(g.text, "ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, " + std::string(m.reading));
      const long copy = line_of(g.text, "cp.async.cg.shared.global " + std::string(m.reading) + ", [%src+" +
                                            std::to_string(16 * m.early) + "]");
      const HazardReport* h = pending_at(g, read);
      ASSERT_NE(h, nullptr) << g.text;
      EXPECT_NE(h->message.find("line " + std::to_string(copy)), std::string::npos) << h->str();
      EXPECT_NE(h->disassembly.find("ld.shared"), std::string::npos) << h->str();
      for (int k = 0; k < 3; ++k)
        expect_slot(g, k, k != m.early); // the early read sees the old bytes: the data has not landed
    }
  }
}

// Copies pending when their thread exits land there, reported as never waited (at the cp.async's line).
TEST(EmuPtxAsyncCopy, NeverWaitedIsReportedAtExit) {
  GroupRun g = run_groups({"cp.async.wait_group 1;", "R0"}, eptx::Scheduler::lockstep);
  const long second = line_of(g.text, "cp.async.cg.shared.global [%dst+16]");
  const HazardReport* h = pending_at(g, second);
  ASSERT_NE(h, nullptr);
  EXPECT_NE(h->message.find("never waited"), std::string::npos) << h->str();
  expect_slot(g, 0, true);
}

// Thread t copies into its slot; after a barrier, it reads the slot of thread t ^ 32 (the other warp).
std::string barrier_kernel(bool wait, bool barrier) {
  std::string s = header("sm_80");
  s += ".visible .entry bk(.param .u64 psrc, .param .u64 pout)\n{\n";
  s += "  .reg .b32 %t, %u, %dst, %odst, %v<4>;\n  .reg .b64 %src, %out, %x;\n";
  s += "  .shared .align 16 .b8 sm[1024];\n";
  s += "  mov.u32 %t, %tid.x;\n  xor.b32 %u, %t, 32;\n  ld.param.u64 %src, [psrc];\n  ld.param.u64 %out, "
       "[pout];\n";
  s += "  mul.wide.u32 %x, %t, 16;\n  add.s64 %src, %src, %x;\n  add.s64 %out, %out, %x;\n";
  s += "  mov.u32 %dst, sm;\n  shl.b32 %v0, %t, 4;\n  add.u32 %dst, %dst, %v0;\n";
  s += "  mov.u32 %odst, sm;\n  shl.b32 %v0, %u, 4;\n  add.u32 %odst, %odst, %v0;\n";
  s += "  mov.b32 %v0, 0x5e5e5e5e;\n  st.shared.v4.b32 [%dst], {%v0, %v0, %v0, %v0};\n  bar.sync 0;\n";
  s += "  cp.async.cg.shared.global [%dst+0], [%src+0], 16;\n  cp.async.commit_group;\n";
  if (wait)
    s += "  cp.async.wait_group 0;\n";
  if (barrier)
    s += "  bar.sync 0;\n";
  s +=
      "  ld.shared.v4.b32 {%v0, %v1, %v2, %v3}, [%odst];\n  st.global.v4.b32 [%out], {%v0, %v1, %v2, %v3};\n";
  s += "  cp.async.wait_all;\n  ret;\n}\n";
  return s;
}

TEST(EmuPtxAsyncCopy, BarrierCompletesNothingAndOtherThreadsNeedOne) {
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    auto run = [&](bool wait, bool barrier, std::vector<uint8_t>& src, std::vector<uint8_t>& out) {
      eptx::PtxEmuOptions o;
      o.scheduler = sched;
      Runner r(o);
      r.load(barrier_kernel(wait, barrier));
      src = random_vec<uint8_t>(64 * 16, [] { return 0x60 + rand_u32() % 128; });
      uint64_t ps = r.upload(src), po = r.upload(std::vector<uint8_t>(64 * 16));
      r.launch("bk", {1, 1, 1}, {64, 1, 1}, Runner::Args().add(ps).add(po));
      out = r.download<uint8_t>(po, 64 * 16);
      return r.reports();
    };
    std::vector<uint8_t> src, out;
    auto rep = run(true, true, src, out); // wait, then the barrier: correct
    EXPECT_TRUE(rep.empty()) << rep.front().str();
    for (uint32_t t = 0; t < 64; ++t)
      for (int j = 0; j < 16; ++j)
        ASSERT_EQ(out[16 * t + j], src[16 * (t ^ 32) + j]);
    rep = run(false, true, src, out); // the barrier alone does not land the copies
    auto has = [&](HazardKind k) {
      return std::any_of(rep.begin(), rep.end(), [&](auto& h) { return h.kind == k; });
    };
    EXPECT_TRUE(has(HazardKind::async_pending));
    // The threads that read before the other warp's wait_all see the old bytes (one warp at least).
    EXPECT_GE(std::count(out.begin(), out.end(), uint8_t(0x5e)), 32 * 16);
    rep = run(true, false, src, out); // waited, but no barrier before another thread reads
    EXPECT_TRUE(has(HazardKind::race)) << (rep.empty() ? "no reports" : rep.front().str());
  }
}

TEST(EmuPtxAsyncCopy, FormsAcceptedAndRejectedAtLoad) {
  // Every form here assembles with ptxas -arch=sm_80.
  std::string ok = header("sm_80") + ".visible .entry k(.param .u64 p)\n{\n  .reg .b64 %rd<4>;\n  .reg .b32 "
                                     "%r<4>;\n  .reg .pred %p<2>;\n  .shared .align 16 .b8 s[256];\n";
  ok += "  ld.param.u64 %rd1, [p];\n  mov.u32 %r1, s;\n";
  ok +=
      "  cp.async.ca.shared.global [%r1], [%rd1], 4;\n  cp.async.ca.shared.global [%r1+16], [%rd1], 8, 3;\n";
  ok += "  cp.async.ca.shared::cta.global [%r1+32], [%rd1], 16, %r2;\n  cp.async.cg.shared.global.L2::128B "
        "[%r1+48], [%rd1], 16;\n";
  ok += "  cp.async.ca.shared.global.L2::256B [%r1+64], [%rd1], 16, %p1;\n  "
        "cp.async.cg.shared.global.L2::cache_hint [%r1+80], [%rd1], 16, %rd2;\n";
  ok += "  cp.async.cg.shared.global.L2::cache_hint [%r1+96], [%rd1], 16, 8, %rd2;\n  "
        "cp.async.ca.shared.global.L2::cache_hint.L2::64B [%r1+112], [%rd1], 4, %p1, %rd2;\n";
  ok += "  cp.async.cg.shared.global [s+128], [%rd1], 16;\n  cp.async.commit_group;\n  cp.async.wait_group "
        "1;\n  cp.async.wait_all;\n  ret;\n}\n";
  {
    Runner r;
    r.load(ok);
    uint64_t p = r.upload(random_vec<uint8_t>(16, [] { return rand_u32(); }));
    r.launch("k", {1, 1, 1}, {32, 1, 1}, Runner::Args().add(p));
    // Every lane copies to the same bytes: the overlapping copies are reported, nothing else.
    for (auto& h : r.reports())
      EXPECT_TRUE(h.kind == HazardKind::async_pending || h.kind == HazardKind::race) << h.str();
  }
  struct Bad {
    const char* op;
    const char* says;
  };
  for (Bad b :
       {Bad{"cp.async.cg.shared.global [%r1], [%rd1], 8;", "16 bytes only"},
        Bad{"cp.async.ca.shared.global [%r1], [%rd1], 12;", "4, 8 or 16"},
        Bad{"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r1], 16;",
            "not supported yet"}}) {
    std::string s = header("sm_90a") + ".visible .entry k()\n{\n  .reg .b64 %rd<4>;\n  .reg .b32 %r<4>;\n  " +
                    b.op + "\n  ret;\n}\n";
    Runner r;
    try {
      r.load(s);
      FAIL() << b.op << " loaded";
    } catch (const isatune::emu::EmulationError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("test.ptx:" + std::to_string(line_of(s, b.op)) + ":"), std::string::npos) << what;
      EXPECT_NE(what.find(b.says), std::string::npos) << what;
    }
  }
}

} // namespace
