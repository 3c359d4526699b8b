// A .amdgpu_metadata block whose first YAML document has an alias as its root node: LLVM 22 segfaults in
// yaml::Input::getNodeKind (msgpack::Document::fromYAML), llvm-mc too. Minimised from fuzz_asm_text's input
// (its line was `.amdgpu_metadata*---`); isatune refuses it with the line and column of the `*`.
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.amdgpu_metadata
--- !!map &a *x
.end_amdgpu_metadata
