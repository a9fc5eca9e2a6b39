//! Vector search by cosine similarity: vectors are normalised when stored, so similarity is
//! a dot product.
//!
//! Up to [`QUANTIZE_ABOVE`] chunks the search is an exact scan of the `f32` vectors. Larger
//! indexes keep only 8-bit codes in memory (one scale per vector, a quarter of the memory
//! and of the bytes scanned per question); the scan over the codes picks candidates, and
//! the caller re-scores them exactly with the stored `f32` vectors. An HNSW graph was
//! considered: at 100k chunks it costs minutes of build time on every (incremental)
//! rebuild and doubles the memory, for a latency gain this scan does not need.

/// Normalises `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

/// Dot product over the shorter length.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    crate::kernels::dot_f32(a, b)
}

/// Keeps the `k` best `(id, score)` pairs, best first.
pub fn top_k(hits: &mut Vec<(u32, f32)>, k: usize) {
    let better = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if hits.len() > k && k > 0 {
        hits.select_nth_unstable_by(k - 1, better);
        hits.truncate(k);
    }
    hits.truncate(k);
    hits.sort_by(better);
}

/// Chunks above which vectors are held as 8-bit codes.
pub const QUANTIZE_ABOVE: usize = 20_000;

/// Normalised vectors of every chunk.
#[derive(Debug, Default)]
pub struct Vectors {
    /// Dimensions.
    pub dims: usize,
    /// `dims` values per chunk (empty when quantised).
    pub data: Vec<f32>,
    /// `dims` 8-bit codes per chunk, for large indexes.
    pub codes: Vec<i8>,
    /// Per chunk: the factor that turns codes back into values.
    pub scales: Vec<f32>,
}

/// 8-bit codes of `v` (appended to `codes`) and the factor that turns them back.
pub fn quantize(v: &[f32], codes: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        codes.extend(std::iter::repeat_n(0, v.len()));
        return 0.0;
    }
    let k = 127.0 / max;
    codes.extend(v.iter().map(|x| (x * k).round().clamp(-127.0, 127.0) as i8));
    max / 127.0
}

/// Dot product of codes over the shorter length.
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    crate::kernels::dot_i8(a, b)
}

impl Vectors {
    /// 8-bit codes of the little-endian `f32` vectors of `dims` values each in `bytes`.
    pub fn quantized_from_le_bytes(bytes: &[u8], dims: usize) -> Self {
        let n = bytes.len().checked_div(dims * 4).unwrap_or(0);
        let mut codes = Vec::with_capacity(n * dims);
        let mut scales = Vec::with_capacity(n);
        let mut v = vec![0f32; dims];
        for raw in bytes.chunks_exact(dims * 4) {
            for (x, b) in v.iter_mut().zip(raw.chunks_exact(4)) {
                *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            scales.push(quantize(&v, &mut codes));
        }
        Vectors {
            dims,
            codes,
            scales,
            ..Vectors::default()
        }
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        if self.scales.is_empty() {
            self.data.len().checked_div(self.dims).unwrap_or(0)
        } else {
            self.scales.len()
        }
    }

    /// Whether only codes are held (the caller re-scores candidates exactly).
    pub fn is_quantized(&self) -> bool {
        !self.scales.is_empty()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The vector of chunk `id`.
    pub fn get(&self, id: usize) -> &[f32] {
        self.data
            .get(id * self.dims..(id + 1) * self.dims)
            .unwrap_or(&[])
    }

    /// The `limit` chunks most similar to `query` (normalised), best first.
    pub fn search(&self, query: &[f32], limit: usize) -> Vec<(u32, f32)> {
        if query.len() != self.dims || self.is_empty() || limit == 0 {
            return Vec::new();
        }
        if self.is_quantized() {
            let mut q = Vec::with_capacity(self.dims);
            let q_scale = quantize(query, &mut q);
            let mut hits: Vec<(u32, f32)> = self
                .codes
                .chunks_exact(self.dims)
                .zip(&self.scales)
                .enumerate()
                .map(|(i, (codes, scale))| {
                    let score = dot_i8(&q, codes) as f32 * scale * q_scale;
                    (u32::try_from(i).unwrap_or(u32::MAX), score)
                })
                .collect();
            top_k(&mut hits, limit);
            return hits;
        }
        let mut hits: Vec<(u32, f32)> = self
            .data
            .chunks_exact(self.dims)
            .enumerate()
            .map(|(i, v)| (u32::try_from(i).unwrap_or(u32::MAX), dot(query, v)))
            .collect();
        top_k(&mut hits, limit);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vectors(n: usize, dims: usize) -> Vectors {
        let mut data = Vec::with_capacity(n * dims);
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..n {
            let mut v: Vec<f32> = (0..dims).map(|_| rng.f32() - 0.5).collect();
            normalize(&mut v);
            data.extend(v);
        }
        Vectors {
            dims,
            data,
            ..Vectors::default()
        }
    }

    #[test]
    fn exact_search_finds_the_vector_itself() {
        let v = vectors(200, 16);
        let query = v.get(42).to_vec();
        let hits = v.search(&query, 3);
        assert_eq!(hits[0].0, 42);
        assert!((hits[0].1 - 1.0).abs() < 1e-4);
        assert!(hits[1].1 <= hits[0].1);
        assert!(v.search(&[1.0], 3).is_empty(), "wrong dimensions");
    }

    #[test]
    fn quantized_scan_ranks_like_the_exact_one() {
        let exact = vectors(500, 32);
        let mut q = Vectors {
            dims: 32,
            ..Vectors::default()
        };
        for i in 0..500 {
            let scale = quantize(exact.get(i), &mut q.codes);
            q.scales.push(scale);
        }
        assert_eq!(q.len(), 500);
        let query = exact.get(7).to_vec();
        assert_eq!(q.search(&query, 1)[0].0, 7);
        let a: Vec<u32> = exact.search(&query, 5).iter().map(|h| h.0).collect();
        let b: Vec<u32> = q.search(&query, 20).iter().map(|h| h.0).collect();
        assert!(a.iter().all(|id| b.contains(id)), "{a:?} {b:?}");
    }

    #[test]
    fn top_k_orders_and_truncates() {
        let mut hits = vec![(0, 0.1), (1, 0.9), (2, 0.5), (3, 0.7)];
        top_k(&mut hits, 2);
        assert_eq!(hits, vec![(1, 0.9), (3, 0.7)]);
    }
}
