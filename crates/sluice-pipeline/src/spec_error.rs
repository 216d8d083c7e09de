//! What is wrong with a description, said as the user wrote it: the
//! field's path (`modules[3].worker`), and for a key that does not exist,
//! the nearest one that does.

/// The keys a module takes ([`crate::spec::ModuleSpec`]'s own and, after
/// them, those that say its kind), from its schema: serde cannot list them
/// in its errors, for the kind is flattened into the module.
fn module_keys() -> (Vec<String>, Vec<String>) {
    let schema = schemars::schema_for!(crate::spec::ModuleSpec).to_value();
    let own = schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
    let kinds = schema["oneOf"].as_array().into_iter().flatten().filter_map(|v| v["required"][0].as_str().map(str::to_owned)).collect();
    (own, kinds)
}

/// One line naming the path and the problem, from a deserialization error.
pub fn describe(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let mut path = e.path().to_string();
    let inner = e.inner().to_string();
    // serde_json says "… at line 1 column 693": the path says it better.
    let message = inner.split(" at line ").next().unwrap_or(&inner).to_string();
    let message = match unknown_key(&message) {
        Some((key, mut expected, what)) => {
            // The path ends at the unknown key itself: name where it sits.
            if let Some(parent) = path.strip_suffix(&key) {
                path = parent.trim_end_matches('.').to_string();
            }
            if expected.is_empty() && path.starts_with("modules[") && !path.contains('.') {
                let (own, kinds) = module_keys();
                expected = [own, kinds].concat();
            }
            match nearest(&key, &expected) {
                Some(near) => format!("unknown {what} `{key}` (did you mean `{near}`?)"),
                None if !expected.is_empty() => format!("unknown {what} `{key}` (known: {})", expected.join(", ")),
                None => format!("unknown {what} `{key}`"),
            }
        }
        // serde's word for a module without a key that says its kind.
        None if message.starts_with("no variant of enum KindSpec") => {
            format!("a module needs one of the keys {} to say what it is", module_keys().1.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "))
        }
        None => message,
    };
    if path == "." || path.is_empty() {
        message
    } else {
        format!("{path}: {message}")
    }
}

/// The unknown key (or kind), the names serde listed as expected, and
/// which of the two it is, from its message ("unknown field `x`, expected
/// one of `a`, `b`", "unknown variant `x`, expected `a` or `b`").
fn unknown_key(message: &str) -> Option<(String, Vec<String>, &'static str)> {
    let (rest, what) = match message.strip_prefix("unknown field `") {
        Some(rest) => (rest, "key"),
        None => (message.strip_prefix("unknown variant `")?, "kind"),
    };
    let (key, expected) = rest.split_once('`')?;
    let names = expected.split('`').skip(1).step_by(2).map(str::to_string).collect();
    Some((key.to_string(), names, what))
}

/// The candidate closest to `key` by edit distance, if one is close (at most a third of it differs).
fn nearest(key: &str, candidates: &[String]) -> Option<String> {
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(key, c), c))
        .filter(|(d, c)| *d * 3 <= c.len().max(key.len()))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.clone())
}

#[cfg(test)]
mod tests {
    fn error(json: &str) -> String {
        crate::Pipeline::from_json(json).err().expect("refused").to_string().trim_start_matches("pipeline description: ").to_string()
    }

    #[test]
    fn errors_name_the_path_and_the_nearest_key() {
        assert_eq!(error(r#"{"modules": [], "schedular": {}}"#), "unknown key `schedular` (did you mean `scheduler`?)");
        assert_eq!(error(r#"{"modules": [{"name": "a", "sink": {}, "wroker": 1}]}"#), "modules[0]: unknown key `wroker` (did you mean `worker`?)");
        assert_eq!(error(r#"{"modules": [{"name": "a", "sink": {}, "worker": -1}]}"#), "modules[0].worker: invalid value: integer `-1`, expected usize");
        assert_eq!(error(r#"{"modules": [{"name": "a", "sinc": {}}]}"#), "modules[0]: a module needs one of the keys `source`, `nf`, `pcap_tap`, `sink` to say what it is");
        assert_eq!(error(r#"{"modules": [], "flowz": []}"#), "unknown key `flowz` (did you mean `flows`?)");
        assert!(error(r#"{"modules": [], "zzzzzzzz": 1}"#).starts_with("unknown key `zzzzzzzz` (known: name, batch_size, modules"));
        assert_eq!(error(r#"[1]"#), "a description is a JSON object ({\"modules\": …}), not a list");
        assert_eq!(error(r#"{"modules": "x"}"#), "modules: invalid type: string \"x\", expected a sequence");
        assert_eq!(error(r#"{"modules": []}"#), "modules: 0 is out of range 1..=131072");
        assert!(error("{").starts_with("not JSON: EOF while parsing an object"));
    }

    /// A source, an LPM whose gates are named, and `edges` (JSON) from the LPM.
    fn named(edges: &str) -> String {
        format!(
            r#"{{"modules": [{{"name": "src", "source": {{"synthetic": {{"streams": [{{"flow": "f"}}]}}}}}},
                {{"name": "lpm", "nf": {{"type": "lpm", "routes": [["20.0.0.0/8", 1], ["0.0.0.0/0", 0]]}}, "gates": ["default", "twenty"]}},
                {{"name": "a", "sink": {{}}}}, {{"name": "b", "sink": {{}}}}],
               "edges": [{{"from": "src", "to": "lpm"}}, {edges}], "flows": [{{"name": "f", "path": ["src", "lpm", "b"]}}]}}"#
        )
    }

    #[test]
    fn a_gate_is_given_by_name_or_number_and_errors_say_both() {
        let by_name = crate::Pipeline::from_json(&named(r#"{"from": "lpm", "outgate": "default", "to": "a"}, {"from": "lpm", "outgate": "twenty", "to": "b"}"#)).unwrap();
        let by_number = crate::Pipeline::from_json(&named(r#"{"from": "lpm", "outgate": 0, "to": "a"}, {"from": "lpm", "outgate": 1, "to": "b"}"#)).unwrap();
        assert_eq!(format!("{:?}", by_name.model().edges), format!("{:?}", by_number.model().edges));
        assert_eq!(error(&named(r#"{"from": "lpm", "outgate": "default", "to": "a"}"#)), "modules[1]: module 'lpm' outgate 1 is dangling: connect it to a module (outgate 1 is 'twenty')");
        assert_eq!(error(&named(r#"{"from": "lpm", "outgate": "v6", "to": "a"}"#)), "edges[1].outgate: module 'lpm' has no gate 'v6' (its gates: 0 'default', 1 'twenty')");
        assert_eq!(
            error(&named(r#"{"from": "lpm", "outgate": 1, "to": "a"}, {"from": "lpm", "outgate": "twenty", "to": "b"}"#)),
            "modules[1]: module 'lpm' outgate 1 is connected twice (outgate 1 is 'twenty')"
        );
        let three = named(r#"{"from": "lpm", "to": "a"}"#).replace(r#"["default", "twenty"]"#, r#"["x", "y", "z"]"#);
        assert!(error(&three).contains("module 'lpm': 3 gate names for 2 outgates"), "{}", error(&three));
    }
}
