//! A controller written in Python, behind the Rust `Controller` interface.
//! The Python side (`sluice.controller.Controller`) receives and returns
//! JSON; this adapter only carries it across.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use sluice_core::{Actions, Model, Telemetry};

/// Where the first exception of a Python controller waits for the end of the run.
pub type ErrorSlot = Arc<Mutex<Option<PyErr>>>;

/// Calls `init_json(model_json)` and `step_json(telemetry_json)` on a Python object.
pub struct PyController {
    obj: PyObject,
    name: String,
    error: ErrorSlot,
}

impl PyController {
    /// Wraps `obj`, which has `name`, `init_json` and `step_json`; its first
    /// exception goes into the returned slot, and it does nothing after that.
    pub fn new(py: Python<'_>, obj: PyObject) -> PyResult<(Self, ErrorSlot)> {
        let name = obj.getattr(py, "name")?.extract::<String>(py)?;
        let error = ErrorSlot::default();
        Ok((Self { obj, name, error: error.clone() }, error))
    }

    fn call(&mut self, method: &str, arg: String, model: &Model) -> Actions {
        let method = method.trim_end_matches("_json");
        let mut error = self.error.lock().expect("one run at a time");
        if error.is_some() {
            return Actions::default();
        }
        let result = Python::with_gil(|py| -> PyResult<String> { self.obj.call_method1(py, format!("{method}_json").as_str(), (arg,))?.extract(py) });
        match result.and_then(|json| actions(&json, model, method)) {
            Ok(a) => a,
            Err(e) => {
                *error = Some(e);
                Actions::default()
            }
        }
    }
}

/// The keys a Python controller's actions may have.
const KEYS: [&str; 2] = ["triggers", "weights"];

/// Actions from `{"triggers": {MODULE: b}, "weights": {MODULE: w}}`, checked
/// whole: a value that is not such a dict, a key or module that does not
/// exist, or a number that is not a count is a ValueError naming it.
fn actions(json: &str, model: &Model, method: &str) -> PyResult<Actions> {
    let bad = |m: String| pyo3::exceptions::PyValueError::new_err(format!("the controller's {method} returned {m}"));
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
    let Some(v) = v.as_object() else {
        let shown = if v.is_null() { "None".to_string() } else { v.to_string() };
        return Err(bad(format!("{shown}, not a dict like {{'triggers': {{MODULE: b}}}} ({{}} changes nothing)")));
    };
    if let Some(key) = v.keys().find(|k| !KEYS.contains(&k.as_str())) {
        let near = KEYS.iter().find(|k| strsim::levenshtein(k, key) <= 2).map(|k| format!(" (did you mean '{k}'?)")).unwrap_or_default();
        return Err(bad(format!("unknown key '{key}'{near}; it may set {}", KEYS.join(" and "))));
    }
    let id = |name: &str| model.module_id(name).ok_or_else(|| bad(format!("unknown module '{name}'")));
    let mut out = Actions::default();
    for (key, list) in [("triggers", &mut out.triggers), ("weights", &mut out.weights)] {
        let Some(value) = v.get(key) else { continue };
        let map = value.as_object().ok_or_else(|| bad(format!("{key} = {value}, not a dict of module → number")))?;
        for (name, value) in map {
            let n = value.as_u64().filter(|n| *n <= u32::MAX as u64).ok_or_else(|| bad(format!("{key}['{name}'] = {value}, not a count")))?;
            list.push((id(name)?, n as u32));
        }
    }
    Ok(out)
}

impl sluice_control::Controller for PyController {
    fn name(&self) -> &str {
        &self.name
    }

    fn init(&mut self, model: &Model) -> Actions {
        let json = serde_json::to_string(model).expect("a model serialises");
        self.call("init_json", json, model)
    }

    fn step(&mut self, model: &Model, telemetry: &Telemetry) -> Actions {
        let json = serde_json::to_string(telemetry).expect("telemetry serialises");
        self.call("step_json", json, model)
    }
}
