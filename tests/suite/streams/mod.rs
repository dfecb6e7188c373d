//! Streams on the GPU: ordering across streams with events, empty work,
//! borrowed streams, and many host threads launching at once. (Events'
//! queries and timing are `tests/held_streams/events.rs`; the current stream
//! is `current`.)

mod current;

use crate::common;

use gpu_kernels::{add_kernel, fill};
use gpu_runtime::{launch, DeviceBuffer, Stream};

#[test]
fn an_event_orders_work_across_non_blocking_streams() {
    let producer = Stream::new().unwrap();
    let consumer = Stream::new().unwrap();
    assert_ne!(producer, consumer);
    assert_eq!(producer, producer.clone());
    let n = common::size(1 << 22, 1 << 15);
    for round in 0..5 {
        let mut x = DeviceBuffer::<f32>::device_array(n).unwrap();
        let mut y = DeviceBuffer::<f32>::device_array(n).unwrap();
        // Long work on the producer, then the consumer reads its result.
        for k in 0..20 {
            launch!(fill[n / 256, 256, producer](k as f32 + round as f32, &mut x)).unwrap();
        }
        let ready = producer.record().unwrap();
        consumer.wait_event(&ready).unwrap();
        launch!(add_kernel[n / 256, 256, consumer](&x, &x, &mut y)).unwrap();
        consumer.wait_event(&ready).unwrap(); // an event can be waited on again
        let got = y.copy_to_host_sync(&consumer).unwrap();
        let want = 2.0 * (19.0 + round as f32);
        assert!(
            got.iter().all(|&v| v == want),
            "round {round}: consumer saw unfinished producer work"
        );
    }
}

#[test]
fn sixteen_host_threads_launch_on_their_own_streams() {
    let handles: Vec<_> = (0..16)
        .map(|t| {
            std::thread::spawn(move || {
                let stream = Stream::new().unwrap();
                let mut out = DeviceBuffer::<u32>::device_array(10_000).unwrap();
                for _ in 0..10 {
                    launch!(fill[40, 256, stream](t as u32, &mut out)).unwrap();
                }
                out.copy_to_host_sync(&stream)
                    .unwrap()
                    .iter()
                    .all(|&v| v == t as u32)
            })
        })
        .collect();
    for (t, h) in handles.into_iter().enumerate() {
        assert!(h.join().unwrap(), "thread {t} saw another thread's values");
    }
}

#[test]
fn empty_buffers_copy_and_launch() {
    let stream = Stream::new().unwrap();
    let empty = DeviceBuffer::<f32>::to_device_sync(&[], &stream).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.copy_to_host_sync(&stream).unwrap(), Vec::<f32>::new());
    let mut out = DeviceBuffer::<f32>::device_array(0).unwrap();
    launch!(add_kernel[1, 32, stream](&empty, &empty, &mut out)).unwrap();
    stream.synchronize().unwrap();
}

/// The CUDA driver's own functions, called as another library (cust,
/// cudarc) calls them: from the driver library, opened by its name.
struct ForeignDriver(libloading::Library);

type Status = std::ffi::c_int;

impl ForeignDriver {
    fn open() -> ForeignDriver {
        // SAFETY: loading the NVIDIA driver library runs its initialisers,
        // which have no preconditions (the runtime has opened it already).
        ForeignDriver(unsafe { libloading::Library::new("libcuda.so.1") }.expect("libcuda.so.1"))
    }

    /// The driver function `name`, of type `F` (as `cuda.h` declares it).
    fn function<F: Copy>(&self, name: &str) -> F {
        let symbol = format!("{name}\0");
        // SAFETY: each caller names `F` as the driver declares `name`; the
        // library outlives the copied pointer (both live through the test).
        *unsafe { self.0.get::<F>(symbol.as_bytes()) }.expect(name)
    }
}

#[test]
#[ignore = "needs CUDA: wraps a stream made by the driver's cuStreamCreate, as another library makes one (scripts/gpu-bundle.sh runs it on the GPU machine)"]
fn a_stream_of_another_library_is_borrowed_not_owned() {
    use std::ffi::{c_int, c_uint, c_void};
    let device = gpu_runtime::Device::get(0).unwrap();
    let driver = ForeignDriver::open();
    let device_get: unsafe extern "C" fn(*mut c_int, c_int) -> Status =
        driver.function("cuDeviceGet");
    let retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> Status =
        driver.function("cuDevicePrimaryCtxRetain");
    let release: unsafe extern "C" fn(c_int) -> Status =
        driver.function("cuDevicePrimaryCtxRelease_v2");
    let set_current: unsafe extern "C" fn(*mut c_void) -> Status =
        driver.function("cuCtxSetCurrent");
    let create: unsafe extern "C" fn(*mut *mut c_void, c_uint) -> Status =
        driver.function("cuStreamCreate");
    let synchronize: unsafe extern "C" fn(*mut c_void) -> Status =
        driver.function("cuStreamSynchronize");
    let destroy: unsafe extern "C" fn(*mut c_void) -> Status =
        driver.function("cuStreamDestroy_v2");
    let (mut handle, mut context, mut theirs) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: each call writes one handle of the driver's; device 0 exists
    // (`Device::get(0)` opened it); 1 is CU_STREAM_NON_BLOCKING.
    unsafe {
        assert_eq!(device_get(&mut handle, 0), 0);
        assert_eq!(retain(&mut context, handle), 0);
        assert_eq!(set_current(context), 0);
        assert_eq!(create(&mut theirs, 1), 0);
    }
    // SAFETY: `theirs` is a live stream of device 0's primary context, and
    // is destroyed below, after `ours` and its clones are gone.
    let ours = unsafe { Stream::from_external(theirs, device) };
    assert_eq!(ours.as_raw(), theirs.cast());
    assert_eq!(ours, ours.clone());
    let mut x = DeviceBuffer::<u32>::zeroed_on(1000, &ours).unwrap();
    launch!(fill[4, 256, ours](5u32, &mut x)).unwrap();
    assert_eq!(x.copy_to_host_sync(&ours).unwrap(), vec![5; 1000]);
    drop(x);
    drop(ours);
    // Still alive: dropping the wrapper did not destroy the other library's stream.
    // SAFETY: `theirs` is the stream made above, not destroyed yet; then
    // the context retained above is released.
    unsafe {
        assert_eq!(synchronize(theirs), 0);
        assert_eq!(destroy(theirs), 0);
        assert_eq!(release(handle), 0);
    }
}
