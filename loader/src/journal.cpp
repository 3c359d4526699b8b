#include "isatune/db/journal.h"

#include <sys/statfs.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "isatune/error.h"

namespace isatune::db {

bool is_network_filesystem_type(long f_type) {
  switch (static_cast<unsigned long>(f_type) & 0xffffffffUL) {
  case 0x6969UL:     // NFS_SUPER_MAGIC
  case 0x517BUL:     // SMB_SUPER_MAGIC
  case 0xFF534D42UL: // CIFS_MAGIC_NUMBER
  case 0xFE534D42UL: // SMB2_MAGIC_NUMBER
  case 0x65735546UL: // FUSE_SUPER_MAGIC
  case 0x00C36400UL: // CEPH_SUPER_MAGIC
  case 0x5346414FUL: // AFS_SUPER_MAGIC
  case 0x6B414653UL: // AFS_FS_MAGIC (kAFS)
  case 0x0BD00BD0UL: // LUSTRE_SUPER_MAGIC
  case 0x47504653UL: // GPFS_SUPER_MAGIC
  case 0x01021997UL: // V9FS_MAGIC (9p)
    return true;
  default:
    return false;
  }
}

bool is_on_network_filesystem(const std::string& path) {
  std::filesystem::path p(path);
  std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  struct statfs st {};
  if (statfs(dir.c_str(), &st) != 0) return false;
  return is_network_filesystem_type(static_cast<long>(st.f_type));
}

JournalMode resolve_journal_mode(JournalMode requested, const std::string& path) {
  if (requested != JournalMode::automatic) return requested;
  if (const char* env = std::getenv("ISATUNE_DB_JOURNAL"); env && *env) {
    std::string v = env;
    if (v == "wal") return JournalMode::wal;
    if (v == "delete" || v == "rollback") return JournalMode::rollback;
    throw InputError("ISATUNE_DB_JOURNAL='" + v + "': expected wal or delete");
  }
  return is_on_network_filesystem(path) ? JournalMode::rollback : JournalMode::wal;
}

} // namespace isatune::db
