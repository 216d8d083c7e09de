//! A tree ensemble (random forest or gradient boosting of regression
//! trees) held in flat arrays and evaluated in place: the learned poll
//! policy's model, trained elsewhere (scikit-learn) and read from a file
//! by the pipeline crate. A prediction walks each tree from its root to a
//! leaf, one comparison a level, and allocates nothing.

/// One node: a split on `feature` at `value` (go `left` when the feature,
/// rounded to f32 as scikit-learn reads its inputs, is ≤ it), or a leaf
/// whose prediction is `value`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Node {
    /// The split's threshold, or the leaf's prediction.
    pub value: f64,
    /// The feature split on; [`Node::LEAF`] for a leaf.
    pub feature: u32,
    /// The child taken when the feature is ≤ the threshold (node index).
    pub left: u32,
    /// The child taken otherwise (node index).
    pub right: u32,
}

impl Node {
    /// The `feature` of a leaf.
    pub const LEAF: u32 = u32::MAX;
}

/// Trees whose prediction is `offset + scale × Σ leaves`: for a random
/// forest `scale` = 1 / trees (the mean), for gradient boosting the
/// learning rate and `offset` the initial estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct Forest {
    nodes: Vec<Node>,
    roots: Vec<u32>,
    features: usize,
    offset: f64,
    scale: f64,
}

impl Forest {
    /// A forest of the trees rooted at `roots` in `nodes`, reading
    /// `features` features, checked: every split reads a feature below
    /// `features` and has children after itself (so every walk ends at a
    /// leaf), every root is a node, every number is finite.
    pub fn new(nodes: Vec<Node>, roots: Vec<u32>, features: usize, offset: f64, scale: f64) -> Result<Self, String> {
        if roots.is_empty() {
            return Err("a forest needs at least one tree".into());
        }
        if !(offset.is_finite() && scale.is_finite()) {
            return Err(format!("offset {offset} and scale {scale} must be finite"));
        }
        if let Some(&r) = roots.iter().find(|&&r| r as usize >= nodes.len()) {
            return Err(format!("tree root {r} is not one of the {} nodes", nodes.len()));
        }
        for (i, n) in nodes.iter().enumerate() {
            if !n.value.is_finite() {
                return Err(format!("node {i}: value {} is not finite", n.value));
            }
            if n.feature == Node::LEAF {
                continue;
            }
            if n.feature as usize >= features {
                return Err(format!("node {i} splits on feature {} of {features}", n.feature));
            }
            if [n.left, n.right].iter().any(|&c| c as usize <= i || c as usize >= nodes.len()) {
                return Err(format!("node {i}: children {} and {} must be nodes after it", n.left, n.right));
            }
        }
        Ok(Self { nodes, roots, features, offset, scale })
    }

    /// How many features a prediction reads.
    pub fn features(&self) -> usize {
        self.features
    }

    /// The prediction for the features `x` gives (`x(i)` for i < [`features`](Self::features)).
    #[inline]
    pub fn predict(&self, x: impl Fn(usize) -> f64) -> f64 {
        let mut sum = 0.0;
        for &root in &self.roots {
            let mut n = &self.nodes[root as usize];
            while n.feature != Node::LEAF {
                let next = if f64::from(x(n.feature as usize) as f32) <= n.value { n.left } else { n.right };
                n = &self.nodes[next as usize];
            }
            sum += n.value;
        }
        self.offset + self.scale * sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(feature: u32, at: f64, left: u32, right: u32) -> Node {
        Node { value: at, feature, left, right }
    }

    fn leaf(value: f64) -> Node {
        Node { value, feature: Node::LEAF, left: 0, right: 0 }
    }

    #[test]
    fn a_prediction_walks_each_tree_to_a_leaf_and_scales_their_sum() {
        // Tree 0: x0 ≤ 1 ? 10 : (x1 ≤ 5 ? 20 : 30); tree 1: a single leaf of 2.
        let nodes = vec![split(0, 1.0, 1, 2), leaf(10.0), split(1, 5.0, 3, 4), leaf(20.0), leaf(30.0), leaf(2.0)];
        let f = Forest::new(nodes, vec![0, 5], 2, 1.0, 0.5).unwrap();
        let at = |x: [f64; 2]| f.predict(|i| x[i]);
        assert_eq!(at([1.0, 9.0]), 1.0 + 0.5 * 12.0, "≤ the threshold goes left");
        assert_eq!(at([1.5, 5.0]), 1.0 + 0.5 * 22.0);
        assert_eq!(at([1.5, 5.1]), 1.0 + 0.5 * 32.0);
    }

    #[test]
    fn a_forest_that_could_read_past_its_features_or_loop_is_refused_by_name() {
        let err = |nodes: Vec<Node>, roots: Vec<u32>| Forest::new(nodes, roots, 2, 0.0, 1.0).unwrap_err();
        assert!(err(vec![split(2, 0.0, 1, 2), leaf(0.0), leaf(1.0)], vec![0]).contains("feature 2 of 2"));
        assert!(err(vec![leaf(0.0), split(0, 0.0, 0, 2), leaf(1.0)], vec![1]).contains("node 1: children 0 and 2"));
        assert!(err(vec![leaf(0.0)], vec![1]).contains("root 1"));
        assert!(err(vec![leaf(f64::NAN)], vec![0]).contains("not finite"));
        assert!(err(vec![leaf(0.0)], vec![]).contains("at least one tree"));
    }
}
