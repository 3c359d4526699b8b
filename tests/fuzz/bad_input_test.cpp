// The bad-input table of docs/reliability.md: every reader of untrusted input (code objects, AMD assembly, PTX,
// tuning databases, db merge and import, Kernel Tuner / T4 / KTT files, `isatune run --arg`) on each kind of
// bad input (truncated, corrupt, wrong version, wrong target, huge, empty, adversarial sizes). Each case must
// end in an isatune::Error whose text says what is wrong (checked by a substring), and a failed merge or import
// must leave the target database exactly as it was (every row of every table compared before and after).
// ISATUNE_PRINT_BAD_INPUT_TABLE=1 prints the table's rows (reader, kind, error text, test) as Markdown.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "isatune/codeobj/reader.h"
#include "isatune/db/database.h"
#include "isatune/emu/ptx/device.h"
#include "isatune/error.h"
#include "isatune/ptx/parser.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/llvm_mc.h"
#include "isatune/tune/replay.h"
#include "run_args.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using isatune::db::Database;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string vector_add_source() { return read_text(std::string(ISATUNE_FIXTURES_DIR) + "/vector_add.s"); }

const std::vector<uint8_t>& vector_add_hsaco() {
  static const std::vector<uint8_t> bytes = [] {
    isatune::toolchain::AssembleOptions o;
    o.target = "gfx942";
    return isatune::toolchain::make_assembler("llvm")->assemble(vector_add_source(), o).code.bytes;
  }();
  return bytes;
}

// The message of the isatune::Error `f` throws; "" when it returns. Other exceptions fail the test.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const isatune::Error& e) {
    return e.what();
  }
  return "";
}

// Every row of every table as text, for before/after comparisons.
std::map<std::string, std::multiset<std::string>> snapshot(Database& db) {
  std::map<std::string, std::multiset<std::string>> out;
  for (const auto& t : db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")) {
    const std::string name = std::get<std::string>(t[0]);
    for (const auto& r : db.query("SELECT * FROM \"" + name + "\"")) {
      std::string line;
      for (const auto& v : r) {
        if (const auto* s = std::get_if<std::string>(&v)) line += *s;
        else if (const auto* i = std::get_if<int64_t>(&v)) line += std::to_string(*i);
        else if (const auto* d = std::get_if<double>(&v)) line += std::to_string(*d);
        line += '|';
      }
      out[name].insert(line);
    }
  }
  return out;
}

struct Case {
  std::string reader, kind;
  std::function<std::string(const std::string& dir)> run; // the error text
  std::string expect;                                      // a substring of it
};

// A valid source database and its bytes; a target database with measurements of its own.
struct Dbs {
  std::string dir, target, source;
  std::string source_bytes;
};

Dbs make_dbs(const std::string& dir) {
  Dbs d{dir, dir + "/target.db", dir + "/source.db", ""};
  {
    auto t = Database::open(d.target);
    testutil::populate(t, {256, 4096}, 2);
  }
  {
    auto s = Database::open(d.source);
    testutil::populate(s, {512}, 2, true, 120);
    s.query("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  d.source_bytes = read_text(d.source);
  return d;
}

// Merges `foreign` into the target; the target must be unchanged when the merge fails.
std::string merge_keeps_target(const Dbs& d, const std::string& foreign) {
  auto t = Database::open(d.target);
  const auto before = snapshot(t);
  std::string e = error_of([&] { t.merge_from(foreign); });
  EXPECT_EQ(snapshot(t), before) << "a failed merge changed the target: " << e;
  EXPECT_EQ(t.merge_from(d.source), 2u) << "the target no longer takes a valid merge";
  return e;
}

std::string import_keeps_target(const Dbs& d, const std::string& export_dir) {
  auto t = Database::open(d.target);
  const auto before = snapshot(t);
  std::string e = error_of([&] { t.import_from(export_dir); });
  EXPECT_EQ(snapshot(t), before) << "a failed import changed the target: " << e;
  return e;
}

std::string export_of(const Dbs& d, const std::string& name) {
  std::string out = d.dir + "/" + name;
  fs::remove_all(out);
  Database::open(d.source).export_to(out);
  return out;
}

std::string code_object_error(std::vector<uint8_t> bytes) {
  return error_of([&] { (void)isatune::codeobj::read_code_object(bytes, "k.hsaco"); });
}

std::string assemble_error(const std::string& text, const std::string& target = "gfx942") {
  isatune::toolchain::AssembleOptions o;
  o.target = target;
  o.file_name = "k.s";
  return error_of([&] { (void)isatune::toolchain::make_assembler("llvm")->assemble(text, o); });
}

std::string ptx_error(const std::string& text) {
  return error_of([&] { (void)isatune::ptx::parse(text, "k.ptx"); });
}

std::string replay_error(const std::string& text) {
  return error_of([&] { (void)isatune::tune::parse_replay_text(text, "cache.json"); });
}

std::string arg_error(const std::string& text) {
  std::mt19937_64 rng(1);
  return error_of([&] { (void)isatune::cli::parse_arg(0, text, rng); });
}

template <class T>
void poke(std::vector<uint8_t>& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

const char* kPtx = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry add_one(.param .u64 p)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.u32 %r1, [%rd2];
  add.s32 %r2, %r1, 1;
  st.global.u32 [%rd2], %r2;
  ret;
}
)";

std::vector<Case> cases() {
  std::vector<Case> c;
  // Code objects (isatune inspect, run, db record): codeobj::read_code_object.
  c.push_back({"code object", "empty", [](auto&) { return code_object_error({}); }, "k.hsaco"});
  c.push_back({"code object", "truncated", [](auto&) {
                 auto b = vector_add_hsaco();
                 b.resize(b.size() / 2);
                 return code_object_error(b);
               }, "k.hsaco"});
  c.push_back({"code object", "corrupt", [](auto&) {
                 auto b = vector_add_hsaco();
                 std::mt19937 r(7);
                 for (size_t i = 64; i < b.size(); i += 61) b[i] ^= uint8_t(r() | 1);
                 return code_object_error(b);
               }, "k.hsaco"});
  c.push_back({"code object", "wrong version", [](auto&) {
                 auto b = vector_add_hsaco();
                 b[8] = 0x7f; // EI_ABIVERSION: the code object version
                 return code_object_error(b);
               }, "is newer than this isatune reads"});
  c.push_back({"code object", "wrong target", [](auto&) {
                 auto b = vector_add_hsaco();
                 poke<uint16_t>(b, 18, 62); // e_machine x86-64
                 return code_object_error(b);
               }, "k.hsaco"});
  c.push_back({"code object", "huge", [](auto&) {
                 std::vector<uint8_t> b(64 << 20, 0x5a);
                 return code_object_error(b);
               }, "k.hsaco"});
  c.push_back({"code object", "adversarial sizes", [](auto&) {
                 auto b = vector_add_hsaco();
                 poke<uint64_t>(b, 0x28, ~uint64_t(0) - 16); // e_shoff
                 poke<uint16_t>(b, 0x3c, 0xffff);            // e_shnum
                 return code_object_error(b);
               }, "k.hsaco"});
  // AMD assembly text (isatune asm, the tuner's text path).
  c.push_back({"AMD assembly", "empty", [](auto&) { return assemble_error(""); },
               "accepted: a code object with no kernels (a launch then names the missing kernel)"});
  c.push_back({"AMD assembly", "truncated", [](auto&) {
                 std::string s = vector_add_source();
                 return assemble_error(s.substr(0, s.size() / 2));
               }, "k.s:"});
  c.push_back({"AMD assembly", "corrupt", [](auto&) {
                 std::string s = vector_add_source();
                 s.replace(s.find("v_add"), 5, "v_qux");
                 return assemble_error(s);
               }, "k.s:"});
  c.push_back({"AMD assembly", "corrupt (unterminated string)", [](auto&) {
                 // LLVM 22 never returned on this (llvm-mc too); found by fuzz_asm_text.
                 return assemble_error(vector_add_source() + "a/\"\n");
               }, "unterminated string constant"});
  c.push_back({"AMD assembly", "corrupt (NUL byte)", [](auto&) {
                 // LLVM 22 never returned on this (llvm-mc too); found by fuzz_asm_text.
                 std::string s = vector_add_source();
                 s.insert(s.find("s_endpgm"), std::string("\0\xff", 2));
                 return assemble_error(s);
               }, "a NUL byte in the text"});
  c.push_back({"AMD assembly", "wrong version", [](auto&) {
                 std::string s = vector_add_source();
                 s.replace(s.find(".amdhsa_code_object_version 5"), 29, ".amdhsa_code_object_version 99");
                 return assemble_error(s);
               }, "k.s:"});
  c.push_back({"AMD assembly", "wrong target", [](auto&) { return assemble_error(vector_add_source(), "gfx90a"); },
               "gfx"});
  c.push_back({"AMD assembly", "adversarial sizes", [](auto&) {
                 std::string s = vector_add_source();
                 auto at = s.find(".amdhsa_next_free_vgpr");
                 s.replace(at, s.find('\n', at) - at, ".amdhsa_next_free_vgpr 100000");
                 return assemble_error(s);
               }, "k.s:"});
  c.push_back({"AMD assembly", "corrupt (.size not a number)", [](auto&) {
                 // LLVM 22's ELF writer aborted the process on this; found by fuzz_asm_text.
                 std::string s = vector_add_source();
                 const auto at = s.find(".size ");
                 s.insert(s.find('\n', at), " & 0 + .Lvadd_end");
                 return assemble_error(s);
               }, "is not a number LLVM can write"});
  c.push_back({"AMD assembly", "huge (.org past 64 MiB)", [](auto&) {
                 // LLVM 22 writes every byte up to it (977 MB here, 22 s under ASan); found by fuzz_asm_text.
                 return assemble_error(vector_add_source() + ".=976976776\n");
               }, "isatune refuses offsets past 64 MiB"});
  c.push_back({"AMD assembly", "corrupt (an assignment that is no relocatable value)", [](auto&) {
                 // LLVM 22's ELF writer aborted the process on this (llvm-mc too); found by fuzz_asm_text.
                 return assemble_error(vector_add_source() + "e=rG!Lxgf2-H\n");
               }, "is not one LLVM can write to the symbol table"});
  c.push_back({"AMD assembly", "corrupt (a high byte after a .amdgpu_metadata: label)", [](auto&) {
                 // LLVM 22 never returned on this (llvm-mc too); found by fuzz_asm_text.
                 return assemble_error(vector_add_source() + ".amdgpu_metadata:\n\"\"\"\"\"\"\x8b\n");
               }, "a 0x8b byte outside a comment or string"});
  c.push_back({"AMD assembly", "huge (.p2align -8)", [](auto&) {
                 // LLVM 22 takes it as a huge alignment and writes a 4 GiB object; found by fuzz_asm_text.
                 std::string s = vector_add_source();
                 s.insert(s.find("  s_endpgm"), ".p2align -8\n");
                 return assemble_error(s);
               }, "isatune refuses alignments past 1 MiB"});
  // LLVM 19 reads included files itself, unbounded (llvm_file_guard.cpp needs LLVM 22's file system hook).
  if (std::stoi(isatune::toolchain::llvm_version()) >= 22)
    c.push_back({"AMD assembly", "huge (.incbin of /dev/zero)", [](auto&) {
                   return assemble_error(vector_add_source() + ".data\n.incbin \"/dev/zero\"\n");
                 }, "isatune does not read '/dev/zero': not a regular file"});
  // PTX (the PTX emulator's parser: isatune run, the PTX tuner).
  c.push_back({"PTX", "empty", [](auto&) {
                 return error_of([&] {
                   auto dev = isatune::emu::ptx::make_ptx_emu_device({.target = "sm_80"});
                   auto code = isatune::emu::ptx::ptx_code_object("", "", "k.ptx");
                   dev->load(code)->function("add_one");
                 });
               }, "k.ptx:1:1"});
  c.push_back({"PTX", "wrong target", [](auto&) {
                 std::string s = kPtx;
                 s.replace(s.find("sm_80"), 5, "sm_90a");
                 return error_of([&] {
                   auto dev = isatune::emu::ptx::make_ptx_emu_device({.target = "sm_80"});
                   dev->load(isatune::emu::ptx::ptx_code_object(s, "", "k.ptx"));
                 });
               }, "sm_90a"});
  c.push_back({"PTX", "truncated", [](auto&) { return ptx_error(std::string(kPtx).substr(0, 200)); }, "k.ptx:"});
  c.push_back({"PTX", "corrupt", [](auto&) {
                 // The parser leaves qualifiers to its consumer (parser.h): the emulator refuses the entry.
                 std::string s = kPtx;
                 s.replace(s.find("add.s32"), 7, "add.q99");
                 return error_of([&] {
                   auto dev = isatune::emu::ptx::make_ptx_emu_device({.target = "sm_80"});
                   dev->load(isatune::emu::ptx::ptx_code_object(s, "", "k.ptx"));
                 });
               }, "k.ptx:"});
  c.push_back({"PTX", "wrong version", [](auto&) {
                 std::string s = kPtx;
                 s.replace(s.find("8.0"), 3, "99.0");
                 return ptx_error(s);
               }, "k.ptx:"});
  c.push_back({"PTX", "adversarial sizes", [](auto&) {
                 std::string s = kPtx;
                 s.replace(s.find("%r<3>"), 5, "%r<4294967296>"); // past 2^32-1, which ptxas refuses too
                 return ptx_error(s);
               }, "k.ptx:"});
  // Tuning databases (every isatune db command opens them): Database::open.
  c.push_back({"database open", "empty", [](const std::string& dir) {
                 write_file(dir + "/e.db", "");
                 return error_of([&] { Database::open(dir + "/e.db", {.read_only = true}); });
               }, "e.db"});
  c.push_back({"database open", "not a database", [](const std::string& dir) {
                 write_file(dir + "/t.db", "{\"this is\": \"json\"}\n");
                 return error_of([&] { Database::open(dir + "/t.db"); });
               }, "t.db"});
  // db merge of foreign files into a database with measurements: nothing in the target changes on failure.
  c.push_back({"db merge", "empty", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 write_file(dir + "/f.db", "");
                 return merge_keeps_target(d, dir + "/f.db");
               }, "f.db"});
  c.push_back({"db merge", "truncated", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 write_file(dir + "/f.db", d.source_bytes.substr(0, d.source_bytes.size() / 2));
                 return merge_keeps_target(d, dir + "/f.db");
               }, "f.db"});
  c.push_back({"db merge", "corrupt", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 std::string b = d.source_bytes;
                 for (size_t i = 4096; i < b.size(); i += 97) b[i] = char(b[i] ^ 0x5a);
                 write_file(dir + "/f.db", b);
                 return merge_keeps_target(d, dir + "/f.db");
               }, "f.db: "});
  c.push_back({"db merge", "wrong version", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 fs::copy_file(d.source, dir + "/f.db");
                 Database::open(dir + "/f.db").query("PRAGMA user_version = 99");
                 return merge_keeps_target(d, dir + "/f.db");
               }, "newer"});
  c.push_back({"db merge", "wrong target (not isatune)", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 // A partial copy, or another program's edit of an isatune file.
                 write_file(dir + "/f.db", d.source_bytes);
                 auto f = Database::open(dir + "/f.db");
                 f.query("DROP TABLE measurements");
                 return merge_keeps_target(d, dir + "/f.db");
               }, "f.db: not a complete isatune database (no table measurements)"});
  c.push_back({"db merge", "corrupt blob", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 fs::copy_file(d.source, dir + "/f.db");
                 Database::open(dir + "/f.db").query("UPDATE code_objects SET bytes = X'00'");
                 return merge_keeps_target(d, dir + "/f.db");
               }, "not merging"});
  // db import of an export folder.
  c.push_back({"db import", "empty", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 std::string e = export_of(d, "x");
                 write_file(e + "/manifest.json", "");
                 return import_keeps_target(d, e);
               }, "manifest.json"});
  c.push_back({"db import", "truncated", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 std::string e = export_of(d, "x");
                 std::string m = read_text(e + "/manifest.json");
                 write_file(e + "/manifest.json", m.substr(0, m.size() / 2));
                 return import_keeps_target(d, e);
               }, "manifest.json"});
  c.push_back({"db import", "corrupt code object", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 std::string e = export_of(d, "x");
                 for (const auto& f : fs::directory_iterator(e + "/code_objects")) write_file(f.path(), "garbage");
                 return import_keeps_target(d, e);
               }, ".co"});
  c.push_back({"db import", "wrong version", [](const std::string& dir) {
                 Dbs d = make_dbs(dir);
                 std::string e = export_of(d, "x");
                 write_file(e + "/manifest.json", R"({"format": "something-else", "entries": []})");
                 return import_keeps_target(d, e);
               }, "not an isatune export"});
  // Recorded tuning spaces (isatune tune --replay, isatune score).
  c.push_back({"Kernel Tuner / T4 / KTT", "empty", [](auto&) { return replay_error(""); }, "cache.json"});
  c.push_back({"Kernel Tuner / T4 / KTT", "truncated (no entry)", [](auto&) {
                 return replay_error(R"({"tune_params_keys": ["a"], "cache": {"1": {"a": 1, "ti)");
               }, "cache.json"});
  c.push_back({"Kernel Tuner / T4 / KTT", "corrupt", [](auto&) {
                 return replay_error(R"({"tune_params_keys": [1, 2], "cache": {"1": {"a": 1, "time": 1}}})");
               }, "cache.json"});
  c.push_back({"Kernel Tuner / T4 / KTT", "wrong version", [](auto&) {
                 return replay_error(R"({"Results": [{"Configuration": [{"Name": "A", "Value": 1}],
                   "Status": "SomethingNew", "TotalDuration": 1}]})");
               }, "'cache.json': unknown KTT status 'SomethingNew'"});
  c.push_back({"Kernel Tuner / T4 / KTT", "corrupt (T4 measurement without value)", [](auto&) {
                 // Read a missing key through const operator[] (undefined behaviour) before; found by fuzz_replay.
                 return replay_error(R"({"results": [{"configuration": {"bx": 16}, "invalidity": "correct",
                   "measurements": [{"name": "time", "valud": 1.25}]}]})");
               }, "T4 result without a time measurement"});
  c.push_back({"Kernel Tuner / T4 / KTT", "wrong kind", [](auto&) { return replay_error("[1, 2, 3]"); },
               "cache.json"});
  c.push_back({"Kernel Tuner / T4 / KTT", "adversarial sizes", [](auto&) {
                 // 40 parameters of 4 values: 4^40 configurations, past 64 bits.
                 std::string keys, params, entry;
                 for (int i = 0; i < 40; ++i) {
                   std::string k = "p" + std::to_string(i);
                   keys += (i ? ", \"" : "\"") + k + "\"";
                   params += (i ? ", \"" : "\"") + k + "\": [1, 2, 3, 4]";
                   entry += ", \"" + k + "\": " + std::to_string(1 + i % 4);
                 }
                 return replay_error("{\"tune_params_keys\": [" + keys + "], \"tune_params\": {" + params +
                                     "}, \"cache\": {\"x\": {\"time\": 1.5" + entry + "}}}");
               }, "'cache.json': the recorded space (40 parameters) has more than 2^64 configurations"});
  // isatune run --arg.
  c.push_back({"run --arg", "empty", [](auto&) { return arg_error(""); }, "--arg 0"});
  c.push_back({"run --arg", "truncated", [](auto&) { return arg_error("buf:f32"); }, "element count"});
  c.push_back({"run --arg", "corrupt", [](auto&) { return arg_error("u32:12x"); }, "not an unsigned integer"});
  c.push_back({"run --arg", "huge", [](auto&) { return arg_error("buf:f64:68719476736:zero"); }, "GiB"});
  c.push_back({"run --arg", "adversarial sizes", [](auto&) { return arg_error("u8:256"); }, "out of range"});
  c.push_back({"run --arg", "not a regular file", [](auto&) { return arg_error("buf:u8:file=/dev/zero"); },
               "not a regular file"});
  return c;
}

class BadInput : public testing::TestWithParam<Case> {};

TEST_P(BadInput, IsAnErrorThatSaysWhatIsWrong) {
  const Case& c = GetParam();
  const std::string dir = testutil::temp_dir();
  const std::string e = c.run(dir);
  fs::remove_all(dir);
  const bool accepted = c.expect.rfind("accepted", 0) == 0; // what isatune does is to accept it, harmlessly
  if (accepted) {
    EXPECT_EQ(e, "") << c.reader << " refused " << c.kind << " input";
  } else {
    EXPECT_FALSE(e.empty()) << c.reader << " accepted " << c.kind << " input";
    EXPECT_NE(e.find(c.expect), std::string::npos) << e;
  }
  if (std::getenv("ISATUNE_PRINT_BAD_INPUT_TABLE")) {
    std::string one_line = accepted ? c.expect : e.substr(0, e.find('\n'));
    std::printf("| %s | %s | `%s` | `Table/BadInput.%s` |\n", c.reader.c_str(), c.kind.c_str(), one_line.c_str(),
                testing::UnitTest::GetInstance()->current_test_info()->name());
  }
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string n = info.param.reader + "_" + info.param.kind;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Table, BadInput, testing::ValuesIn(cases()), case_name);

} // namespace
