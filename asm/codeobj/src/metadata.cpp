// The NT_AMDGPU_METADATA note (code object v3-v6): a msgpack map read with LLVM's msgpack::Document.
// Third-party objects (hipcc, Tensile) omit optional keys and add hidden arguments: everything but the
// kernel list's shape is optional here.
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/BinaryFormat/MsgPackReader.h"

#include "internal.h"
#include "isatune/codeobj/reader.h"

namespace isatune::codeobj::detail {

namespace {

using llvm::msgpack::DocNode;
using llvm::msgpack::MapDocNode;
using llvm::msgpack::Type;

class Reader {
public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(std::string(source_) + ": bad AMDGPU metadata: " + what);
  }

  DocNode* find(MapDocNode& map, const char* key) const {
    auto it = map.find(llvm::StringRef(key));
    return it == map.end() ? nullptr : &it->second;
  }

  uint32_t u32(MapDocNode& map, const char* key, const std::string& where) const {
    DocNode* n = find(map, key);
    if (!n) return 0;
    uint64_t v = 0;
    if (n->getKind() == Type::UInt)
      v = n->getUInt();
    else if (n->getKind() == Type::Int && n->getInt() >= 0)
      v = static_cast<uint64_t>(n->getInt());
    else
      fail(where + key + " is not a non-negative integer");
    if (v > UINT32_MAX) fail(where + key + " is out of range");
    return static_cast<uint32_t>(v);
  }

  std::string str(MapDocNode& map, const char* key, const std::string& where) const {
    DocNode* n = find(map, key);
    if (!n) return {};
    if (!n->isString()) fail(where + key + " is not a string");
    return n->getString().str();
  }

private:
  std::string_view source_;
};

KernelArg parse_arg(const Reader& r, DocNode& node, const std::string& where) {
  if (!node.isMap()) r.fail(where + "is not a map");
  MapDocNode& m = node.getMap();
  KernelArg a;
  a.name = r.str(m, ".name", where);
  a.offset = r.u32(m, ".offset", where);
  a.size = r.u32(m, ".size", where);
  a.value_kind = r.str(m, ".value_kind", where);
  a.address_space = r.str(m, ".address_space", where);
  a.access = r.str(m, ".actual_access", where);
  if (a.access.empty()) a.access = r.str(m, ".access", where);
  return a;
}

KernelInfo parse_kernel(const Reader& r, DocNode& node, size_t index) {
  std::string where = "amdhsa.kernels[" + std::to_string(index) + "] ";
  if (!node.isMap()) r.fail(where + "is not a map");
  MapDocNode& m = node.getMap();
  KernelInfo k;
  k.name = r.str(m, ".name", where);
  k.symbol = r.str(m, ".symbol", where);
  if (k.name.empty() && k.symbol.empty()) r.fail(where + "has neither .name nor .symbol");
  if (k.name.empty()) k.name = k.symbol.size() > 3 && k.symbol.ends_with(".kd")
                                   ? k.symbol.substr(0, k.symbol.size() - 3) : k.symbol;
  if (k.symbol.empty()) k.symbol = k.name + ".kd";
  k.kernarg_size = r.u32(m, ".kernarg_segment_size", where);
  k.kernarg_align = r.u32(m, ".kernarg_segment_align", where);
  k.lds_bytes = r.u32(m, ".group_segment_fixed_size", where);
  k.scratch_bytes = r.u32(m, ".private_segment_fixed_size", where);
  k.wave_size = r.u32(m, ".wavefront_size", where);
  k.sgprs = r.u32(m, ".sgpr_count", where);
  k.vgprs = r.u32(m, ".vgpr_count", where);
  k.agprs = r.u32(m, ".agpr_count", where);
  if (r.find(m, ".agpr_count")) k.agprs_source = "metadata";
  k.max_workgroup_size = r.u32(m, ".max_flat_workgroup_size", where);
  if (DocNode* args = r.find(m, ".args")) {
    if (!args->isArray()) r.fail(where + ".args is not an array");
    auto& arr = args->getArray();
    for (size_t i = 0; i < arr.size(); ++i)
      k.args.push_back(parse_arg(r, arr[i], where + ".args[" + std::to_string(i) + "] "));
  }
  return k;
}

// msgpack::Document keeps maps in a std::map whose key comparison reaches llvm_unreachable for array, map
// and extension keys (a trap in release builds), so the blob is first walked with LLVM's streaming
// msgpack::Reader and refused unless every map key is a scalar. Returns the problem, or "" when fine.
std::string check_map_keys(std::string_view blob) {
  llvm::msgpack::Reader reader(llvm::StringRef(blob.data(), blob.size()));
  struct Open {
    uint64_t items;  // objects still to read in this container (keys and values for maps)
    bool map;
  };
  std::vector<Open> stack;
  for (;;) {
    llvm::msgpack::Object obj;
    auto more = reader.read(obj);
    if (!more) return llvm::toString(more.takeError());
    if (!*more) return stack.empty() ? "" : "the note ends inside a map or array";
    if (!stack.empty()) {
      Open& top = stack.back();
      bool is_key = top.map && top.items % 2 == 0;
      if (is_key && (obj.Kind == Type::Array || obj.Kind == Type::Map || obj.Kind == Type::Extension))
        return "a map key is not a scalar";
      --top.items;
    }
    if (obj.Kind == Type::Array || obj.Kind == Type::Map) {
      uint64_t items = obj.Kind == Type::Map ? uint64_t(obj.Length) * 2 : uint64_t(obj.Length);
      if (items > blob.size()) return "a map or array is longer than the note";
      stack.push_back({items, obj.Kind == Type::Map});
    }
    while (!stack.empty() && stack.back().items == 0) stack.pop_back();
    if (stack.empty()) return ""; // one complete top-level object
  }
}

} // namespace

Metadata parse_metadata(std::string_view blob, std::string_view source) {
  Reader r(source);
  if (std::string problem = check_map_keys(blob); !problem.empty()) r.fail(problem);
  llvm::msgpack::Document doc;
  if (!doc.readFromBlob(llvm::StringRef(blob.data(), blob.size()), /*Multi=*/false))
    r.fail("the note is not valid msgpack");
  DocNode& root = doc.getRoot();
  if (!root.isMap()) r.fail("the root is not a map");
  MapDocNode& map = root.getMap();
  Metadata md;
  md.target = r.str(map, "amdhsa.target", "");
  DocNode* kernels = r.find(map, "amdhsa.kernels");
  if (!kernels) return md;
  if (!kernels->isArray()) r.fail("amdhsa.kernels is not an array");
  auto& arr = kernels->getArray();
  for (size_t i = 0; i < arr.size(); ++i) md.kernels.push_back(parse_kernel(r, arr[i], i));
  return md;
}

} // namespace isatune::codeobj::detail
