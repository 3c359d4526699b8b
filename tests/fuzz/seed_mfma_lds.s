.amdgcn_target "@TARGET@"
.amdhsa_code_object_version 5
.text
.globl mfma_lds
.p2align 8
.type mfma_lds,@function
mfma_lds:
  s_load_dwordx2 s[8:9], s[2:3], 0x0
  v_mov_b32 v20, 0
  ds_write_b32 v20, v0 offset:128
  v_accvgpr_write_b32 a100, v0
  v_accvgpr_read_b32 v1, a100
  s_waitcnt lgkmcnt(0)
  global_store_dword v20, v1, s[8:9]
  s_endpgm
.Lmfma_lds_end:
.size mfma_lds, .Lmfma_lds_end-mfma_lds
.p2alignl 6, 0xbf800000
.fill 256, 4, 0xbf800000
.rodata
.p2align 6
.amdhsa_kernel mfma_lds
  .amdhsa_user_sgpr_dispatch_ptr 1
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_user_sgpr_kernarg_preload_length 2
  .amdhsa_user_sgpr_kernarg_preload_offset 0
  .amdhsa_kernarg_size 40
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_system_sgpr_workgroup_id_y 1
  .amdhsa_system_sgpr_workgroup_info 1
  .amdhsa_system_vgpr_workitem_id 2
  .amdhsa_next_free_vgpr 125
  .amdhsa_next_free_sgpr 95
  .amdhsa_accum_offset 24
  .amdhsa_group_segment_fixed_size 16384
  .amdhsa_private_segment_fixed_size 0
  .amdhsa_float_round_mode_32 1
  .amdhsa_float_denorm_mode_32 0
  .amdhsa_float_denorm_mode_16_64 3
  .amdhsa_ieee_mode 0
  .amdhsa_dx10_clamp 0
  .amdhsa_tg_split 1
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: @TARGET@
amdhsa.kernels:
  - .name: mfma_lds
    .symbol: mfma_lds.kd
    .kernarg_segment_size: 40
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 16384
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 101
    .vgpr_count: 125
    .agpr_count: 101
    .max_flat_workgroup_size: 1024
    .args:
      - { .name: out, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global, .actual_access: write_only }
      - { .offset: 8, .size: 4, .value_kind: by_value }
      - { .offset: 16, .size: 4, .value_kind: hidden_block_count_x }
      - { .offset: 24, .size: 8, .value_kind: hidden_global_offset_x }
...
.end_amdgpu_metadata
