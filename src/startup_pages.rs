//! Gives back the executable's pages that start-up read and serving does not need.
//!
//! Start-up (settings, migrations, the schema registry, TLS, the routes) runs code that never
//! runs again, and the kernel maps the executable 64 KiB around every page it touches: a
//! release `solgate serve` had 13 of its 22 MiB of code resident before its first request.
//! Two seconds after the server listens (its HTTP workers and the conductor have started
//! by then), `MADV_PAGEOUT` over the executable's read-only mappings drops their resident
//! pages; what serving runs comes back from the file on its first use (docs/benchmarks.md
//! has the figures). The advice never changes what memory holds, and
//! the kernel keeps the pages another process maps too (a gateway and a conductor started
//! from the same file share theirs).

use std::time::Duration;

/// How long after listening start-up is taken to be over: the HTTP workers build their
/// routes and the conductor makes its first passes in the first moments.
const START_UP: Duration = Duration::from_secs(2);

/// Releases the start-up pages once start-up is over, in the background; logs the outcome.
/// Call from within the runtime, once the server is built.
pub fn release_once_started() {
    tokio::spawn(async {
        tokio::time::sleep(START_UP).await;
        match tokio::task::spawn_blocking(release).await {
            Ok(Ok(released)) => tracing::info!(
                mappings = released.mappings,
                mib = released.bytes / (1024 * 1024),
                "start-up pages of the executable released"
            ),
            Ok(Err(error)) => tracing::warn!(%error, "could not release the executable's start-up pages"),
            Err(error) => tracing::warn!(%error, "releasing the executable's start-up pages failed"),
        }
    });
}

/// What one release gave back.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    /// Read-only mappings of the executable advised.
    pub mappings: usize,
    /// Their total size (resident or not).
    pub bytes: usize,
}

/// Advises the kernel to reclaim the resident pages of the running executable's read-only
/// mappings. Linux 5.4 or later; elsewhere it releases nothing.
pub fn release() -> std::io::Result<Released> {
    #[cfg(target_os = "linux")]
    {
        let executable = std::fs::read_link("/proc/self/exe")?;
        let maps = std::fs::read_to_string("/proc/self/maps")?;
        let mut released = Released::default();
        for (start, end) in read_only_mappings(&maps, &executable.to_string_lossy()) {
            // SAFETY: `start..end` is a whole mapping of this process, read from its own
            // maps table, and no code of ours unmaps the executable. MADV_PAGEOUT only
            // reclaims: a page keeps its content, read back from the file (or swap, for a
            // relocated page) on the next access, so nothing any thread reads changes.
            #[expect(unsafe_code, reason = "madvise takes a raw address range")]
            let advised = unsafe {
                rustix::mm::madvise(start as *mut std::ffi::c_void, end - start, rustix::mm::Advice::LinuxPageOut)
            };
            advised?;
            released.mappings += 1;
            released.bytes += end - start;
        }
        Ok(released)
    }
    #[cfg(not(target_os = "linux"))]
    Ok(Released::default())
}

/// The address ranges of `executable`'s mappings without write permission, from a
/// `/proc/<pid>/maps` table (`start-end perms offset dev inode path`; the path may hold
/// spaces, as in "/usr/bin/solgate (deleted)" after an upgrade in place).
fn read_only_mappings(maps: &str, executable: &str) -> Vec<(usize, usize)> {
    maps.lines()
        .filter_map(|line| {
            let mut fields = line.splitn(6, ' ');
            let range = fields.next()?;
            let permissions = fields.next()?;
            let path = fields.nth(3)?.trim_start();
            if path != executable || permissions.contains('w') {
                return None;
            }
            let (start, end) = range.split_once('-')?;
            let start = usize::from_str_radix(start, 16).ok()?;
            let end = usize::from_str_radix(end, 16).ok()?;
            (end > start).then_some((start, end))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55ba23ec5000-55ba24484000 r--p 00000000 fe:00 5563386                    /usr/bin/solgate (deleted)
55ba24484000-55ba25a67000 r-xp 005be000 fe:00 5563386                    /usr/bin/solgate (deleted)
55ba25af9000-55ba25b04000 rw-p 01c31000 fe:00 5563386                    /usr/bin/solgate (deleted)
55ba25b04000-55ba25b05000 rw-p 00000000 00:00 0 
7f1c2a000000-7f1c2a028000 r-xp 00028000 fe:00 1312                       /usr/lib/x86_64-linux-gnu/libc.so.6
7f1c2b000000-7f1c2b001000 r--p 00000000 fe:00 99                         /usr/bin/solgate-other
";

    /// Only the executable's own read-only mappings, whatever the path's spaces; its
    /// writable data, anonymous memory and other files are left alone.
    #[test]
    fn only_the_executables_read_only_mappings_are_chosen() {
        assert_eq!(
            read_only_mappings(MAPS, "/usr/bin/solgate (deleted)"),
            [(0x55ba_23ec_5000, 0x55ba_2448_4000), (0x55ba_2448_4000, 0x55ba_25a6_7000)]
        );
        assert!(read_only_mappings(MAPS, "/usr/bin/solgate").is_empty());
    }

    /// The advice works on this kernel over the test binary's own mappings (it fails on
    /// kernels before 5.4, which do not know it).
    #[test]
    fn the_running_executable_is_released() {
        let released = release().expect("MADV_PAGEOUT over the executable");
        assert!(released.mappings >= 2, "{released:?}");
        assert!(released.bytes > 0);
    }
}
