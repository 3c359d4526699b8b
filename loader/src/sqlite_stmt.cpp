#include "sqlite_stmt.h"

#include "isatune/error.h"

namespace isatune::db::detail {

void throw_sqlite(sqlite3* db, int rc, const std::string& context) {
  std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  int primary = rc & 0xff;
  std::string text = context + ": " + msg;
  switch (primary) {
  case SQLITE_CORRUPT:
  case SQLITE_NOTADB:
    throw InputError(context + ": not a valid isatune database (" + msg + ")");
  case SQLITE_READONLY:
    throw InputError(context + ": the database is read-only (" + msg + ")");
  case SQLITE_CANTOPEN:
    throw InputError(context + ": cannot open the database file (" + msg + ")");
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    throw Error(context + ": the database stayed locked longer than the busy timeout (" + msg + ")");
  case SQLITE_CONSTRAINT:
    throw InputError(text);
  default:
    throw Error(text);
  }
}

void exec(sqlite3* db, const char* sql, const std::string& context) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    if (err) sqlite3_free(err);
    throw_sqlite(db, rc, context);
  }
}

Stmt::Stmt(sqlite3* db, const char* sql) : db_(db) {
  int rc = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr);
  if (rc != SQLITE_OK) throw_sqlite(db, rc, std::string("preparing `") + sql + "`");
}

Stmt::~Stmt() { sqlite3_finalize(s_); }

Stmt& Stmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  sqlite3_bind_double(s_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, const std::string& v) {
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind(int i, std::span<const uint8_t> blob) {
  sqlite3_bind_blob64(s_, i, blob.data(), blob.size(), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(s_, i);
  return *this;
}
Stmt& Stmt::bind_value(int i, const Value& v) {
  if (std::holds_alternative<int64_t>(v)) return bind(i, std::get<int64_t>(v));
  if (std::holds_alternative<double>(v)) return bind(i, std::get<double>(v));
  if (std::holds_alternative<std::string>(v)) return bind(i, std::get<std::string>(v));
  return bind_null(i);
}

bool Stmt::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const char* file = sqlite3_db_filename(db_, "main");
  throw_sqlite(db_, rc, file && *file ? file : "database");
}

void Stmt::reset() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

std::string Stmt::text(int col) const {
  const unsigned char* p = sqlite3_column_text(s_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(s_, col)) : std::string();
}

std::vector<uint8_t> Stmt::blob(int col) const {
  const uint8_t* p = static_cast<const uint8_t*>(sqlite3_column_blob(s_, col));
  int n = sqlite3_column_bytes(s_, col);
  return p ? std::vector<uint8_t>(p, p + n) : std::vector<uint8_t>();
}

Value Stmt::value(int col) const {
  switch (sqlite3_column_type(s_, col)) {
  case SQLITE_INTEGER: return int64(col);
  case SQLITE_FLOAT: return real(col);
  case SQLITE_NULL: return std::monostate{};
  default: return text(col);
  }
}

} // namespace isatune::db::detail
