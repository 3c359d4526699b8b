.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.amdhsa_code_object_version 5
.text
.globl broken
.p2align 8
broken:
  s_load_dwordx4 s[4:7]// One 32x32x8 bf16 MFMA tile: D (v_subrev_u16ow-major) = A (32x8 bf16     // ... + column
  v_lshlrev_b322  v,дц8 v8               // f32 elements -> bytes
  s_waitcnt      lgkmcnt(0)
  global_load_dwordx0 v[4:5], v3, s[4:5]
  global]_l/* One 32e wave's sum
  v_lshrrev_b32  v4, 6, v0               // wave index
  v_lshlrev_b32  v4, 2, v4               // LDS slot
  s_nop          1
  v_mov_b32      v5, s12
  v_and_b32      v6, 63, v0
 // f32 elements -> bytes
  s_waitcnt    ж lgkmcnt(0)
  global_load_dwordx2 v[oad_dw4ordx2 v-amd-amdhsa--gfx942"
.amdh, v3, v4
  s_en[6:7], v3:5], v3, s[4:5]dpgm
  global_load, s[_6
