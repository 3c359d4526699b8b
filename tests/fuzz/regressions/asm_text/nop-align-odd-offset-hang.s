.fill 25// Wokorrgthrougwg] = sum oign 8
.type ldr_seduce,@function
ce:                  // 
.globl lds_redube
.p2align 8
.type ldr_sd_uere,@function
ld3_rzeduce:                              // s[1:1]=ke84+111212111,8