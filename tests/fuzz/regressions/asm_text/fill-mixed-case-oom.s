// fuzz_asm_text's out-of-memory (3.1 GB, 384,257 executions into the eighth session's run): LLVM matches `.fIll`
// as `.fill` but looks isatune's bounding handlers up case-sensitively, so the 3.2 GB fill went to LLVM's own.
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.fIll 0xbf800000
.FILL 1<<40, 4
