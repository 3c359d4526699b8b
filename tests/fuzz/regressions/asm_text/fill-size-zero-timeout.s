// fuzz_asm_text's second .fill timeout: size 0 makes no byte, but LLVM 22 loops once per value (2e56 is read as a
// huge count). isatune counts a value of size 0 as a byte against its 64 MiB bound.
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.fill 2e56,00000
