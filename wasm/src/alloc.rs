//! The `.wasm`'s global allocator: the standard one (dlmalloc) with a
//! different way of asking the host for memory.
//!
//! Why: the standard allocator grows wasm memory in 64 KiB steps, and in
//! V8 every `memory.grow` costs about a millisecond whatever its size
//! (Node 20, measured: 4,000 grows of one page 3.6–4.0 s, 40 grows of 100
//! pages 41 ms). An engine whose local queue gains 100,000 jobs per
//! advance (~55 MB) spent most of the advance growing memory: ~20 µs per
//! fire. Here every grow takes at least an eighth of the current memory
//! (and at least 1 MiB), so a heap of n bytes needs O(log n) grows and at
//! most an eighth of it is ever unused reserve. If the larger grow fails
//! (near the 4 GiB limit), the exact request is tried.
//!
//! Only on wasm32 without threads: there the allocator is only ever
//! entered by one thread, so the allocator state needs no lock.
#![allow(unsafe_code)]

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::UnsafeCell;
use core::ptr;
use dlmalloc::{Allocator, Dlmalloc};

const PAGE: usize = 64 * 1024;
/// 1 MiB.
const MIN_GROW_PAGES: usize = 16;

/// Memory from `memory.grow`, in geometric steps.
struct Geometric;

// SAFETY: `alloc` returns either null or a fresh region of wasm memory
// just added by `memory.grow` (never handed out before) of the size it
// reports; nothing is ever remapped or released.
unsafe impl Allocator for Geometric {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        let need = size.div_ceil(PAGE);
        let want = need.max(wasm32::memory_size(0) / 8).max(MIN_GROW_PAGES);
        for pages in [want, need] {
            let prev = wasm32::memory_grow(0, pages);
            if prev == usize::MAX {
                continue;
            }
            let base = prev * PAGE;
            let len = pages * PAGE;
            // The region ends exactly at the top of the 32-bit address
            // space: a pointer one past its end would wrap to 0, which
            // Rust does not allow, so leave the last bytes unused (as the
            // standard allocator does).
            let len = if base.wrapping_add(len) == 0 {
                len - 16
            } else {
                len
            };
            return (base as *mut u8, len, 0);
        }
        (ptr::null_mut(), 0, 0)
    }

    fn remap(&self, _ptr: *mut u8, _old: usize, _new: usize, _can_move: bool) -> *mut u8 {
        ptr::null_mut()
    }

    fn free_part(&self, _ptr: *mut u8, _old: usize, _new: usize) -> bool {
        false
    }

    fn free(&self, _ptr: *mut u8, _size: usize) -> bool {
        false
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        false
    }

    fn allocates_zeros(&self) -> bool {
        // Fresh wasm pages are zeroed.
        true
    }

    fn page_size(&self) -> usize {
        PAGE
    }
}

struct Global(UnsafeCell<Dlmalloc<Geometric>>);

// SAFETY: wasm32 without the `atomics` target feature runs one thread, so
// the cell is never accessed concurrently.
unsafe impl Sync for Global {}

#[global_allocator]
static GLOBAL: Global = Global(UnsafeCell::new(Dlmalloc::new_with_allocator(Geometric)));

// SAFETY: every method forwards to dlmalloc, which upholds the
// `GlobalAlloc` contract; the exclusive borrow of its state is sound on
// one thread (see `Sync` above), and dlmalloc does not call back into the
// global allocator.
unsafe impl GlobalAlloc for Global {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { (*self.0.get()).malloc(layout.size(), layout.align()) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { (*self.0.get()).free(ptr, layout.size(), layout.align()) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { (*self.0.get()).calloc(layout.size(), layout.align()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { (*self.0.get()).realloc(ptr, layout.size(), layout.align(), new_size) }
    }
}
