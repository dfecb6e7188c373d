//! NCCL, loaded at run time: a thin binding of the few functions the
//! collectives use, and the CUDA backend's collective operations on it.
//!
//! The library is `libnccl.so.2`, looked for, in this order:
//!
//! 1. the path in [`NCCL_LIBRARY_ENV`] (a file, or a directory holding
//!    `libnccl.so.2`), when set, and nowhere else;
//! 2. the system's loader path (`LD_LIBRARY_PATH`, the loader's cache, the
//!    system's library directories), as `dlopen("libnccl.so.2")` finds it;
//! 3. PyPI's `nvidia-nccl-cu13` (or `-cu12`) wheel: `nvidia/nccl/lib/` of the
//!    `nvidia.nccl` package that `python3` imports (a namespace package,
//!    found through `importlib.util.find_spec`).
//!
//! A missing library is an error naming every place tried, never a link
//! failure: nothing links against NCCL at build time.
//!
//! NCCL's enqueue calls make the communicator's device current on the calling
//! thread; the backend forgets its record of the bound device after each, so
//! the next call binds again.

use super::super::{
    status, Collective, CollectiveKind, CommHandle, DriverError, SIMULATED_ID_MAGIC,
    UNIQUE_ID_BYTES,
};
use super::context::CudaDriver;
use super::ffi::CUstream;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable naming the NCCL library to load (a path to
/// `libnccl.so.2`, or a directory holding it); when set, nothing else is tried.
pub const NCCL_LIBRARY_ENV: &str = "GPU_NCCL_LIBRARY";

/// The file name looked for.
const LIBRARY: &str = "libnccl.so.2";

/// The call named in the error when no library was found.
const LOAD_CALL: &str = "dlopen(libnccl.so.2)";

/// `ncclUniqueId`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
struct UniqueId {
    internal: [u8; UNIQUE_ID_BYTES],
}

/// `ncclComm_t`.
type Comm = *mut c_void;
/// `ncclResult_t`.
type NcclResult = c_int;

/// The functions used, resolved once from the loaded library.
struct Nccl {
    /// Never unloaded, even when this `Nccl` is dropped: the function
    /// pointers point into it, and NCCL starts threads that run its code
    /// after the call that made them returns (`ncclGetUniqueId`'s bootstrap
    /// listener, communicators' proxies); unmapping the library under them
    /// crashes the process.
    _library: std::mem::ManuallyDrop<libloading::Library>,
    get_error_string: unsafe extern "C" fn(NcclResult) -> *const c_char,
    get_last_error: unsafe extern "C" fn(Comm) -> *const c_char,
    get_unique_id: unsafe extern "C" fn(*mut UniqueId) -> NcclResult,
    comm_init_rank: unsafe extern "C" fn(*mut Comm, c_int, UniqueId, c_int) -> NcclResult,
    comm_init_all: unsafe extern "C" fn(*mut Comm, c_int, *const c_int) -> NcclResult,
    comm_destroy: unsafe extern "C" fn(Comm) -> NcclResult,
    group_start: unsafe extern "C" fn() -> NcclResult,
    group_end: unsafe extern "C" fn() -> NcclResult,
    #[allow(clippy::type_complexity)]
    all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        Comm,
        CUstream,
    ) -> NcclResult,
    #[allow(clippy::type_complexity)]
    broadcast: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        Comm,
        CUstream,
    ) -> NcclResult,
    #[allow(clippy::type_complexity)]
    reduce_scatter: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        Comm,
        CUstream,
    ) -> NcclResult,
    #[allow(clippy::type_complexity)]
    all_gather: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        Comm,
        CUstream,
    ) -> NcclResult,
}

// SAFETY: the function pointers and the library handle are only used to call
// NCCL, whose functions may be called from any thread.
unsafe impl Send for Nccl {}
// SAFETY: as above.
unsafe impl Sync for Nccl {}

/// NCCL's names of its result codes.
fn result_name(code: NcclResult) -> &'static str {
    match code {
        0 => "ncclSuccess",
        1 => "ncclUnhandledCudaError",
        2 => "ncclSystemError",
        3 => "ncclInternalError",
        4 => "ncclInvalidArgument",
        5 => "ncclInvalidUsage",
        6 => "ncclRemoteError",
        7 => "ncclInProgress",
        8 => "ncclTimeout",
        _ => "an NCCL result this runtime does not know",
    }
}

impl Nccl {
    /// Resolves every function from `library`.
    ///
    /// # Safety
    /// `library` is NCCL 2 (its functions have the signatures declared above).
    unsafe fn resolve(library: libloading::Library) -> Result<Nccl, libloading::Error> {
        // SAFETY: each symbol is an NCCL 2 function of the declared type (the
        // caller's promise); the pointers are kept with the library.
        unsafe {
            Ok(Nccl {
                get_error_string: *library.get(b"ncclGetErrorString\0")?,
                get_last_error: *library.get(b"ncclGetLastError\0")?,
                get_unique_id: *library.get(b"ncclGetUniqueId\0")?,
                comm_init_rank: *library.get(b"ncclCommInitRank\0")?,
                comm_init_all: *library.get(b"ncclCommInitAll\0")?,
                comm_destroy: *library.get(b"ncclCommDestroy\0")?,
                group_start: *library.get(b"ncclGroupStart\0")?,
                group_end: *library.get(b"ncclGroupEnd\0")?,
                all_reduce: *library.get(b"ncclAllReduce\0")?,
                broadcast: *library.get(b"ncclBroadcast\0")?,
                reduce_scatter: *library.get(b"ncclReduceScatter\0")?,
                all_gather: *library.get(b"ncclAllGather\0")?,
                _library: std::mem::ManuallyDrop::new(library),
            })
        }
    }

    /// `Ok(())` for `ncclSuccess`, else an error naming `call`, NCCL's
    /// result and its last error message.
    fn check(&self, call: &'static str, code: NcclResult) -> Result<(), DriverError> {
        if code == 0 {
            return Ok(());
        }
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: NCCL returns NUL-terminated strings that stay valid
                // until its next call on this thread.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        // SAFETY: both take any value (a null communicator: the thread's last error).
        let (general, last) = unsafe {
            (
                text((self.get_error_string)(code)),
                text((self.get_last_error)(std::ptr::null_mut())),
            )
        };
        Err(DriverError {
            call,
            code: status::COLLECTIVE_FAILED,
            name: format!("{} ({code})", result_name(code)),
            description: if last.is_empty() {
                general
            } else {
                format!("{general}: {last}")
            },
        })
    }
}

/// Where to look, in order, with a description for the error.
fn candidates() -> Vec<(PathBuf, String)> {
    if let Some(set) = std::env::var_os(NCCL_LIBRARY_ENV).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&set);
        let file = if path.is_dir() {
            path.join(LIBRARY)
        } else {
            path
        };
        return vec![(
            file,
            format!("{NCCL_LIBRARY_ENV}={}", set.to_string_lossy()),
        )];
    }
    let mut places = vec![(
        PathBuf::from(LIBRARY),
        "the system's loader path (LD_LIBRARY_PATH, the loader cache, the system library directories)"
            .to_string(),
    )];
    match python_package_dirs() {
        Ok(dirs) if !dirs.is_empty() => {
            for dir in dirs {
                let file = dir.join("lib").join(LIBRARY);
                let why = format!("the `nvidia.nccl` Python package of python3 ({})", file.display());
                places.push((file, why));
            }
        }
        Ok(_) => places.push((
            PathBuf::new(),
            "the `nvidia.nccl` Python package: python3 has no such package (pip install nvidia-nccl-cu13)"
                .into(),
        )),
        Err(why) => places.push((PathBuf::new(), format!("the `nvidia.nccl` Python package: {why}"))),
    }
    places
}

/// The directories of the `nvidia.nccl` package that `python3` imports.
fn python_package_dirs() -> Result<Vec<PathBuf>, String> {
    let script = "import importlib.util as u\n\
                  try:\n    s = u.find_spec('nvidia.nccl')\n\
                  except ImportError:\n    s = None\n\
                  print('\\n'.join(s.submodule_search_locations or []) if s else '')";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("python3 could not run ({e})"))?;
    if !out.status.success() {
        return Err(format!("python3 failed ({})", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .collect())
}

/// Loads NCCL from the first place that has it.
fn load() -> Result<Nccl, DriverError> {
    let mut tried = Vec::new();
    for (path, why) in candidates() {
        if path.as_os_str().is_empty() {
            tried.push(why);
            continue;
        }
        if path.components().count() > 1 && !Path::new(&path).exists() {
            tried.push(format!("{why}: no such file"));
            continue;
        }
        // SAFETY: loading NCCL runs its initialisers, which have no
        // preconditions; a library of that name is NCCL 2.
        let loaded = unsafe { libloading::Library::new(&path) }
            // SAFETY: as above: the library is NCCL 2.
            .and_then(|library| unsafe { Nccl::resolve(library) });
        match loaded {
            Ok(nccl) => return Ok(nccl),
            Err(e) => match std::error::Error::source(&e) {
                // libloading's message is "dlopen failed"; the loader's is in the source.
                Some(detail) => tried.push(format!("{why}: {detail}")),
                None => tried.push(format!("{why}: {e}")),
            },
        }
    }
    Err(DriverError {
        call: LOAD_CALL,
        code: status::COLLECTIVE_LIBRARY_MISSING,
        name: "NCCL_NOT_FOUND".into(),
        description: format!(
            "NCCL ({LIBRARY}) could not be loaded; looked in: {}. Install it (pip install nvidia-nccl-cu13, or the system's libnccl2 package) or set {NCCL_LIBRARY_ENV} to the library's path",
            tried.join("; ")
        ),
    })
}

/// NCCL, loaded on first use.
fn nccl() -> Result<&'static Nccl, DriverError> {
    static NCCL: OnceLock<Result<Nccl, DriverError>> = OnceLock::new();
    NCCL.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn comm(handle: CommHandle) -> Comm {
    handle.0 as Comm
}

impl CudaDriver {
    pub(super) fn nccl_unique_id(&self) -> Result<[u8; UNIQUE_ID_BYTES], DriverError> {
        let nccl = nccl()?;
        let mut id = UniqueId {
            internal: [0; UNIQUE_ID_BYTES],
        };
        // SAFETY: writes one id.
        nccl.check("ncclGetUniqueId", unsafe { (nccl.get_unique_id)(&mut id) })?;
        Ok(id.internal)
    }

    pub(super) fn nccl_init_rank(
        &self,
        id: &[u8; UNIQUE_ID_BYTES],
        ranks: usize,
        rank: usize,
    ) -> Result<CommHandle, DriverError> {
        if id.starts_with(SIMULATED_ID_MAGIC) {
            return Err(DriverError {
                call: "ncclCommInitRank",
                code: status::COLLECTIVE_FAILED,
                name: "ncclInvalidArgument".into(),
                description: "this unique id was made by a process on the CPU simulator: make it with UniqueId::new() in a process on the GPU".into(),
            });
        }
        let nccl = nccl()?;
        let mut handle: Comm = std::ptr::null_mut();
        // SAFETY: writes one communicator; the rank's device's context is
        // current (the caller bound it), and NCCL uses that device.
        let code = unsafe {
            (nccl.comm_init_rank)(
                &mut handle,
                ranks as c_int,
                UniqueId { internal: *id },
                rank as c_int,
            )
        };
        Self::forget_binding();
        nccl.check("ncclCommInitRank", code)?;
        Ok(CommHandle(handle as usize))
    }

    pub(super) fn nccl_init_all(&self, devices: &[usize]) -> Result<Vec<CommHandle>, DriverError> {
        let nccl = nccl()?;
        let list: Vec<c_int> = devices.iter().map(|&d| d as c_int).collect();
        let mut handles: Vec<Comm> = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: `handles` has room for one communicator per device of `list`.
        let code = unsafe {
            (nccl.comm_init_all)(handles.as_mut_ptr(), list.len() as c_int, list.as_ptr())
        };
        Self::forget_binding();
        nccl.check("ncclCommInitAll", code)?;
        Ok(handles
            .into_iter()
            .map(|c| CommHandle(c as usize))
            .collect())
    }

    pub(super) fn nccl_destroy(&self, handle: CommHandle) -> Result<(), DriverError> {
        let nccl = nccl()?;
        // SAFETY: a live communicator, destroyed once; NCCL waits for its
        // queued operations.
        let code = unsafe { (nccl.comm_destroy)(comm(handle)) };
        Self::forget_binding();
        nccl.check("ncclCommDestroy", code)
    }

    /// # Safety
    /// As [`Driver::collectives`](super::super::Driver::collectives).
    pub(super) unsafe fn nccl_collectives(&self, calls: &[Collective]) -> Result<(), DriverError> {
        let nccl = nccl()?;
        let grouped = calls.len() > 1;
        if grouped {
            // SAFETY: no arguments; balanced by the `group_end` below.
            nccl.check("ncclGroupStart", unsafe { (nccl.group_start)() })?;
        }
        let mut queued = Ok(());
        for call in calls {
            // The communicator's device is current when its work is queued.
            queued = self.bind(call.stream.device);
            if queued.is_err() {
                break;
            }
            let (send, recv) = (call.send as *const c_void, call.recv as *mut c_void);
            let (count, element) = (call.count, call.element.nccl());
            let (c, s) = (comm(call.comm), call.stream.raw as CUstream);
            // SAFETY: the ranges, communicator and stream are valid as the
            // caller promises; NCCL reads `count` (or `ranks * count` for a
            // reduce-scatter) elements at `send` and writes at `recv`.
            let code = unsafe {
                match call.kind {
                    CollectiveKind::AllReduce(op) => {
                        (nccl.all_reduce)(send, recv, count, element, op.nccl(), c, s)
                    }
                    CollectiveKind::Broadcast { root } => {
                        (nccl.broadcast)(send, recv, count, element, root as c_int, c, s)
                    }
                    CollectiveKind::ReduceScatter(op) => {
                        (nccl.reduce_scatter)(send, recv, count, element, op.nccl(), c, s)
                    }
                    CollectiveKind::AllGather => {
                        (nccl.all_gather)(send, recv, count, element, c, s)
                    }
                }
            };
            queued = nccl.check(call.kind.name(), code);
            if queued.is_err() {
                break;
            }
        }
        if grouped {
            // SAFETY: closes the group opened above.
            let ended = nccl.check("ncclGroupEnd", unsafe { (nccl.group_end)() });
            queued = queued.and(ended);
        }
        Self::forget_binding();
        queued
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// `load` reads the variable on each call (the process's `nccl()` keeps
    /// its first answer); the tests that set it take turns.
    static ENV: Mutex<()> = Mutex::new(());

    /// The declarations above against cudarc's `nccl::sys` (bindgen's output
    /// of `nccl.h` 2.30): the id's layout, the codes and the functions'
    /// argument sizes.
    #[test]
    fn declarations_match_nccl_h() {
        use super::super::ffi::signatures::{field_argument_sizes, ArgumentSizes};
        use crate::backend::collective::{ElementKind, ReduceOp};
        use cudarc::nccl::sys;
        use std::mem::{align_of, size_of};

        assert_eq!(size_of::<UniqueId>(), size_of::<sys::ncclUniqueId>());
        assert_eq!(align_of::<UniqueId>(), align_of::<sys::ncclUniqueId>());
        assert_eq!(size_of::<NcclResult>(), size_of::<sys::ncclResult_t>());
        assert_eq!(size_of::<Comm>(), size_of::<sys::ncclComm_t>());
        for result in [
            sys::ncclResult_t::ncclSuccess,
            sys::ncclResult_t::ncclUnhandledCudaError,
            sys::ncclResult_t::ncclSystemError,
            sys::ncclResult_t::ncclInternalError,
            sys::ncclResult_t::ncclInvalidArgument,
            sys::ncclResult_t::ncclInvalidUsage,
            sys::ncclResult_t::ncclRemoteError,
            sys::ncclResult_t::ncclInProgress,
            sys::ncclResult_t::ncclTimeout,
        ] {
            assert_eq!(result_name(result as NcclResult), format!("{result:?}"));
        }
        use sys::ncclDataType_t as T;
        for (ours, theirs) in [
            (ElementKind::I8, T::ncclInt8),
            (ElementKind::U8, T::ncclUint8),
            (ElementKind::I32, T::ncclInt32),
            (ElementKind::U32, T::ncclUint32),
            (ElementKind::I64, T::ncclInt64),
            (ElementKind::U64, T::ncclUint64),
            (ElementKind::F32, T::ncclFloat32),
            (ElementKind::F64, T::ncclFloat64),
        ] {
            assert_eq!(ours.nccl(), theirs as i32, "{ours:?}");
        }
        use sys::ncclRedOp_t as Op;
        for (ours, theirs) in [
            (ReduceOp::Sum, Op::ncclSum),
            (ReduceOp::Prod, Op::ncclProd),
            (ReduceOp::Max, Op::ncclMax),
            (ReduceOp::Min, Op::ncclMin),
        ] {
            assert_eq!(ours.nccl(), theirs as i32, "{ours:?}");
        }
        macro_rules! same_arguments {
            ($($field:ident => $name:ident($($arg:tt),*),)*) => {$({
                let theirs: unsafe fn($($arg),*) -> _ = sys::$name;
                assert_eq!(
                    field_argument_sizes(|n: &Nccl| &n.$field),
                    theirs.argument_sizes(),
                    stringify!($name)
                );
            })*};
        }
        same_arguments! {
            get_error_string => ncclGetErrorString(_),
            get_last_error => ncclGetLastError(_),
            get_unique_id => ncclGetUniqueId(_),
            comm_init_rank => ncclCommInitRank(_, _, _, _),
            comm_init_all => ncclCommInitAll(_, _, _),
            comm_destroy => ncclCommDestroy(_),
            group_start => ncclGroupStart(),
            group_end => ncclGroupEnd(),
            all_reduce => ncclAllReduce(_, _, _, _, _, _, _),
            broadcast => ncclBroadcast(_, _, _, _, _, _, _),
            reduce_scatter => ncclReduceScatter(_, _, _, _, _, _, _),
            all_gather => ncclAllGather(_, _, _, _, _, _),
        }
    }

    #[test]
    fn a_library_that_is_not_there_is_named_in_the_error() {
        let _turn = ENV.lock().unwrap_or_else(|e| e.into_inner());
        std::env::set_var(NCCL_LIBRARY_ENV, "/nonexistent/nccl/libnccl.so.2");
        let error = load().err().expect("nothing to load there");
        std::env::remove_var(NCCL_LIBRARY_ENV);
        assert_eq!(error.code, status::COLLECTIVE_LIBRARY_MISSING);
        assert!(
            error.description.contains(
                "looked in: GPU_NCCL_LIBRARY=/nonexistent/nccl/libnccl.so.2: no such file"
            ) && error.description.contains("pip install nvidia-nccl-cu13"),
            "{}",
            error.description
        );
    }

    /// Finds NCCL where a user's program would (or at
    /// `GPU_NCCL_LIBRARY_FOR_TEST`), loads it, resolves every function and
    /// makes an id (which needs no GPU). CI has no NCCL; the GPU machine has
    /// PyPI's wheel beside PyTorch.
    #[test]
    #[ignore = "needs NCCL installed (the GPU machine has it)"]
    fn nccl_is_found_and_makes_ids() {
        let _turn = ENV.lock().unwrap_or_else(|e| e.into_inner());
        match std::env::var("GPU_NCCL_LIBRARY_FOR_TEST") {
            Ok(path) => std::env::set_var(NCCL_LIBRARY_ENV, path),
            Err(_) => std::env::remove_var(NCCL_LIBRARY_ENV),
        }
        let loaded = load();
        std::env::remove_var(NCCL_LIBRARY_ENV);
        let nccl = loaded.unwrap_or_else(|e| panic!("{e}"));
        let mut id = UniqueId {
            internal: [0; UNIQUE_ID_BYTES],
        };
        // SAFETY: writes one id.
        let made = unsafe { (nccl.get_unique_id)(&mut id) };
        nccl.check("ncclGetUniqueId", made).unwrap();
        assert!(id.internal.iter().any(|&b| b != 0));
        let refused = nccl.check("ncclCommDestroy", 4).unwrap_err();
        assert!(
            refused.name.starts_with("ncclInvalidArgument (4)"),
            "{refused}"
        );
    }
}
