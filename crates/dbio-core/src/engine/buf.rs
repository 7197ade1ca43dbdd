//! Page-aligned I/O buffers, one slot per request in flight (O_DIRECT needs
//! alignment; io_uring registers them once as fixed buffers).

use std::alloc::{Layout, alloc_zeroed, dealloc};

/// Alignment of every buffer: enough for O_DIRECT on any logical sector size.
pub(crate) const ALIGN: usize = 4096;

/// A transparent huge page.
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// `slots` buffers of `size` bytes each in one aligned allocation.
pub struct BufPool {
    ptr: *mut u8,
    layout: Layout,
    size: usize,
    slots: usize,
}

// The pool is owned and used by one session thread at a time.
unsafe impl Send for BufPool {}

impl BufPool {
    pub fn new(size: usize, slots: usize) -> Self {
        assert!(size > 0 && slots > 0);
        let stride = size.div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(stride * slots, ALIGN).expect("buffer layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        BufPool {
            ptr,
            layout,
            size: stride,
            slots,
        }
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Puts the pool on transparent huge pages (before io_uring pins it) and
    /// returns up to `want` slots that lie on them. A large read into
    /// scattered 4 KiB pages has many segments, which the block layer splits
    /// (a 1 MiB read is 256, and a loop device takes 128 per request);
    /// physically contiguous buffers go down whole. The pool is already
    /// touched (zeroed), so its pages are collapsed in place
    /// (`MADV_COLLAPSE`, Linux 6.1). Only advice: where THP is off or memory
    /// is fragmented the I/O is the same, only split. Allocate a huge page's
    /// worth of spare slots to get `want` of them.
    pub(crate) fn on_huge_pages(&self, want: usize) -> Vec<u32> {
        let start = self.ptr as usize;
        let end = start + self.size * self.slots;
        let (lo, hi) = (
            start.next_multiple_of(HUGE_PAGE),
            end / HUGE_PAGE * HUGE_PAGE,
        );
        if lo < hi {
            for advice in [libc::MADV_HUGEPAGE, libc::MADV_COLLAPSE] {
                // SAFETY: advice on memory the pool owns; it changes no contents.
                unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, advice) };
            }
        }
        (0..self.slots as u32)
            .filter(|&s| self.ptr(s as usize) as usize >= lo)
            .take(want)
            .collect()
    }

    /// Raw pointer to a slot, valid as long as the pool lives.
    #[inline]
    pub fn ptr(&self, slot: usize) -> *mut u8 {
        assert!(slot < self.slots);
        // SAFETY: slot < slots keeps the offset inside the allocation.
        unsafe { self.ptr.add(slot * self.size) }
    }

    #[inline]
    pub fn slot_mut(&mut self, slot: usize, len: usize) -> &mut [u8] {
        assert!(len <= self.size);
        // SAFETY: in bounds, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(slot), len) }
    }

    #[inline]
    pub fn slot(&self, slot: usize, len: usize) -> &[u8] {
        assert!(len <= self.size);
        // SAFETY: in bounds.
        unsafe { std::slice::from_raw_parts(self.ptr(slot), len) }
    }

    /// (pointer, length) of every slot, for io_uring buffer registration.
    pub(crate) fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|s| libc::iovec {
                iov_base: self.ptr(s).cast(),
                iov_len: self.size,
            })
            .collect()
    }
}

impl Drop for BufPool {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_page_slots_start_on_a_huge_page_and_are_as_many_as_asked() {
        let mib = 1 << 20;
        let pool = BufPool::new(mib, 8 + HUGE_PAGE / mib);
        let slots = pool.on_huge_pages(8);
        assert_eq!(slots.len(), 8);
        // The first slot is the first one past a huge page's start.
        let at = |s: u32| pool.ptr(s as usize) as usize;
        let boundary = at(0).next_multiple_of(HUGE_PAGE);
        assert!(at(slots[0]) >= boundary);
        assert!(slots[0] == 0 || at(slots[0] - 1) < boundary);
        assert!(slots.windows(2).all(|w| w[1] == w[0] + 1));
        // A pool smaller than a huge page is left as it is.
        assert!(BufPool::new(4096, 4).on_huge_pages(4).len() <= 4);
    }

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut p = BufPool::new(8192, 4);
        for s in 0..4 {
            assert_eq!(p.ptr(s) as usize % ALIGN, 0);
            p.slot_mut(s, 8192).fill(s as u8);
        }
        for s in 0..4 {
            assert!(p.slot(s, 8192).iter().all(|&b| b == s as u8));
        }
        let odd = BufPool::new(512, 3);
        assert_eq!(odd.ptr(1) as usize - odd.ptr(0) as usize, ALIGN);
    }
}
