//! How soon the heap gives freed memory back to the system, set once at start.
//!
//! Rust's heap is mimalloc's (the `mimalloc` feature). mimalloc 3 keeps a freed page
//! committed for a second before it returns it to the system (mimalloc 2 waited 10 ms), so
//! under a burst of clients memory freed by one request stays resident while others
//! allocate. With 10 ms the peak under a burst of 200 LCM clients was about 2 MiB lower,
//! at no CPU cost per operation beyond the run-to-run spread (docs/benchmarks.md).
//!
//! mimalloc reads its environment variables before `main`; an operator who sets
//! `MIMALLOC_PURGE_DELAY` (or its older name, `MIMALLOC_RESET_DELAY`) keeps it
//! (docs/operations.md).

/// mimalloc's `mi_option_purge_delay`. The option numbers are part of mimalloc's stable
/// interface (deprecated ones keep their slot); `libmimalloc-sys` names only some of them.
#[cfg(feature = "mimalloc")]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long a free page stays committed before mimalloc returns it, in milliseconds.
#[cfg(feature = "mimalloc")]
const PURGE_DELAY_MS: std::os::raw::c_long = 10;

/// The variables mimalloc reads the purge delay from: its current and its legacy name,
/// matched as mimalloc matches them, without regard to case.
#[cfg(feature = "mimalloc")]
const PURGE_DELAY_VARIABLES: [&str; 2] = ["MIMALLOC_PURGE_DELAY", "MIMALLOC_RESET_DELAY"];

/// Sets what the environment left unset. Call first thing in `main`, before any other
/// thread exists: mimalloc's option setter is not thread safe.
pub fn tune_for_low_peak_memory() {
    #[cfg(feature = "mimalloc")]
    if !environment_sets(std::env::vars_os().map(|(name, _)| name), &PURGE_DELAY_VARIABLES) {
        // SAFETY: a plain store into mimalloc's option table for a valid option number,
        // made while no other thread runs (the caller's contract), so no read races it.
        #[expect(unsafe_code, reason = "mimalloc's options have no safe setter")]
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS);
        }
    }
}

/// Whether one of `names` is among the environment's variable `names`, whatever its case.
#[cfg(feature = "mimalloc")]
fn environment_sets(mut environment: impl Iterator<Item = std::ffi::OsString>, names: &[&str]) -> bool {
    environment.any(|variable| {
        variable.to_str().is_some_and(|variable| names.iter().any(|name| variable.eq_ignore_ascii_case(name)))
    })
}

#[cfg(all(test, feature = "mimalloc"))]
mod tests {
    use super::*;

    /// An operator's setting under either name, in any case, is left alone; others are not.
    #[test]
    fn an_operators_purge_delay_is_recognised_under_either_name_and_any_case() {
        let environment = |names: &[&str]| names.iter().map(std::ffi::OsString::from).collect::<Vec<_>>().into_iter();
        for set in ["MIMALLOC_PURGE_DELAY", "mimalloc_purge_delay", "MIMALLOC_RESET_DELAY"] {
            assert!(environment_sets(environment(&["PATH", set]), &PURGE_DELAY_VARIABLES), "{set}");
        }
        assert!(!environment_sets(
            environment(&["PATH", "MIMALLOC_PURGE_DELAYS", "MIMALLOC_VERBOSE"]),
            &PURGE_DELAY_VARIABLES
        ));
    }

    /// The option number is the purge delay: unless the environment changed it, it reads
    /// mimalloc's default of one second (no other option defaults to 1,000).
    #[test]
    fn the_option_number_is_mimallocs_purge_delay() {
        let expected = std::env::var("MIMALLOC_PURGE_DELAY").ok().and_then(|value| value.parse().ok()).unwrap_or(1000);
        // SAFETY: reading an option is a plain load from mimalloc's option table.
        #[expect(unsafe_code, reason = "mimalloc's options have no safe getter")]
        let delay = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(delay, expected);
    }
}
