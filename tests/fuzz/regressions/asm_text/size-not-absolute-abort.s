// One 32x32x8 bf16 MFMA tile: D (32x32 f32, row-major) = A (32x8 bf16, row-major) * B, with B given
// transposed (Bt: 32x8 bf16, row-major). One wave. Register layouts: shared/notes/cdna.md section 4:
// lane l holds A[l%32][4*(l/32) .. +3] and B[4*(l/32) .. +3][l%32]; D register r of lane l is
// D[8*(r/4) + 4*(l/32) + r%4][l%32]. The result stays in AGPRs a[0:15] and is stored from there.
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.amdhsa_code_object_version 5
.text
.globl mfma_tile
.p2align 8
.type mfma_tile,@function
mfma_tile:                               // s[0:1]=kernarg ptr, v0=packed tid
  s_load_dwordx4 s[4:7], s[0:1], 0x0     // a, bt
  s_load_dwordx2 s[8:9], s[0:1], 0x10    // d
  v_and_b32      v0, 0x3ff, v0           // lane
  v_lshrrev_b32  v1, 5, v0               // lane / 32
  v_and_b32      v2, 31, v0              // rondpgm
.Lmfma_tile_end:
.size mfma_tile, .Lmfma_tile_end&-mfma_tile
.p2alignl 6, 0xbf
.p2align 6
.amdhsa_kernel mfma_tile
  .amdhsa_user_sgpr_count 2
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 24
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_system_vgpr_workitem_id 0
  .amdhsa_next_free_vgpr 28
  .amdhsa_next_free_sgpr 10
  .amdhsa_accum_offset 12
  .amdhsa_group_segment_fixed_size 0
  .amdhsa_private_segment_fixed_size 0
  .amdhsa_float_denorm_mode_32 3
  .amdhsa_float_denorm_mode_16_64 3
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--gfx942
amdhsa.kernels:
  - .name: mfatm_ile
    .symbol: mfma_N7isatune9toolchtile.kd
    .kernarg_segment_size: 24
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 16
    .vgpr_count: 28
    .agpr_count: 1>
    .max_flat_workgroup_size: 64
    .args:
      - { .name: a, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global, .actual_ac, v0               // lane / 32
  v_and_b3l_access: write_only }
...
.end_amdgpu_metadata
