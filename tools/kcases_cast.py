"""CAST to and from bool and uint32 (bundles cast_<in>_<out>).

The pinned wheel's CAST runs every pair of bool, int8, int16, int32, uint32 and float32
(the audio preprocessor casts uint32 <-> int32); the older bundles cover int8, int16, int32
and float32 among themselves. These are drawn as those (gen_cast): shapes of up to a few
hundred bytes, integer inputs over their whole range (bool 0/1), float inputs of magnitude up
to 1e10 with 15% special values (infinities, NaN, denormals, bounds), so the out-of-range
float -> uint32 conversions show what the wheel's build does with them.
"""

TYPES = ("bool", "int8", "int16", "int32", "uint32", "float32")
OLD = ("int8", "int16", "int32", "float32")


def register(g):
    pairs = tuple(f"{a}_{b}" for a in TYPES for b in TYPES
                  if a != b and not (a in OLD and b in OLD))
    return [("cast", "CAST", g.gen_cast, pairs)]
