#pragma once
// Valid CDNA kernels from fuzz input: the first byte picks the target, each following three bytes pick a form
// the target has (two bytes) and one of its samples (cdna/sample.h: aligned registers of every allowed file,
// inline constants, literals, modifiers); branch samples jump to the end label, so every kernel ends.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "isatune/cdna/builder.h"
#include "isatune/cdna/form.h"
#include "isatune/cdna/sample.h"
#include "isatune/cdna/target.h"

namespace isatune::fuzz {

inline cdna::Kernel random_kernel(const uint8_t* data, size_t size, size_t max_instructions = 48) {
  using namespace cdna;
  const auto& targets = all_targets();
  const TargetInfo& target = targets[size ? data[0] % targets.size() : 1];
  std::vector<const Form*> forms;
  for (const Form& f : all_forms())
    if (f.available_on(target.gfx)) forms.push_back(&f);
  Builder b(parse_target_id(std::string(target.name)), "fuzz");
  Label end = b.label("end");
  for (size_t i = 1; i + 3 <= size && (i - 1) / 3 < max_instructions; i += 3) {
    const Form& form = *forms[(size_t(data[i]) << 8 | data[i + 1]) % forms.size()];
    const std::vector<Instruction> samples = sample_instructions(form, target.gfx, end);
    if (samples.empty()) continue;
    const Instruction& s = samples[data[i + 2] % samples.size()];
    b.emit(form.name, s.operands(), s.modifiers());
  }
  b.bind(end);
  b.s_endpgm();
  return b.finish();
}

} // namespace isatune::fuzz
