#include <gtest/gtest.h>

#include "isatune/cdna/allocator.h"
#include "isatune/cdna/builder.h"
#include "isatune/error.h"

using namespace isatune;
using namespace isatune::cdna;

TEST(Registers, Printing) {
  EXPECT_EQ(to_string(v(4)), "v4");
  EXPECT_EQ(to_string(v(4, 4)), "v[4:7]");
  EXPECT_EQ(to_string(s(0, 2)), "s[0:1]");
  EXPECT_EQ(to_string(a(0, 16)), "a[0:15]");
  EXPECT_EQ(to_string(vcc()), "vcc");
  EXPECT_EQ(to_string(exec_lo()), "exec_lo");
  EXPECT_TRUE(vcc().overlaps(vcc_hi()));
  EXPECT_FALSE(vcc().overlaps(exec()));
  EXPECT_TRUE(v(4, 4).overlaps(v(7)));
  EXPECT_FALSE(v(4, 4).overlaps(a(4)));
}

TEST(Registers, AlignmentRules) {
  EXPECT_NO_THROW(check_alignment(v(4, 2)));
  EXPECT_THROW(check_alignment(v(3, 2)), InputError);
  EXPECT_THROW(check_alignment(a(1, 4)), InputError);
  EXPECT_NO_THROW(check_alignment(v(3)));
  EXPECT_NO_THROW(check_alignment(s(2, 2)));
  EXPECT_THROW(check_alignment(s(1, 2)), InputError);
  EXPECT_THROW(check_alignment(s(2, 4)), InputError);
  EXPECT_NO_THROW(check_alignment(s(8, 8)));
  EXPECT_THROW(check_alignment(v(0, 9)), InputError);
  try {
    check_alignment(v(3, 4));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("misaligned"), std::string::npos) << e.what();
  }
}

TEST(Allocator, AlignsRanges) {
  RegisterAllocator sg(RegFile::sgpr, 102);
  EXPECT_EQ(sg.alloc(1).index, 0);
  EXPECT_EQ(sg.alloc(2).index, 2);  // pair: even
  EXPECT_EQ(sg.alloc(4).index, 4);  // x4: 4-aligned
  EXPECT_EQ(sg.alloc(1).index, 1);  // first fit fills the hole
  EXPECT_EQ(sg.alloc(16).index, 8); // x16: 4-aligned
  EXPECT_EQ(sg.high_water(), 24);
  RegisterAllocator vg(RegFile::vgpr, 256);
  EXPECT_EQ(vg.alloc(1).index, 0);
  EXPECT_EQ(vg.alloc(3).index, 2); // multi-dword VGPR: even
  EXPECT_EQ(vg.alloc(1).index, 1);
  EXPECT_EQ(vg.alloc(4, 8).index, 8); // explicit alignment
}

TEST(Allocator, FreeReuseAndHighWater) {
  RegisterAllocator ag(RegFile::agpr, 256);
  Reg r = ag.alloc(16);
  Reg q = ag.alloc(16);
  EXPECT_EQ(q.index, 16);
  ag.free(r);
  EXPECT_EQ(ag.alloc(4).index, 0);
  EXPECT_EQ(ag.high_water(), 32);
  EXPECT_EQ(ag.in_use(), 20);
  EXPECT_THROW(ag.free(a(100)), InputError);
  EXPECT_THROW(ag.reserve(a(18)), InputError); // overlaps q
  EXPECT_THROW(ag.free(v(0)), InputError);     // wrong file
}

TEST(Allocator, ExhaustionNamesTheFile) {
  RegisterAllocator vg(RegFile::vgpr, 256);
  for (int i = 0; i < 16; ++i)
    vg.alloc(16);
  try {
    vg.alloc(1, 1, "accumulator");
    FAIL();
  } catch (const InputError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("out of VGPRs"), std::string::npos) << w;
    EXPECT_NE(w.find("accumulator"), std::string::npos) << w;
    EXPECT_NE(w.find("256 of 256"), std::string::npos) << w;
  }
  RegisterAllocator sg(RegFile::sgpr, 102);
  sg.alloc(1);
  for (int i = 0; i < 24; ++i)
    sg.alloc(4);
  // s0 and s4..s99 used: s1..s3 and s100..s101 are free but hold no 4-aligned run of 4.
  EXPECT_THROW(sg.alloc(4), InputError);
  EXPECT_EQ(sg.alloc(2).index, 2);
  EXPECT_EQ(sg.alloc(2).index, 100);
  EXPECT_EQ(sg.alloc(1).index, 1);
  EXPECT_THROW(sg.alloc(1), InputError);
}

TEST(Allocator, BuilderReservesEntryRegisters) {
  EntryOptions e;
  e.workgroup_id_y = true;
  Builder b(parse_target_id("gfx942"), "k", e);
  EXPECT_EQ(b.kernarg_ptr(), s(0, 2));
  EXPECT_EQ(b.workgroup_id(0), s(2));
  EXPECT_EQ(b.workgroup_id(1), s(3));
  EXPECT_THROW(b.workgroup_id(2), InputError);
  EXPECT_EQ(b.workitem_ids(), v(0));
  EXPECT_EQ(b.alloc_s(1).index, 4);
  EXPECT_EQ(b.alloc_v(1).index, 1);
  EXPECT_EQ(b.alloc_v(2).index, 2);
  EXPECT_EQ(b.alloc_s(4).index, 8);
}
