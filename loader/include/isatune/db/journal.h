#pragma once
// Which journal a database file gets: WAL needs shared memory that network filesystems do not provide, so
// files on NFS, SMB/CIFS, FUSE and similar get the rollback journal (DELETE).
#include <string>

#include "isatune/db/database.h"

namespace isatune::db {

// True for statfs f_type values of network or user-space filesystems (NFS, SMB, CIFS, SMB2, FUSE, Ceph,
// AFS, Lustre, GPFS, 9p).
bool is_network_filesystem_type(long f_type);
// True when the directory holding path is on such a filesystem (false when it cannot be told).
bool is_on_network_filesystem(const std::string& path);
// The mode `requested` resolves to for path: explicit modes are kept; `automatic` honours the environment
// override ISATUNE_DB_JOURNAL (wal | delete), then the filesystem.
JournalMode resolve_journal_mode(JournalMode requested, const std::string& path);

} // namespace isatune::db
