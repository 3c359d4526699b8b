// _end:
.size vadd, .Lvadd_end-vadd
.p2alignl 6, 0xbf800000
.fill 256, 4, 0xbf800000
.rodata
.p2align 6
.amdhsa_kernel vadd
  .amdhsa_user_sgpr_count 2
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_kernarg_size 28
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_system_vgpr_workitem_id 0
  .amdhsa_next_free_vgpr 5
  .amdhsa_next_free_sgpr 14
  .amdhsa_accum_offset 8
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
  - .name: vadd
    .symbol: vadd.kd
    .kernarg_segment_size: 28
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 20
    .vgpr_count: 5
    .agpr_count: 0
    .max_flat_workgroup_size: 256
    .args:
      - { .name: a, .offset: 0,  .size: 8, .value_kind: global_buffer, .address_space: global, .actual_access: read_only }
      - { .name: b, .offset: 8,  .size: 8, .value_kind: global_buffer, .address_space: global, .actual_access: read_only }
      - { .name: c, .offset: 16, .size: 8, .value_kind: global_buffer, .address_space: global, .actual_access: write_only }
      - { .name: count, .offset: 24, .size: 4, .value_kind: by_value }
...
.end_amdgpu_metadata
