#pragma once
// Stand-in for a header that CUDA 13 no longer ships. clang's CUDA runtime
// wrapper still includes it unconditionally; the texture-reference fetch
// functions it used to declare were removed from CUDA, and nothing in the
// corpus uses textures, so an empty header is enough for syntax checking.
