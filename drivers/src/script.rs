//! Runs the Python a VNF package brings, as Tacker's v2 conductor does: the LCM operation
//! user data class of an OpenStack VNF ([`run_user_data`]) and the management scripts of
//! the VNFD's `Vnflcm` interface ([`run_mgmt_script`]). One mechanism for both:
//!
//! - a private directory per run (mode 0700, removed afterwards) holds a copy of the
//!   package (the script's `tmp_csar_dir`, as Tacker copies it, so a script cannot change
//!   the onboarded package), solgate's own Python support tree ([`SUPPORT_FILES`]: the
//!   `tacker.sol_refactored...` modules vendors' scripts import, written for solgate) on
//!   `PYTHONPATH`, and the process's `HOME`;
//! - the interpreter (`[drivers] python_command`) is started directly, never through a
//!   shell, with a clean environment; the inputs go as JSON on stdin, never on the command
//!   line;
//! - the process leads its own process group; when it ends, when it overruns
//!   `[drivers] script_timeout_secs`, or when the run is dropped (a cancelled operation),
//!   the whole group is killed (SIGKILL) and the process reaped, so nothing it started
//!   lives on;
//! - stdout is capped; the tail of stderr is the error an operation reports.
//!
//! What solgate does not do as Tacker does: the user data's result is read as JSON
//! written by solgate's own launcher, never unpickled (a pickle from a package could run
//! code in solgate), and what a class prints cannot be taken for its result.
//!
//! This is not a security boundary against a hostile package: the script runs as
//! solgate's user, as it does in Tacker. A package is trusted once onboarded.

use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
pub use solgate_model::infra::ScriptInput;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// How package scripts run (`[drivers] python_command`, `script_timeout_secs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptSettings {
    /// The Python 3 interpreter: a path, or a name looked up in `PATH`.
    pub python: PathBuf,
    /// Limit of one script run, after which its process group is killed.
    pub timeout: Duration,
}

impl Default for ScriptSettings {
    fn default() -> Self {
        Self { python: PathBuf::from("python3"), timeout: Duration::from_secs(300) }
    }
}

/// solgate's Python support tree, by its path under the private directory's `lib/`
/// (`drivers/python/` in the source tree, embedded in the binary).
pub const SUPPORT_FILES: &[(&str, &str)] = &[
    ("solgate_userdata.py", include_str!("../python/solgate_userdata.py")),
    ("solgate_mgmt.py", include_str!("../python/solgate_mgmt.py")),
    ("tacker/__init__.py", include_str!("../python/tacker/__init__.py")),
    ("tacker/sol_refactored/__init__.py", include_str!("../python/tacker/sol_refactored/__init__.py")),
    ("tacker/sol_refactored/common/__init__.py", include_str!("../python/tacker/sol_refactored/common/__init__.py")),
    (
        "tacker/sol_refactored/common/common_script_utils.py",
        include_str!("../python/tacker/sol_refactored/common/common_script_utils.py"),
    ),
    (
        "tacker/sol_refactored/common/exceptions.py",
        include_str!("../python/tacker/sol_refactored/common/exceptions.py"),
    ),
    (
        "tacker/sol_refactored/common/vnf_instance_utils.py",
        include_str!("../python/tacker/sol_refactored/common/vnf_instance_utils.py"),
    ),
    (
        "tacker/sol_refactored/common/vnfd_utils.py",
        include_str!("../python/tacker/sol_refactored/common/vnfd_utils.py"),
    ),
    (
        "tacker/sol_refactored/infra_drivers/__init__.py",
        include_str!("../python/tacker/sol_refactored/infra_drivers/__init__.py"),
    ),
    (
        "tacker/sol_refactored/infra_drivers/openstack/__init__.py",
        include_str!("../python/tacker/sol_refactored/infra_drivers/openstack/__init__.py"),
    ),
    (
        "tacker/sol_refactored/infra_drivers/openstack/userdata_utils.py",
        include_str!("../python/tacker/sol_refactored/infra_drivers/openstack/userdata_utils.py"),
    ),
];

/// What stdout may hold (a user data result is a HOT and its parameters).
const STDOUT_CAP: usize = 16 * 1024 * 1024;
/// How much of stderr is kept while the script runs, and shown in an error.
const STDERR_KEEP: usize = 64 * 1024;
const STDERR_TAIL: usize = 2000;
/// How long the output may still take once the process group is gone.
const DRAIN: Duration = Duration::from_secs(5);

/// A failed script run; its text is the operation's error.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("{what}: the Python interpreter {python} cannot be run: {source}")]
    Spawn { what: String, python: String, source: std::io::Error },
    #[error("{what} did not finish within {limit:?} and was killed{}", tail_suffix(.stderr))]
    TimedOut { what: String, limit: Duration, stderr: String },
    #[error("{what} printed more than {cap} bytes and was stopped")]
    TooMuchOutput { what: String, cap: usize },
    #[error("{what} failed ({status}): {stderr}")]
    Failed { what: String, status: String, stderr: String },
    #[error("{what} returned no valid result ({reason}){}", tail_suffix(.stderr))]
    BadResult { what: String, reason: String, stderr: String },
    #[error("{what}: {detail}")]
    Setup { what: String, detail: String },
}

fn tail_suffix(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!("; stderr: {stderr}") }
}

/// Runs `method` (the operation, `_rollback` when `is_rollback`) of the user data class
/// `class` in the package module `module` (`lcm-operation-user-data`, a path in the
/// package such as `./UserData/userdata.py`); the Heat stack fields it returned.
pub async fn run_user_data(
    settings: &ScriptSettings,
    package_dir: &Path,
    module: &str,
    class: &str,
    input: &ScriptInput,
    is_rollback: bool,
) -> Result<Value, ScriptError> {
    let operation = input.grant_request["operation"].as_str().unwrap_or_default().to_lowercase();
    let method = if is_rollback { format!("{operation}_rollback") } else { operation };
    let what = format!("LCM operation user data {module} ({class}.{method})");
    check_package_path(module, &what)?;
    let sandbox = Sandbox::new(package_dir, &what).await?;
    let stdin = serde_json::json!({
        "request": input.request,
        "vnf_instance": input.vnf_instance,
        "grant_request": input.grant_request,
        "grant_response": input.grant,
        "tmp_csar_dir": sandbox.csar_dir(),
        "is_rollback": is_rollback,
        "user_data": module,
        "user_data_class": class,
    });
    let args = vec![sandbox.lib().join("solgate_userdata.py").into_os_string()];
    let run = run_python(settings, &sandbox, args, stdin.to_string().into_bytes(), &what).await?;
    let text = String::from_utf8(run.stdout).map_err(|_| ScriptError::BadResult {
        what: what.clone(),
        reason: "not UTF-8".into(),
        stderr: run.stderr.clone(),
    })?;
    match serde_json::from_str::<Value>(&text) {
        Ok(fields @ Value::Object(_)) => Ok(fields),
        Ok(other) => Err(ScriptError::BadResult {
            what,
            reason: format!("a JSON {} instead of an object", kind_of(&other)),
            stderr: run.stderr,
        }),
        Err(error) => Err(ScriptError::BadResult { what, reason: format!("not JSON: {error}"), stderr: run.stderr }),
    }
}

/// Runs the management script `script` (the artifact's `file`, relative to the package's
/// `Definitions/`) for `operation` (`instantiate_start`, ...), as Tacker v2 runs it.
pub async fn run_mgmt_script(
    settings: &ScriptSettings,
    package_dir: &Path,
    script: &str,
    operation: &str,
    input: &ScriptInput,
) -> Result<(), ScriptError> {
    let what = format!("{operation} script {script}");
    let relative = Path::new("Definitions").join(script);
    check_package_path(&relative.to_string_lossy(), &what)?;
    let sandbox = Sandbox::new(package_dir, &what).await?;
    let path = sandbox.csar_dir().join(&relative);
    if !path.is_file() {
        return Err(ScriptError::Setup { what, detail: "the VNF package has no such file".into() });
    }
    let stdin = serde_json::json!({
        "operation": operation,
        "request": input.request,
        "vnf_instance": input.vnf_instance,
        "grant_request": input.grant_request,
        "grant_response": input.grant,
        "tmp_csar_dir": sandbox.csar_dir(),
        "user_script_err_handling_data": {},
    });
    let args = vec![sandbox.lib().join("solgate_mgmt.py").into_os_string(), path.into_os_string()];
    run_python(settings, &sandbox, args, stdin.to_string().into_bytes(), &what).await.map(drop)
}

/// A path inside the package: relative, without `..` (`./` and `../Scripts` from
/// `Definitions/` are fine once joined, so only the normalized form is checked).
fn check_package_path(path: &str, what: &str) -> Result<(), ScriptError> {
    let mut depth: i32 = 0;
    for part in Path::new(path).components() {
        match part {
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => depth -= 1,
            _ => depth = -1,
        }
        if depth < 0 {
            return Err(ScriptError::Setup { what: what.to_owned(), detail: "the path leaves the VNF package".into() });
        }
    }
    Ok(())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The private directory of one run: `lib/` (the support tree), `csar/` (the package
/// copy), `home/`. Removed when dropped.
struct Sandbox(PathBuf);

impl Sandbox {
    async fn new(package_dir: &Path, what: &str) -> Result<Self, ScriptError> {
        let root = std::env::temp_dir().join(format!("solgate-script-{}", uuid::Uuid::new_v4()));
        let sandbox = Sandbox(root.clone());
        let package = package_dir.to_owned();
        let made = tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            std::fs::DirBuilder::new().mode(0o700).create(&root)?;
            for (name, text) in SUPPORT_FILES {
                let path = root.join("lib").join(name);
                if let Some(parent) = path.parent() {
                    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
                }
                let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
                std::io::Write::write_all(&mut file, text.as_bytes())?;
            }
            std::fs::DirBuilder::new().mode(0o700).create(root.join("home"))?;
            copy_package(&package, &root.join("csar"))
        })
        .await;
        match made {
            Ok(Ok(())) => Ok(sandbox),
            Ok(Err(error)) => Err(ScriptError::Setup {
                what: what.to_owned(),
                detail: format!("cannot prepare its private directory: {error}"),
            }),
            Err(error) => Err(ScriptError::Setup { what: what.to_owned(), detail: error.to_string() }),
        }
    }

    fn lib(&self) -> PathBuf {
        self.0.join("lib")
    }

    fn csar_dir(&self) -> PathBuf {
        self.0.join("csar")
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies the extracted package (regular files and directories; no links), leaving out
/// `Files/images` as Tacker's copy does.
fn copy_package(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().mode(0o700).create(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            if entry.path().ends_with("Files/images") {
                continue;
            }
            copy_package(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// How the wait for the interpreter ended.
enum Waited {
    Exited(std::process::ExitStatus),
    TimedOut,
    Lost(String),
}

/// What a run that exited 0 printed.
struct Finished {
    stdout: Vec<u8>,
    stderr: String,
}

/// Kills a process group when dropped (a run abandoned midway, e.g. a cancelled operation).
struct GroupKiller(Option<u32>);

impl GroupKiller {
    fn kill(&mut self) {
        let Some(pid) = self.0.take() else { return };
        if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
            // The group outlives its leader while any member lives, so its id cannot have
            // been reused; ESRCH (nothing left) is what a tidy script leaves.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn run_python(
    settings: &ScriptSettings,
    sandbox: &Sandbox,
    args: Vec<OsString>,
    stdin: Vec<u8>,
    what: &str,
) -> Result<Finished, ScriptError> {
    let mut command = tokio::process::Command::new(&settings.python);
    command
        // -s: no user site-packages; -B: no .pyc written into the package copy.
        .arg("-s")
        .arg("-B")
        .args(&args)
        .current_dir(sandbox.csar_dir())
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", sandbox.0.join("home"))
        .env("LANG", "C.UTF-8")
        .env("PYTHONPATH", sandbox.lib())
        .env("PYTHONIOENCODING", "utf-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|source| ScriptError::Spawn {
        what: what.to_owned(),
        python: settings.python.display().to_string(),
        source,
    })?;
    let mut group = GroupKiller(child.id());
    let (Some(mut input), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(ScriptError::Setup { what: what.to_owned(), detail: "no pipes to the interpreter".into() });
    };
    // Readers and the writer run beside the wait, so no pipe fills up and blocks the script.
    let writer = tokio::spawn(async move {
        // A script that does not read its input gets EPIPE here, which is its business.
        let _ = input.write_all(&stdin).await;
    });
    let out_reader = tokio::spawn(read_capped(stdout, STDOUT_CAP));
    let err_reader = tokio::spawn(read_tail(stderr, STDERR_KEEP));
    let waited = tokio::time::timeout(settings.timeout, child.wait()).await;
    // Whatever the script started goes with it.
    group.kill();
    let waited = match waited {
        Ok(Ok(status)) => Waited::Exited(status),
        Ok(Err(error)) => Waited::Lost(error.to_string()),
        Err(_) => {
            // Killed with its group above; reaped here.
            let _ = child.kill().await;
            Waited::TimedOut
        }
    };
    writer.abort();
    let stdout = tokio::time::timeout(DRAIN, out_reader).await.ok().and_then(Result::ok);
    let stderr = tokio::time::timeout(DRAIN, err_reader).await.ok().and_then(Result::ok).unwrap_or_default();
    let stderr = tail(&stderr);
    let status = match waited {
        Waited::Exited(status) => status,
        Waited::TimedOut => {
            return Err(ScriptError::TimedOut { what: what.to_owned(), limit: settings.timeout, stderr });
        }
        Waited::Lost(detail) => return Err(ScriptError::Setup { what: what.to_owned(), detail }),
    };
    let stdout = match stdout {
        Some(Some(bytes)) => bytes,
        Some(None) => return Err(ScriptError::TooMuchOutput { what: what.to_owned(), cap: STDOUT_CAP }),
        None => Vec::new(),
    };
    if !status.success() {
        let stderr = if stderr.is_empty() { "(no output on stderr)".to_owned() } else { stderr };
        return Err(ScriptError::Failed { what: what.to_owned(), status: status.to_string(), stderr });
    }
    Ok(Finished { stdout, stderr })
}

/// The pipe's bytes, or `None` once more than `cap` came (the pipe is then closed, which
/// stops a script that goes on writing).
async fn read_capped(mut pipe: impl AsyncRead + Unpin, cap: usize) -> Option<Vec<u8>> {
    let mut buffer = Vec::new();
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = pipe.read(&mut chunk).await.ok()?;
        if n == 0 {
            return Some(buffer);
        }
        if buffer.len() + n > cap {
            return None;
        }
        buffer.extend_from_slice(chunk.get(..n)?);
    }
}

/// The last `keep` bytes of the pipe (read to its end).
async fn read_tail(mut pipe: impl AsyncRead + Unpin, keep: usize) -> Vec<u8> {
    let mut buffer = Vec::new();
    let mut chunk = vec![0u8; 8192];
    while let Ok(n) = pipe.read(&mut chunk).await {
        let Some(bytes) = chunk.get(..n).filter(|bytes| !bytes.is_empty()) else { break };
        buffer.extend_from_slice(bytes);
        if buffer.len() > 2 * keep {
            buffer.drain(..buffer.len() - keep);
        }
    }
    buffer
}

/// The end of stderr as text, trimmed to [`STDERR_TAIL`] bytes on a character boundary.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let start = text.len().saturating_sub(STDERR_TAIL);
    let start = (start..=text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
    text.get(start..).unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_paths_stay_in_the_package() {
        assert!(check_package_path("./UserData/userdata.py", "x").is_ok());
        assert!(check_package_path("Definitions/../Scripts/sample_script.py", "x").is_ok());
        assert!(check_package_path("../../etc/passwd", "x").is_err());
        assert!(check_package_path("/etc/passwd", "x").is_err());
        assert!(check_package_path("Definitions/../../x.py", "x").is_err());
    }

    #[test]
    fn the_tail_keeps_the_end_on_a_character_boundary() {
        let text = format!("{}é-end", "x".repeat(3000));
        let kept = tail(text.as_bytes());
        assert!(kept.ends_with("é-end") && kept.len() <= STDERR_TAIL);
    }
}
