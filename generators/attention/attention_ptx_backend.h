#pragma once
// The NVIDIA half of the attention generator. Signature, problem, buffers, scalars, the kernel-argument
// layout (attention_common.h: pack_kernargs) and the float64 reference are shared with the CDNA kernels
// (attention_generator.cpp); what differs per PTX kernel family is here: the space, the PTX and the geometry.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "attention_common.h"

namespace isatune::gen::attention {

class AttentionPtxBackend {
public:
  virtual ~AttentionPtxBackend() = default;
  virtual std::vector<std::string> targets() const = 0; // "sm_80"
  virtual Space space(const std::string& isa, const AttnSig& sig) const = 0;
  virtual std::vector<std::string> constraint_descriptions(const std::string& isa) const = 0;
  // Throws InputError naming the parameter or the rule when the point is outside the space.
  virtual Generated generate(const std::string& isa, const AttnSig& sig, const Params& params) const = 0;
  // `kernargs` is pack_kernargs()'s (for the buffers at `addresses`: q, k, v, o, lse); the backend sets
  // kernel, geometry and shared memory (and may put tensor maps in front of the arguments).
  virtual Launch launch(const std::string& isa, const AttnSig& sig, const Params& params,
                        const AttnShape& shape, std::span<const uint64_t> addresses,
                        std::vector<uint8_t> kernargs) const = 0;
};

// Each family adds its factory to attention_ptx_backends() in attention_generator.cpp.
std::vector<const AttentionPtxBackend*> attention_ptx_backends();
const AttentionPtxBackend* attention_ptx_backend(const std::string& isa); // nullptr when none serves it

std::unique_ptr<AttentionPtxBackend> make_attention_sm80_backend();  // mma.sync: attention_sm80.cpp
std::unique_ptr<AttentionPtxBackend> make_attention_sm90a_backend(); // wgmma + TMA: attention_sm90a.cpp

} // namespace isatune::gen::attention
