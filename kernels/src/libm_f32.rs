//! More `f32` functions bit-compatible with the C library TFLM's float kernels call on the
//! reference host (glibc 2.36, x86-64 with FMA): `sinf`, `cosf`, `logf` and `sqrtf`, plus a
//! software [`fma`].
//!
//! On an x86-64 CPU with FMA, glibc's `sinf`, `cosf` and `logf` are the `*-fma`
//! variants its ifunc selects (`sysdeps/x86_64/fpu/multiarch`): the ARM optimized-routines
//! code of `sysdeps/ieee754/flt-32` (`s_sinf.c`, `s_cosf.c`, `s_sincosf.h`,
//! `sincosf_poly.h`, `e_logf.c`) built with `-mfma`, where GCC fuses every
//! `a * b + c` whose product feeds only additions. Kiln gives those bits on every target, by
//! one of two paths:
//!
//! **Portable** ([`sinf`], [`cosf`], [`logf`]; every target, and the host without FMA or
//! under Miri): the same bits as those `f64` operations in the same order, fused where GCC
//! fuses them, without a hardware `fma` (Cortex-M has none for `double`, nor has the x86-64
//! baseline):
//!
//! - The fused operations whose rounding matters most are computed exactly without `fma`:
//!   the sine/cosine reduction `x - n * pi/2` (`reduce_fast`: `pi/2` split so that every
//!   product is exact) and `logf`'s `z * invc - 1` (`logf_r`: `invc` split in halves).
//! - The polynomials run unfused (fast), and only where that `double` lies within `2^16`
//!   ulps of an `f32` rounding midpoint (a fraction 2^-12 of the calls) again fused with the
//!   exact software [`fma`]; the unfused one is provably within `2^7` ulps of the fused one
//!   (see `finish`), so both round to the same `f32`.
//!
//! **Fused** (`sincosf_fused`, `logf_fused`, `math::expf_fused`; the host, x86-64 with FMA3
//! detected at run time by `arch::x86::fma`): glibc's `-fma` operations as they are, each
//! `a * b + c` one fused multiply-add of the CPU (`MulAdd` implemented by `HostFma`), in
//! glibc's order. The element loops of SIN, COS, LOG, EXP (`sinf_map`, ...) and LOG_SOFTMAX
//! choose the path once per call (`with_host_fma`) and run the fused one inside a function
//! compiled for FMA (`arch::x86::Fma::run`), everything in it inlined: no call per element,
//! and no midpoint test. The polynomials and reductions are written once, generic over how
//! `a * b + c` is evaluated (`MulAdd`: `Unfused`, `SoftFma`, `HostFma`), so the paths
//! share their code but for the fused operations themselves.
//!
//! The unit tests check each step of the portable path (`reduce_fast_is_the_fused_reduction`,
//! `logf_r_is_the_fused_product`, `fast_path_within_its_bound`); compare the two paths on
//! every 4093rd bit pattern, the fused forms both with the software `fma` (every host, Miri
//! too) and with the host's instruction, directly and through the kernels' element loops
//! (`fused_forms_are_the_portable_functions`); and compare both paths with the host's C
//! library over a sweep of every float class (`same_bits_as_the_host_c_library`, every
//! 4099th bit pattern; so is [`crate::math::expf`], whose unfused operations give the FMA
//! variant's bits). `KILN_LIBM_SWEEP_STEP=1 cargo test --release -p kiln-kernels --lib
//! same_bits_as_the_host_c_library` compares all 2^32 bit patterns (on an x86-64 glibc host
//! with FMA; `KILN_LIBM_SWEEP_FNS=sin,cos` and `KILN_LIBM_SWEEP_PATHS=fused` narrow it).
//! Run so on 2026-12-02 (glibc 2.36, AMD EPYC, release build; 31 minutes on a shared core):
//! `sinf`, `cosf`, `logf`, `sqrtf` and `expm1f` gave the host's bits on every input, `expf`
//! on all but 2, which its fix (see [`crate::math`]) added to the sweep; then `sinf`,
//! `cosf`, `logf`, `expf` and `sqrtf` as committed compared once more on all 2^32 inputs:
//! no mismatch. The fused path (`KILN_LIBM_SWEEP_PATHS=fused`, `sinf`, `cosf`, `logf`,
//! `expf`) on all 2^32 inputs on 2026-12-02 (glibc 2.36, Intel Xeon with FMA3 and AVX-512,
//! release build; 20 minutes on a shared core): no mismatch; the portable path of the same
//! four functions, after their move to the generic polynomials, likewise (11 minutes).
//! `sqrtf` is correctly rounded (SSE `sqrtss`).
//! Invalid arguments give the x86 default NaN (`0xffc00000`, what `(x - x) / (x - x)` and
//! `sqrtss` produce there); a NaN argument is returned quieted.

/// The x86 "real indefinite" NaN that SSE arithmetic returns for invalid operations.
pub(crate) const DEFAULT_NAN: f32 = f32::from_bits(0xffc0_0000);

/// A NaN argument, quieted (what SSE arithmetic on it returns).
#[inline]
fn quiet(x: f32) -> f32 {
    f32::from_bits(x.to_bits() | 0x0040_0000)
}

/// `(sign, m, e)` with `|x| = m * 2^e` for a finite `x`.
#[inline]
fn split(x: f64) -> (bool, u128, i32) {
    let bits = x.to_bits();
    let sign = bits >> 63 != 0;
    let field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if field == 0 {
        (sign, frac as u128, -1074)
    } else {
        (sign, (frac | 1u64 << 52) as u128, field - 1075)
    }
}

/// `m * 2^e` moved to exponent `e_to` (left, or right with the lost bits ORed into bit 0).
#[inline]
fn align(m: u128, e: i32, e_to: i32) -> u128 {
    if e >= e_to {
        m << (e - e_to)
    } else {
        let d = (e_to - e) as u32;
        if d >= 128 {
            u128::from(m != 0)
        } else {
            (m >> d) | u128::from(m & ((1u128 << d) - 1) != 0)
        }
    }
}

/// `a * b + c` rounded once to nearest (ties to even), as the FMA instruction. For finite
/// operands whose result is a normal number (the only ones the functions here pass); others
/// fall back to `a * b + c`.
pub fn fma(a: f64, b: f64, c: f64) -> f64 {
    if !(a.is_finite() && b.is_finite() && c.is_finite()) || a == 0.0 || b == 0.0 {
        return a * b + c;
    }
    let (sa, ma, ea) = split(a);
    let (sb, mb, eb) = split(b);
    let (sp, mp, ep) = (sa ^ sb, ma * mb, ea + eb);
    let (sc, mc, ec) = if c == 0.0 { (sp, 0u128, ep) } else { split(c) };
    let top = |m: u128, e: i32| e + (128 - m.leading_zeros()) as i32;
    let e = top(mp, ep).max(top(mc, ec)) - 126;
    let (mp, mc) = (align(mp, ep, e), align(mc, ec, e));
    let (sign, s) = if sp == sc {
        (sp, mp + mc)
    } else if mp >= mc {
        (sp, mp - mc)
    } else {
        (sc, mc - mp)
    };
    if s == 0 {
        return 0.0;
    }
    let n = 128 - s.leading_zeros() as i32;
    let (mut q, mut e) = if n > 53 {
        let shift = (n - 53) as u32;
        let q = s >> shift;
        let rem = s & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rem > half || (rem == half && q & 1 == 1);
        (q + u128::from(up), e + shift as i32)
    } else {
        (s << (53 - n), e - (53 - n))
    };
    if q == 1u128 << 53 {
        q >>= 1;
        e += 1;
    }
    let field = e + 1075;
    if !(1..2047).contains(&field) {
        return a * b + c; // subnormal or overflowing result: not used here
    }
    let bits = (u64::from(sign) << 63) | ((field as u64) << 52) | (q as u64 & ((1u64 << 52) - 1));
    f64::from_bits(bits)
}

/// `sqrtf(x)`, correctly rounded: `-0` for `-0`, the default NaN below zero, a NaN quieted.
///
/// Newton's iteration for `1/sqrt` in `double` (three steps leave a relative error far below
/// half an `f32` ulp), times `x`, rounded to `f32`, then corrected exactly: the midpoints
/// between neighbouring `f32`s have 25 significant bits, so their squares are exact in
/// `double` and say on which side of each the root lies (never on one: no midpoint squared
/// is an `f32`). Written without branches (the special arguments chosen at the end), so that
/// a loop over elements vectorizes.
#[inline]
pub fn sqrtf(x: f32) -> f32 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse", not(miri)))]
    {
        crate::arch::x86::sqrt_f32(x)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse", not(miri))))]
    {
        sqrtf_soft(x)
    }
}

/// [`sqrtf`] in software (every target but x86-64, whose `sqrtss` gives the same bits).
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse", not(miri)),
    allow(dead_code)
)]
pub(crate) fn sqrtf_soft(x: f32) -> f32 {
    let bits = x.to_bits();
    let d = f64::from(x);
    // 1/sqrt(d) from the classic halved-exponent estimate (relative error below 4 %), three
    // Newton steps without division (below 1e-10), times d. (Garbage for the special
    // arguments, which do not use it.)
    let mut y = f64::from_bits(0x5fe6_eb50_c7b5_37a9u64.wrapping_sub(d.to_bits() >> 1));
    for _ in 0..3 {
        y *= 1.5 - 0.5 * d * y * y;
    }
    let t = d * y;
    let r = t as f32;
    // The root lies within 2^-25 of t, so if it rounds to a neighbour of r, that neighbour
    // is on t's side (and the root beyond their midpoint).
    let above = t > f64::from(r);
    let next = f32::from_bits(if above {
        r.to_bits().wrapping_add(1)
    } else {
        r.to_bits().wrapping_sub(1)
    });
    let mid = (f64::from(r) + f64::from(next)) * 0.5;
    let root = if (mid * mid < d) == above { next } else { r };
    // NaN, zeros, negative numbers and infinity.
    let special = if x.is_nan() {
        quiet(x)
    } else if bits & 0x7fff_ffff == 0 || x == f32::INFINITY {
        x
    } else {
        DEFAULT_NAN
    };
    if x > 0.0 && x < f32::INFINITY {
        root
    } else {
        special
    }
}

/// glibc's `__sincosf_table` (the second entry negates the cosine polynomial).
struct SinCos {
    sign: [f64; 4],
    hpi_inv: f64,
    c: [f64; 5],
    s: [f64; 3],
}

const fn sincos_table(neg: f64) -> SinCos {
    SinCos {
        sign: [1.0, -1.0, -1.0, 1.0],
        hpi_inv: f64::from_bits(0x4164_5f30_6dc9_c883), // 0x1.45F306DC9C883p+23
        c: [
            neg,
            neg * f64::from_bits(0xbfdf_ffff_fd0c_621c), // -0x1.ffffffd0c621cp-2
            neg * f64::from_bits(0x3fa5_5553_e106_8f19), // 0x1.55553e1068f19p-5
            neg * f64::from_bits(0xbf56_c087_e89a_359d), // -0x1.6c087e89a359dp-10
            neg * f64::from_bits(0x3ef9_9343_027b_f8c3), // 0x1.99343027bf8c3p-16
        ],
        s: [
            f64::from_bits(0xbfc5_5554_5995_a603), // -0x1.555545995a603p-3
            f64::from_bits(0x3f81_1076_0523_0bc4), // 0x1.1107605230bc4p-7
            f64::from_bits(0xbf29_94eb_3774_cf24), // -0x1.994eb3774cf24p-13
        ],
    }
}

const SINCOS: [SinCos; 2] = [sincos_table(1.0), sincos_table(-1.0)];

/// 4/PI to 192 bits, 8 new bits per entry (`__inv_pio4`).
const INV_PIO4: [u32; 24] = [
    0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529, 0x441529fc,
    0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0, 0x34ddc0db,
    0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
];

/// The top 12 bits of `x` without the sign (`abstop12`).
#[inline]
fn abstop12(x: f32) -> u32 {
    (x.to_bits() >> 20) & 0x7ff
}

/// How the functions' `a * b + c` are evaluated: [`Unfused`] (two roundings: the portable
/// fast path, see [`finish`]), or rounded once as glibc's `-fma` build does ([`Fused`]:
/// [`SoftFma`], or the host's instruction, [`HostFma`] on x86-64).
pub(crate) trait MulAdd: Copy {
    fn mul_add(self, a: f64, b: f64, c: f64) -> f64;

    /// `r` truncated to an integer, for `|r| < 2^31` (C's `(int32_t) r`; Rust's saturating
    /// `as i32` elsewhere, one instruction on x86-64).
    #[inline(always)]
    fn trunc_i32(self, r: f64) -> i32 {
        r as i32
    }
}

/// A [`MulAdd`] that rounds once: the polynomials and reductions with it are glibc's `-fma`
/// operations.
pub(crate) trait Fused: MulAdd {}

/// `a * b + c` with two roundings.
#[derive(Clone, Copy)]
pub(crate) struct Unfused;

impl MulAdd for Unfused {
    #[inline(always)]
    fn mul_add(self, a: f64, b: f64, c: f64) -> f64 {
        a * b + c
    }
}

/// `a * b + c` rounded once by the software [`fma`] (exact, slow).
#[derive(Clone, Copy)]
pub(crate) struct SoftFma;

impl MulAdd for SoftFma {
    #[inline(always)]
    fn mul_add(self, a: f64, b: f64, c: f64) -> f64 {
        fma(a, b, c)
    }
}

impl Fused for SoftFma {}

/// The host's fused multiply-add: `arch::x86::Fma`, the proof that the CPU has the
/// instruction (x86-64, not under Miri); elsewhere a stand-in type that is never run
/// ([`with_host_fma`] runs the portable function there).
#[cfg(all(target_arch = "x86_64", target_feature = "sse", not(miri)))]
pub(crate) use crate::arch::x86::Fma as HostFma;
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse", not(miri))))]
pub(crate) type HostFma = SoftFma;

#[cfg(all(target_arch = "x86_64", target_feature = "sse", not(miri)))]
impl MulAdd for HostFma {
    #[inline(always)]
    fn mul_add(self, a: f64, b: f64, c: f64) -> f64 {
        HostFma::mul_add(self, a, b, c)
    }

    #[inline(always)]
    fn trunc_i32(self, r: f64) -> i32 {
        crate::arch::x86::trunc_i32(r)
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse", not(miri)))]
impl Fused for HostFma {}

/// `portable(args)`, or where the host has an FMA instruction (x86-64 with FMA3, detected
/// once at run time; never under Miri) `fused(fma, args)`, compiled for it so that the
/// `mul_add`s of everything inlined into `fused` are single instructions. Both must give
/// the same result (the `-fma` build's bits); `args` is what both need, moved into the one
/// that runs.
#[inline(always)]
pub(crate) fn with_host_fma<A, R>(
    args: A,
    portable: impl FnOnce(A) -> R,
    fused: impl FnOnce(HostFma, A) -> R,
) -> R {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse", not(miri)))]
    if let Some(f) = crate::arch::x86::fma() {
        return f.run(
            #[inline(always)]
            || fused(f, args),
        );
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse", not(miri))))]
    let _ = fused;
    portable(args)
}

/// `output[i] = f(input[i])` with [`with_host_fma`]: `fused` (the function as glibc's `-fma`
/// build, on the host's instruction) where the host has FMA, else `portable`.
#[inline(always)]
pub(crate) fn map_f32(
    input: &[f32],
    output: &mut [f32],
    portable: impl Fn(f32) -> f32,
    fused: impl Fn(HostFma, f32) -> f32,
) {
    with_host_fma(
        (input, output),
        |(input, output)| crate::util::map(input, output, portable),
        #[inline(always)]
        |f, (input, output)| crate::util::map(input, output, closure_always(f, fused)),
    );
}

/// `|x| fused(m, x)`, always inlined (so into the function compiled for FMA: the
/// instructions of `m.mul_add` are inlined only there).
#[inline(always)]
fn closure_always(m: HostFma, fused: impl Fn(HostFma, f32) -> f32) -> impl Fn(f32) -> f32 {
    #[inline(always)]
    move |x| fused(m, x)
}

/// [`map_f32`] in place.
#[inline(always)]
pub(crate) fn map_f32_in_place(
    data: &mut [f32],
    portable: impl Fn(f32) -> f32,
    fused: impl Fn(HostFma, f32) -> f32,
) {
    with_host_fma(
        data,
        |data| crate::util::map_in_place(data, portable),
        #[inline(always)]
        |f, data| crate::util::map_in_place(data, closure_always(f, fused)),
    );
}

/// Whether rounding `d` to `f32` could differ from rounding any value within `2^16` ulps of
/// `d` (a normal `f32` result assumed): its 29 bits below the `f32` significand lie within
/// `2^16` of the midpoint pattern `2^28`. True for a fraction 2^-12 of the doubles.
#[inline(always)]
pub(crate) fn near_f32_midpoint(d: f64) -> bool {
    const T: u64 = 1 << 16;
    let low = d.to_bits() & ((1 << 29) - 1);
    low.wrapping_sub((1 << 28) - T) < 2 * T
}

/// The polynomial tail of `sinf`, `cosf` and `logf`: the `f32` of `poly(Unfused, ..)` (every
/// `a * b + c` unfused), or, if that lands near an `f32` midpoint, `None`: the caller then
/// evaluates `poly(SoftFma, ..)` (fused as in the `-fma` build, with the exact [`fma`]).
///
/// Why this gives the fused bits on every input: each of the functions' unfused steps differs
/// from its fused one by at most one rounding of a product, so at most one ulp of a value no
/// larger in magnitude than (sine) `|x|`, (cosine) 1, (log) `0.4 + 0.7 |k|`, and what follows
/// carries that difference on with factors below 1, plus at most one ulp per later rounding;
/// with at most 6 such steps, the two doubles differ by less than `2^-47` times the result's
/// magnitude (at least `0.89 |x|` for the sine polynomial on `|x| <= 0.79`, 0.70 for the
/// cosine, and for `log` at least `|r| / 2` with `k = 0` in the subinterval around 1, `0.019`
/// in the other ones, `0.33 |k|` for `k != 0`), i.e. by less than `2^7` ulps of the fast
/// result. If no `f32` midpoint lies within `2^16` ulps of it, both round to the same
/// `f32`. The unit test `fast_path_within_its_bound` measures the difference on a sweep;
/// the comparison with the host's C library (`same_bits_as_the_host_c_library`) can run on
/// all 2^32 inputs (see the module docs).
#[inline(always)]
fn finish(fast: f64) -> Option<f32> {
    if near_f32_midpoint(fast) {
        None
    } else {
        Some(fast as f32)
    }
}

/// `sinf_poly`: the sine (`n` even) or cosine (`n` odd) polynomial, in `double`. Both are
/// evaluated and one is chosen without a branch (the quadrant is data, and a mispredicted
/// branch costs more than the other polynomial).
#[inline(always)]
fn sinf_poly(m: impl MulAdd, x: f64, x2: f64, p: &SinCos, n: i32) -> f64 {
    let x3 = x * x2;
    let s1 = m.mul_add(x2, p.s[2], p.s[1]);
    let x7 = x3 * x2;
    let s = m.mul_add(x3, p.s[0], x);
    let sin = m.mul_add(x7, s1, s);
    let x4 = x2 * x2;
    let c2 = m.mul_add(x2, p.c[4], p.c[3]);
    let c1 = m.mul_add(x2, p.c[1], p.c[0]);
    let x6 = x4 * x2;
    let c = m.mul_add(x4, p.c[2], c1);
    let cos = m.mul_add(x6, c2, c);
    if n & 1 == 0 { sin } else { cos }
}

/// [`sinf_poly`] rounded to `f32`, fast (see [`finish`]).
#[inline(always)]
fn sincos_poly(x: f64, x2: f64, p: &SinCos, n: i32) -> f32 {
    match finish(sinf_poly(Unfused, x, x2, p, n)) {
        Some(v) => v,
        None => sincos_poly_fused(x, x2, p, n),
    }
}

/// [`sinf_poly`] fused, rounded to `f32` (the rare slow path; arguments by value, so that
/// the fast path stores nothing for it).
#[cold]
#[inline(never)]
fn sincos_poly_fused(x: f64, x2: f64, p: &SinCos, n: i32) -> f32 {
    sinf_poly(SoftFma, x, x2, p, n) as f32
}

/// glibc's PI/2 (`hpi`, 0x1.921FB54442D18p0).
const HPI: f64 = f64::from_bits(0x3ff9_21fb_5444_2d18);

/// [`HPI`] as `HPI_HI + HPI_LO` exactly: `HPI_HI` is its top 45 significant bits,
/// `HPI_LO = 3 * 2^-49` the rest (2 bits).
const HPI_HI: f64 = f64::from_bits(0x3ff9_21fb_5444_2d00);
const HPI_LO: f64 = f64::from_bits(0x3cf8_0000_0000_0000);

/// `reduce_fast` (without round-to-int instructions): `x` modulo PI/2 and the quadrant.
///
/// glibc computes `x - n * hpi` with one fused operation, i.e. the exact value rounded once.
/// Here without `fma`, exactly the same: `|n| <= 76` has 7 bits, so `n * HPI_HI` (52 bits)
/// and `n * HPI_LO` (9 bits) are exact; `x - n * HPI_HI` is exact by Sterbenz's lemma (`n`
/// is `x * 2/PI` rounded, so for `n != 0` `x` lies within `[n/2, 2n] * HPI_HI`; for `n = 0`
/// it is `x`); the last subtraction is the only rounding, of `x - n * hpi`.
#[inline(always)]
fn reduce_fast(x: f64, p: &SinCos) -> (f64, i32) {
    let n = quadrant(Unfused, x, p);
    let nf = n as f64;
    ((x - nf * HPI_HI) - nf * HPI_LO, n)
}

/// The quadrant `n` of `reduce_fast`: `x * 2/PI * 2^24` to an integer (truncated by `m`:
/// `|x| < 120`, so within `i32`), plus `2^23`, shifted down by 24 bits (`x * 2/PI` rounded
/// to nearest).
#[inline(always)]
fn quadrant(m: impl MulAdd, x: f64, p: &SinCos) -> i32 {
    let r = x * p.hpi_inv;
    (m.trunc_i32(r).wrapping_add(0x80_0000)) >> 24
}

/// `reduce_fast` as glibc's `-fma` build computes it: `x - n * hpi` in one fused operation.
#[inline(always)]
fn reduce_fused(m: impl Fused, x: f64, p: &SinCos) -> (f64, i32) {
    let n = quadrant(m, x, p);
    (m.mul_add(-(n as f64), HPI, x), n)
}

/// `reduce_large`: `|x|` (bits `xi`, at least 120) modulo PI/2 with the 4/PI table.
#[inline(always)]
fn reduce_large(xi: u32) -> (f64, i32) {
    let arr = &INV_PIO4[((xi >> 26) & 15) as usize..];
    let shift = (xi >> 23) & 7;
    let xi = ((xi & 0xff_ffff) | 0x80_0000) << shift;
    let res0 = xi.wrapping_mul(arr[0]) as u64;
    let res1 = xi as u64 * arr[4] as u64;
    let res2 = xi as u64 * arr[8] as u64;
    let res0 = ((res2 >> 32) | (res0 << 32)).wrapping_add(res1);
    let n = (res0.wrapping_add(1u64 << 61)) >> 62;
    let res0 = res0.wrapping_sub(n << 62);
    let x = res0 as i64 as f64;
    // 2PI * 2^-64
    (x * f64::from_bits(0x3c19_21fb_5444_2d18), n as i32)
}

const PIO4_TOP: u32 = 0x3f4; // abstop12 of (float) 0x1.921FB54442D18p-1
const TOP_2P_12: u32 = 0x398; // abstop12(0x1p-12f)
const TOP_120: u32 = 0x42f; // abstop12(120.0f)
const TOP_INF: u32 = 0x7f8;

/// What `sinf` / `cosf` (`COS`) do before the polynomial: the result (`Err`), or the
/// polynomial's arguments `(x, x^2, table, n)`. `reduce` is `reduce_fast` (the exact
/// portable form, or the fused one).
#[inline(always)]
fn sincos_reduce<const COS: bool>(
    y: f32,
    reduce: impl FnOnce(f64, &SinCos) -> (f64, i32),
) -> Result<(f64, f64, &'static SinCos, i32), f32> {
    let x = y as f64;
    let top = abstop12(y);
    let c = i32::from(COS);
    if top < PIO4_TOP {
        if top < TOP_2P_12 {
            return Err(if COS { 1.0 } else { y });
        }
        Ok((x, x * x, &SINCOS[0], c))
    } else if top < TOP_120 {
        let (x, n) = reduce(x, &SINCOS[0]);
        let s = SINCOS[0].sign[(n & 3) as usize];
        let p = &SINCOS[usize::from(n & 2 != 0)];
        Ok((x * s, x * x, p, n ^ c))
    } else if top < TOP_INF {
        let xi = y.to_bits();
        let sign = (xi >> 31) as i32;
        let (x, n) = reduce_large(xi);
        let s = SINCOS[0].sign[((n + sign) & 3) as usize];
        let p = &SINCOS[usize::from((n + sign) & 2 != 0)];
        Ok((x * s, x * x, p, n ^ c))
    } else if y.is_nan() {
        Err(quiet(y))
    } else {
        Err(DEFAULT_NAN)
    }
}

/// `sinf(x)` (glibc `s_sinf.c`), portable.
pub fn sinf(y: f32) -> f32 {
    match sincos_reduce::<false>(y, reduce_fast) {
        Ok((x, x2, p, n)) => sincos_poly(x, x2, p, n),
        Err(v) => v,
    }
}

/// `cosf(x)` (glibc `s_cosf.c`), portable.
pub fn cosf(y: f32) -> f32 {
    match sincos_reduce::<true>(y, reduce_fast) {
        Ok((x, x2, p, n)) => sincos_poly(x, x2, p, n),
        Err(v) => v,
    }
}

/// [`sinf`] (`COS = false`) or [`cosf`] as glibc's `-fma` build computes them: every
/// fused operation done by `m` (the host's instruction; [`SoftFma`] in the tests).
#[inline(always)]
pub(crate) fn sincosf_fused<const COS: bool>(m: impl Fused, y: f32) -> f32 {
    match sincos_reduce::<COS>(
        y,
        #[inline(always)]
        |x, p| reduce_fused(m, x, p),
    ) {
        Ok((x, x2, p, n)) => sinf_poly(m, x, x2, p, n) as f32,
        Err(v) => v,
    }
}

/// SIN's element loop: `output[i] = sinf(input[i])`, fused on the host's FMA instruction
/// where it has one ([`map_f32`]).
#[allow(
    clippy::redundant_closure,
    reason = "a function item is called through a shim LLVM does not inline into `run_fma`"
)]
pub(crate) fn sinf_map(input: &[f32], output: &mut [f32]) {
    map_f32(
        input,
        output,
        sinf,
        #[inline(always)]
        |m, x| sincosf_fused::<false>(m, x),
    );
}

/// [`sinf_map`] in place.
#[allow(
    clippy::redundant_closure,
    reason = "a function item is called through a shim LLVM does not inline into `run_fma`"
)]
pub(crate) fn sinf_map_in_place(data: &mut [f32]) {
    map_f32_in_place(
        data,
        sinf,
        #[inline(always)]
        |m, x| sincosf_fused::<false>(m, x),
    );
}

/// COS's element loop: `output[i] = cosf(input[i])` ([`map_f32`]).
#[allow(
    clippy::redundant_closure,
    reason = "a function item is called through a shim LLVM does not inline into `run_fma`"
)]
pub(crate) fn cosf_map(input: &[f32], output: &mut [f32]) {
    map_f32(
        input,
        output,
        cosf,
        #[inline(always)]
        |m, x| sincosf_fused::<true>(m, x),
    );
}

/// [`cosf_map`] in place.
#[allow(
    clippy::redundant_closure,
    reason = "a function item is called through a shim LLVM does not inline into `run_fma`"
)]
pub(crate) fn cosf_map_in_place(data: &mut [f32]) {
    map_f32_in_place(
        data,
        cosf,
        #[inline(always)]
        |m, x| sincosf_fused::<true>(m, x),
    );
}

/// `(invc, logc)` per subinterval (`__logf_data.tab`).
const LOGF_TAB: [(u64, u64); 16] = [
    (0x3ff661ec79f8f3be, 0xbfd57bf7808caade),
    (0x3ff571ed4aaf883d, 0xbfd2bef0a7c06ddb),
    (0x3ff49539f0f010b0, 0xbfd01eae7f513a67),
    (0x3ff3c995b0b80385, 0xbfcb31d8a68224e9),
    (0x3ff30d190c8864a5, 0xbfc6574f0ac07758),
    (0x3ff25e227b0b8ea0, 0xbfc1aa2bc79c8100),
    (0x3ff1bb4a4a1a343f, 0xbfba4e76ce8c0e5e),
    (0x3ff12358f08ae5ba, 0xbfb1973c5a611ccc),
    (0x3ff0953f419900a7, 0xbfa252f438e10c1e),
    (0x3ff0000000000000, 0x0000000000000000),
    (0x3fee608cfd9a47ac, 0x3faaa5aa5df25984),
    (0x3feca4b31f026aa0, 0x3fbc5e53aa362eb4),
    (0x3feb2036576afce6, 0x3fc526e57720db08),
    (0x3fe9c2d163a1aa2d, 0x3fcbc2860d224770),
    (0x3fe886e6037841ed, 0x3fd1058bc8a07ee1),
    (0x3fe767dcf5534862, 0x3fd4043057b6ee09),
];

/// `logf(x)` (glibc `e_logf.c`: 16 subintervals, order-4 polynomial in `f64`): `-inf` for
/// zeros, the default NaN below zero. Portable.
pub fn logf(x: f32) -> f32 {
    match logf_reduce(x, logf_r) {
        Ok((r, k, logc)) => match finish(logf_poly(Unfused, r, k, logc)) {
            Some(v) => v,
            None => logf_poly_fused(r, k, logc),
        },
        Err(v) => v,
    }
}

/// [`logf`] as glibc's `-fma` build computes it: every fused operation done by `m`.
#[inline(always)]
pub(crate) fn logf_fused(m: impl Fused, x: f32) -> f32 {
    match logf_reduce(
        x,
        #[inline(always)]
        |z, i| m.mul_add(z, f64::from_bits(LOGF_TAB[i].0), -1.0),
    ) {
        Ok((r, k, logc)) => logf_poly(m, r, k, logc) as f32,
        Err(v) => v,
    }
}

/// LOG's element loop: `output[i] = logf(input[i])` ([`map_f32`]).
#[allow(
    clippy::redundant_closure,
    reason = "a function item is called through a shim LLVM does not inline into `run_fma`"
)]
pub(crate) fn logf_map(input: &[f32], output: &mut [f32]) {
    map_f32(
        input,
        output,
        logf,
        #[inline(always)]
        |m, x| logf_fused(m, x),
    );
}

/// [`logf_map`] in place.
#[allow(
    clippy::redundant_closure,
    reason = "a function item is called through a shim LLVM does not inline into `run_fma`"
)]
pub(crate) fn logf_map_in_place(data: &mut [f32]) {
    map_f32_in_place(
        data,
        logf,
        #[inline(always)]
        |m, x| logf_fused(m, x),
    );
}

/// What `logf` does before the polynomial: the result (`Err`), or `(r, k, logc)`, with
/// `r = z * invc - 1` computed by `r(z, i)` (rounded once: [`logf_r`], or fused).
#[inline(always)]
fn logf_reduce(x: f32, r: impl FnOnce(f64, usize) -> f64) -> Result<(f64, f64, f64), f32> {
    const OFF: u32 = 0x3f33_0000;
    let mut ix = x.to_bits();
    if ix == 0x3f80_0000 {
        return Err(0.0);
    }
    if ix.wrapping_sub(0x0080_0000) >= 0x7f80_0000 - 0x0080_0000 {
        // x < 0x1p-126 or inf or nan.
        if ix.wrapping_mul(2) == 0 {
            return Err(f32::NEG_INFINITY);
        }
        if ix == 0x7f80_0000 {
            return Err(x);
        }
        if x.is_nan() {
            return Err(quiet(x));
        }
        if ix & 0x8000_0000 != 0 {
            return Err(DEFAULT_NAN);
        }
        // Subnormal: normalize.
        ix = (x * f32::from_bits(0x4b00_0000)).to_bits(); // x * 0x1p23f
        ix = ix.wrapping_sub(23 << 23);
    }
    let tmp = ix.wrapping_sub(OFF);
    let i = ((tmp >> (23 - 4)) % 16) as usize;
    let k = (tmp as i32) >> 23;
    let iz = ix.wrapping_sub(tmp & (0x1ff << 23));
    let z = f32::from_bits(iz) as f64;
    Ok((r(z, i), k as f64, f64::from_bits(LOGF_TAB[i].1)))
}

/// `invc` of [`LOGF_TAB`] as `hi + lo` exactly, `hi` its top 26 significant bits.
const LOGF_INVC_SPLIT: [(f64, f64); 16] = {
    let mut t = [(0.0, 0.0); 16];
    let mut i = 0;
    while i < 16 {
        let invc = f64::from_bits(LOGF_TAB[i].0);
        let hi = f64::from_bits(LOGF_TAB[i].0 & !((1 << 27) - 1));
        t[i] = (hi, invc - hi);
        i += 1;
    }
    t
};

/// `r = z * invc - 1`, which glibc computes fused (rounded once), without `fma`: `z` is an
/// `f32` (24 bits), so `z * hi` (50 bits) and `z * lo` (51 bits) are exact, `z * hi` lies in
/// `[0.5, 2]` (`z` is in the subinterval of `1/invc`), so `z * hi - 1` is exact (Sterbenz),
/// and the one rounding is the final addition's.
#[inline(always)]
fn logf_r(z: f64, i: usize) -> f64 {
    let (hi, lo) = LOGF_INVC_SPLIT[i];
    (z * hi - 1.0) + z * lo
}

/// [`logf_poly`] fused, rounded to `f32` (the rare slow path).
#[cold]
#[inline(never)]
fn logf_poly_fused(r: f64, k: f64, logc: f64) -> f32 {
    logf_poly(SoftFma, r, k, logc) as f32
}

/// `logf`'s polynomial (`y0 = k ln2 + logc`, then order 4 in `r`), in `double`.
#[inline(always)]
fn logf_poly(m: impl MulAdd, r: f64, k: f64, logc: f64) -> f64 {
    const LN2: f64 = f64::from_bits(0x3fe62e42fefa39ef);
    const A: [f64; 3] = [
        f64::from_bits(0xbfd00ea348b88334),
        f64::from_bits(0x3fd5575b0be00b6a),
        f64::from_bits(0xbfdffffef20a4123),
    ];
    let y0 = m.mul_add(k, LN2, logc);
    let r2 = r * r;
    let y = m.mul_add(A[1], r, A[2]);
    let y = m.mul_add(A[0], r2, y);
    m.mul_add(y, r2, y0 + r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 2^32 / step-th bit pattern, plus a few chosen ones.
    fn sweep(step: u32, mut f: impl FnMut(f32)) {
        let mut b = 0u64;
        while b <= u32::MAX as u64 {
            f(f32::from_bits(b as u32));
            b += step as u64;
        }
        for x in [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.5,
            120.0,
            -120.0,
            1e-40,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            // The two inputs where expf's unfused kd and r gave other bits.
            f32::from_bits(0x4202_422f),
            f32::from_bits(0xc27c_65d9),
        ] {
            f(x);
        }
    }

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits()
    }

    #[test]
    fn fma_is_exact() {
        let cases = [
            (1.0 + f64::EPSILON, 1.0 - f64::EPSILON, -1.0),
            (3.0, 1.0 / 3.0, -1.0),
            (0.1, 10.0, -1.0),
            (1e300, 1e-300, 1e-20),
            (-2.5, 4.0, 10.0),
            (1.5, 1.5, 1e-30),
            (1e-10, 1e-10, 1.0),
        ];
        for (a, b, c) in cases {
            assert_eq!(
                fma(a, b, c).to_bits(),
                a.mul_add(b, c).to_bits(),
                "{a} {b} {c}"
            );
        }
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..200_000 {
            let a = f64::from_bits((next() & 0x800f_ffff_ffff_ffff) | (0x3c0 + next() % 128) << 52);
            let b = f64::from_bits((next() & 0x800f_ffff_ffff_ffff) | (0x3c0 + next() % 128) << 52);
            let c = f64::from_bits((next() & 0x800f_ffff_ffff_ffff) | (0x380 + next() % 192) << 52);
            assert_eq!(
                fma(a, b, c).to_bits(),
                a.mul_add(b, c).to_bits(),
                "{a:e} {b:e} {c:e}"
            );
        }
    }

    #[test]
    fn reduce_fast_is_the_fused_reduction() {
        assert_eq!(HPI_HI + HPI_LO, HPI);
        assert_eq!(fma(1.0, HPI_HI, HPI_LO), HPI);
        for n in -80..=80 {
            let nf = f64::from(n);
            assert_eq!(fma(nf, HPI_HI, -(nf * HPI_HI)), 0.0, "{n}");
            assert_eq!(fma(nf, HPI_LO, -(nf * HPI_LO)), 0.0, "{n}");
        }
        // Every 61st f32 of the range reduce_fast serves, both signs.
        let mut b = 0x3f40_0000u32;
        while b < 0x42f0_0000 {
            for y in [f32::from_bits(b), -f32::from_bits(b)] {
                let x = f64::from(y);
                let (r, n) = reduce_fast(x, &SINCOS[0]);
                assert_eq!(r.to_bits(), fma(-f64::from(n), HPI, x).to_bits(), "{y:e}");
            }
            b += 61;
        }
    }

    #[test]
    fn logf_r_is_the_fused_product() {
        for (i, &(hi, lo)) in LOGF_INVC_SPLIT.iter().enumerate() {
            assert_eq!((hi + lo).to_bits(), LOGF_TAB[i].0);
            assert_eq!(hi.to_bits() & ((1 << 27) - 1), 0);
        }
        // Every normal positive f32 z of [0.5, 2) (all subintervals) with every 7th
        // significand, against the fused r of glibc.
        let mut b = 0x3f00_0000u32;
        while b < 0x4000_0000 {
            let x = f32::from_bits(b);
            if let Ok((r, _, _)) = logf_reduce(x, logf_r) {
                let ix = x.to_bits();
                let tmp = ix.wrapping_sub(0x3f33_0000);
                let i = ((tmp >> 19) % 16) as usize;
                let z = f64::from(f32::from_bits(ix.wrapping_sub(tmp & (0x1ff << 23))));
                let want = fma(z, f64::from_bits(LOGF_TAB[i].0), -1.0);
                assert_eq!(r.to_bits(), want.to_bits(), "{x:e}");
            }
            b += 7;
        }
    }

    /// The fast (unfused) polynomials stay within the bound [`finish`] argues (`2^-47` of the
    /// result), and wherever their `f32` differs from the fused one, [`near_f32_midpoint`]
    /// sends the call to the fused polynomial.
    #[test]
    fn fast_path_within_its_bound() {
        let bound = f64::from_bits(0x3d00_0000_0000_0000); // 2^-47
        let mut worst = [0f64; 3];
        let mut check = |which: usize, fast: f64, fused: f64| {
            let rel = ((fast - fused) / fast).abs();
            assert!(rel < bound, "function {which}: {fast:e} vs {fused:e}");
            worst[which] = worst[which].max(rel);
            if fast as f32 != fused as f32 {
                assert!(near_f32_midpoint(fast));
            }
        };
        sweep(1021, |y| {
            if let Ok((x, x2, p, n)) = sincos_reduce::<false>(y, reduce_fast) {
                check(
                    0,
                    sinf_poly(Unfused, x, x2, p, n),
                    sinf_poly(SoftFma, x, x2, p, n),
                );
            }
            if let Ok((x, x2, p, n)) = sincos_reduce::<true>(y, reduce_fast) {
                check(
                    1,
                    sinf_poly(Unfused, x, x2, p, n),
                    sinf_poly(SoftFma, x, x2, p, n),
                );
            }
            if let Ok((r, k, logc)) = logf_reduce(y, logf_r) {
                check(
                    2,
                    logf_poly(Unfused, r, k, logc),
                    logf_poly(SoftFma, r, k, logc),
                );
            }
        });
        // The fast path is not the fused one (else the test proves nothing).
        assert!(worst.iter().all(|&w| w > 0.0), "{worst:?}");
    }

    /// The host's FMA instruction, where it has one (x86-64 with FMA3; not under Miri).
    fn hw() -> Option<HostFma> {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse", not(miri)))]
        {
            crate::arch::x86::fma()
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse", not(miri))))]
        {
            None
        }
    }

    /// `sinf`, `cosf`, `logf`, `expf` as glibc's `-fma` build, with the fused operations of
    /// `m`.
    fn fused_forms<M: Fused>(m: M, x: f32) -> [f32; 4] {
        [
            sincosf_fused::<false>(m, x),
            sincosf_fused::<true>(m, x),
            logf_fused(m, x),
            crate::math::expf_fused(m, x),
        ]
    }

    /// [`fused_forms`] on the host's instruction, compiled for it (as the kernels run it).
    fn hw_forms(m: HostFma, x: f32) -> [f32; 4] {
        with_host_fma(x, |_| unreachable!("no FMA"), |_, x| fused_forms(m, x))
    }

    /// The two paths give the same bits: the portable functions (exact reductions, unfused
    /// polynomials, software `fma` near midpoints) and the fused forms (glibc's `-fma`
    /// operations as they are), the latter with the software `fma` on every host (Miri too)
    /// and with the host's instruction where it has one (then also through the kernels'
    /// element loops, which take that path there). So neither path goes untested on an
    /// x86-64 host with FMA, whichever the kernels run.
    #[test]
    fn fused_forms_are_the_portable_functions() {
        let step = if cfg!(miri) { 16_777_259 } else { 4093 };
        let mut inputs = std::vec::Vec::new();
        sweep(step, |x| inputs.push(x));
        let hw = hw();
        if cfg!(all(target_arch = "x86_64", not(miri))) {
            assert_eq!(hw.is_some(), std::is_x86_feature_detected!("fma"));
        }
        let names = ["sinf", "cosf", "logf", "expf"];
        let mut portable = [const { std::vec::Vec::new() }; 4];
        for &x in &inputs {
            let want = [sinf(x), cosf(x), logf(x), crate::math::expf(x)];
            // The software fma is slow: every 7th input.
            let soft = (x.to_bits() % 7 == 0).then(|| fused_forms(SoftFma, x));
            let hard = hw.map(|m| hw_forms(m, x));
            for f in 0..4 {
                for (path, got) in [("soft fma", soft), ("host fma", hard)] {
                    if let Some(got) = got {
                        assert!(
                            same(got[f], want[f]),
                            "{} {path} {x:e} ({:#x})",
                            names[f],
                            x.to_bits()
                        );
                    }
                }
                portable[f].push(want[f]);
            }
        }
        // The element loops (fused on this host if it has FMA, else portable), in place too.
        type Loop = fn(&[f32], &mut [f32]);
        type InPlace = fn(&mut [f32]);
        let loops: [(Loop, InPlace); 4] = [
            (sinf_map, sinf_map_in_place),
            (cosf_map, cosf_map_in_place),
            (logf_map, logf_map_in_place),
            (crate::math::expf_map, crate::math::expf_map_in_place),
        ];
        for (f, (map, in_place)) in loops.iter().enumerate() {
            let mut out = std::vec![0.0f32; inputs.len()];
            map(&inputs, &mut out);
            let mut data = inputs.clone();
            in_place(&mut data);
            for i in 0..inputs.len() {
                let want = portable[f][i];
                assert!(
                    same(out[i], want) && same(data[i], want),
                    "{} {:e}",
                    names[f],
                    inputs[i]
                );
            }
        }
    }

    /// Every function against the host's C library (the reference's on x86-64 glibc with
    /// FMA), both paths of `sinf`, `cosf`, `logf`, `expf` (the fused one where the host has
    /// FMA). `KILN_LIBM_SWEEP_STEP=1` (release build) compares every f32, see the module
    /// doc; `KILN_LIBM_SWEEP_FNS=sin,cos,log,exp,sqrt,expm1` chooses functions (default all),
    /// `KILN_LIBM_SWEEP_PATHS=portable` or `fused` one path (default both).
    #[test]
    fn same_bits_as_the_host_c_library() {
        // Elsewhere there is nothing to compare with.
        #[cfg(target_arch = "x86_64")]
        if !(cfg!(target_os = "linux") && std::is_x86_feature_detected!("fma")) {
            return;
        }
        #[cfg(not(target_arch = "x86_64"))]
        return;
        let var = |name: &str| std::env::var(name).ok();
        let step = var("KILN_LIBM_SWEEP_STEP")
            .and_then(|s| s.parse().ok())
            .unwrap_or(4099);
        let names = ["sin", "cos", "log", "exp", "sqrt", "expm1"];
        let fns = var("KILN_LIBM_SWEEP_FNS");
        let on: std::vec::Vec<bool> = names
            .iter()
            .map(|n| fns.as_deref().is_none_or(|f| f.split(',').any(|g| g == *n)))
            .collect();
        let paths = var("KILN_LIBM_SWEEP_PATHS");
        let portable = paths.as_deref() != Some("fused");
        let fused = if paths.as_deref() != Some("portable") {
            Some(hw().expect("FMA detected by std, not by arch::x86::fma"))
        } else {
            None
        };
        let mut bad = [0usize; 6];
        let mut bad_fused = [0usize; 4];
        sweep(step, |x| {
            // black_box: no constant folding of the reference (LLVM folds to another NaN).
            let x = std::hint::black_box(x);
            let libc = [x.sin(), x.cos(), x.ln(), x.exp()];
            if portable {
                let ours = [sinf(x), cosf(x), logf(x), crate::math::expf(x)];
                for f in 0..4 {
                    bad[f] += usize::from(on[f] && !same(ours[f], libc[f]));
                }
            }
            if let Some(m) = fused {
                let ours = hw_forms(m, x);
                for f in 0..4 {
                    bad_fused[f] += usize::from(on[f] && !same(ours[f], libc[f]));
                }
            }
            if on[4] {
                bad[4] += usize::from(!same(sqrtf_soft(x), x.sqrt()) || !same(sqrtf(x), x.sqrt()));
            }
            if on[5] {
                bad[5] += usize::from(!same(crate::glibc_math::expm1f(x), x.exp_m1()));
            }
        });
        assert_eq!(bad, [0; 6], "sin cos log exp sqrt expm1 mismatches");
        assert_eq!(bad_fused, [0; 4], "fused sin cos log exp mismatches");
    }
}
