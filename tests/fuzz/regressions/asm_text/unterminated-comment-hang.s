  global]_l/* One 32e wave's sum
