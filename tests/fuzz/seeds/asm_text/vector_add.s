// Vector add c[i] = a[i] + b[i] for i < count; 256 threads per workgroup. Taken from shared/notes/cdna.md.
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.amdhsa_code_object_version 5
.text
.globl vadd
.p2align 8
.type vadd,@function
vadd:                                  // s[0:1]=kernarg ptr, s2=workgroup_id_x, v0=packed tid
  s_load_dwordx4 s[4:7], s[0:1], 0x0   // a, b
  s_load_dwordx2 s[8:9], s[0:1], 0x10  // c
  s_load_dword   s10,    s[0:1], 0x18  // count
  v_and_b32      v0, 0x3ff, v0
  s_lshl_b32     s2, s2, 8             // wg * 256
  v_add_u32      v1, s2, v0            // gid
  s_waitcnt      lgkmcnt(0)
  v_cmp_gt_u32   vcc, s10, v1
  s_and_saveexec_b64 s[12:13], vcc
  s_cbranch_execz .Lend
  v_lshlrev_b32  v2, 2, v1
  global_load_dword v3, v2, s[4:5]
  global_load_dword v4, v2, s[6:7]
  s_waitcnt      vmcnt(0)
  v_add_f32      v3, v3, v4
  global_store_dword v2, v3, s[8:9]
.Lend:
  s_endpgm
.Lvadd_end:
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
