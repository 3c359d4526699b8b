// Reading a whole file, gzip or plain (zlib reads plain files through unchanged).
#include <zlib.h>

#include "isatune/error.h"
#include "isatune/tune/replay.h"

namespace isatune::tune {

std::string read_maybe_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f)
    throw InputError("cannot open '" + path + "'");
  std::string out;
  char buf[1 << 16];
  for (;;) {
    int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      throw InputError("cannot read '" + path + "': " + msg);
    }
    if (n == 0)
      break;
    out.append(buf, static_cast<size_t>(n));
  }
  gzclose(f); // a truncated gzip stream yields what could be decompressed; the JSON repair handles the rest
  return out;
}

} // namespace isatune::tune
