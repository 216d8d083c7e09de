//! An LPM's routes as the control API keeps them: in the order they were
//! given, indexed by prefix however it is written ("10.0.0.1/8" is
//! "10.0.0.0/8"), so that a change of a few routes costs a few lookups
//! whatever the table's size. A route leads to a gate or, multipath, to
//! a set of weighted gates (see `sluice_nf::multipath`).

use std::collections::HashMap;

use serde::Deserialize;
use sluice_core::wire::IpPrefix;
use sluice_pipeline::spec::GateRef;

use crate::error::ApiError;

/// Where a route leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// One gate.
    Gate(u16),
    /// Gates by a hash of each packet's flow, with their weights.
    Paths(Vec<(u16, u32)>),
}

/// Where a route leads as a request writes it: a gate, or [gate, weight]
/// pairs, a gate by number or by name.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum NextAsWritten {
    /// One gate.
    Gate(GateRef),
    /// Gates and their weights.
    Paths(Vec<(GateRef, u32)>),
}

/// One LPM's routes.
#[derive(Clone, Default)]
pub struct RouteTable {
    /// Routes as given, a deleted one's slot empty.
    order: Vec<Option<(String, Next)>>,
    /// Where each prefix's route is in `order`.
    index: HashMap<IpPrefix, usize>,
}

/// A change of routes as a request writes it, its prefixes parsed (which
/// needs no table, so it is done before any lock is taken): deletions
/// first, then additions (each replacing the route of its prefix, if
/// there is one).
#[derive(Debug, Default)]
pub struct RouteEdit {
    /// Each prefix, and as the request wrote it.
    pub delete: Vec<(IpPrefix, String)>,
    /// Each prefix, as the request wrote it, and where it leads (see [`Self::name_gates`]).
    pub add: Vec<(IpPrefix, String, Next)>,
    /// The gates the request gave by name: (addition, its path if multipath, name).
    named: Vec<(usize, Option<usize>, String)>,
}

impl RouteEdit {
    /// Parses every prefix; the error names the place.
    pub fn parse(add: Vec<(String, NextAsWritten)>, delete: &[String]) -> Result<Self, ApiError> {
        let delete = delete.iter().enumerate().map(|(i, prefix)| IpPrefix::parse(prefix).map(|p| (p, prefix.clone())).map_err(|e| ApiError::bad(format!("delete[{i}]: {e}")))).collect::<Result<_, _>>()?;
        let mut named = Vec::new();
        let mut parsed = Vec::with_capacity(add.len());
        for (i, (prefix, next)) in add.into_iter().enumerate() {
            let p = IpPrefix::parse(&prefix).map_err(|e| ApiError::bad(format!("add[{i}]: {e}")))?;
            // A gate by number, or a place for the number of one by name.
            let mut number = |gate: GateRef, path: Option<usize>| match gate {
                GateRef::Number(n) => u16::try_from(n).map_err(|_| ApiError::bad(format!("add[{i}]: gate {n} is beyond any LPM's ({})", u16::MAX))),
                GateRef::Name(name) => {
                    named.push((i, path, name));
                    Ok(0)
                }
            };
            let next = match next {
                NextAsWritten::Gate(gate) => Next::Gate(number(gate, None)?),
                NextAsWritten::Paths(paths) => Next::Paths(paths.into_iter().enumerate().map(|(j, (gate, weight))| Ok((number(gate, Some(j))?, weight))).collect::<Result<_, ApiError>>()?),
            };
            parsed.push((p, prefix, next));
        }
        Ok(Self { delete, add: parsed, named })
    }

    /// Gives the gates named in the request their numbers among the
    /// outgates of module `module`, named `names`; the error names the place.
    pub fn name_gates(&mut self, module: &str, names: &[String]) -> Result<(), ApiError> {
        for (i, path, name) in std::mem::take(&mut self.named) {
            let n = GateRef::Name(name).number(module, names).map_err(|e| ApiError::bad(format!("add[{i}]: {e}")))? as u16;
            match (&mut self.add[i].2, path) {
                (Next::Gate(gate), None) => *gate = n,
                (Next::Paths(paths), Some(j)) => paths[j].0 = n,
                _ => unreachable!("named where it was parsed"),
            }
        }
        Ok(())
    }

    /// Routes it touches.
    pub fn len(&self) -> usize {
        self.delete.len() + self.add.len()
    }

    /// Whether it touches none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RouteTable {
    /// The routes and multipath routes of `lpm` (which a built LPM has already read).
    pub fn of(lpm: &sluice_nf::lpm::LpmSpec) -> Self {
        let mut t = Self::default();
        let routes = lpm.routes.iter().map(|(prefix, gate)| (prefix, Next::Gate(*gate)));
        for (prefix, next) in routes.chain(lpm.multipath.iter().map(|(prefix, paths)| (prefix, Next::Paths(paths.clone())))) {
            if let Ok(p) = IpPrefix::parse(prefix) {
                t.put(p, prefix.clone(), next);
            }
        }
        t
    }

    fn put(&mut self, p: IpPrefix, prefix: String, next: Next) {
        match self.index.get(&p) {
            Some(&i) => self.order[i] = Some((prefix, next)),
            None => {
                self.index.insert(p, self.order.len());
                self.order.push(Some((prefix, next)));
            }
        }
    }

    /// Checks `edit` against the table: every deleted route exists (once).
    /// The error names the place.
    pub fn check(&self, edit: &RouteEdit) -> Result<(), ApiError> {
        let mut gone = std::collections::HashSet::new();
        for (i, (p, prefix)) in edit.delete.iter().enumerate() {
            if !self.index.contains_key(p) || !gone.insert(p) {
                return Err(ApiError::bad(format!("delete[{i}]: no route '{prefix}' to delete")));
            }
        }
        Ok(())
    }

    /// Whether `edit` adds or touches a multipath route (which the
    /// running table cannot take in place: the LPM is rebuilt).
    pub fn is_multipath(&self, edit: &RouteEdit) -> bool {
        let multipath = |p: &IpPrefix| self.index.get(p).is_some_and(|&i| matches!(self.order[i], Some((_, Next::Paths(_)))));
        edit.add.iter().any(|(p, _, next)| matches!(next, Next::Paths(_)) || multipath(p)) || edit.delete.iter().any(|(p, _)| multipath(p))
    }

    /// Makes a checked change.
    pub fn apply(&mut self, d: &RouteEdit) {
        for (p, _) in &d.delete {
            if let Some(i) = self.index.remove(p) {
                self.order[i] = None;
            }
        }
        for (p, prefix, next) in &d.add {
            self.put(*p, prefix.clone(), next.clone());
        }
    }

    /// The routes to one gate, in the order they were given.
    pub fn list(&self) -> Vec<(String, u16)> {
        self.order.iter().flatten().filter_map(|(prefix, next)| if let Next::Gate(g) = next { Some((prefix.clone(), *g)) } else { None }).collect()
    }

    /// The multipath routes, in the order they were given.
    pub fn multipath_list(&self) -> Vec<(String, Vec<(u16, u32)>)> {
        self.order.iter().flatten().filter_map(|(prefix, next)| if let Next::Paths(p) = next { Some((prefix.clone(), p.clone())) } else { None }).collect()
    }

    /// How many routes there are.
    pub fn len(&self) -> usize {
        self.index.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(r: &[(&str, u16)]) -> Vec<(String, u16)> {
        r.iter().map(|&(p, g)| (p.to_owned(), g)).collect()
    }

    fn table(r: &[(&str, u16)]) -> RouteTable {
        RouteTable::of(&sluice_nf::lpm::LpmSpec { routes: routes(r), ..Default::default() })
    }

    fn adds(r: &[(&str, u16)]) -> Vec<(String, NextAsWritten)> {
        r.iter().map(|&(p, g)| (p.to_owned(), NextAsWritten::Gate(GateRef::Number(g.into())))).collect()
    }

    #[test]
    fn routes_are_added_replaced_by_prefix_and_deleted() {
        let mut t = table(&[("10.0.0.0/8", 0), ("2001:db8::/32", 1), ("20.0.1.0/24", 1)]);
        let d = RouteEdit::parse(adds(&[("10.1.2.3/8", 2), ("30.0.0.0/8", 0)]), &["2001:db8:0::/32".into()]).unwrap();
        t.check(&d).unwrap();
        t.apply(&d);
        assert_eq!(t.list(), routes(&[("10.1.2.3/8", 2), ("20.0.1.0/24", 1), ("30.0.0.0/8", 0)]));
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn a_missing_or_malformed_route_names_its_place() {
        let t = table(&[("10.0.0.0/8", 0)]);
        let twice = RouteEdit::parse(Vec::new(), &["10.0.0.0/8".into(), "10.0.0.0/8".into()]).unwrap();
        assert_eq!(t.check(&twice).err().unwrap().message, "delete[1]: no route '10.0.0.0/8' to delete");
        assert!(RouteEdit::parse(adds(&[("10.0.0.0/33", 0)]), &[]).err().unwrap().message.starts_with("add[0]: "));
    }

    #[test]
    fn multipath_routes_are_added_replaced_and_deleted_as_routes_are() {
        let lpm = sluice_nf::lpm::LpmSpec { routes: routes(&[("10.0.0.0/8", 0)]), multipath: vec![("20.0.0.0/8".into(), vec![(0, 1), (1, 1)])], ..Default::default() };
        let mut t = RouteTable::of(&lpm);
        let single = RouteEdit::parse(adds(&[("30.0.0.0/8", 1)]), &[]).unwrap();
        assert!(!t.is_multipath(&single), "a route to one gate beside them is made in place");
        let paths = vec![(GateRef::Number(1), 3), (GateRef::Name("b".into()), 1)];
        let mut edit = RouteEdit::parse(vec![("10.0.0.0/8".into(), NextAsWritten::Paths(paths))], &["20.0.0.0/8".into()]).unwrap();
        edit.name_gates("lpm", &["a".into(), "b".into()]).unwrap();
        assert!(t.is_multipath(&edit));
        t.check(&edit).unwrap();
        t.apply(&edit);
        assert_eq!((t.list(), t.multipath_list()), (vec![], vec![("10.0.0.0/8".to_owned(), vec![(1, 3), (1, 1)])]));
        let back = RouteEdit::parse(adds(&[("10.0.0.0/8", 0)]), &[]).unwrap();
        assert!(t.is_multipath(&back), "a multipath route replaced by one gate is rebuilt");
    }

    #[test]
    fn a_gate_is_given_by_name_or_number() {
        let add = || vec![("10.0.0.0/8".to_owned(), NextAsWritten::Gate(GateRef::Name("v4".into()))), ("20.0.0.0/8".to_owned(), NextAsWritten::Gate(GateRef::Number(0)))];
        let names = ["local".to_owned(), "v4".to_owned()];
        let mut edit = RouteEdit::parse(add(), &[]).unwrap();
        edit.name_gates("lpm", &names).unwrap();
        assert_eq!(edit.add.iter().map(|a| a.2.clone()).collect::<Vec<_>>(), [Next::Gate(1), Next::Gate(0)]);
        let mut unknown = RouteEdit::parse(add(), &[]).unwrap();
        assert_eq!(unknown.name_gates("lpm", &names[..1]).unwrap_err().message, "add[0]: module 'lpm' has no gate 'v4' (its gates: 0 'local')");
    }
}
