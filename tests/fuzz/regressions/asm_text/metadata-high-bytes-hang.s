0el
.amdgpu_metadata:0:‹°:
"" """s=wr*tid
"".""‹07ata
