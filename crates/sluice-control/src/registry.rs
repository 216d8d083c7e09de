//! The built-in controllers by name: the one place that knows them all.

use crate::baseline::{Max, Null};
use crate::controller::Controller;
use crate::nfvnice::NfVnice;
use crate::onoff::OnOff;
use crate::projgrad::ProjGrad;
use crate::view::ControlParams;
use crate::wfq_opt::WfqOpt;

/// Names of the built-in controllers.
pub const CONTROLLERS: &[&str] = &["null", "max", "nfvnice", "onoff", "projgrad", "wfq-opt"];

/// The built-in controller called `name`, with `params` where it takes them.
pub fn by_name(name: &str, params: ControlParams) -> Option<Box<dyn Controller>> {
    match name {
        "null" => Some(Box::new(Null)),
        "max" => Some(Box::new(Max)),
        "nfvnice" => Some(Box::new(NfVnice)),
        "onoff" => Some(Box::new(OnOff::new(params))),
        "projgrad" => Some(Box::new(ProjGrad::new(params))),
        "wfq-opt" => Some(Box::new(WfqOpt::new(params))),
        _ => None,
    }
}
