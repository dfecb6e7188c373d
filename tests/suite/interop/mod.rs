//! Memory shared with other libraries, on either backend (the simulator in
//! CI): raw device pointers lent to a buffer and handed out with a stream,
//! DLPack export and import with their ownership and checks, and the tools'
//! calls (NVTX ranges, profiler start/stop). The GPU round trips with
//! PyTorch and cudarc are `tests/python/dlpack_torch.py` and
//! `tests/suite/interop/cudarc.rs`.

mod cudarc;

use gpu_kernels::{add_kernel, busy};
use gpu_runtime::dlpack::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion,
    DLTensor,
};
use gpu_runtime::dlpack::{DlpackFlags, DlpackTensor};
use gpu_runtime::{launch, nvtx, profiler, DeviceBuffer, Error, Lender, Stream};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Waits (boundedly) until `counter` reaches `n`: lenders are called on the
/// release thread, soon after the stream reaches them.
fn eventually(counter: &AtomicUsize, n: usize) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while counter.load(Ordering::SeqCst) < n {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    true
}

fn reason(e: Error) -> String {
    match e {
        Error::InvalidArgument { reason, .. } => reason,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn lent_memory_is_used_in_place_and_given_back_after_its_work() {
    let stream = Stream::new().unwrap();
    let a = DeviceBuffer::to_device_sync(&[1.0f32; 1000], &stream).unwrap();
    let mut owner = DeviceBuffer::<f32>::device_array(1000).unwrap();
    let ptr = owner.as_raw_mut_on(&stream).unwrap();
    let given_back = Arc::new(AtomicUsize::new(0));
    let counter = given_back.clone();
    let other = Stream::new().unwrap();
    // Recorded right after the last kernel writing the memory.
    let kernel_end = Arc::new(std::sync::OnceLock::<gpu_runtime::Event>::new());
    let end_when_given_back = kernel_end.clone();
    let after_the_work = Arc::new(AtomicUsize::new(0));
    let after = after_the_work.clone();
    // The "other library" keeps its buffer alive until the lender runs.
    let lender = Lender::new(move || {
        if end_when_given_back
            .get()
            .is_some_and(|e| e.is_done().unwrap())
        {
            after.store(1, Ordering::SeqCst);
        }
        drop(owner);
        counter.fetch_add(1, Ordering::SeqCst);
    });
    // SAFETY: `ptr` is `owner`'s memory of 1000 zeroed f32, which the lender
    // keeps alive; nothing else uses it while `lent` lives.
    let mut lent =
        unsafe { DeviceBuffer::<f32>::from_raw_parts(ptr, 1000, &stream, lender) }.unwrap();
    assert_eq!(lent.as_raw(), ptr, "no copy: the same address");
    launch!(add_kernel[4, 256, stream](&a, &a, &mut lent)).unwrap();
    assert!(lent
        .copy_to_host_sync(&stream)
        .unwrap()
        .iter()
        .all(|&x| x == 2.0));
    assert_eq!(given_back.load(Ordering::SeqCst), 0, "still lent");
    // A slow kernel still writing when the buffer is dropped: the lender
    // waits for it.
    launch!(busy[4, 256, other](&a, 20_000, &mut lent)).unwrap();
    assert!(kernel_end.set(other.record().unwrap()).is_ok());
    drop(lent);
    assert!(eventually(&given_back, 1), "the lender was never called");
    assert_eq!(given_back.load(Ordering::SeqCst), 1, "called once");
    assert_eq!(
        after_the_work.load(Ordering::SeqCst),
        1,
        "the lender ran before the kernel writing the memory had finished"
    );
}

#[test]
fn a_panicking_lender_does_not_stop_later_releases() {
    let stream = Stream::new().unwrap();
    let lend = |lender: Lender| {
        let mut owner = DeviceBuffer::<f32>::device_array(16).unwrap();
        let ptr = owner.as_raw_mut_on(&stream).unwrap();
        // SAFETY: `owner`'s memory, kept alive by the test's `keep` below
        // (leaked: this test is about the lenders).
        let lent = unsafe { DeviceBuffer::<f32>::from_raw_parts(ptr, 16, &stream, lender) };
        std::mem::forget(owner);
        lent.unwrap()
    };
    drop(lend(Lender::new(|| panic!("a lender's own bug"))));
    let given_back = Arc::new(AtomicUsize::new(0));
    let counter = given_back.clone();
    drop(lend(Lender::new(move || {
        counter.fetch_add(1, Ordering::SeqCst);
    })));
    assert!(
        eventually(&given_back, 1),
        "the release thread died with the first lender"
    );
}

#[test]
fn from_raw_parts_refuses_what_is_not_that_device_s_memory() {
    let stream = Stream::new().unwrap();
    let given_back = Arc::new(AtomicUsize::new(0));
    let lender = |c: &Arc<AtomicUsize>| {
        let c = c.clone();
        Lender::new(move || {
            c.fetch_add(1, Ordering::SeqCst);
        })
    };
    let host = vec![0f32; 64];
    // SAFETY: refused before any use (the point of the test).
    let e = unsafe {
        DeviceBuffer::<f32>::from_raw_parts(host.as_ptr() as u64, 64, &stream, lender(&given_back))
    }
    .unwrap_err();
    assert!(reason(e).contains("is not device memory"));
    // SAFETY: as above.
    let e = unsafe { DeviceBuffer::<f32>::from_raw_parts(0, 4, &stream, lender(&given_back)) }
        .unwrap_err();
    assert!(reason(e).contains("null address"));
    let mut buffer = DeviceBuffer::<f32>::device_array(256).unwrap();
    let ptr = buffer.as_raw_mut_on(&stream).unwrap();
    // SAFETY: as above.
    let e =
        unsafe { DeviceBuffer::<f32>::from_raw_parts(ptr + 2, 4, &stream, lender(&given_back)) }
            .unwrap_err();
    assert!(reason(e).contains("not aligned"), "misaligned");
    // SAFETY: as above.
    let e = unsafe {
        DeviceBuffer::<f32>::from_raw_parts(ptr + 4 * 200, 100, &stream, lender(&given_back))
    }
    .unwrap_err();
    assert!(
        reason(e).contains("pass the end of its allocation"),
        "past the end"
    );
    assert_eq!(
        given_back.load(Ordering::SeqCst),
        4,
        "each refusal gave the memory back"
    );
}

#[test]
fn a_raw_address_for_another_stream_orders_its_work_both_ways() {
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let x = DeviceBuffer::to_device_sync(&[3.0f32; 4096], &s1).unwrap();
    let mut y = DeviceBuffer::<f32>::device_array(4096).unwrap();
    // A slow write on s1, then the address handed out for reading on s2:
    // s2's work waits for it.
    launch!(busy[16, 256, s1](&x, 5_000, &mut y)).unwrap();
    let expected = {
        let mut r = DeviceBuffer::<f32>::device_array(4096).unwrap();
        launch!(busy[16, 256, s1](&x, 5_000, &mut r)).unwrap();
        r.copy_to_host_sync(&s1).unwrap()
    };
    let _ptr = y.as_raw_on(&s2).unwrap();
    // As another library's copy would: what s2 sees is the finished write.
    assert_eq!(y.copy_to_host_sync(&s2).unwrap(), expected);
    let s3 = Stream::new().unwrap();
    assert_eq!(y.as_raw_mut_on(&s3).unwrap(), y.as_raw());
}

#[test]
fn dlpack_round_trip_keeps_address_values_and_shape() {
    let stream = Stream::new().unwrap();
    let values: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let buffer = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
    let address = buffer.as_raw();
    let tensor = buffer.into_dlpack(Some(&[2, 3]), &stream).unwrap();
    assert_eq!(tensor.shape(), &[2, 3]);
    assert_eq!(tensor.version().major, 1);
    let t = tensor.tensor();
    assert_eq!(t.device.device_type, DLDeviceType::CUDA);
    assert_eq!(
        t.dtype,
        DLDataType {
            code: DLDataTypeCode::FLOAT,
            bits: 32,
            lanes: 1
        }
    );
    // SAFETY: strides of a 2-D tensor: two values.
    assert_eq!(unsafe { std::slice::from_raw_parts(t.strides, 2) }, &[3, 1]);
    let raw = NonNull::new(tensor.into_raw()).unwrap();
    // SAFETY: a live tensor made above, handed over once.
    let (back, shape) = unsafe { DeviceBuffer::<f32>::from_dlpack(raw, &stream) }.unwrap();
    assert_eq!(shape, vec![2, 3]);
    assert_eq!(back.as_raw(), address, "no copy");
    assert_eq!(back.copy_to_host_sync(&stream).unwrap(), values);
    assert!(DeviceBuffer::to_device_sync(&values, &stream)
        .unwrap()
        .into_dlpack(Some(&[4, 2]), &stream)
        .is_err_and(|e| reason(e).contains("does not hold")));
}

/// A tensor made as a foreign producer makes one: its own context and
/// deleter, which counts its calls.
struct Foreign {
    managed: DLManagedTensorVersioned,
    shape: Vec<i64>,
    strides: Vec<i64>,
    deleted: Arc<AtomicUsize>,
    _memory: Option<DeviceBuffer<f32>>,
}

unsafe extern "C" fn delete_foreign(managed: *mut DLManagedTensorVersioned) {
    // SAFETY: `managed` is the first field of a boxed `Foreign` (repr(C)
    // not needed: its address is the context).
    let foreign = unsafe { Box::from_raw((*managed).manager_ctx.cast::<Foreign>()) };
    foreign.deleted.fetch_add(1, Ordering::SeqCst);
}

fn foreign(
    memory: Option<DeviceBuffer<f32>>,
    data: u64,
    shape: &[i64],
    strides: &[i64],
    edit: impl FnOnce(&mut DLManagedTensorVersioned),
    deleted: &Arc<AtomicUsize>,
) -> NonNull<DLManagedTensorVersioned> {
    let mut f = Box::new(Foreign {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 1 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_foreign),
            flags: DlpackFlags::empty(),
            dl_tensor: DLTensor {
                data: data as usize as *mut _,
                device: DLDevice {
                    device_type: DLDeviceType::CUDA,
                    device_id: 0,
                },
                ndim: shape.len() as i32,
                dtype: DLDataType {
                    code: DLDataTypeCode::FLOAT,
                    bits: 32,
                    lanes: 1,
                },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        shape: shape.to_vec(),
        strides: strides.to_vec(),
        deleted: deleted.clone(),
        _memory: memory,
    });
    f.managed.dl_tensor.shape = f.shape.as_mut_ptr();
    if !strides.is_empty() {
        f.managed.dl_tensor.strides = f.strides.as_mut_ptr();
    }
    edit(&mut f.managed);
    let raw = Box::into_raw(f);
    // SAFETY: `raw` is live; the context is the box itself.
    unsafe {
        (*raw).managed.manager_ctx = raw.cast();
        NonNull::new_unchecked(std::ptr::addr_of_mut!((*raw).managed))
    }
}

#[test]
fn dlpack_import_refuses_each_wrong_tensor_and_calls_its_deleter() {
    let stream = Stream::new().unwrap();
    let deleted = Arc::new(AtomicUsize::new(0));
    let mut memory = DeviceBuffer::to_device_sync(&[5.0f32; 12], &stream).unwrap();
    let data = memory.as_raw_mut_on(&stream).unwrap();
    let host = [0f32; 12];
    type Edit = Box<dyn FnOnce(&mut DLManagedTensorVersioned)>;
    /// A name, the data address, shape, strides, a change to the tensor, and
    /// what the error must say.
    type Case = (&'static str, u64, Vec<i64>, Vec<i64>, Edit, &'static str);
    let cases: Vec<Case> = vec![
        (
            "version 2",
            data,
            vec![12],
            vec![1],
            Box::new(|m| m.version.major = 2),
            "DLPack 2.1",
        ),
        (
            "read-only",
            data,
            vec![12],
            vec![1],
            Box::new(|m| m.flags = DlpackFlags::READ_ONLY),
            "read-only",
        ),
        (
            "cpu",
            host.as_ptr() as u64,
            vec![12],
            vec![1],
            Box::new(|m| m.dl_tensor.device.device_type = DLDeviceType::CPU),
            "host memory (kDLCPU)",
        ),
        (
            "wrong device",
            data,
            vec![12],
            vec![1],
            Box::new(|m| m.dl_tensor.device.device_id = 3),
            "CUDA device 3",
        ),
        (
            "int32",
            data,
            vec![12],
            vec![1],
            Box::new(|m| m.dl_tensor.dtype.code = DLDataTypeCode::INT),
            "int32",
        ),
        (
            "f64",
            data,
            vec![6],
            vec![1],
            Box::new(|m| m.dl_tensor.dtype.bits = 64),
            "float64",
        ),
        (
            "transposed",
            data,
            vec![3, 4],
            vec![1, 3],
            Box::new(|_| {}),
            "not contiguous",
        ),
        (
            "negative",
            data,
            vec![-1],
            vec![1],
            Box::new(|_| {}),
            "negative size",
        ),
        (
            "host as CUDA",
            host.as_ptr() as u64,
            vec![12],
            vec![1],
            Box::new(|_| {}),
            "not device memory",
        ),
        (
            "too long",
            data,
            vec![1000],
            vec![1],
            Box::new(|_| {}),
            "pass the end",
        ),
    ];
    let count = cases.len();
    for (name, ptr, shape, strides, edit, expected) in cases {
        let tensor = foreign(None, ptr, &shape, &strides, edit, &deleted);
        // SAFETY: a live tensor made above, handed over once; refused.
        let e = unsafe { DeviceBuffer::<f32>::from_dlpack(tensor, &stream) }.unwrap_err();
        let text = e.to_string();
        assert!(text.contains(expected), "{name}: {text}");
    }
    assert_eq!(
        deleted.load(Ordering::SeqCst),
        count,
        "every refused tensor deleted at once"
    );
    // Null strides (DLPack before 1.2) mean row-major; the deleter runs once
    // the buffer's work has finished.
    let tensor = foreign(Some(memory), data, &[3, 4], &[], |_| {}, &deleted);
    // SAFETY: a live tensor over `memory`, which it owns.
    let (buffer, shape) = unsafe { DeviceBuffer::<f32>::from_dlpack(tensor, &stream) }.unwrap();
    assert_eq!(shape, vec![3, 4]);
    assert_eq!(buffer.copy_to_host_sync(&stream).unwrap(), vec![5.0; 12]);
    drop(buffer);
    assert!(eventually(&deleted, count + 1));
}

#[test]
fn an_unconsumed_exported_tensor_frees_its_buffer() {
    let stream = Stream::new().unwrap();
    let tensor: DlpackTensor = DeviceBuffer::<i32>::device_array(1 << 20)
        .unwrap()
        .into_dlpack(None, &stream)
        .unwrap();
    assert_eq!(tensor.shape(), &[1 << 20]);
    drop(tensor); // the deleter drops the buffer: no leak, no double free
    stream.synchronize().unwrap();
}

#[test]
fn nvtx_ranges_nest_and_profiler_switch_is_recorded() {
    {
        let outer = nvtx::range("outer");
        let _inner = nvtx::range_with(|| "inner".to_string());
        nvtx::mark("a mark with a \0 inside");
        assert_eq!(outer.is_recorded(), nvtx::ENABLED);
    }
    profiler::start().unwrap();
    assert!(profiler::is_collecting());
    profiler::stop().unwrap();
    assert!(!profiler::is_collecting());
    let r = profiler::scope(|| Ok(7)).unwrap();
    assert_eq!(r, 7);
    assert!(!profiler::is_collecting());
}
