// fuzz_asm_text's timeout: `.fill 37e` is a count LLVM 22 reads as a huge number, and it builds the bytes in memory
// (llvm-mc-22 reached 23 GB in 220 s). isatune refuses more than 64 MiB from .fill/.space/.skip/.zero in one object.
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.fill 37e
