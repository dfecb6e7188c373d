//! [`UniqueId`]: what every rank of one communicator is made from, and its
//! exchange between processes through a file or an environment variable.

use super::{error, keep_nvlink_multicast_off};
use crate::backend::{driver, UNIQUE_ID_BYTES};
use crate::error::{Error, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// The environment variable [`UniqueId::from_env`] reads by convention (a
/// launcher sets it for every process, as the hex text of
/// [`UniqueId::to_hex`]).
pub const UNIQUE_ID_ENV: &str = "GPU_NCCL_UNIQUE_ID";

/// NCCL's unique id (`ncclUniqueId`, 128 bytes): made once, by one process,
/// and given to every rank of the communicator. With NCCL it holds the
/// network address where that process waits for the ranks to join, so the
/// process that made it must live until they have; on the simulator it names
/// a directory where the ranks meet
/// ([`SIM_RENDEZVOUS_DIR_ENV`](crate::SIM_RENDEZVOUS_DIR_ENV)).
#[derive(Clone, PartialEq, Eq)]
pub struct UniqueId {
    bytes: [u8; UNIQUE_ID_BYTES],
}

fn exchange_error(reason: String) -> Error {
    Error::UniqueIdExchange { reason }
}

impl UniqueId {
    /// A new id (NCCL's `ncclGetUniqueId`).
    pub fn new() -> Result<UniqueId> {
        keep_nvlink_multicast_off();
        Ok(UniqueId {
            bytes: driver().comm_unique_id().map_err(error)?,
        })
    }

    pub(super) fn as_array(&self) -> &[u8; UNIQUE_ID_BYTES] {
        &self.bytes
    }

    /// The id's 128 bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// An id from its 128 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<UniqueId> {
        let bytes = bytes.try_into().map_err(|_| {
            exchange_error(format!(
                "an id has {UNIQUE_ID_BYTES} bytes, not {}",
                bytes.len()
            ))
        })?;
        Ok(UniqueId { bytes })
    }

    /// The id as 256 hexadecimal digits, for an environment variable or a file.
    pub fn to_hex(&self) -> String {
        self.bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// An id from the text of [`to_hex`](Self::to_hex) (surrounding white
    /// space allowed).
    pub fn from_hex(text: &str) -> Result<UniqueId> {
        let text = text.trim();
        let bad = || {
            exchange_error(format!(
                "`{}` is not an id: expected {} hexadecimal digits",
                text.chars().take(300).collect::<String>(),
                2 * UNIQUE_ID_BYTES
            ))
        };
        if text.len() != 2 * UNIQUE_ID_BYTES || !text.is_ascii() {
            return Err(bad());
        }
        let mut bytes = [0u8; UNIQUE_ID_BYTES];
        for (i, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(UniqueId { bytes })
    }

    /// The id in the environment variable `name` (hex text), as a launcher
    /// sets it for every process ([`UNIQUE_ID_ENV`] by convention).
    pub fn from_env(name: &str) -> Result<UniqueId> {
        match std::env::var(name) {
            Ok(text) => UniqueId::from_hex(&text)
                .map_err(|e| exchange_error(format!("{name}: {e}"))),
            Err(_) => Err(exchange_error(format!(
                "the environment variable {name} is not set: the launcher sets it to the hex text of UniqueId::to_hex for every process"
            ))),
        }
    }

    /// Writes the id's hex text to `path` whole: to a temporary file beside
    /// it first, then renamed, so a reader never sees part of it.
    pub fn write_to_file(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let partial = path.with_extension(format!("partial-{}", std::process::id()));
        std::fs::write(&partial, self.to_hex())
            .and_then(|()| std::fs::rename(&partial, path))
            .map_err(|e| exchange_error(format!("could not write {}: {e}", path.display())))
    }

    /// Reads the id from `path`, waiting up to `timeout` for the file to appear.
    pub fn read_from_file(path: impl AsRef<Path>, timeout: Duration) -> Result<UniqueId> {
        let path = path.as_ref();
        let start = Instant::now();
        loop {
            match std::fs::read_to_string(path) {
                Ok(text) => {
                    return UniqueId::from_hex(&text)
                        .map_err(|e| exchange_error(format!("{}: {e}", path.display())))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if start.elapsed() >= timeout {
                        return Err(exchange_error(format!(
                            "{} did not appear within {:.1} s: rank 0 writes it",
                            path.display(),
                            timeout.as_secs_f64()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => {
                    return Err(exchange_error(format!(
                        "could not read {}: {e}",
                        path.display()
                    )))
                }
            }
        }
    }

    /// The exchange through a file every rank sees: rank 0 makes the id and
    /// writes it to `path`; the other ranks wait for it (up to `timeout`) and
    /// read it. `path` must be new for each run: a file left from an earlier
    /// run would hand its stale id to ranks that read it first.
    pub fn shared_through_file(
        path: impl AsRef<Path>,
        rank: usize,
        timeout: Duration,
    ) -> Result<UniqueId> {
        if rank == 0 {
            let id = UniqueId::new()?;
            id.write_to_file(path)?;
            Ok(id)
        } else {
            UniqueId::read_from_file(path, timeout)
        }
    }
}

/// Shows the first bytes only: the id is long and opaque.
impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UniqueId({}...)", &self.to_hex()[..16])
    }
}
