//! Vector search by cosine similarity: vectors are normalised when stored, so similarity is
//! a dot product, computed by an exact linear scan (see docs/rag.md for its cost).

/// Normalises `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = dot(v, v).sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

/// Dot product, written so the compiler vectorises it.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let chunks = n / 8;
    for i in 0..chunks {
        let (x, y) = (&a[i * 8..i * 8 + 8], &b[i * 8..i * 8 + 8]);
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for i in chunks * 8..n {
        sum += a[i] * b[i];
    }
    sum
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

/// Normalised vectors of every chunk.
#[derive(Debug, Default)]
pub struct Vectors {
    /// Dimensions.
    pub dims: usize,
    /// `dims` values per chunk.
    pub data: Vec<f32>,
}

impl Vectors {
    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dims).unwrap_or(0)
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
        Vectors { dims, data }
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
    fn top_k_orders_and_truncates() {
        let mut hits = vec![(0, 0.1), (1, 0.9), (2, 0.5), (3, 0.7)];
        top_k(&mut hits, 2);
        assert_eq!(hits, vec![(1, 0.9), (3, 0.7)]);
    }
}
