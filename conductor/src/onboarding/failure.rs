//! Why onboarding failed: SOL005 `onboardingFailureDetails`.

use solgate_vnfpkg::CsarError;

/// Why onboarding failed: what the client reads in `onboardingFailureDetails`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct OnboardingFailure {
    pub status: u16,
    pub detail: String,
}

impl OnboardingFailure {
    pub fn new(status: u16, detail: impl Into<String>) -> Self {
        Self { status, detail: detail.into() }
    }

    /// A package defect is the client's (422: a zip was received but cannot be onboarded);
    /// local I/O trouble is ours (500, details in the log only).
    pub fn from_csar(error: &CsarError, package_id: &str) -> Self {
        if error.is_package_error() {
            OnboardingFailure::new(422, error.to_string())
        } else {
            tracing::error!(package = %package_id, %error, "onboarding failed on local I/O");
            OnboardingFailure::internal()
        }
    }

    pub fn internal() -> Self {
        OnboardingFailure::new(
            500,
            "The VNF package could not be processed because of an internal error; see the solgate log.",
        )
    }
}
