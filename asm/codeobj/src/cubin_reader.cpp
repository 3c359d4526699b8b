// Reading a cubin: ELF through LLVM's Object library, then the .nv.info attribute sections. Attribute codes
// (EIATTR_*) and their layouts were checked against ptxas 13.0 output (see docs/ptx.md, "Cubin reader").
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"

#include "isatune/codeobj/cubin.h"
#include "isatune/codeobj/reader.h"

namespace isatune::codeobj {

namespace {

using ELFT = llvm::object::ELF64LE;
using ELFFile = llvm::object::ELFFile<ELFT>;
using Shdr = ELFT::Shdr;

// .nv.info entry formats and the attributes we read.
constexpr uint8_t EIFMT_NVAL = 1, EIFMT_BVAL = 2, EIFMT_HVAL = 3, EIFMT_SVAL = 4;
constexpr uint8_t EIATTR_MAX_THREADS = 0x05, EIATTR_REQNTID = 0x10, EIATTR_FRAME_SIZE = 0x11,
                  EIATTR_MIN_STACK_SIZE = 0x12, EIATTR_KPARAM_INFO = 0x17, EIATTR_CBANK_PARAM_SIZE = 0x19,
                  EIATTR_MAXREG_COUNT = 0x1b, EIATTR_PARAM_CBANK = 0x0a, EIATTR_MAX_STACK_SIZE = 0x23,
                  EIATTR_REGCOUNT = 0x2f, EIATTR_CTA_PER_CLUSTER = 0x3d;
constexpr uint8_t STO_CUDA_ENTRY = 0x10;
// ptxas 13.0 places 1 KB of reserved shared memory (.nv.shared.reserved.0) inside each sm_90 kernel's
// .nv.shared.<kernel> section; ptxas -v reports the kernel's own bytes without it.
constexpr uint32_t kReservedSharedSm90 = 1024;

struct Attr {
  uint8_t format = 0, code = 0;
  uint16_t hval = 0;                 // HVAL value
  std::span<const uint8_t> data;     // SVAL payload
};

uint32_t u32_at(std::span<const uint8_t> d, size_t off) {
  uint32_t v = 0;
  if (off + 4 <= d.size()) std::memcpy(&v, d.data() + off, 4);
  return v;
}

uint16_t u16_at(std::span<const uint8_t> d, size_t off) {
  uint16_t v = 0;
  if (off + 2 <= d.size()) std::memcpy(&v, d.data() + off, 2);
  return v;
}

class Reader {
public:
  Reader(std::span<const uint8_t> bytes, std::string_view source) : bytes_(bytes), source_(source) {}
  Cubin read();

private:
  [[noreturn]] void fail(const std::string& what) const { throw FormatError(source_ + ": " + what); }
  std::vector<Attr> attributes(const Shdr& sec) const;
  std::span<const uint8_t> contents(const Shdr& sec) const;
  std::string section_name(const Shdr& sec) const;

  std::span<const uint8_t> bytes_;
  std::string source_;
  std::optional<ELFFile> elf_;
};

std::span<const uint8_t> Reader::contents(const Shdr& sec) const {
  auto c = elf_->getSectionContents(sec);
  if (!c) fail("section contents: " + llvm::toString(c.takeError()));
  return {c->data(), c->size()};
}

std::string Reader::section_name(const Shdr& sec) const {
  auto n = elf_->getSectionName(sec);
  if (!n) fail("section name: " + llvm::toString(n.takeError()));
  return n->str();
}

std::vector<Attr> Reader::attributes(const Shdr& sec) const {
  std::vector<Attr> out;
  auto d = contents(sec);
  size_t off = 0;
  while (off + 4 <= d.size()) {
    Attr a;
    a.format = d[off];
    a.code = d[off + 1];
    const uint16_t v = u16_at(d, off + 2);
    off += 4;
    if (a.format == EIFMT_SVAL) {
      if (off + v > d.size()) fail(section_name(sec) + ": attribute 0x" + std::to_string(a.code) + " overruns the section");
      a.data = d.subspan(off, v);
      off += v;
    } else if (a.format == EIFMT_HVAL || a.format == EIFMT_BVAL || a.format == EIFMT_NVAL) {
      a.hval = v;
    } else {
      fail(section_name(sec) + ": unknown attribute format " + std::to_string(a.format));
    }
    out.push_back(a);
  }
  return out;
}

Cubin Reader::read() {
  if (!is_cubin(bytes_)) fail("not a cubin (no ELF header with e_machine EM_CUDA)");
  auto file = ELFFile::create(llvm::StringRef(reinterpret_cast<const char*>(bytes_.data()), bytes_.size()));
  if (!file) fail("ELF: " + llvm::toString(file.takeError()));
  elf_.emplace(std::move(*file));
  const auto& hdr = elf_->getHeader();

  Cubin out;
  // ABI version 8 (ELFABIVERSION_CUDA_V2; ptxas 13.0 writes EI_OSABI 0x41) keeps the SM in bits 8..15 of
  // e_flags, older cubins in bits 0..7.
#if ISATUNE_LLVM_MAJOR >= 22
  const bool v2 = hdr.e_ident[llvm::ELF::EI_ABIVERSION] >= llvm::ELF::ELFABIVERSION_CUDA_V2;
  out.sm = v2 ? (hdr.e_flags & llvm::ELF::EF_CUDA_SM_MASK) >> llvm::ELF::EF_CUDA_SM_OFFSET
              : hdr.e_flags & llvm::ELF::EF_CUDA_SM;
#else
  // Older LLVM lacks the V2 names; the same values as LLVM 22's ELF.h.
  constexpr unsigned kAbiVersionCudaV2 = 8, kCudaSmMask = 0xff00, kCudaSmOffset = 8;
  const bool v2 = hdr.e_ident[llvm::ELF::EI_ABIVERSION] >= kAbiVersionCudaV2;
  out.sm = v2 ? (hdr.e_flags & kCudaSmMask) >> kCudaSmOffset : hdr.e_flags & llvm::ELF::EF_CUDA_SM;
#endif
  if (out.sm == 0) fail("e_flags name no SM");

  auto secs = elf_->sections();
  if (!secs) fail("section headers: " + llvm::toString(secs.takeError()));
  std::map<std::string, const Shdr*> by_name;
  const Shdr* symtab = nullptr;
  bool reserved_shared = false;
  for (const Shdr& s : *secs) {
    std::string name = section_name(s);
    if (s.sh_type == llvm::ELF::SHT_SYMTAB) symtab = &s;
    if (name.starts_with(".nv.shared.reserved")) reserved_shared = true;
    by_name[name] = &s;
  }
  if (!symtab) fail("no symbol table");

  // The "a" suffix is not in e_flags; ptxas records its command line (with -arch sm_90a) in .note.nv.tkinfo.
  std::string isa = "sm_" + std::to_string(out.sm);
  if (auto it = by_name.find(".note.nv.tkinfo"); it != by_name.end()) {
    auto d = contents(*it->second);
    std::string_view text(reinterpret_cast<const char*>(d.data()), d.size());
    if (text.find(isa + "a") != std::string_view::npos) isa += "a";
  }
  out.code.vendor = Vendor::nvidia;
  out.code.isa = isa;
  out.code.target_id = isa;
  out.code.bytes.assign(bytes_.begin(), bytes_.end());
  out.code.sha256 = sha256_hex(bytes_);

  auto syms = elf_->symbols(symtab);
  if (!syms) fail("symbols: " + llvm::toString(syms.takeError()));
  auto strtab = elf_->getStringTableForSymtab(*symtab);
  if (!strtab) fail("symbol names: " + llvm::toString(strtab.takeError()));

  // Per-function attributes in the global .nv.info, keyed by symbol index.
  std::map<uint32_t, uint32_t> regcount, frame, min_stack, max_stack;
  if (auto it = by_name.find(".nv.info"); it != by_name.end()) {
    for (const Attr& a : attributes(*it->second)) {
      if (a.format != EIFMT_SVAL || a.data.size() < 8) continue;
      const uint32_t sym = u32_at(a.data, 0), value = u32_at(a.data, 4);
      if (a.code == EIATTR_REGCOUNT) regcount[sym] = value;
      if (a.code == EIATTR_FRAME_SIZE) frame[sym] = value;
      if (a.code == EIATTR_MIN_STACK_SIZE) min_stack[sym] = value;
      if (a.code == EIATTR_MAX_STACK_SIZE) max_stack[sym] = value;
    }
  }

  for (size_t idx = 0; idx < syms->size(); ++idx) {
    const auto& sym = (*syms)[idx];
    if (sym.getType() != llvm::ELF::STT_FUNC || !(sym.st_other & STO_CUDA_ENTRY)) continue;
    auto name = sym.getName(*strtab);
    if (!name) fail("symbol name: " + llvm::toString(name.takeError()));
    KernelInfo k;
    CubinKernelExtra x;
    k.name = k.symbol = x.name = name->str();
    k.wave_size = 32;
    k.code_size = sym.st_size;
    const uint32_t i = static_cast<uint32_t>(idx);
    if (auto r = regcount.find(i); r != regcount.end()) k.vgprs = r->second;
    else if (auto t = by_name.find(".text." + k.name); t != by_name.end())
      k.vgprs = t->second->sh_info >> 24; // registers are also in the text section's sh_info high byte
    k.scratch_bytes = std::max({frame.count(i) ? frame[i] : 0u, min_stack.count(i) ? min_stack[i] : 0u,
                                max_stack.count(i) ? max_stack[i] : 0u});
    if (auto t = by_name.find(".text." + k.name); t != by_name.end()) k.code_offset = t->second->sh_offset;
    if (auto s = by_name.find(".nv.shared." + k.name); s != by_name.end()) {
      uint32_t bytes = static_cast<uint32_t>(s->second->sh_size);
      if (out.sm >= 90 && reserved_shared && bytes >= kReservedSharedSm90) bytes -= kReservedSharedSm90;
      k.lds_bytes = bytes;
    }
    std::vector<std::pair<uint16_t, KernelArg>> params;
    if (auto it = by_name.find(".nv.info." + k.name); it != by_name.end()) {
      for (const Attr& a : attributes(*it->second)) {
        switch (a.code) {
        case EIATTR_KPARAM_INFO:
          if (a.data.size() >= 12) {
            // u32 index, u16 ordinal, u16 offset, u32 flags: size in bits 18..31.
            const uint16_t ordinal = u16_at(a.data, 4);
            KernelArg arg;
            arg.name = "param" + std::to_string(ordinal);
            arg.offset = u16_at(a.data, 6);
            arg.size = (u32_at(a.data, 8) >> 18) & 0x3fff;
            arg.value_kind = "by_value";
            params.emplace_back(ordinal, arg);
          }
          break;
        case EIATTR_CBANK_PARAM_SIZE: k.kernarg_size = a.hval; break;
        case EIATTR_PARAM_CBANK:
          if (a.data.size() >= 8) x.param_cbank_offset = u16_at(a.data, 4);
          break;
        case EIATTR_MAXREG_COUNT: x.max_registers = a.hval; break;
        case EIATTR_MAX_THREADS:
        case EIATTR_REQNTID:
        case EIATTR_CTA_PER_CLUSTER:
          if (a.data.size() >= 12) {
            std::array<uint32_t, 3> d{u32_at(a.data, 0), u32_at(a.data, 4), u32_at(a.data, 8)};
            (a.code == EIATTR_MAX_THREADS ? x.max_threads : a.code == EIATTR_REQNTID ? x.req_threads : x.cluster_dims) = d;
          }
          break;
        default: break;
        }
      }
    }
    std::sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& p : params) k.args.push_back(std::move(p.second));
    const auto& lim = x.req_threads[0] ? x.req_threads : x.max_threads;
    k.max_workgroup_size = lim[0] ? lim[0] * std::max(lim[1], 1u) * std::max(lim[2], 1u) : 1024;
    out.code.kernels.push_back(std::move(k));
    out.extra.push_back(std::move(x));
  }
  return out;
}

} // namespace

bool is_cubin(std::span<const uint8_t> bytes) {
  if (bytes.size() < 64 || std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0) return false;
  if (bytes[llvm::ELF::EI_CLASS] != llvm::ELF::ELFCLASS64 || bytes[llvm::ELF::EI_DATA] != llvm::ELF::ELFDATA2LSB)
    return false;
  return u16_at(bytes, 18) == llvm::ELF::EM_CUDA;
}

Cubin read_cubin_full(std::span<const uint8_t> bytes, std::string_view source_name) {
  return Reader(bytes, source_name).read();
}

CodeObject read_cubin(std::span<const uint8_t> bytes, std::string_view source_name) {
  return read_cubin_full(bytes, source_name).code;
}

CodeObject read_cubin_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw FormatError(path + ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw FormatError(path + ": empty file");
  return read_cubin(bytes, path);
}

} // namespace isatune::codeobj
