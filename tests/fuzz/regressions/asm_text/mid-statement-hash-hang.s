  s_nop 0 # it's
