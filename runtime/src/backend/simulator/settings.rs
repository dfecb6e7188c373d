//! The simulator's settings from the environment, read once per process.

use std::sync::OnceLock;
use std::time::Duration;

/// The environment variable that sets the stack size of each simulated GPU
/// thread, in bytes (default 262144, 256 KiB; at least 65536). A kernel whose
/// thread overflows its stack fails its launch with an error that names this
/// variable.
pub const SIM_STACK_BYTES_ENV: &str = "GPU_SIM_STACK_BYTES";

/// The environment variable that sets, in seconds, how long a simulated block
/// may go without progress before its launch fails (default 60; `0` turns the
/// watchdog off). A block makes progress when one of its threads finishes,
/// reaches a barrier or warp operation, or changes memory with an atomic
/// operation; a thread spinning on a flag nobody sets, or in a loop without
/// end, makes none.
pub const SIM_TIMEOUT_ENV: &str = "GPU_SIM_TIMEOUT_SECS";

/// The environment variable that turns the simulator's race detector on:
/// `1` (or `true`) checks every launch for data races between its threads,
/// `0` (the default, or `false`) does not. A launch with a race fails with
/// an error naming the kernel, both threads, the address and the barrier
/// interval (see `race_check`); checked launches run several times slower.
/// [`set_race_check`](crate::set_race_check) overrides it.
pub const SIM_RACECHECK_ENV: &str = "GPU_SIM_RACECHECK";

/// The environment variable that sets how many OS threads run the blocks of
/// a launch (default: the host's cores; at least 1). The simulated devices
/// report it as their multiprocessor count.
pub const SIM_THREADS_ENV: &str = "GPU_SIM_THREADS";

/// The environment variable that sets the simulated devices' compute
/// capability: `major.minor` for every device (`8.0`), or a list, one per
/// device, the last repeated for the rest (`9.0,8.0,7.0`). The default is
/// 9.0, an H100's. Kernels that need a newer architecture
/// (`#[kernel(arch = "...")]`) are refused on an older simulated device as
/// on a GPU.
pub const SIM_COMPUTE_CAPABILITY_ENV: &str = "GPU_SIM_COMPUTE_CAPABILITY";

/// The simulated devices' compute capability when the environment sets none.
pub(crate) const DEFAULT_COMPUTE_CAPABILITY: (u32, u32) = (9, 0);

/// The compute capability of simulated device `ordinal`, or an error naming
/// the variable that is wrong.
pub(crate) fn compute_capability(ordinal: usize) -> Result<(u32, u32), String> {
    static LIST: OnceLock<Result<Vec<(u32, u32)>, String>> = OnceLock::new();
    let list = LIST
        .get_or_init(|| {
            parse_compute_capabilities(std::env::var(SIM_COMPUTE_CAPABILITY_ENV).ok().as_deref())
        })
        .as_ref()
        .map_err(Clone::clone)?;
    Ok(list
        .get(ordinal)
        .or(list.last())
        .copied()
        .unwrap_or(DEFAULT_COMPUTE_CAPABILITY))
}

fn parse_compute_capabilities(text: Option<&str>) -> Result<Vec<(u32, u32)>, String> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return Ok(vec![DEFAULT_COMPUTE_CAPABILITY]);
    };
    text.split(',')
        .map(|one| {
            let one = one.trim();
            one.split_once('.')
                .and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)))
                .filter(|&(major, minor): &(u32, u32)| (7..=12).contains(&major) && minor <= 9)
                .ok_or_else(|| {
                    format!(
                        "{SIM_COMPUTE_CAPABILITY_ENV}=`{text}`: `{one}` is not a compute capability: give `major.minor` from 7.0 to 12.x, or a comma-separated list of them, one per device"
                    )
                })
        })
        .collect()
}

const DEFAULT_STACK_BYTES: usize = 256 * 1024;
const MIN_STACK_BYTES: usize = 64 * 1024;
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// What the environment set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    /// The stack of one simulated thread.
    pub(crate) stack_bytes: usize,
    /// How long a block may go without progress; `None`: forever.
    pub(crate) timeout: Option<Duration>,
    /// Whether launches are checked for data races (unless the API decides).
    pub(crate) race_check: bool,
    /// How many OS threads run a launch's blocks; `None`: one per core.
    pub(crate) threads: Option<usize>,
}

/// The settings, or an error naming the variable that is wrong.
pub(crate) fn settings() -> Result<Settings, String> {
    static SETTINGS: OnceLock<Result<Settings, String>> = OnceLock::new();
    SETTINGS
        .get_or_init(|| {
            let var = |name: &str| std::env::var(name).ok();
            parse(
                var(SIM_STACK_BYTES_ENV).as_deref(),
                var(SIM_TIMEOUT_ENV).as_deref(),
            )
            .and_then(|s| {
                Ok(Settings {
                    race_check: parse_race_check(var(SIM_RACECHECK_ENV).as_deref())?,
                    threads: parse_threads(var(SIM_THREADS_ENV).as_deref())?,
                    ..s
                })
            })
        })
        .clone()
}

fn parse(stack: Option<&str>, timeout: Option<&str>) -> Result<Settings, String> {
    let stack_bytes = match stack.map(str::trim) {
        None | Some("") => DEFAULT_STACK_BYTES,
        Some(text) => match text.parse::<usize>() {
            Ok(bytes) if bytes >= MIN_STACK_BYTES => bytes,
            _ => {
                return Err(format!(
                    "{SIM_STACK_BYTES_ENV}=`{text}` is not a stack size: give a number of bytes of at least {MIN_STACK_BYTES} (the default is {DEFAULT_STACK_BYTES})"
                ))
            }
        },
    };
    let timeout = match timeout.map(str::trim) {
        None | Some("") => Some(DEFAULT_TIMEOUT),
        Some(text) => match text.parse::<f64>() {
            Ok(0.0) => None,
            Ok(secs) if secs > 0.0 => Duration::try_from_secs_f64(secs).ok(),
            _ => {
                return Err(format!(
                    "{SIM_TIMEOUT_ENV}=`{text}` is not a time: give a number of seconds (0 turns the watchdog off; the default is {})",
                    DEFAULT_TIMEOUT.as_secs()
                ))
            }
        },
    };
    Ok(Settings {
        stack_bytes,
        timeout,
        race_check: false,
        threads: None,
    })
}

fn parse_race_check(value: Option<&str>) -> Result<bool, String> {
    match value.map(str::trim) {
        None | Some("" | "0" | "false") => Ok(false),
        Some("1" | "true") => Ok(true),
        Some(text) => Err(format!(
            "{SIM_RACECHECK_ENV}=`{text}` is not a switch: give 1 to check launches for data races, 0 not to (the default)"
        )),
    }
}

fn parse_threads(value: Option<&str>) -> Result<Option<usize>, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => match text.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(format!(
                "{SIM_THREADS_ENV}=`{text}` is not a thread count: give a number of at least 1 (the default is the host's cores)"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_when_unset_or_empty() {
        let s = parse(None, Some(" ")).unwrap();
        assert_eq!(s.stack_bytes, 256 * 1024);
        assert_eq!(s.timeout, Some(Duration::from_secs(60)));
    }

    #[test]
    fn values_are_read() {
        let s = parse(Some("1048576"), Some("2.5")).unwrap();
        assert_eq!(s.stack_bytes, 1 << 20);
        assert_eq!(s.timeout, Some(Duration::from_millis(2500)));
        assert_eq!(parse(None, Some("0")).unwrap().timeout, None);
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = parse(Some("1M"), None).unwrap_err();
        assert!(
            e.starts_with("GPU_SIM_STACK_BYTES=`1M` is not a stack size"),
            "{e}"
        );
        let e = parse(Some("4096"), None).unwrap_err();
        assert!(e.contains("at least 65536"), "{e}");
        let e = parse(None, Some("-1")).unwrap_err();
        assert!(
            e.starts_with("GPU_SIM_TIMEOUT_SECS=`-1` is not a time"),
            "{e}"
        );
        let e = parse(None, Some("NaN")).unwrap_err();
        assert!(e.contains("GPU_SIM_TIMEOUT_SECS"), "{e}");
    }

    #[test]
    fn the_race_check_and_thread_count_are_read() {
        assert!(!parse_race_check(None).unwrap());
        assert!(!parse_race_check(Some(" 0 ")).unwrap());
        assert!(parse_race_check(Some("1")).unwrap());
        assert!(parse_race_check(Some("true")).unwrap());
        let e = parse_race_check(Some("yes")).unwrap_err();
        assert!(
            e.starts_with("GPU_SIM_RACECHECK=`yes` is not a switch"),
            "{e}"
        );
        assert_eq!(parse_threads(None).unwrap(), None);
        assert_eq!(parse_threads(Some("3")).unwrap(), Some(3));
        let e = parse_threads(Some("0")).unwrap_err();
        assert!(
            e.starts_with("GPU_SIM_THREADS=`0` is not a thread count"),
            "{e}"
        );
    }

    #[test]
    fn compute_capabilities_are_read() {
        assert_eq!(parse_compute_capabilities(None).unwrap(), vec![(9, 0)]);
        assert_eq!(parse_compute_capabilities(Some(" ")).unwrap(), vec![(9, 0)]);
        assert_eq!(
            parse_compute_capabilities(Some("9.0, 8.6,7.0")).unwrap(),
            vec![(9, 0), (8, 6), (7, 0)]
        );
        let e = parse_compute_capabilities(Some("9.0,sm_80")).unwrap_err();
        assert!(
            e.contains(
                "GPU_SIM_COMPUTE_CAPABILITY=`9.0,sm_80`: `sm_80` is not a compute capability"
            ),
            "{e}"
        );
        assert!(parse_compute_capabilities(Some("6.1")).is_err());
    }
}
