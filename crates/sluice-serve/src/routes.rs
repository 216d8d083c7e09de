//! An LPM's routes as the control API keeps them: in the order they were
//! given, indexed by prefix however it is written ("10.0.0.1/8" is
//! "10.0.0.0/8"), so that a change of a few routes costs a few lookups
//! whatever the table's size.

use std::collections::HashMap;

use sluice_core::wire::IpPrefix;
use sluice_pipeline::spec::GateRef;

use crate::error::ApiError;

/// One LPM's routes.
#[derive(Clone, Default)]
pub struct RouteTable {
    /// Routes as given, a deleted one's slot empty.
    order: Vec<Option<(String, u16)>>,
    /// Where each prefix's route is in `order`.
    index: HashMap<IpPrefix, usize>,
    /// The LPM's multipath routes' prefixes, which its configuration changes, not a route edit.
    multipath: std::collections::HashSet<IpPrefix>,
}

/// A change of routes as a request writes it, its prefixes parsed (which
/// needs no table, so it is done before any lock is taken): deletions
/// first, then additions (each replacing the route of its prefix, if
/// there is one).
#[derive(Debug, Default)]
pub struct RouteEdit {
    /// Each prefix, and as the request wrote it.
    pub delete: Vec<(IpPrefix, String)>,
    /// Each prefix, as the request wrote it, and its gate (see [`Self::name_gates`]).
    pub add: Vec<(IpPrefix, String, u16)>,
    /// The additions whose gate the request gave by name, that name.
    named: Vec<(usize, String)>,
}

impl RouteEdit {
    /// Parses every prefix; the error names the place.
    pub fn parse(add: Vec<(String, GateRef)>, delete: &[String]) -> Result<Self, ApiError> {
        let delete = delete.iter().enumerate().map(|(i, prefix)| IpPrefix::parse(prefix).map(|p| (p, prefix.clone())).map_err(|e| ApiError::bad(format!("delete[{i}]: {e}")))).collect::<Result<_, _>>()?;
        let mut named = Vec::new();
        let mut parsed = Vec::with_capacity(add.len());
        for (i, (prefix, gate)) in add.into_iter().enumerate() {
            let p = IpPrefix::parse(&prefix).map_err(|e| ApiError::bad(format!("add[{i}]: {e}")))?;
            let number = match gate {
                GateRef::Number(n) => u16::try_from(n).map_err(|_| ApiError::bad(format!("add[{i}]: gate {n} is beyond any LPM's ({})", u16::MAX)))?,
                GateRef::Name(name) => {
                    named.push((i, name));
                    0
                }
            };
            parsed.push((p, prefix, number));
        }
        Ok(Self { delete, add: parsed, named })
    }

    /// Gives the gates named in the request their numbers among the
    /// outgates of module `module`, named `names`; the error names the place.
    pub fn name_gates(&mut self, module: &str, names: &[String]) -> Result<(), ApiError> {
        for (i, name) in std::mem::take(&mut self.named) {
            let n = GateRef::Name(name).number(module, names).map_err(|e| ApiError::bad(format!("add[{i}]: {e}")))?;
            self.add[i].2 = n as u16;
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
    /// The routes of `lpm` (which a built LPM has already read).
    pub fn of(lpm: &sluice_nf::lpm::LpmSpec) -> Self {
        let mut t = Self::new(&lpm.routes);
        t.multipath = lpm.multipath.iter().filter_map(|(prefix, _)| IpPrefix::parse(prefix).ok()).collect();
        t
    }

    /// The table of `routes`.
    fn new(routes: &[(String, u16)]) -> Self {
        let mut t = Self::default();
        for (prefix, gate) in routes {
            if let Ok(p) = IpPrefix::parse(prefix) {
                t.put(p, prefix.clone(), *gate);
            }
        }
        t
    }

    fn put(&mut self, p: IpPrefix, prefix: String, gate: u16) {
        match self.index.get(&p) {
            Some(&i) => self.order[i] = Some((prefix, gate)),
            None => {
                self.index.insert(p, self.order.len());
                self.order.push(Some((prefix, gate)));
            }
        }
    }

    /// Checks `edit` against the table: every deleted route exists (once).
    /// The error names the place.
    pub fn check(&self, edit: &RouteEdit) -> Result<(), ApiError> {
        let touched = edit.delete.iter().map(|(p, prefix)| ("delete", p, prefix)).chain(edit.add.iter().map(|(p, prefix, _)| ("add", p, prefix)));
        if let Some((i, (what, _, prefix))) = touched.enumerate().find(|(_, (_, p, _))| self.multipath.contains(p)) {
            let i = if what == "add" { i - edit.delete.len() } else { i };
            return Err(ApiError::bad(format!("{what}[{i}]: {prefix} is a multipath route: change it with the module's configuration")));
        }
        let mut gone = std::collections::HashSet::new();
        for (i, (p, prefix)) in edit.delete.iter().enumerate() {
            if !self.index.contains_key(p) || !gone.insert(p) {
                return Err(ApiError::bad(format!("delete[{i}]: no route '{prefix}' to delete")));
            }
        }
        Ok(())
    }

    /// Makes a checked change.
    pub fn apply(&mut self, d: &RouteEdit) {
        for (p, _) in &d.delete {
            if let Some(i) = self.index.remove(p) {
                self.order[i] = None;
            }
        }
        for (p, prefix, gate) in &d.add {
            self.put(*p, prefix.clone(), *gate);
        }
    }

    /// The routes, in the order they were given.
    pub fn list(&self) -> Vec<(String, u16)> {
        self.order.iter().flatten().cloned().collect()
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

    fn adds(r: &[(&str, u16)]) -> Vec<(String, GateRef)> {
        r.iter().map(|&(p, g)| (p.to_owned(), GateRef::Number(g.into()))).collect()
    }

    #[test]
    fn routes_are_added_replaced_by_prefix_and_deleted() {
        let mut t = RouteTable::new(&routes(&[("10.0.0.0/8", 0), ("2001:db8::/32", 1), ("20.0.1.0/24", 1)]));
        let d = RouteEdit::parse(adds(&[("10.1.2.3/8", 2), ("30.0.0.0/8", 0)]), &["2001:db8:0::/32".into()]).unwrap();
        t.check(&d).unwrap();
        t.apply(&d);
        assert_eq!(t.list(), routes(&[("10.1.2.3/8", 2), ("20.0.1.0/24", 1), ("30.0.0.0/8", 0)]));
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn a_missing_or_malformed_route_names_its_place() {
        let t = RouteTable::new(&routes(&[("10.0.0.0/8", 0)]));
        let twice = RouteEdit::parse(Vec::new(), &["10.0.0.0/8".into(), "10.0.0.0/8".into()]).unwrap();
        assert_eq!(t.check(&twice).err().unwrap().message, "delete[1]: no route '10.0.0.0/8' to delete");
        assert!(RouteEdit::parse(adds(&[("10.0.0.0/33", 0)]), &[]).err().unwrap().message.starts_with("add[0]: "));
    }

    #[test]
    fn a_multipath_route_is_left_to_the_configuration() {
        let lpm = sluice_nf::lpm::LpmSpec { routes: routes(&[("10.0.0.0/8", 0)]), multipath: vec![("20.0.0.0/8".into(), vec![(0, 1), (1, 1)])], ..Default::default() };
        let t = RouteTable::of(&lpm);
        let add = RouteEdit::parse(adds(&[("30.0.0.0/8", 1), ("20.0.0.0/8", 1)]), &[]).unwrap();
        assert_eq!(t.check(&add).err().unwrap().message, "add[1]: 20.0.0.0/8 is a multipath route: change it with the module's configuration");
        let delete = RouteEdit::parse(Vec::new(), &["20.0.0.1/8".into()]).unwrap();
        assert_eq!(t.check(&delete).err().unwrap().message, "delete[0]: 20.0.0.1/8 is a multipath route: change it with the module's configuration");
    }

    #[test]
    fn a_gate_is_given_by_name_or_number() {
        let add = vec![("10.0.0.0/8".to_owned(), GateRef::Name("v4".into())), ("20.0.0.0/8".to_owned(), GateRef::Number(0))];
        let names = ["local".to_owned(), "v4".to_owned()];
        let mut edit = RouteEdit::parse(add.clone(), &[]).unwrap();
        edit.name_gates("lpm", &names).unwrap();
        assert_eq!(edit.add.iter().map(|a| a.2).collect::<Vec<_>>(), [1, 0]);
        let mut unknown = RouteEdit::parse(add, &[]).unwrap();
        assert_eq!(unknown.name_gates("lpm", &names[..1]).unwrap_err().message, "add[0]: module 'lpm' has no gate 'v4' (its gates: 0 'local')");
    }
}
