#include "tensor_map_arg.h"

#include <charconv>
#include <vector>

#include "isatune/error.h"

namespace isatune::cli {

namespace {

struct TypeName {
  const char* name;
  TensorMapDataType type;
  uint32_t bytes;
};
constexpr TypeName kTypes[] = {
    {"u8", TensorMapDataType::uint8, 1},      {"u16", TensorMapDataType::uint16, 2},
    {"u32", TensorMapDataType::uint32, 4},    {"i32", TensorMapDataType::int32, 4},
    {"u64", TensorMapDataType::uint64, 8},    {"i64", TensorMapDataType::int64, 8},
    {"f16", TensorMapDataType::float16, 2},   {"bf16", TensorMapDataType::bfloat16, 2},
    {"f32", TensorMapDataType::float32, 4},   {"f64", TensorMapDataType::float64, 8},
    {"tf32", TensorMapDataType::tfloat32, 4},
};

uint32_t element_bytes(TensorMapDataType t) {
  for (const auto& n : kTypes)
    if (n.type == t) return n.bytes;
  return 1;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    auto at = s.find(sep, pos);
    out.push_back(s.substr(pos, at == std::string::npos ? std::string::npos : at - pos));
    if (at == std::string::npos) return out;
    pos = at + 1;
  }
}

} // namespace

bool is_tensor_map_arg(const std::string& text) { return text.rfind("tmap:", 0) == 0; }

TensorMapArg parse_tensor_map_arg(size_t index, const std::string& text) {
  auto fail = [&](const std::string& why) -> void {
    throw InputError("--arg " + std::to_string(index) + " '" + text + "': " + why);
  };
  const char* usage = "expected tmap:BUF:TYPE:DIMS:box=BOX[:strides=S][:swizzle=none|32B|64B|128B][:elemstrides=E]"
                      "[:interleave=none|16B|32B][:oob=zero|nan][:l2=none|64B|128B|256B]";
  auto parts = split(text, ':');
  if (parts.size() < 4 || parts[0] != "tmap") fail(usage);
  TensorMapArg out;
  out.buffer = parts[1];
  if (out.buffer.empty()) fail("BUF (the buffer argument's index or name) is empty");
  out.type_name = parts[2];
  bool found = false;
  for (const auto& t : kTypes)
    if (out.type_name == t.name) {
      out.args.data_type = t.type;
      found = true;
    }
  if (!found) fail("unknown element type '" + out.type_name + "' (u8 u16 u32 i32 u64 i64 f16 bf16 f32 f64 tf32)");

  // A list of positive integers joined by 'x', 1..max entries.
  auto numbers = [&](const std::string& what, const std::string& s, size_t max) {
    std::vector<uint64_t> v;
    for (const auto& p : split(s, 'x')) {
      uint64_t x = 0;
      auto [e, ec] = std::from_chars(p.data(), p.data() + p.size(), x);
      if (p.empty() || ec != std::errc() || e != p.data() + p.size() || x == 0)
        fail(what + " '" + s + "': expected positive integers joined by 'x', innermost first (e.g. 64x128)");
      v.push_back(x);
    }
    if (v.size() > max) fail(what + " '" + s + "': at most " + std::to_string(max) + " entries");
    return v;
  };
  auto dims = numbers("DIMS", parts[3], 5);
  out.args.rank = uint32_t(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) out.args.global_dim[i] = dims[i];

  bool have_box = false, have_strides = false;
  for (size_t i = 4; i < parts.size(); ++i) {
    auto eq = parts[i].find('=');
    if (eq == std::string::npos) fail("'" + parts[i] + "': expected KEY=VALUE; " + usage);
    std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
    if (key == "box") {
      auto b = numbers("box", value, 5);
      if (b.size() != dims.size())
        fail("box '" + value + "' has " + std::to_string(b.size()) + " entries; DIMS has " +
             std::to_string(dims.size()));
      for (size_t d = 0; d < b.size(); ++d) {
        if (b[d] > 256) fail("box '" + value + "': entry " + std::to_string(d) + " exceeds 256 elements");
        out.args.box_dim[d] = uint32_t(b[d]);
      }
      have_box = true;
    } else if (key == "strides") {
      auto s = numbers("strides", value, 4);
      if (s.size() + 1 != dims.size())
        fail("strides '" + value + "' needs " + std::to_string(dims.size() - 1) +
             " entries (bytes between indices of dimensions 1..rank-1)");
      for (size_t d = 0; d < s.size(); ++d) out.args.global_strides[d] = s[d];
      have_strides = true;
    } else if (key == "elemstrides") {
      auto e = numbers("elemstrides", value, 5);
      if (e.size() != dims.size())
        fail("elemstrides '" + value + "' has " + std::to_string(e.size()) + " entries; DIMS has " +
             std::to_string(dims.size()));
      for (size_t d = 0; d < e.size(); ++d) out.args.element_strides[d] = uint32_t(e[d]);
    } else if (key == "swizzle") {
      if (value == "none") out.args.swizzle = TensorMapSwizzle::none;
      else if (value == "32B") out.args.swizzle = TensorMapSwizzle::b32;
      else if (value == "64B") out.args.swizzle = TensorMapSwizzle::b64;
      else if (value == "128B") out.args.swizzle = TensorMapSwizzle::b128;
      else fail("swizzle '" + value + "': expected none, 32B, 64B or 128B");
    } else if (key == "interleave") {
      if (value == "none") out.args.interleave = TensorMapInterleave::none;
      else if (value == "16B") out.args.interleave = TensorMapInterleave::b16;
      else if (value == "32B") out.args.interleave = TensorMapInterleave::b32;
      else fail("interleave '" + value + "': expected none, 16B or 32B");
    } else if (key == "oob") {
      if (value == "zero") out.args.oob_fill = TensorMapOobFill::none;
      else if (value == "nan") out.args.oob_fill = TensorMapOobFill::nan_request_zero_fma;
      else fail("oob '" + value + "': expected zero or nan");
    } else if (key == "l2") {
      if (value == "none") out.args.l2_promotion = TensorMapL2Promotion::none;
      else if (value == "64B") out.args.l2_promotion = TensorMapL2Promotion::l2_64b;
      else if (value == "128B") out.args.l2_promotion = TensorMapL2Promotion::l2_128b;
      else if (value == "256B") out.args.l2_promotion = TensorMapL2Promotion::l2_256b;
      else fail("l2 '" + value + "': expected none, 64B, 128B or 256B");
    } else {
      fail("unknown key '" + key + "' (box, strides, swizzle, elemstrides, interleave, oob, l2)");
    }
  }
  if (!have_box) fail("box=BOX is required (elements per dimension that one copy moves, e.g. box=64x64)");
  if (!have_strides) { // packed: each dimension directly after the previous one
    uint64_t stride = dims[0] * element_bytes(out.args.data_type);
    for (size_t d = 1; d < dims.size(); ++d) {
      out.args.global_strides[d - 1] = stride;
      stride *= dims[d];
    }
  }
  return out;
}

} // namespace isatune::cli
