#pragma once
// The generator contract (DESIGN.md "Core concepts"): a kernel family that, for a target, a signature (data
// types, layouts, epilogue) and a point of its tuning space, emits one kernel; that says how to lay out the
// buffers of a problem (M, N, K, rows ...), how to launch it (grid, block, kernarg bytes) and what the answer
// is (a float64 CPU reference). Generators are pure: the same inputs give the same text.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "isatune/cdna/kernel.h"
#include "isatune/gen/dtype.h"
#include "isatune/gen/space.h"
#include "isatune/tensor_map_args.h"

namespace isatune::gen {

// One field of a generator's signature: `a=bf16`, `layout=NT`.
struct SignatureField {
  std::string name;
  std::vector<std::string> values; // the allowed values; the first is the default
  std::string help;
};

// One dimension of a problem: `M=4096`. Optional ones (leading dimensions) default to 0, meaning "derived".
struct ProblemField {
  std::string name;
  int64_t min = 1;
  int64_t max = int64_t(1) << 31;
  bool required = true;
  std::string help;
};

using Signature = std::map<std::string, std::string>; // every field of the schema, defaults filled in
using Problem = std::map<std::string, int64_t>;       // every required field; optional ones when given
using Params = std::map<std::string, Value>;          // one value per parameter of the space

enum class BufferRole { input, output, workspace };

// A buffer of a problem. The harness allocates `elements` of `dtype`, fills inputs with random values in
// [init_lo, init_hi] (outputs with other random values, workspaces with zero bytes), and compares outputs on
// rows x cols elements at row_stride, row by row, against the reference.
struct BufferSpec {
  std::string name;
  DType dtype = DType::f32;
  BufferRole role = BufferRole::input;
  uint64_t elements = 0;
  uint64_t rows = 1, cols = 0, row_stride = 0; // the logical matrix (outputs are checked over it)
  double init_lo = -1, init_hi = 1;
  // Errors relative to the largest |reference| of the whole rows x cols matrix instead of the row's own: for
  // outputs whose rows carry no scale of their own (a GEMM's D, whose check rows are stored columns of M
  // elements; with M = 1 a row norm would be the element itself, an ill-conditioned relative error).
  bool matrix_norm = false;
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// A CUtensorMap kernel argument (TMA, sm_90+): the device encodes `map` (global_address already the buffer's
// device address) at launch time and writes its 128 bytes into Launch::kernargs at `kernarg_offset`, which
// the generator left zero and 64-byte aligned. On a GPU the CUDA driver encodes it; on the emulator, the
// emulator (loader::Device::encode_tensor_map).
struct TensorMapParam {
  uint32_t kernarg_offset = 0;
  TensorMapTiledArgs map;
};

// One kernel launch of a problem, with its packed kernel arguments.
struct Launch {
  std::string kernel; // symbol of the kernel in the generated code
  Dim3 grid;          // in workgroups (CTAs)
  Dim3 block;         // threads per workgroup
  std::vector<uint8_t> kernargs;
  uint32_t dynamic_shared_bytes = 0;       // NVIDIA: dynamic shared memory per CTA (above 48 KiB needs opt-in)
  Dim3 cluster;                            // NVIDIA sm_90+: CTAs per cluster; 1,1,1: no cluster
  std::vector<TensorMapParam> tensor_maps; // NVIDIA sm_90+: encoded by the device into kernargs
};

// True for the NVIDIA PTX targets ("sm_80", "sm_90a"); CDNA targets are "gfx...".
bool is_ptx_isa(std::string_view isa);

// What a generator emits for one variant. Per ISA family: a CDNA generator gives the assembly text and its
// kernel IR (the assembler's fast path); a PTX generator gives the PTX module's text (ptx::print), which
// ptxas compiles for a GPU and the PTX emulator runs as it is.
struct Generated {
  std::string isa;                   // "gfx942", "sm_90a"
  std::string kernel_name;
  std::string text;                  // CDNA assembly or a PTX module, ready for the toolchain
  std::optional<cdna::Kernel> cdna;  // CDNA only: the kernel IR, for fast paths and inspection
};

// FLOPs and compulsory bytes of a problem, for the roofline estimate.
struct Work {
  double flops = 0;
  double bytes = 0;
  bool matrix = false; // the FLOPs run on the matrix cores (MFMA) at the input type's rate, else vector f32
};

class Generator {
public:
  virtual ~Generator() = default;
  virtual std::string name() const = 0;        // "gemm", "softmax", "rmsnorm", "layernorm"
  virtual std::string description() const = 0; // one line
  virtual std::vector<std::string> targets() const = 0; // ISAs it generates for
  virtual std::vector<SignatureField> signature_schema() const = 0;
  virtual std::vector<ProblemField> problem_schema() const = 0;

  // The tuning space for a target and signature: parameters and constraints (target limits included).
  virtual Space space(const std::string& isa, const Signature& sig) const = 0;
  // The constraints of space(), one line each in words, for `isatune space` and the docs.
  virtual std::vector<std::string> constraint_descriptions(const std::string& /*isa*/, const Signature&) const {
    return {};
  }
  // Throws InputError naming the parameter when the point is outside the space.
  virtual Generated generate(const std::string& isa, const Signature& sig, const Params& params) const = 0;

  // Buffers of a problem, in kernel-argument order (the order of `addresses` in launches()).
  virtual std::vector<BufferSpec> buffers(const Signature& sig, const Problem& problem) const = 0;
  // Scalars of a problem that are not buffers (alpha, beta, epsilon), drawn by the harness per run: the
  // generator names them and their ranges; defaults none.
  virtual std::map<std::string, std::pair<double, double>> scalars(const Signature&) const { return {}; }
  // The launches of a problem for a variant generated for `isa` (kernels, geometry and kernel arguments are
  // per ISA family).
  virtual std::vector<Launch> launches(const std::string& isa, const Signature& sig, const Params& params,
                                       const Problem& problem,
                                       std::span<const uint64_t> addresses,
                                       const std::map<std::string, double>& scalars) const = 0;
  // float64 reference: `buffers` holds every buffer's values (inputs as stored, i.e. already rounded to their
  // type); it writes the exact results into the output buffers.
  virtual void reference(const Signature& sig, const Problem& problem, const std::map<std::string, double>& scalars,
                         std::vector<std::vector<double>>& buffers) const = 0;
  virtual Work work(const Signature& sig, const Problem& problem) const = 0;
  // The output's data type, for the tolerance.
  virtual DType output_dtype(const Signature& sig) const = 0;
};

// Every generator isatune has, by name.
std::vector<const Generator*> all_generators();
// Throws InputError listing the known generators.
const Generator& find_generator(std::string_view name);

// "a=bf16,layout=NT" (or several "k=v" words) -> a full signature with defaults; InputError naming the field or
// value that is wrong and what is allowed.
Signature parse_signature(const Generator& g, std::span<const std::string> words);
// "M=128,N=256,K=64" -> a problem checked against the schema.
Problem parse_problem(const Generator& g, std::span<const std::string> words);
// "k=v" words -> params; parameters not given take the values of the first valid configuration that agrees with
// the given ones (InputError when none does, naming the parameters).
Params parse_params(const Space& space, std::span<const std::string> words);
Params params_of(const Space& space, const Config& config);
Config config_of(const Space& space, const Params& params); // InputError for a value not in the space
std::string format(const Signature& sig); // "a=bf16,b=bf16,layout=NT"
std::string format(const Problem& p);     // "M=128,N=256,K=64"
std::string format(const Params& p);      // "tile_m=64,tile_n=64,..."

// Helpers for generators: reading values of params with a clear error when missing.
int64_t param_int(const Params& p, const std::string& name);
std::string param_str(const Params& p, const std::string& name);

// Appends little-endian values to a kernarg buffer at their natural alignment.
class KernargWriter {
public:
  KernargWriter& u32(uint32_t v);
  KernargWriter& i32(int32_t v) { return u32(static_cast<uint32_t>(v)); }
  KernargWriter& f32(float v);
  KernargWriter& u64(uint64_t v);
  KernargWriter& at(uint32_t offset); // pads with zeros up to offset
  // Appends `bytes` zero bytes at `align` and returns their offset (a slot the device fills: a tensor map).
  uint32_t blank(uint32_t bytes, uint32_t align);
  uint32_t size() const { return uint32_t(bytes_.size()); }
  std::vector<uint8_t> bytes() const { return bytes_; }

private:
  void align(uint32_t a);
  std::vector<uint8_t> bytes_;
};

} // namespace isatune::gen
