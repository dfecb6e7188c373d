//! Peer access between simulated devices: all of them reach each other's
//! memory (it is all host memory), unless [`SIM_PEER_ACCESS_ENV`] says `none`,
//! which simulates devices without a peer link (as GPUs on different PCIe
//! root complexes may be), so that the errors of that case can be tested.

use super::super::{status, DriverError};
use std::sync::OnceLock;

/// The environment variable that sets whether simulated devices can reach
/// each other's memory: `all` (the default) or `none`.
pub const SIM_PEER_ACCESS_ENV: &str = "GPU_SIM_PEER_ACCESS";

/// Whether the simulated devices can access each other's memory.
pub(crate) fn peers_reachable() -> bool {
    static SETTING: OnceLock<bool> = OnceLock::new();
    *SETTING.get_or_init(|| {
        match std::env::var(SIM_PEER_ACCESS_ENV)
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref()
        {
            Ok("none") => false,
            Ok("all") | Ok("") | Err(_) => true,
            Ok(other) => {
                crate::diagnostics::report(
                    crate::diagnostics::Level::Warn,
                    &format!("ignoring {SIM_PEER_ACCESS_ENV}={other}: use `all` or `none`; simulating peer access between all devices"),
                );
                true
            }
        }
    })
}

/// What `cuCtxEnablePeerAccess` answers when the devices have no peer link.
pub(crate) fn unsupported(device: usize, peer: usize) -> DriverError {
    DriverError {
        call: "cuCtxEnablePeerAccess",
        code: status::PEER_ACCESS_UNSUPPORTED,
        name: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED (simulated)".into(),
        description: format!(
            "simulated device {device} cannot reach the memory of device {peer} ({SIM_PEER_ACCESS_ENV}=none)"
        ),
    }
}
