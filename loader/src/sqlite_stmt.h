#pragma once
// Small RAII wrappers over SQLite statements, private to the loader library.
#include <sqlite3.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "isatune/db/database.h"

namespace isatune::db::detail {

// Throws the isatune error that fits the SQLite result code, naming the context (usually the file).
[[noreturn]] void throw_sqlite(sqlite3* db, int rc, const std::string& context);
void exec(sqlite3* db, const char* sql, const std::string& context);

class Stmt {
public:
  Stmt(sqlite3* db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, double v);
  Stmt& bind(int i, const std::string& v);
  Stmt& bind(int i, std::span<const uint8_t> blob);
  Stmt& bind_null(int i);
  Stmt& bind_opt(int i, const std::optional<double>& v) { return v ? bind(i, *v) : bind_null(i); }
  Stmt& bind_value(int i, const Value& v);
  // True while there is a row; throws on error.
  bool step();
  void reset();

  int64_t int64(int col) const { return sqlite3_column_int64(s_, col); }
  double real(int col) const { return sqlite3_column_double(s_, col); }
  bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  std::string text(int col) const;
  std::vector<uint8_t> blob(int col) const;
  Value value(int col) const;
  int columns() const { return sqlite3_column_count(s_); }

private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

// How a rerank winner arriving from another file (db merge, db import) meets one already here: the newer
// decision replaces every field, an older one changes nothing. The tail of both INSERTs into rerank_winners.
inline constexpr const char kRerankWinnerNewerWins[] = R"sql(
  ON CONFLICT(generator, signature, target_id, compute_units, device_kind, problem) DO UPDATE SET
    measurement_id = excluded.measurement_id, variant_id = excluded.variant_id, median_ms = excluded.median_ms,
    search_best_ms = excluded.search_best_ms, rerank_median_ms = excluded.rerank_median_ms,
    rerank_lo_ms = excluded.rerank_lo_ms, rerank_hi_ms = excluded.rerank_hi_ms, candidates = excluded.candidates,
    rounds = excluded.rounds, separated = excluded.separated, flip_rate = excluded.flip_rate,
    run_guid = excluded.run_guid, decided_at = excluded.decided_at
  WHERE excluded.decided_at > rerank_winners.decided_at)sql";

// Schema creation and migrations (schema.cpp). Applies the steps from the file's version up to `target`
// inside the caller's transaction.
void migrate(sqlite3* db, int from_version, int target, const std::string& context);
void rebuild_best(sqlite3* db, const std::string& context);
// One line per code object whose blob does not hash to its key (admin.cpp); counts the blobs hashed.
std::vector<std::string> corrupt_blobs(sqlite3* db, size_t* checked);

} // namespace isatune::db::detail
