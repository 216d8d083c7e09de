//! The file a learned poll policy is read from (JSON, as `sluice train
//! polling` writes it): a tree ensemble in flat arrays per tree, in
//! scikit-learn's layout (a leaf's feature is negative), and what it reads.
//!
//! ```json
//! {"format": "sluice-poll-model", "version": 3, "rounds": 16, "features": 18,
//!  "offset": 0.0, "scale": 0.05,
//!  "trees": [{"feature": [17, -2, -2], "threshold": [80.5, 0, 0],
//!             "left": [1, -1, -1], "right": [2, -1, -1], "value": [0, 0, 120.0]}]}
//! ```
//!
//! Other keys (how it was trained) are kept in the file and not read.

use serde::Deserialize;
use sluice_core::poll::forest::{Forest, Node};
use sluice_core::poll::learned::LearnedPolicy;

/// What the `format` key says.
pub const FORMAT: &str = "sluice-poll-model";
/// The version this Sluice reads (2: the arrival rate follows the idle
/// time; 3: no highest rate, above which version 2's policy polled).
pub const VERSION: u32 = 3;

#[derive(Deserialize)]
struct ModelFile {
    format: String,
    version: u32,
    rounds: usize,
    features: usize,
    offset: f64,
    scale: f64,
    trees: Vec<TreeArrays>,
}

#[derive(Deserialize)]
struct TreeArrays {
    feature: Vec<i64>,
    threshold: Vec<f64>,
    left: Vec<i64>,
    right: Vec<i64>,
    value: Vec<f64>,
}

/// Reads the model at `path`, sleeping at most `max_sleep_ns`; an error
/// names the file and what is wrong with it.
pub fn read(path: &str, max_sleep_ns: u64) -> Result<LearnedPolicy, String> {
    let named = |what: String| format!("poll model {path}: {what}");
    let text = std::fs::read_to_string(path).map_err(|e| named(format!("cannot read it: {e}")))?;
    let file: ModelFile = serde_json::from_str(&text).map_err(|e| named(format!("not a Sluice poll model: {e}")))?;
    if file.format != FORMAT || file.version != VERSION {
        return Err(named(format!("format {:?} version {}; this Sluice reads {FORMAT:?} version {VERSION}", file.format, file.version)));
    }
    let mut nodes = Vec::new();
    let mut roots = Vec::with_capacity(file.trees.len());
    for (t, tree) in file.trees.iter().enumerate() {
        roots.push(nodes.len() as u32);
        append(tree, &mut nodes).map_err(|e| named(format!("tree {t}: {e}")))?;
    }
    let forest = Forest::new(nodes, roots, file.features, file.offset, file.scale).map_err(named)?;
    LearnedPolicy::new(forest, file.rounds, max_sleep_ns).map_err(named)
}

/// Appends one tree's nodes to `nodes`, its node numbers shifted to where they land.
fn append(tree: &TreeArrays, nodes: &mut Vec<Node>) -> Result<(), String> {
    let n = tree.feature.len();
    if [tree.threshold.len(), tree.left.len(), tree.right.len(), tree.value.len()].iter().any(|&l| l != n) || n == 0 {
        return Err(format!("its arrays must have one length > 0 (feature has {n})"));
    }
    let base = nodes.len() as i64;
    let index = |i: i64| u32::try_from(base + i).map_err(|_| format!("node number {i} out of range"));
    for i in 0..n {
        nodes.push(if tree.feature[i] < 0 {
            Node { value: tree.value[i], feature: Node::LEAF, left: 0, right: 0 }
        } else {
            let feature = u32::try_from(tree.feature[i]).map_err(|_| format!("node {i}: feature {} out of range", tree.feature[i]))?;
            Node { value: tree.threshold[i], feature, left: index(tree.left[i])?, right: index(tree.right[i])? }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` in a file of its own, removed when the guard drops.
    struct Written(String);

    impl Drop for Written {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn written(text: &str) -> (Written, String) {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("sluice-poll-model-{}-{n}.json", std::process::id())).to_str().unwrap().to_string();
        std::fs::write(&path, text).unwrap();
        (Written(path.clone()), path)
    }

    #[test]
    fn a_model_file_is_read_and_a_missing_or_corrupt_one_is_named_in_the_error() {
        let good = r#"{"format": "sluice-poll-model", "version": 3, "rounds": 1, "features": 3, "offset": 0, "scale": 1, "trained": {"seed": 1},
                       "trees": [{"feature": [1, -2, -2], "threshold": [5, 0, 0], "left": [1, -1, -1], "right": [2, -1, -1], "value": [0, 0, 100]}]}"#;
        let (_dir, path) = written(good);
        assert!(read(&path, 500_000).is_ok());
        let err = read("/nonexistent/model.json", 500_000).unwrap_err();
        assert!(err.starts_with("poll model /nonexistent/model.json: cannot read it"), "{err}");
        let (_d, cut) = written(&good[..good.len() / 2]);
        assert!(read(&cut, 500_000).unwrap_err().contains(&format!("poll model {cut}: not a Sluice poll model")));
        let (_d, loops) = written(&good.replace(r#""left": [1, -1, -1]"#, r#""left": [0, -1, -1]"#));
        assert!(read(&loops, 500_000).unwrap_err().contains("node 0: children 0 and 2"));
        let (_d, older) = written(&good.replace(r#""version": 3"#, r#""version": 2"#));
        assert!(read(&older, 500_000).unwrap_err().contains("version 2; this Sluice reads"));
    }
}
