// `isatune db merge` and `db import` of foreign files (loader/src/admin.cpp: Database::merge_from and
// import_from) into a database that already holds measurements. The first input byte picks the mode:
//   0  merge a valid source database patched at a few places: each following 4 bytes are a 24-bit offset
//      (modulo the file size) and the byte written there, so most of the file stays a valid database
//   1  merge the rest of the input as the whole source file
//   2  import a valid export folder whose manifest.json is the rest of the input
//   3  import that folder with its code object patched as in mode 0
// Checks besides "only isatune::Error escapes": a failed merge or import leaves every table of the target as
// it was (compared row by row), a successful one loses no row that was there and adds nothing when repeated,
// and the target still takes a valid merge afterwards.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "fuzz_target.h"
#include "isatune/db/database.h"
#include "isatune/error.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using isatune::db::Database;

struct Templates {
  std::string dir;
  std::string target_db, source_db, export_dir;
  std::vector<char> source_bytes, code_bytes;
  std::string code_file;
};

std::vector<char> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const std::string& path, const char* data, size_t size) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(data, std::streamsize(size));
}

// Removes the process's folder when it exits normally (the end of a fuzz run, test_tune's replay), so runs do not
// pile up folders under TMPDIR; a crashed run leaves it for a look.
struct RemoveAtExit {
  std::string dir;
  ~RemoveAtExit() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

// Built once per process: a target with one run, a source with another (other sizes, other device), and the
// source's export folder.
const Templates& templates() {
  static const Templates t = [] {
    Templates t;
    t.dir = (fs::temp_directory_path() / ("isatune-fuzz-db-" + std::to_string(getpid()))).string();
    fs::remove_all(t.dir);
    fs::create_directories(t.dir);
    static const RemoveAtExit remove{t.dir};
    t.target_db = t.dir + "/target.db";
    t.source_db = t.dir + "/source.db";
    t.export_dir = t.dir + "/export";
    {
      auto db = Database::open(t.target_db);
      testutil::populate(db, {256, 4096}, 2);
      db.query("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    {
      auto db = Database::open(t.source_db);
      testutil::populate(db, {512, 1024}, 2, true, 120);
      db.export_to(t.export_dir);
      db.query("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    t.source_bytes = slurp(t.source_db);
    for (const auto& e : fs::directory_iterator(t.export_dir + "/code_objects")) {
      t.code_file = e.path().string();
      break;
    }
    t.code_bytes = slurp(t.code_file);
    return t;
  }();
  return t;
}

// Every row of every table, as text, by table.
std::map<std::string, std::multiset<std::string>> snapshot(Database& db) {
  std::map<std::string, std::multiset<std::string>> out;
  for (const auto& t : db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")) {
    const std::string name = std::get<std::string>(t[0]);
    auto& rows = out[name];
    for (const auto& r : db.query("SELECT * FROM \"" + name + "\"")) {
      std::string line;
      for (const auto& v : r) {
        if (std::holds_alternative<std::string>(v)) line += "s:" + std::get<std::string>(v);
        else if (std::holds_alternative<int64_t>(v)) line += "i:" + std::to_string(std::get<int64_t>(v));
        else if (std::holds_alternative<double>(v)) line += "d:" + std::to_string(std::get<double>(v));
        else line += "n";
        line += '\x1f';
      }
      rows.insert(line);
    }
  }
  return out;
}

std::vector<char> patched(std::vector<char> bytes, const uint8_t* data, size_t size) {
  for (size_t i = 0; i + 4 <= size && !bytes.empty(); i += 4) {
    size_t at = (size_t(data[i]) | size_t(data[i + 1]) << 8 | size_t(data[i + 2]) << 16) % bytes.size();
    bytes[at] = char(data[i + 3]);
  }
  return bytes;
}

} // namespace

ISATUNE_FUZZ_TARGET(db) {
  const Templates& t = templates();
  const int mode = size ? data[0] % 4 : 0;
  const uint8_t* rest = size ? data + 1 : data;
  const size_t rest_size = size ? size - 1 : 0;
  const std::string work = t.dir + "/work";
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string target = work + "/target.db";
  fs::copy_file(t.target_db, target);
  std::string source = work + "/source.db", import_dir = work + "/export";
  if (mode == 0) {
    auto b = patched(t.source_bytes, rest, rest_size);
    spit(source, b.data(), b.size());
  } else if (mode == 1) {
    spit(source, reinterpret_cast<const char*>(rest), rest_size);
  } else {
    fs::copy(t.export_dir, import_dir, fs::copy_options::recursive);
    if (mode == 2) {
      spit(import_dir + "/manifest.json", reinterpret_cast<const char*>(rest), rest_size);
    } else {
      auto b = patched(t.code_bytes, rest, rest_size);
      spit(import_dir + "/code_objects/" + fs::path(t.code_file).filename().string(), b.data(), b.size());
    }
  }
  auto db = Database::open(target);
  const auto before = snapshot(db);
  bool ok = true;
  std::string error;
  try {
    if (mode < 2) db.merge_from(source);
    else db.import_from(import_dir);
  } catch (const isatune::Error& e) {
    ok = false;
    error = e.what();
  }
  const auto after = snapshot(db);
  if (!ok) {
    std::string changed;
    for (const auto& [table, rows] : after)
      if (before.count(table) == 0 || before.at(table) != rows)
        changed += " " + table + " (" + std::to_string(before.count(table) ? before.at(table).size() : 0) + " -> " +
                   std::to_string(rows.size()) + " rows)";
    if (!changed.empty()) isatune::fuzz::fail("a failed merge/import (" + error + ") changed" + changed);
    if (after != before) isatune::fuzz::fail("a failed merge/import (" + error + ") dropped a table");
  } else {
    for (const auto& [table, rows] : before) {
      auto it = after.find(table);
      if (it == after.end()) isatune::fuzz::fail("table " + table + " disappeared");
      for (const auto& r : rows)
        if (!it->second.count(r) && table != "best") isatune::fuzz::fail("a row of " + table + " was lost");
    }
    size_t again = 0;
    try {
      again = mode < 2 ? db.merge_from(source) : db.import_from(import_dir);
    } catch (const isatune::Error& e) {
      isatune::fuzz::fail(std::string("the second merge/import failed: ") + e.what());
    }
    if (again != 0) isatune::fuzz::fail("merging/importing the same input twice added " + std::to_string(again));
  }
  // The target is still usable: a valid merge goes in.
  try {
    db.merge_from(t.source_db);
  } catch (const isatune::Error& e) {
    isatune::fuzz::fail(std::string("a valid merge failed after the fuzzed one: ") + e.what());
  }
}
