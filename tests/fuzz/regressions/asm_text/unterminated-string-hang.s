gc-gfÃx94/"
.amdhsacÿde_!objgm
