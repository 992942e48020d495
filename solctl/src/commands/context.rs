//! What every command group shares: the client and printer, request files, `--wait`.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};
use solgate_client::records::{InstanceView, OpOccView};
use solgate_client::{Accepted, Client, WaitOptions};

use crate::Failure;
use crate::cli::{Format, Wait};
use crate::output::{Column, Printer, record_columns};

pub(super) type Outcome = Result<(), Failure>;

pub(super) struct Context {
    pub client: Client,
    pub printer: Printer,
}

pub(super) fn read_json(path: &Path) -> Result<Value, Failure> {
    let text = std::fs::read_to_string(path).map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))?;
    serde_json::from_str(&text).map_err(|error| Failure::Usage(format!("{}: not JSON: {error}", path.display())))
}

pub(super) fn read_object(path: &Path) -> Result<Map<String, Value>, Failure> {
    match read_json(path)? {
        Value::Object(map) => Ok(map),
        _ => Err(Failure::Usage(format!("{}: a JSON object is expected", path.display()))),
    }
}

/// `KEY=VALUE` options as a JSON object of strings; `None` when there are none.
pub(super) fn key_values(pairs: &[String]) -> Result<Option<Map<String, Value>>, Failure> {
    if pairs.is_empty() {
        return Ok(None);
    }
    pairs
        .iter()
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), Value::String(value.to_owned()))),
            _ => Err(Failure::Usage(format!("'{pair}': KEY=VALUE expected"))),
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

pub(super) fn write_output(file: Option<&Path>, bytes: &[u8]) -> Result<(), Failure> {
    match file {
        Some(path) => {
            std::fs::write(path, bytes).map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))
        }
        None => std::io::stdout().write_all(bytes).map_err(|error| Failure::Failed(error.to_string())),
    }
}

/// What a `--wait` expects the operation to end in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Expect {
    Completed,
    RolledBack,
    /// A cancelled operation stops in FAILED_TEMP.
    FailedTemp,
}

impl Expect {
    fn state(self) -> &'static str {
        match self {
            Expect::Completed => "COMPLETED",
            Expect::RolledBack => "ROLLED_BACK",
            Expect::FailedTemp => "FAILED_TEMP",
        }
    }
}

fn describe_error(op: &OpOccView) -> String {
    let Some(error) = &op.error else { return String::new() };
    let title = error.title.as_deref().unwrap_or("Error");
    let status = error.status.map(|status| format!(" ({status})")).unwrap_or_default();
    let detail = error.detail.as_deref().unwrap_or_default();
    format!(": {title}{status}: {detail}")
}

/// What `-f json|yaml|value` prints for an accepted task nobody waited for.
#[derive(Serialize)]
struct AcceptedView<'a> {
    id: Option<&'a str>,
    location: &'a Option<String>,
}

/// tackerclient's show columns of an instance: `instantiatedVnfInfo` only when
/// INSTANTIATED; every other attribute it has.
pub(super) fn instance_columns(instance: &Value) -> Vec<Column> {
    let mut columns = record_columns(instance);
    if InstanceView::of(instance).instantiation_state.as_deref() != Some("INSTANTIATED") {
        columns.retain(|column| column.attribute != "instantiatedVnfInfo");
    }
    columns
}

pub(super) fn op_columns(op: &Value) -> Vec<Column> {
    record_columns(op)
}

/// A spinner on a terminal (stderr), nothing otherwise.
pub(super) fn progress(tty: bool, template: Option<&str>) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    if tty {
        if let Some(template) = template {
            bar.set_style(
                indicatif::ProgressStyle::with_template(template)
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
        }
        bar.enable_steady_tick(Duration::from_millis(120));
    }
    bar
}

/// Shows a state line: on the spinner on a terminal, else once per change.
pub(super) fn report(tty: bool, bar: &indicatif::ProgressBar, last: &mut String, line: String) {
    if tty {
        bar.set_message(line);
    } else if line != *last {
        eprintln!("{line}");
        *last = line;
    }
}

impl Context {
    pub(super) fn print(&self, object: &Value, columns: Vec<Column>) -> Outcome {
        self.printer.record(&mut std::io::stdout().lock(), object, columns).map_err(Failure::Usage)
    }

    pub(super) fn print_list(&self, items: &[Value], columns: Vec<Column>) -> Outcome {
        self.printer.list(&mut std::io::stdout().lock(), items, columns).map_err(Failure::Usage)
    }

    /// A message for people; left out with `-f json|yaml|value`, where stdout is data.
    pub(super) fn say(&self, message: &str) {
        if self.printer.format == Format::Table {
            println!("{message}");
        }
    }

    /// Follows the occurrence of an accepted task until it settles; a progress line on a
    /// terminal, one line per state change otherwise (stderr either way).
    pub(super) async fn wait_operation(
        &self,
        href: &str,
        since: Option<&str>,
        wait: Wait,
        expect: Expect,
    ) -> Result<Value, Failure> {
        let started = Instant::now();
        let tty = std::io::stderr().is_terminal();
        let bar = progress(tty, Some("{spinner} {msg} [{elapsed}]"));
        let mut last = String::new();
        let options = WaitOptions { timeout: Duration::from_secs(wait.timeout), poll: Duration::from_millis(300) };
        let result = self
            .client
            .wait_for_operation(href, since, options, |op| {
                let op = OpOccView::of(op);
                let line = format!(
                    "{} {}: {}",
                    op.operation.as_deref().unwrap_or("operation"),
                    op.id.as_deref().unwrap_or(href),
                    op.operation_state.as_deref().unwrap_or("?")
                );
                report(tty, &bar, &mut last, line);
            })
            .await;
        bar.finish_and_clear();
        let value = result?;
        let op = OpOccView::of(&value);
        let state = op.operation_state.as_deref().unwrap_or("?");
        let summary = format!(
            "Operation {} {} ended {state} after {:.1} s",
            op.id.as_deref().unwrap_or(href),
            op.operation.as_deref().unwrap_or_default(),
            started.elapsed().as_secs_f64()
        );
        if state != expect.state() {
            return Err(Failure::Failed(format!("{summary}{}", describe_error(&op))));
        }
        self.say(&format!("{summary}."));
        Ok(value)
    }

    pub(super) async fn after_task(&self, accepted: &Accepted, message: &str, wait: Wait) -> Outcome {
        let op = accepted.op_id().map(|id| format!(" (operation {id})")).unwrap_or_default();
        self.say(&format!("{message}{op}."));
        if wait.wait {
            let href = accepted.location.as_deref().ok_or_else(|| {
                Failure::Failed("the server named no operation occurrence (Location) to wait for".into())
            })?;
            let op = self.wait_operation(href, None, wait, Expect::Completed).await?;
            if self.printer.format != Format::Table {
                self.print(&op, op_columns(&op))?;
            }
        } else if self.printer.format != Format::Table {
            let view = AcceptedView { id: accepted.op_id(), location: &accepted.location };
            self.print(&solgate_client::records::to_body(&view), vec![Column::new("id")])?;
        }
        Ok(())
    }

    /// Deletes each of `ids`, going on after a failure, and says how it went.
    pub(super) async fn delete_each(
        &self,
        what: &str,
        ids: &[String],
        delete: impl AsyncFn(&str) -> solgate_client::Result<()>,
    ) -> Outcome {
        let mut failures = Vec::new();
        for id in ids {
            if let Err(error) = delete(id).await {
                failures.push(format!("{id}: {}", Failure::from(error)));
            }
        }
        if failures.is_empty() {
            match ids {
                [one] => self.say(&format!("{what} '{one}' is deleted successfully")),
                _ => self.say(&format!("All specified {what}s are deleted successfully")),
            }
            return Ok(());
        }
        let deleted = ids.len() - failures.len();
        Err(Failure::Failed(format!(
            "failed to delete {} of {} {what}(s) ({deleted} deleted):\n  {}",
            failures.len(),
            ids.len(),
            failures.join("\n  ")
        )))
    }
}
