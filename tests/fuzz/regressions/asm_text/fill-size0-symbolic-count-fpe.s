//som
.FILL 5<<qgfx95044, 0