// Reading an AMD code object: ELF through LLVM's Object library, then the metadata note, the kernel
// descriptors and the kernel code ranges. Every llvm::Error is turned into a FormatError naming the source.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"

#include "internal.h"
#include "isatune/codeobj/descriptor.h"
#include "isatune/codeobj/reader.h"

namespace isatune::codeobj {

namespace {

using ELFT = llvm::object::ELF64LE;
using ELFFile = llvm::object::ELFFile<ELFT>;
using Shdr = ELFT::Shdr;

struct Symbol {
  uint64_t value = 0;
  uint64_t size = 0;
  uint8_t type = 0;
  uint32_t shndx = 0;
};

class Reader {
public:
  Reader(std::span<const uint8_t> bytes, std::string_view source) : bytes_(bytes), source_(source) {}

  CodeObject read();

private:
  [[noreturn]] void fail(const std::string& what) const { throw FormatError(source_ + ": " + what); }
  [[noreturn]] void fail(llvm::Error e, const std::string& what) const {
    fail(what + ": " + llvm::toString(std::move(e)));
  }
  void check_header() const;
  void read_sections();
  std::optional<std::string> find_metadata_note();
  void read_symbols();
  std::optional<uint64_t> file_offset(const Symbol& sym, uint64_t length) const;
  uint64_t extent_in_section(const Symbol& sym) const;
  std::optional<uint64_t> vaddr_to_offset(uint64_t vaddr, uint64_t length) const;
  void locate(KernelInfo& k, uint32_t vgpr_granule) const;

  std::span<const uint8_t> bytes_;
  std::string source_;
  const ELFFile* elf_ = nullptr;
  llvm::ArrayRef<Shdr> sections_;
  std::map<std::string, Symbol> symbols_;
};

void Reader::check_header() const {
  if (bytes_.empty()) fail("empty input, not a code object");
  if (bytes_.size() < 4 || std::memcmp(bytes_.data(), llvm::ELF::ElfMagic, 4) != 0)
    fail("not an ELF file (" + std::to_string(bytes_.size()) + " bytes, no ELF magic)");
  if (bytes_.size() < sizeof(ELFT::Ehdr))
    fail("truncated ELF header (" + std::to_string(bytes_.size()) + " of " + std::to_string(sizeof(ELFT::Ehdr)) +
         " bytes)");
  uint8_t cls = bytes_[llvm::ELF::EI_CLASS];
  if (cls != llvm::ELF::ELFCLASS64)
    fail("wrong ELF class " + std::to_string(cls) + " (AMDGPU code objects are 64-bit, class 2)");
  if (bytes_[llvm::ELF::EI_DATA] != llvm::ELF::ELFDATA2LSB) fail("big-endian ELF (AMDGPU code objects are little-endian)");
  uint16_t machine = llvm::support::endian::read16le(bytes_.data() + 18);
  if (machine != llvm::ELF::EM_AMDGPU)
    fail("not an AMDGPU code object (e_machine " + std::to_string(machine) + ")");
  // HSA code objects only, v2 to v6 (EI_ABIVERSION 0 to 4): a later version may lay out its descriptor and
  // metadata differently, and reading it as v6 would give wrong resource counts without a word.
  if (bytes_[llvm::ELF::EI_OSABI] == llvm::ELF::ELFOSABI_AMDGPU_HSA &&
      bytes_[llvm::ELF::EI_ABIVERSION] > llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V6)
    fail("code object version " + std::to_string(bytes_[llvm::ELF::EI_ABIVERSION] + 2) +
         " (EI_ABIVERSION " + std::to_string(bytes_[llvm::ELF::EI_ABIVERSION]) +
         ") is newer than this isatune reads (v2 to v6)");
}

void Reader::read_sections() {
  auto sections = elf_->sections();
  if (!sections) fail(sections.takeError(), "bad section header table");
  sections_ = *sections;
}

std::optional<std::string> Reader::find_metadata_note() {
  std::optional<std::string> found;
  auto visit = [&](auto notes, llvm::Error& err, size_t align) {
    for (const auto& note : notes) {
      if (note.getName() == "AMDGPU" && note.getType() == llvm::ELF::NT_AMDGPU_METADATA && !found)
        found = note.getDescAsStringRef(align).str();
    }
    if (err) fail(std::move(err), "bad note");
  };
  for (const Shdr& sec : sections_) {
    if (sec.sh_type != llvm::ELF::SHT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    visit(elf_->notes(sec, err), err, std::max<size_t>(sec.sh_addralign, 4));
  }
  if (!sections_.empty()) return found;
  // No section headers (stripped object): program headers.
  auto phdrs = elf_->program_headers();
  if (!phdrs) fail(phdrs.takeError(), "bad program header table");
  for (const auto& ph : *phdrs) {
    if (ph.p_type != llvm::ELF::PT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    visit(elf_->notes(ph, err), err, std::max<size_t>(ph.p_align, 4));
  }
  return found;
}

void Reader::read_symbols() {
  // .symtab first, then .dynsym for names the first lacks (a stripped .hsaco keeps only .dynsym).
  for (unsigned wanted : {llvm::ELF::SHT_SYMTAB, llvm::ELF::SHT_DYNSYM}) {
    for (const Shdr& sec : sections_) {
      if (sec.sh_type != wanted) continue;
      auto syms = elf_->symbols(&sec);
      if (!syms) fail(syms.takeError(), "bad symbol table");
      auto strtab = elf_->getStringTableForSymtab(sec, sections_);
      if (!strtab) fail(strtab.takeError(), "bad symbol string table");
      for (const auto& s : *syms) {
        auto name = s.getName(*strtab);
        if (!name) fail(name.takeError(), "bad symbol name");
        if (name->empty()) continue;
        Symbol sym{s.st_value, s.st_size, s.getType(), s.st_shndx};
        symbols_.emplace(name->str(), sym); // keeps the first (symtab) entry
      }
    }
  }
}

// File offset of length bytes at a symbol, or nullopt when they do not lie inside a section with file data.
std::optional<uint64_t> Reader::file_offset(const Symbol& sym, uint64_t length) const {
  if (sym.shndx == llvm::ELF::SHN_UNDEF || sym.shndx >= llvm::ELF::SHN_LORESERVE || sym.shndx >= sections_.size())
    return std::nullopt;
  const Shdr& sec = sections_[sym.shndx];
  if (sec.sh_type == llvm::ELF::SHT_NOBITS) return std::nullopt;
  uint64_t base = elf_->getHeader().e_type == llvm::ELF::ET_REL ? 0 : uint64_t(sec.sh_addr);
  if (sym.value < base) return std::nullopt;
  uint64_t rel = sym.value - base;
  if (rel > sec.sh_size || length > sec.sh_size - rel) return std::nullopt;
  uint64_t off = sec.sh_offset + rel;
  if (off < sec.sh_offset || off > bytes_.size() || length > bytes_.size() - off) return std::nullopt;
  return off;
}

std::optional<uint64_t> Reader::vaddr_to_offset(uint64_t vaddr, uint64_t length) const {
  for (const Shdr& sec : sections_) {
    if (!(sec.sh_flags & llvm::ELF::SHF_ALLOC) || sec.sh_type == llvm::ELF::SHT_NOBITS) continue;
    if (vaddr < sec.sh_addr || vaddr - sec.sh_addr >= sec.sh_size) continue;
    uint64_t off = sec.sh_offset + (vaddr - sec.sh_addr);
    if (off > bytes_.size() || length > bytes_.size() - off) return std::nullopt;
    return off;
  }
  return std::nullopt;
}

// Bytes from a symbol to the next function or object symbol that starts after it in the same section, or to the
// section's end (local labels inside the code, which hand-written kernels keep in .symtab, do not end it).
uint64_t Reader::extent_in_section(const Symbol& sym) const {
  if (sym.shndx == llvm::ELF::SHN_UNDEF || sym.shndx >= llvm::ELF::SHN_LORESERVE || sym.shndx >= sections_.size())
    return 0;
  const Shdr& sec = sections_[sym.shndx];
  uint64_t base = elf_->getHeader().e_type == llvm::ELF::ET_REL ? 0 : uint64_t(sec.sh_addr);
  if (sym.value < base || sym.value - base > sec.sh_size) return 0;
  uint64_t end = base + sec.sh_size;
  for (const auto& [name, other] : symbols_)
    if (other.shndx == sym.shndx && other.value > sym.value && other.value < end &&
        (other.type == llvm::ELF::STT_FUNC || other.type == llvm::ELF::STT_OBJECT))
      end = other.value;
  return end - sym.value;
}

// Descriptor from `<name>.kd`; code range from the function symbol, else from the descriptor's entry offset.
void Reader::locate(KernelInfo& k, uint32_t vgpr_granule) const {
  auto kd = symbols_.find(k.symbol);
  if (kd != symbols_.end()) {
    if (auto off = file_offset(kd->second, kKernelDescriptorSize))
      k.descriptor = decode_kernel_descriptor(bytes_.subspan(*off, kKernelDescriptorSize), vgpr_granule);
  }
  auto fn = symbols_.find(k.name);
  if (fn != symbols_.end() && fn->second.type == llvm::ELF::STT_FUNC) {
    // Hand-written kernels (AITER's) often have size-0 function symbols: the code then runs to the next symbol
    // of its section, or to the section's end.
    const uint64_t size = fn->second.size ? fn->second.size : extent_in_section(fn->second);
    if (auto off = file_offset(fn->second, size)) {
      k.code_offset = *off;
      k.code_size = size;
      return;
    }
  }
  if (k.descriptor && kd != symbols_.end() && elf_->getHeader().e_type != llvm::ELF::ET_REL) {
    uint64_t entry = kd->second.value + static_cast<uint64_t>(k.descriptor->kernel_code_entry_byte_offset);
    if (auto off = vaddr_to_offset(entry, 4)) k.code_offset = *off;
  }
}

CodeObject Reader::read() {
  check_header();
  llvm::StringRef data(reinterpret_cast<const char*>(bytes_.data()), bytes_.size());
  auto object = llvm::object::ELFObjectFile<ELFT>::create(llvm::MemoryBufferRef(data, source_));
  if (!object) fail(object.takeError(), "malformed ELF");
  elf_ = &object->getELFFile();
  const auto& header = elf_->getHeader();

  CodeObject co;
  co.vendor = Vendor::amd;
  co.bytes.assign(bytes_.begin(), bytes_.end());
  co.sha256 = sha256_hex(bytes_);
  co.isa = detail::isa_from_flags(header.e_flags);

  read_sections();
  std::optional<std::string> note = find_metadata_note();
  read_symbols();

  detail::Metadata md;
  if (note) md = detail::parse_metadata(*note, source_);
  co.target_id = !md.target.empty()
                     ? md.target
                     : detail::target_id_from_flags(co.isa, header.e_flags, header.e_ident[llvm::ELF::EI_ABIVERSION]);
  const uint32_t granule = detail::vgpr_granule_for(co.isa);

  // gfx90a and later (the unified VGPR/AGPR file): without a count in the metadata, the AGPRs are what the
  // descriptor allocates above accum_offset.
  const bool unified = co.isa == "gfx90a" || co.isa.rfind("gfx94", 0) == 0 || co.isa.rfind("gfx95", 0) == 0;
  auto agprs_from_descriptor = [&](KernelInfo& k) {
    if (!k.agprs_source.empty() || !unified || !k.descriptor) return;
    const KernelDescriptor& d = *k.descriptor;
    k.agprs = d.vgprs_allocated > d.accum_offset ? d.vgprs_allocated - d.accum_offset : 0;
    k.agprs_source = "descriptor";
  };
  if (note) {
    co.kernels = std::move(md.kernels);
    for (auto& k : co.kernels) {
      locate(k, granule);
      agprs_from_descriptor(k);
    }
  } else {
    // No metadata: one kernel per `.kd` descriptor symbol, described by its descriptor alone.
    for (const auto& [name, sym] : symbols_) {
      if (name.size() <= 3 || !name.ends_with(".kd") || sym.type == llvm::ELF::STT_FUNC) continue;
      KernelInfo k;
      k.name = name.substr(0, name.size() - 3);
      k.symbol = name;
      locate(k, granule);
      if (!k.descriptor) continue;
      const KernelDescriptor& d = *k.descriptor;
      k.kernarg_size = d.kernarg_size;
      k.lds_bytes = d.group_segment_fixed_size;
      k.scratch_bytes = d.private_segment_fixed_size;
      k.wave_size = d.wave32 ? 32 : 64;
      k.vgprs = d.vgprs_allocated;
      k.sgprs = d.sgprs_allocated;
      agprs_from_descriptor(k);
      co.kernels.push_back(std::move(k));
    }
  }
  return co;
}

} // namespace

CodeObject read_code_object(std::span<const uint8_t> bytes, std::string_view source_name) {
  return Reader(bytes, source_name).read();
}

CodeObject read_code_object_file(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw FormatError(path + ": cannot read code object: " + (ec ? ec.message() : "no such file"));
  if (!std::filesystem::is_regular_file(status)) throw FormatError(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw FormatError(path + ": read error");
  return read_code_object(bytes, path);
}

} // namespace isatune::codeobj
