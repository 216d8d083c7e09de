//! Pipeline descriptions from arbitrary bytes: refused with a message, or
//! run for a millisecond on the simulator and the engine without a panic,
//! an abort or a hang, every packet accounted for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_control::{drive, Null, RunPlan};
use sluice_pipeline::Pipeline;

fuzz_target!(|data: &[u8]| {
    let Ok(json) = std::str::from_utf8(data) else { return };
    match Pipeline::from_json(json) {
        Ok(p) => {
            let plan = RunPlan { periods: 1, warmup_periods: 0, period_ns: 1_000_000, ..RunPlan::default() };
            for engine in [false, true] {
                let report = if engine {
                    p.engine(true).and_then(|mut e| Ok(drive(&mut e, &mut Null, &plan, &mut |_| {})?))
                } else {
                    p.simulator().and_then(|mut s| Ok(drive(&mut s, &mut Null, &plan, &mut |_| {})?))
                };
                if let Ok(report) = report {
                    assert!(report.summary.accounted, "{json}: {:?}", report.summary);
                }
            }
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
