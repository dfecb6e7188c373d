//! The argument builder: a kernel's launcher hands it each argument once, in
//! the order of the kernel's parameters, and it does everything an argument
//! needs around a launch, then launches (or, for a graph's kernel node,
//! keeps the arguments):
//!
//! - each buffer argument: its device (or a peer's), the ordering of the
//!   access across streams (tracking), its memory for a capture's node,
//!   and what must follow the launch (mapped memory);
//! - each argument's PTX parameters ("slots"), by its kind's calling
//!   convention (`crate::abi::slot_roles`): a buffer's address and extents
//!   in the builder's own storage, a value by the launcher's address;
//! - the launch's configuration, checked when it launches (the instance's
//!   first launch on a device also checks that host and device compiled it
//!   alike, [`super::agreement`]).
//!
//! ```text
//! let stream = config.resolve_stream()?;
//! let mut args = pin!(unsafe { LaunchArgs::<6>::for_launch(function, &config, &stream) });
//! args.as_mut().input("a", &a)?;
//! args.as_mut().output("out", &mut out)?;
//! args.as_mut().value(&n);
//! args.launch()
//! ```
//!
//! The builder is pinned: a slot points into its storage.

use super::{KernelArgs, KernelFunction};
use crate::abi::SliceArg;
use crate::error::{Error, Result};
use crate::memory::tracking::{self, Access, GraphUse};
use crate::memory::{u32_extents, DeviceView2dMut, DeviceView3dMut};
use crate::memory::{AfterAccess, DeviceInput, DeviceOutput, GraphMemory};
use crate::memory::{DeviceBuffer, TensorElement, TensorMap, TensorMapLayout, TensorMapOut};
use crate::stream::Stream;
use crate::LaunchConfig;
use gpu_device::tma::TensorMapShape;
use gpu_device::DeviceCopy;
use std::ffi::c_void;
use std::marker::PhantomPinned;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::pin::Pin;

/// A launch's arguments, added one by one by a kernel's launcher (see the
/// [module documentation](self)); `SLOTS` is the number of PTX parameters.
#[doc(hidden)]
pub struct LaunchArgs<'a, const SLOTS: usize> {
    function: &'static KernelFunction,
    config: &'a LaunchConfig<'a>,
    stream: &'a Stream,
    /// The stream's device.
    device: usize,
    /// Whether the arguments' accesses are tracked: a launch (not a graph
    /// node's arguments).
    tracks: bool,
    /// Whether the buffer arguments are recorded: in a capture, or for a
    /// graph node.
    records: bool,
    /// Pointers to each PTX parameter's value, `filled` of them so far.
    slots: [MaybeUninit<*mut c_void>; SLOTS],
    /// The values of the slots the builder fills itself (addresses and
    /// extents), at the slot's index.
    words: [MaybeUninit<u64>; SLOTS],
    filled: usize,
    /// What few launches need, made on first need: the common launch (no
    /// capture, no mapped memory) pays one inlined test to drop it (see the
    /// `Drop` impl).
    rare: ManuallyDrop<Option<Box<Rare<'a>>>>,
    /// `slots` point into `words`.
    _pinned: PhantomPinned,
}

impl<const SLOTS: usize> Drop for LaunchArgs<'_, SLOTS> {
    #[inline(always)]
    fn drop(&mut self) {
        if self.rare.is_some() {
            self.drop_rare();
        }
    }
}

impl<const SLOTS: usize> LaunchArgs<'_, SLOTS> {
    #[cold]
    #[inline(never)]
    fn drop_rare(&mut self) {
        // SAFETY: dropped once, from `drop`; nothing uses the field after.
        unsafe { ManuallyDrop::drop(&mut self.rare) }
    }
}

/// The parts of a launch's arguments that few launches need.
#[derive(Default)]
struct Rare<'a> {
    /// The buffer arguments, for a capture's node or a graph node's
    /// arguments: parameter, memory (`None`: mapped memory), access.
    memory: Vec<(&'static str, Option<GraphMemory>, Access)>,
    /// What tracks an argument once the launch is queued.
    after: Vec<&'a dyn AfterAccess>,
}

impl<'a, const SLOTS: usize> LaunchArgs<'a, SLOTS> {
    /// The arguments of a launch of `function` with `config` on `stream`
    /// (`config`'s, resolved: [`LaunchConfig::resolve_stream`]).
    ///
    /// # Safety
    /// The caller adds the arguments of `function`'s kernel instance: one
    /// per parameter that is not built on the device, in the order of the
    /// parameters, each with the method of its kind (`value` for scalars
    /// and structs, of the parameter's own type), and `SLOTS` is the
    /// instance's number of PTX parameters: the entry point reads each slot
    /// as the type the instance's description gives it.
    #[inline(always)]
    pub unsafe fn for_launch(
        function: &'static KernelFunction,
        config: &'a LaunchConfig<'a>,
        stream: &'a Stream,
    ) -> Self {
        // In a capture, the buffers are recorded with the node the launch makes.
        let records = stream.active_capture().is_some();
        Self::new(function, config, stream, true, records)
    }

    /// The arguments of a graph's kernel node of `function` with `config`,
    /// checked as a launch on `stream` would be, not tracked.
    ///
    /// # Safety
    /// As [`for_launch`](Self::for_launch).
    pub unsafe fn for_graph_node(
        function: &'static KernelFunction,
        config: &'a LaunchConfig<'a>,
        stream: &'a Stream,
    ) -> Self {
        Self::new(function, config, stream, false, true)
    }

    #[inline(always)]
    fn new(
        function: &'static KernelFunction,
        config: &'a LaunchConfig<'a>,
        stream: &'a Stream,
        tracks: bool,
        records: bool,
    ) -> Self {
        LaunchArgs {
            function,
            config,
            stream,
            device: stream.device(),
            tracks,
            records,
            slots: [MaybeUninit::uninit(); SLOTS],
            words: [MaybeUninit::uninit(); SLOTS],
            filled: 0,
            rare: ManuallyDrop::new(None),
            _pinned: PhantomPinned,
        }
    }

    /// An argument where the kernel reads `&[T]`: checked, tracked as a
    /// read, passed as address and element count. Returns the count.
    #[inline(always)]
    pub fn input<T: DeviceCopy>(
        self: Pin<&mut Self>,
        parameter: &'static str,
        arg: &'a impl DeviceInput<T>,
    ) -> Result<usize> {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        gpu_device::__private::require_device_align::<T>();
        let slice = SliceArg::checked::<T>(arg.raw_view(), this.device, this.function, parameter)?;
        if this.tracks {
            arg.before_device_access(this.stream)?;
            if let Some(hook) = arg.after_access_hook() {
                this.rare_mut().after.push(hook);
            }
        }
        if this.records {
            let memory = arg.graph_memory();
            this.rare_mut()
                .memory
                .push((parameter, memory, Access::Read));
        }
        this.word(slice.ptr);
        this.word(slice.len as u64);
        Ok(slice.len)
    }

    /// An argument where the kernel writes `DisjointSlice<T>` or updates
    /// `&[DeviceAtomic<T>]`: checked, tracked as a write, passed as address
    /// and element count. Returns the count.
    #[inline(always)]
    pub fn output<T: DeviceCopy>(
        self: Pin<&mut Self>,
        parameter: &'static str,
        arg: &'a mut impl DeviceOutput<T>,
    ) -> Result<usize> {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        let len = this.output_address::<T>(parameter, arg)?;
        this.word(len as u64);
        Ok(len)
    }

    /// An argument where the kernel writes `DisjointSlice2d<T>`: as an
    /// output, passed as address, element count, rows and columns.
    #[inline]
    pub fn matrix<T: DeviceCopy>(
        self: Pin<&mut Self>,
        parameter: &'static str,
        arg: &'a mut DeviceView2dMut<'_, T>,
    ) -> Result<usize> {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        let (rows, cols) = arg.extents();
        let len = this.output_address::<T>(parameter, arg)?;
        this.word(len as u64);
        this.word(rows as u64);
        this.word(cols as u64);
        Ok(len)
    }

    /// An argument where the kernel writes `DisjointSlice2dU32<T>`: as a
    /// matrix, with the element count and extents as `u32` (an error naming
    /// the parameter when the matrix has more than `u32::MAX` elements).
    #[inline]
    pub fn matrix_u32<T: DeviceCopy>(
        self: Pin<&mut Self>,
        parameter: &'static str,
        arg: &'a mut DeviceView2dMut<'_, T>,
    ) -> Result<usize> {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        let [len, rows, cols] = u32_extents(arg.extents(), this.function.name(), parameter)?;
        this.output_address::<T>(parameter, arg)?;
        this.half_word(len);
        this.half_word(rows);
        this.half_word(cols);
        Ok(len as usize)
    }

    /// An argument where the kernel writes `DisjointSlice3d<T>`: as an
    /// output, passed as address, depth, rows and columns.
    #[inline]
    pub fn grid_3d<T: DeviceCopy>(
        self: Pin<&mut Self>,
        parameter: &'static str,
        arg: &'a mut DeviceView3dMut<'_, T>,
    ) -> Result<usize> {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        let (depth, rows, cols) = arg.extents();
        let len = this.output_address::<T>(parameter, arg)?;
        this.word(depth as u64);
        this.word(rows as u64);
        this.word(cols as u64);
        Ok(len)
    }

    /// An argument where the kernel takes a tensor map of shape `M`
    /// (`gpu_device::tma::TensorMap2d<T, ROWS, COLS, S>`): an error naming
    /// the parameter unless the map is of the launch's device and has `M`'s
    /// rank, box and swizzle; its buffer tracked as a read, as is the
    /// map's encoded copy, whose address is passed.
    #[inline]
    pub fn tensor_map<M, T>(
        self: Pin<&mut Self>,
        parameter: &'static str,
        arg: &'a TensorMap<'_, T>,
    ) -> Result<()>
    where
        M: TensorMapShape<Element = T>,
        T: TensorElement,
    {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        this.check_map_shape::<M>(parameter, arg.device(), arg.layout())?;
        this.track_read(parameter, arg.buffer())?;
        let map = this.track_read(parameter, arg.encoded())?;
        this.word(map.ptr);
        Ok(())
    }

    /// An argument where the kernel writes through a tensor map of shape
    /// `M` (`gpu_device::tma::TensorMapOut<T, B, S>`): checked as
    /// [`tensor_map`](Self::tensor_map)'s, its buffer tracked as written
    /// (the map borrows it mutably), the encoded copy as read; the
    /// encoded copy's address is passed.
    #[inline]
    pub fn tensor_map_out<M, T>(
        self: Pin<&mut Self>,
        parameter: &'static str,
        arg: &'a mut TensorMapOut<'_, T>,
    ) -> Result<()>
    where
        M: TensorMapShape<Element = T>,
        T: TensorElement,
    {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        this.check_map_shape::<M>(parameter, arg.device(), arg.layout())?;
        let map = this.track_read(parameter, arg.encoded())?;
        // The buffer, written by the kernel's stores: tracked (and recorded
        // in a capture) as an output is.
        this.track_write::<T>(parameter, arg.buffer_mut())?;
        this.word(map.ptr);
        Ok(())
    }

    /// A scalar or struct argument, passed by the launcher's address (its
    /// type is the parameter's, `DeviceCopy`: the kernel's interface
    /// description requires it where the kernel is written).
    #[inline(always)]
    pub fn value<T>(self: Pin<&mut Self>, arg: &'a T) {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        this.slots[this.filled].write(std::ptr::from_ref(arg).cast_mut().cast());
        this.filled += 1;
    }

    /// Launches the kernel with the arguments added, then tracks those that
    /// need it after the launch.
    #[inline]
    pub fn launch(self: Pin<&mut Self>) -> Result<()> {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        let mut params = this.take_slots()?;
        // SAFETY: every slot was filled by the method of its parameter's
        // kind (the `for_launch` caller's contract), with a pointer to a
        // live value of the slot's type: the builder's own words (pinned)
        // or the launcher's values (borrowed for `'a`); the buffers were
        // checked and tracked, and an output is borrowed exclusively, so no
        // other argument of the launch writes what a slot points to.
        let node = unsafe {
            this.function
                .launch(this.config, this.stream, &mut params[..])
        }?;
        let Some(rare) = this.rare.as_deref_mut() else {
            return Ok(());
        };
        if let Some((capture, node)) = node {
            let memory = std::mem::take(&mut rare.memory)
                .into_iter()
                .filter_map(|(_, memory, access)| memory.map(|GraphMemory(m)| (m, access)))
                // The graph's own allocations are freed inside it: holding
                // them would keep them alive past the capture, and no update
                // can name them.
                .filter(|(m, _)| m.tracker().graph_allocation().0.is_none())
                .collect();
            tracking::note_node_memory(&capture, node, memory);
        }
        for hook in &rare.after {
            hook.after_access(this.stream)?;
        }
        Ok(())
    }

    /// The arguments, checked, as a graph's kernel node would hold them:
    /// copies of the values, and the memory they use (mapped memory, which
    /// a graph cannot hold, is an error naming the parameter).
    pub fn kernel_args(self: Pin<&mut Self>) -> Result<KernelArgs> {
        // SAFETY: nothing is moved out of the builder.
        let this = unsafe { self.get_unchecked_mut() };
        let params = this.take_slots()?;
        let (prepared, _) = this.function.prepare(this.config, this.stream)?;
        if prepared.cooperative {
            return Err(this.function.cooperative_in_a_graph());
        }
        if prepared.cluster.is_some() {
            return Err(this.function.cluster_in_a_graph());
        }
        let values = prepared
            .host
            .param_sizes
            .iter()
            .zip(params)
            .map(|(&size, param)| {
                let mut copy = vec![0u128; size.div_ceil(16).max(1)].into_boxed_slice();
                // SAFETY: each slot points to a live value of the slot's
                // type, of `size` bytes (see `launch`); a byte copy moves
                // padding without reading it.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        param.cast::<MaybeUninit<u8>>(),
                        copy.as_mut_ptr().cast::<MaybeUninit<u8>>(),
                        size,
                    )
                };
                copy
            })
            .collect();
        let memory = this
            .rare
            .take()
            .map(|rare| rare.memory)
            .unwrap_or_default()
            .into_iter()
            .map(|(parameter, memory, access)| match memory {
                Some(GraphMemory(memory)) => Ok((memory, access)),
                None => Err(Error::Capture {
                    capture: 0,
                    reason: format!(
                        "argument `{parameter}` of `{}` is mapped pinned or managed memory, which the host reaches between a graph's launches, so a graph cannot hold it",
                        this.function.name()
                    ),
                }),
            })
            .collect::<Result<Vec<GraphUse>>>()?;
        Ok(KernelArgs {
            function: this.function,
            device: this.device,
            prepared,
            values,
            memory,
        })
    }

    /// The rare parts, made on first use.
    #[cold]
    fn rare_mut(&mut self) -> &mut Rare<'a> {
        self.rare.get_or_insert_with(Default::default)
    }

    /// An output's checks, tracking and address; returns its element count.
    #[inline(always)]
    fn output_address<T: DeviceCopy>(
        &mut self,
        parameter: &'static str,
        arg: &'a mut impl DeviceOutput<T>,
    ) -> Result<usize> {
        let slice = self.track_write(parameter, arg)?;
        self.word(slice.ptr);
        Ok(slice.len)
    }

    /// Memory the kernel writes, checked and tracked as an output's,
    /// filling no slot.
    fn track_write<T: DeviceCopy>(
        &mut self,
        parameter: &'static str,
        arg: &'a mut impl DeviceOutput<T>,
    ) -> Result<SliceArg> {
        gpu_device::__private::require_device_align::<T>();
        let slice = SliceArg::checked::<T>(arg.raw_view(), self.device, self.function, parameter)?;
        let arg: &'a _ = arg;
        if self.tracks {
            arg.before_device_access(self.stream)?;
            if let Some(hook) = arg.after_access_hook() {
                self.rare_mut().after.push(hook);
            }
        }
        if self.records {
            let memory = arg.graph_memory();
            self.rare_mut()
                .memory
                .push((parameter, memory, Access::Write));
        }
        Ok(slice)
    }

    /// A tensor map's device, rank, box and swizzle against the kernel's
    /// parameter type `M`: an error naming the parameter otherwise.
    fn check_map_shape<M: TensorMapShape>(
        &self,
        parameter: &'static str,
        device: usize,
        layout: &TensorMapLayout,
    ) -> Result<()> {
        if device != self.device {
            return Err(self.refuse(
                parameter,
                format!(
                    "is a tensor map of a buffer on device {device}, and the launch is on device {}: the copy engine reads a map's memory on the device that launches",
                    self.device
                ),
            ));
        }
        let rank = layout.rank();
        if rank != M::RANK
            || layout.box_dims() != &M::BOX[..rank]
            || layout.swizzle().driver_value() != M::SWIZZLE
        {
            return Err(self.refuse(
                parameter,
                format!(
                    "is a tensor map of {rank} dimensions with a box of {:?} elements (innermost first) and {:?}, where the kernel's parameter type `{}` takes {} dimensions with a box of {:?} and swizzle mode {}: the tiles the kernel copies into are of its type",
                    layout.box_dims(),
                    layout.swizzle(),
                    core::any::type_name::<M>(),
                    M::RANK,
                    &M::BOX[..M::RANK],
                    M::SWIZZLE
                ),
            ));
        }
        Ok(())
    }

    /// A whole buffer the kernel reads, checked and tracked as an input's,
    /// filling no slot.
    fn track_read<U: DeviceCopy>(
        &mut self,
        parameter: &'static str,
        buffer: &DeviceBuffer<U>,
    ) -> Result<SliceArg> {
        let arg = buffer;
        let slice = SliceArg::checked::<U>(
            DeviceInput::<U>::raw_view(&arg),
            self.device,
            self.function,
            parameter,
        )?;
        if self.tracks {
            DeviceInput::<U>::before_device_access(&arg, self.stream)?;
        }
        if self.records {
            let memory = DeviceInput::<U>::graph_memory(&arg);
            self.rare_mut()
                .memory
                .push((parameter, memory, Access::Read));
        }
        Ok(slice)
    }

    #[cold]
    fn refuse(&self, parameter: &'static str, reason: String) -> Error {
        Error::InvalidLaunch {
            kernel: self.function.name(),
            reason: format!("argument `{parameter}` {reason}"),
        }
    }

    /// Fills the next slot with `value`, held by the builder.
    #[inline(always)]
    fn word(&mut self, value: u64) {
        let slot = self.filled;
        let word = self.words[slot].write(value);
        self.slots[slot].write(std::ptr::from_mut(word).cast());
        self.filled += 1;
    }

    /// Fills the next slot with a `u32`, held by the builder.
    #[inline(always)]
    fn half_word(&mut self, value: u32) {
        let slot = self.filled;
        let word = self.words[slot].as_mut_ptr().cast::<u32>();
        // SAFETY: a `u64`'s storage holds a `u32` at its start.
        unsafe { word.write(value) };
        self.slots[slot].write(word.cast());
        self.filled += 1;
    }

    /// The filled slots, once each: an error unless every slot is filled
    /// (a launcher that does not match its kernel).
    #[inline(always)]
    fn take_slots(&mut self) -> Result<[*mut c_void; SLOTS]> {
        if self.filled != SLOTS || SLOTS != self.function.slot_count() {
            return Err(self.unfilled());
        }
        // A second launch of the same arguments finds no slots.
        self.filled = 0;
        // SAFETY: all `SLOTS` slots were written (`filled` counts them;
        // each write indexes within the array).
        Ok(self.slots.map(|slot| unsafe { slot.assume_init() }))
    }

    #[cold]
    fn unfilled(&self) -> Error {
        Error::InvalidLaunch {
            kernel: self.function.name(),
            reason: format!(
                "its launcher filled {} of {SLOTS} PTX parameters, where the kernel has {}: the launcher and the runtime are of different versions, or the arguments were used already",
                self.filled,
                self.function.slot_count()
            ),
        }
    }
}
