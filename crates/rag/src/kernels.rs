//! The two inner loops of a vector scan, written with SSE2 on x86-64 (and AVX2 for the
//! 8-bit codes where the CPU has it).
//!
//! The release build is whole-program LTO, and LLVM vectorises loops only in the
//! link-time pass, which runs at the executable's `opt-level = "z"`: there the loops below
//! stay scalar whatever this crate's own opt level (measured: hybrid search over 100,000
//! chunks took 17 ms instead of 6–9 ms; docs/benchmarks.md). SSE2 is part of every x86-64
//! CPU, so it needs no detection at run time; AVX2 is detected once (the standard
//! library caches the answer). Other targets use the portable loops, which compute the
//! same sums in the same order.

/// `Σ a[i]·b[i]` over the shorter length, in eight lanes summed in order, then the tail.
pub(crate) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let lanes = lanes_f32(a, b);
    let mut sum: f32 = lanes.iter().sum();
    for (x, y) in a.iter().zip(b).skip(n / 8 * 8) {
        sum += x * y;
    }
    sum
}

/// `Σ a[i]·b[i]` of 8-bit codes over the shorter length.
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut sum = sum_i8_blocks(a, b);
    for (x, y) in a.iter().zip(b).skip(n / 16 * 16) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

#[cfg(not(target_arch = "x86_64"))]
fn lanes_f32(a: &[f32], b: &[f32]) -> [f32; 8] {
    let mut acc = [0f32; 8];
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    acc
}

#[cfg(not(target_arch = "x86_64"))]
fn sum_i8_blocks(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        for j in 0..16 {
            acc[j] += i32::from(x[j]) * i32::from(y[j]);
        }
    }
    acc.iter().sum()
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn lanes_f32(a: &[f32], b: &[f32]) -> [f32; 8] {
    // SAFETY: SSE2 is part of the x86-64 baseline: every CPU this code runs on has it.
    unsafe { x86::lanes_f32(a, b) }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn sum_i8_blocks(a: &[i8], b: &[i8]) -> i32 {
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { x86::sum_i8_blocks_avx2(a, b) }
    } else {
        // SAFETY: as above.
        unsafe { x86::sum_i8_blocks(a, b) }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86 {
    use std::arch::x86_64::{
        __m128, __m128i, __m256i, _mm_add_epi32, _mm_add_ps, _mm_loadu_ps, _mm_loadu_si128,
        _mm_madd_epi16, _mm_mul_ps, _mm_setzero_ps, _mm_setzero_si128, _mm_srai_epi16,
        _mm_storeu_ps, _mm_storeu_si128, _mm_unpackhi_epi8, _mm_unpacklo_epi8, _mm256_add_epi32,
        _mm256_cvtepi8_epi16, _mm256_madd_epi16, _mm256_setzero_si256, _mm256_storeu_si256,
    };

    /// The eight per-lane sums of `a[i]·b[i]` over whole blocks of eight.
    #[target_feature(enable = "sse2")]
    pub(super) fn lanes_f32(a: &[f32], b: &[f32]) -> [f32; 8] {
        let (mut low, mut high) = (_mm_setzero_ps(), _mm_setzero_ps());
        for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
            low = _mm_add_ps(low, _mm_mul_ps(load_ps(&x[..4]), load_ps(&y[..4])));
            high = _mm_add_ps(high, _mm_mul_ps(load_ps(&x[4..]), load_ps(&y[4..])));
        }
        let mut lanes = [0f32; 8];
        let (first, second) = lanes.split_at_mut(4);
        store_ps(first, low);
        store_ps(second, high);
        lanes
    }

    /// `Σ a[i]·b[i]` over whole blocks of sixteen codes.
    #[target_feature(enable = "sse2")]
    pub(super) fn sum_i8_blocks(a: &[i8], b: &[i8]) -> i32 {
        let mut acc = _mm_setzero_si128();
        for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
            let (x, y) = (load_si128(x), load_si128(y));
            // Each byte into the high half of a 16-bit lane, then shifted down with its
            // sign: the sixteen codes as two vectors of eight `i16`.
            let widen_low = |v| _mm_srai_epi16::<8>(_mm_unpacklo_epi8(v, v));
            let widen_high = |v| _mm_srai_epi16::<8>(_mm_unpackhi_epi8(v, v));
            // Products of |code| ≤ 127 summed in pairs fit an `i32` lane with room to spare.
            acc = _mm_add_epi32(acc, _mm_madd_epi16(widen_low(x), widen_low(y)));
            acc = _mm_add_epi32(acc, _mm_madd_epi16(widen_high(x), widen_high(y)));
        }
        let mut lanes = [0u8; 16];
        // SAFETY: `lanes` is 16 writable bytes; the store has no alignment requirement.
        unsafe { _mm_storeu_si128(lanes.as_mut_ptr().cast::<__m128i>(), acc) };
        lanes
            .chunks_exact(4)
            .map(|l| i32::from_ne_bytes([l[0], l[1], l[2], l[3]]))
            .sum()
    }

    /// [`sum_i8_blocks`] with AVX2: each block of sixteen codes widened to `i16` in one
    /// instruction, multiplied and summed in pairs into eight `i32` lanes.
    #[target_feature(enable = "avx2")]
    pub(super) fn sum_i8_blocks_avx2(a: &[i8], b: &[i8]) -> i32 {
        let mut acc = _mm256_setzero_si256();
        for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
            let x = _mm256_cvtepi8_epi16(load_si128(x));
            let y = _mm256_cvtepi8_epi16(load_si128(y));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
        }
        let mut lanes = [0u8; 32];
        // SAFETY: `lanes` is 32 writable bytes; the store has no alignment requirement.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), acc) };
        lanes
            .chunks_exact(4)
            .map(|l| i32::from_ne_bytes([l[0], l[1], l[2], l[3]]))
            .sum()
    }

    #[target_feature(enable = "sse2")]
    fn load_ps(four: &[f32]) -> __m128 {
        assert!(four.len() >= 4);
        // SAFETY: at least four `f32` are readable from the start of `four` (checked above);
        // the load has no alignment requirement.
        unsafe { _mm_loadu_ps(four.as_ptr()) }
    }

    #[target_feature(enable = "sse2")]
    fn store_ps(four: &mut [f32], v: __m128) {
        assert!(four.len() >= 4);
        // SAFETY: at least four `f32` are writable from the start of `four` (checked above);
        // the store has no alignment requirement.
        unsafe { _mm_storeu_ps(four.as_mut_ptr(), v) }
    }

    #[target_feature(enable = "sse2")]
    fn load_si128(sixteen: &[i8]) -> __m128i {
        assert!(sixteen.len() >= 16);
        // SAFETY: at least sixteen bytes are readable from the start of `sixteen` (checked
        // above); the load has no alignment requirement.
        unsafe { _mm_loadu_si128(sixteen.as_ptr().cast::<__m128i>()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar_f32(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let mut acc = [0f32; 8];
        for i in 0..n / 8 * 8 {
            acc[i % 8] += a[i] * b[i];
        }
        let mut sum: f32 = acc.iter().sum();
        for i in n / 8 * 8..n {
            sum += a[i] * b[i];
        }
        sum
    }

    #[test]
    fn the_vector_loops_compute_what_the_scalar_ones_do_to_the_bit() {
        let mut rng = fastrand::Rng::with_seed(11);
        for n in [0, 1, 7, 8, 9, 15, 16, 17, 31, 384, 385, 1536] {
            let a: Vec<f32> = (0..n).map(|_| rng.f32() - 0.5).collect();
            let b: Vec<f32> = (0..n + 3).map(|_| rng.f32() - 0.5).collect();
            assert_eq!(
                dot_f32(&a, &b).to_bits(),
                scalar_f32(&a, &b).to_bits(),
                "n = {n}"
            );
            let x: Vec<i8> = (0..n).map(|_| rng.i8(-127..=127)).collect();
            let y: Vec<i8> = (0..n).map(|_| rng.i8(-127..=127)).collect();
            let exact: i32 = x
                .iter()
                .zip(&y)
                .map(|(p, q)| i32::from(*p) * i32::from(*q))
                .sum();
            assert_eq!(dot_i8(&x, &y), exact, "n = {n}");
        }
        let extreme = vec![-127i8; 1536];
        assert_eq!(dot_i8(&extreme, &extreme), 1536 * 127 * 127);
    }

    /// Both x86-64 paths, whichever the CPU running the tests would pick.
    #[cfg(target_arch = "x86_64")]
    #[test]
    #[allow(unsafe_code)]
    fn the_sse2_and_avx2_code_loops_agree() {
        let mut rng = fastrand::Rng::with_seed(5);
        let x: Vec<i8> = (0..1536).map(|_| rng.i8(-127..=127)).collect();
        let y: Vec<i8> = (0..1536).map(|_| rng.i8(-127..=127)).collect();
        let exact: i32 = x
            .iter()
            .zip(&y)
            .map(|(p, q)| i32::from(*p) * i32::from(*q))
            .sum();
        // SAFETY: SSE2 is part of the x86-64 baseline.
        assert_eq!(unsafe { x86::sum_i8_blocks(&x, &y) }, exact);
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            assert_eq!(unsafe { x86::sum_i8_blocks_avx2(&x, &y) }, exact);
        }
    }
}
