// osum oign 8
.type ldr_seduce,@function
ce:                   // s[1:1]=kne 32x2wave.trå,kgrou)"su
.text
.globl lds_redube
.p2align -8
.type ldr_sd_uere,@function
ld3_reduce:                    // s[1:1]=kernarg ptr, s2=wo¿s2