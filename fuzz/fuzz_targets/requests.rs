//! Control-API requests from arbitrary bytes (a method, a path, a JSON
//! body) read against a small router with a scheduled egress: answered or
//! refused with a 4xx and a message, never a panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sluice_pipeline::Pipeline;

const ROUTER: &str = r#"{"name": "r", "modules": [
    {"name": "src", "source": {"synthetic": {"streams": [{"template": {"dst_ip": "20.0.1.1"}, "flow": "a"}, {"template": {"src_ip": "2001:db8:1::1", "dst_ip": "2001:db8::1", "size": 80}, "flow": "b"}]}}},
    {"name": "lpm", "nf": {"type": "lpm", "routes": [["20.0.1.0/24", 0], ["2001:db8::/32", 1]]}},
    {"name": "acl", "nf": {"type": "acl", "rules": [{"dst": "20.0.0.0/8", "permit": true}]}},
    {"name": "out0", "sink": {}}, {"name": "out1", "sink": {}}],
  "edges": [{"from": "src", "to": "lpm"}, {"from": "lpm", "outgate": 0, "to": "acl"}, {"from": "acl", "to": "out0"}, {"from": "lpm", "outgate": 1, "to": "out1"}],
  "flows": [{"name": "a", "path": ["src", "lpm", "acl", "out0"], "slo_us": 100}, {"name": "b", "path": ["src", "lpm", "out1"]}],
  "egress_scheduler": {"algorithm": "qfq", "link_bits_per_s": 1e9, "classes": [{"name": "ca", "weight": 1, "flows": ["a"]}, {"name": "cb", "weight": 2, "flows": ["b"]}]}}"#;

/// Paths the fuzzer starts from; it may replace the names in them.
const PATHS: &[&str] = &[
    "/v1/flows/a/slo", "/v1/controller", "/v1/modules/lpm/trigger", "/v1/modules/lpm/worker", "/v1/modules/acl/weight",
    "/v1/modules/src/rate", "/v1/modules/acl/config", "/v1/modules/lpm/config", "/v1/modules/lpm/routes", "/v1/workers/0", "/metrics",
    "/v1/egress", "/v1/egress/classes/cb/weight", "/v1/egress/link",
];

fuzz_target!(|data: &[u8]| {
    static PIPELINE: OnceLock<Pipeline> = OnceLock::new();
    let pipeline = PIPELINE.get_or_init(|| Pipeline::from_json(ROUTER).expect("a valid description"));
    let Some((&pick, rest)) = data.split_first() else { return };
    let method = ["GET", "PUT", "POST", "DELETE"][(pick & 3) as usize];
    let text = String::from_utf8_lossy(rest);
    // A path of the list, or one the input spells before a newline.
    let (path, body) = match text.split_once('\n') {
        Some((path, body)) if pick & 4 != 0 => (path.to_owned(), body),
        _ => (PATHS[(pick as usize >> 3) % PATHS.len()].to_owned(), text.as_ref()),
    };
    if let Err(e) = sluice_serve::check_request(pipeline, method, &path, body) {
        assert!((400..500).contains(&e.status), "{method} {path}: {e:?}");
        assert!(!e.message.is_empty() && !e.message.contains('\n'), "one line: {method} {path}: {e:?}");
    }
});
