//! The classifier behind `acl`: a decision tree over the five fields in the
//! manner of HyperSplit (Qi et al., 2009). Each inner node splits one
//! field's range at a rule boundary; each leaf holds the few rules (in
//! priority order) that can match there, scanned first-match. Rules that
//! span a split go to both sides; a rule that covers a node's whole region
//! hides every lower-priority rule there. A lookup walks O(log n) nodes and
//! scans at most [`LEAF_RULES`] rules (more only where rules cannot be
//! separated), so 10 000 rules cost about what 100 do.

/// Inclusive value ranges of one rule or region, per field: source,
/// destination, protocol, source port, destination port.
pub(crate) type Ranges = [(u32, u32); FIELDS];

/// Number of fields a rule matches on.
pub(crate) const FIELDS: usize = 5;
/// A node with at most this many rules becomes a leaf.
pub const LEAF_RULES: usize = 8;
/// Deepest split (a guard against pathological rule sets).
const MAX_DEPTH: usize = 32;
/// Rule copies all leaves may hold together, per rule (a memory guard:
/// past it, nodes become leaves however many rules they hold).
const COPIES_PER_RULE: usize = 64;
/// Rule copies any rule set may take, however few its rules (4 MiB of indices).
const MIN_BUDGET: usize = 1 << 20;

#[derive(Clone, Copy, Debug)]
enum Node {
    /// Values of `field` ≤ `at` go to `left`, the others to `right` (node indices).
    Split { field: u8, at: u32, left: u32, right: u32 },
    /// Rules `leaf_rules[start..start + len]`, in priority order.
    Leaf { start: u32, len: u32 },
}

/// A built tree over a rule set.
pub(crate) struct Tree {
    nodes: Vec<Node>,
    leaf_rules: Vec<u32>,
    depth: usize,
}

/// Trees at least this deep walk a batch in lockstep (see [`Tree::leaves`]);
/// shallower ones walk packet by packet, where lockstep costs more than
/// the overlapped loads save.
pub(crate) const LOCKSTEP_DEPTH: usize = 12;

impl Tree {
    /// Builds the tree for `rules` (in priority order).
    pub(crate) fn build(rules: &[Ranges]) -> Self {
        let mut builder = Builder { rules, nodes: Vec::new(), leaf_rules: Vec::new(), budget: COPIES_PER_RULE * rules.len() + MIN_BUDGET };
        let all: Vec<u32> = (0..rules.len() as u32).collect();
        let full = [(0, u32::MAX), (0, u32::MAX), (0, 255), (0, 65535), (0, 65535)];
        builder.node(all, full, 0);
        let mut tree = Self { nodes: builder.nodes, leaf_rules: builder.leaf_rules, depth: 0 };
        tree.depth = tree.shape().0;
        tree
    }

    /// Whether batches should walk this tree in lockstep.
    pub(crate) fn lockstep(&self) -> bool {
        self.depth >= LOCKSTEP_DEPTH
    }

    /// The rules that may match `key`, in priority order (the leaf's).
    #[inline]
    pub(crate) fn candidates(&self, key: &[u32; FIELDS]) -> &[u32] {
        let mut i = 0usize;
        loop {
            match self.nodes[i] {
                Node::Split { field, at, left, right } => i = if key[field as usize] <= at { left } else { right } as usize,
                Node::Leaf { start, len } => return &self.leaf_rules[start as usize..(start + len) as usize],
            }
        }
    }

    /// The leaf of each of `keys` into `leaves` (same length), walking the
    /// tree for all of them in lockstep so that their node loads overlap
    /// (the walks are chains of dependent loads; one at a time, each waits).
    #[inline]
    pub(crate) fn leaves(&self, keys: &[[u32; FIELDS]], leaves: &mut [u32]) {
        let at = &mut leaves[..keys.len()];
        at.fill(0);
        loop {
            let mut walking = false;
            for (i, key) in at.iter_mut().zip(keys) {
                if let Node::Split { field, at: split, left, right } = self.nodes[*i as usize] {
                    *i = if key[field as usize] <= split { left } else { right };
                    walking = true;
                }
            }
            if !walking {
                return;
            }
        }
    }

    /// The rules of leaf node `leaf` (from [`Self::leaves`]), in priority order.
    #[inline]
    pub(crate) fn rules_at(&self, leaf: u32) -> &[u32] {
        match self.nodes[leaf as usize] {
            Node::Leaf { start, len } => &self.leaf_rules[start as usize..(start + len) as usize],
            Node::Split { .. } => unreachable!("leaves() ends every walk at a leaf"),
        }
    }

    /// Depth of the deepest leaf and the largest leaf (rules).
    pub(crate) fn shape(&self) -> (usize, usize) {
        fn walk(t: &Tree, i: usize, depth: usize) -> (usize, usize) {
            match t.nodes[i] {
                Node::Split { left, right, .. } => {
                    let (a, b) = (walk(t, left as usize, depth + 1), walk(t, right as usize, depth + 1));
                    (a.0.max(b.0), a.1.max(b.1))
                }
                Node::Leaf { len, .. } => (depth, len as usize),
            }
        }
        walk(self, 0, 0)
    }
}

struct Builder<'a> {
    rules: &'a [Ranges],
    nodes: Vec<Node>,
    leaf_rules: Vec<u32>,
    /// Rule copies leaves may still take.
    budget: usize,
}

impl Builder<'_> {
    /// Builds the subtree of `region` holding `rules` (those that meet it,
    /// in priority order); returns its node index.
    fn node(&mut self, mut rules: Vec<u32>, region: Ranges, depth: usize) -> u32 {
        // Below a rule that covers the whole region nothing else can match.
        if let Some(cover) = rules.iter().position(|&r| covers(&self.rules[r as usize], &region)) {
            rules.truncate(cover + 1);
        }
        let index = self.nodes.len() as u32;
        let split = if rules.len() <= LEAF_RULES || depth >= MAX_DEPTH || self.budget < rules.len() {
            None
        } else {
            self.best_split(&rules, &region)
        };
        let Some((field, at)) = split else {
            self.budget = self.budget.saturating_sub(rules.len());
            let start = self.leaf_rules.len() as u32;
            self.leaf_rules.extend_from_slice(&rules);
            self.nodes.push(Node::Leaf { start, len: rules.len() as u32 });
            return index;
        };
        self.nodes.push(Node::Leaf { start: 0, len: 0 }); // replaced below
        let (mut lower, mut upper) = (region, region);
        lower[field].1 = at;
        upper[field].0 = at + 1;
        let meets = |r: &u32, side: &Ranges| overlaps(&self.rules[*r as usize][field], &side[field]);
        let (l, u): (Vec<u32>, Vec<u32>) = (rules.iter().copied().filter(|r| meets(r, &lower)).collect(), rules.iter().copied().filter(|r| meets(r, &upper)).collect());
        drop(rules);
        let left = self.node(l, lower, depth + 1);
        let right = self.node(u, upper, depth + 1);
        self.nodes[index as usize] = Node::Split { field: field as u8, at, left, right };
        index
    }

    /// The field and point to split `region` at: the median of the rules'
    /// boundaries inside it, on the field whose split leaves the fewest
    /// rules on the fuller side (then the fewest copies); None when no
    /// split separates anything.
    fn best_split(&self, rules: &[u32], region: &Ranges) -> Option<(usize, u32)> {
        let mut best: Option<((usize, usize), usize, u32)> = None;
        let mut points = Vec::with_capacity(2 * rules.len());
        for (field, &(lo, hi)) in region.iter().enumerate() {
            points.clear();
            for &r in rules {
                let (a, b) = self.rules[r as usize][field];
                if a > lo && a <= hi {
                    points.push(a - 1);
                }
                if b >= lo && b < hi {
                    points.push(b);
                }
            }
            if points.is_empty() {
                continue;
            }
            points.sort_unstable();
            points.dedup();
            let at = points[points.len() / 2];
            let (mut left, mut right) = (0, 0);
            for &r in rules {
                let (a, b) = self.rules[r as usize][field];
                left += usize::from(a <= at);
                right += usize::from(b > at);
            }
            let cost = (left.max(right), left + right);
            if cost.0 < rules.len() && best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, field, at));
            }
        }
        best.map(|(_, field, at)| (field, at))
    }
}

fn overlaps(a: &(u32, u32), b: &(u32, u32)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

fn covers(rule: &Ranges, region: &Ranges) -> bool {
    rule.iter().zip(region).all(|(r, g)| r.0 <= g.0 && g.1 <= r.1)
}
