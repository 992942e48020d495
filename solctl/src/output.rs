//! Printing records and lists as python-tackerclient (cliff) does: an aligned table by
//! default, `-f json|yaml|value`, `-c COLUMN` to pick columns.

use std::io::Write;

use comfy_table::{ContentLineStyle, LineStyle, Table, TableStyle};
use serde_json::{Map, Value};

use crate::cli::Format;

/// cliff's (PrettyTable's) look: `+---+` borders, one line under the heading.
const CLIFF: TableStyle = TableStyle::new()
    .top_border(LineStyle::new('+', '-', '+', '+'))
    .header_lines(ContentLineStyle::new('|', '|', '|'))
    .header_separator(LineStyle::new('+', '-', '+', '+'))
    .content_lines(ContentLineStyle::new('|', '|', '|'))
    .bottom_border(LineStyle::new('+', '-', '+', '+'));

/// The headings tackerclient shows for the attributes of instances, operation
/// occurrences, subscriptions and packages; other attributes show under their own name.
const HEADINGS: &[(&str, &str)] = &[
    ("id", "ID"),
    ("vnfInstanceName", "VNF Instance Name"),
    ("vnfInstanceDescription", "VNF Instance Description"),
    ("vnfdId", "VNFD ID"),
    ("vnfProvider", "VNF Provider"),
    ("vnfProductName", "VNF Product Name"),
    ("vnfSoftwareVersion", "VNF Software Version"),
    ("vnfdVersion", "VNFD Version"),
    ("instantiationState", "Instantiation State"),
    ("instantiatedVnfInfo", "Instantiated Vnf Info"),
    ("vimConnectionInfo", "VIM Connection Info"),
    ("vnfConfigurableProperties", "VNF Configurable Properties"),
    ("vnfPkgId", "VNF Package ID"),
    ("_links", "Links"),
    ("operationState", "Operation State"),
    ("stateEnteredTime", "State Entered Time"),
    ("startTime", "Start Time"),
    ("vnfInstanceId", "VNF Instance ID"),
    ("operation", "Operation"),
    ("isAutomaticInvocation", "Is Automatic Invocation"),
    ("isCancelPending", "Is Cancel Pending"),
    ("cancelMode", "Cancel Mode"),
    ("error", "Error"),
    ("operationParams", "Operation Parameters"),
    ("grantId", "Grant ID"),
    ("resourceChanges", "Resource Changes"),
    ("changedInfo", "Changed Info"),
    ("changedExtConnectivity", "Changed External Connectivity"),
    ("filter", "Filter"),
    ("callbackUri", "Callback URI"),
    ("onboardingState", "Onboarding State"),
    ("operationalState", "Operational State"),
    ("usageState", "Usage State"),
    ("userDefinedData", "User Defined Data"),
    ("softwareImages", "Software Images"),
    ("checksum", "Checksum"),
    ("additionalArtifacts", "Additional Artifacts"),
    // VNF FM, as `openstack vnffm` shows alarms and FM subscriptions.
    ("managedObjectId", "Managed Object Id"),
    ("vnfcInstanceIds", "Vnfc Instance Ids"),
    ("rootCauseFaultyResource", "Root Cause Faulty Resource"),
    ("alarmRaisedTime", "Alarm Raised Time"),
    ("alarmChangedTime", "Alarm Changed Time"),
    ("alarmClearedTime", "Alarm Cleared Time"),
    ("alarmAcknowledgedTime", "Alarm Acknowledged Time"),
    ("ackState", "Ack State"),
    ("perceivedSeverity", "Perceived Severity"),
    ("eventTime", "Event Time"),
    ("eventType", "Event Type"),
    ("faultType", "Fault Type"),
    ("probableCause", "Probable Cause"),
    ("isRootCause", "Is Root Cause"),
    ("correlatedAlarmIds", "Correlated Alarm Ids"),
    ("faultDetails", "Fault Details"),
    // VNF PM, as `openstack vnfpm` shows PM jobs, reports and thresholds.
    ("objectType", "Object Type"),
    ("objectInstanceIds", "Object Instance Ids"),
    ("objectInstanceId", "Object Instance Id"),
    ("subObjectInstanceIds", "Sub Object Instance Ids"),
    ("criteria", "Criteria"),
    ("reports", "Reports"),
    ("entries", "Entries"),
];

pub fn heading(attribute: &str) -> String {
    HEADINGS
        .iter()
        .find(|(name, _)| *name == attribute)
        .map(|(_, heading)| (*heading).to_owned())
        .unwrap_or_else(|| attribute.to_owned())
}

/// tackerclient's package-list headings: `vnfProductName` → `Vnf Product Name`.
pub fn title_case(attribute: &str) -> String {
    if attribute == "_links" {
        return "Links".into();
    }
    let mut words: Vec<String> = Vec::new();
    for c in attribute.chars() {
        match words.last_mut() {
            Some(word) if !c.is_uppercase() => word.push(c),
            _ => words.push(c.to_string()),
        }
    }
    words
        .iter()
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect())
                .unwrap_or_default()
        })
        .collect::<Vec<String>>()
        .join(" ")
}

/// One column: the attribute it reads and its heading.
#[derive(Debug, Clone)]
pub struct Column {
    pub attribute: String,
    pub heading: String,
}

impl Column {
    pub fn new(attribute: &str) -> Column {
        Column { attribute: attribute.to_owned(), heading: heading(attribute) }
    }

    pub fn titled(attribute: &str, heading: &str) -> Column {
        Column { attribute: attribute.to_owned(), heading: heading.to_owned() }
    }
}

/// The columns of a record: every attribute it has, sorted by heading (as openstackclient
/// shows a resource).
pub fn record_columns(object: &Value) -> Vec<Column> {
    let mut columns: Vec<Column> =
        object.as_object().map(|map| map.keys().map(|key| Column::new(key)).collect()).unwrap_or_default();
    columns.sort_by(|a, b| a.heading.cmp(&b.heading));
    columns
}

pub struct Printer {
    pub format: Format,
    pub selected: Vec<String>,
}

impl Printer {
    /// Keeps the `-c` columns, in the order asked; an unknown one is a usage error.
    fn select(&self, columns: Vec<Column>) -> Result<Vec<Column>, String> {
        if self.selected.is_empty() {
            return Ok(columns);
        }
        self.selected
            .iter()
            .map(|wanted| {
                columns
                    .iter()
                    .find(|column| column.heading.eq_ignore_ascii_case(wanted) || column.attribute == *wanted)
                    .cloned()
                    .ok_or_else(|| {
                        format!(
                            "no column '{wanted}'; the columns are: {}",
                            columns.iter().map(|column| column.heading.as_str()).collect::<Vec<_>>().join(", ")
                        )
                    })
            })
            .collect()
    }

    /// One resource (cliff's ShowOne): Field/Value table, or an object keyed by heading.
    pub fn record(&self, out: &mut dyn Write, object: &Value, columns: Vec<Column>) -> Result<(), String> {
        let columns = self.select(columns)?;
        let value_of = |column: &Column| object.get(&column.attribute).cloned().unwrap_or(Value::Null);
        let text = match self.format {
            Format::Table => {
                let mut table = new_table();
                table.set_header(vec!["Field", "Value"]);
                for column in &columns {
                    table.add_row(vec![column.heading.clone(), cell(&value_of(column), true)]);
                }
                format!("{table}\n")
            }
            Format::Json | Format::Yaml => {
                let map: Map<String, Value> =
                    columns.iter().map(|column| (column.heading.clone(), value_of(column))).collect();
                structured(self.format, &Value::Object(map))
            }
            Format::Value => {
                columns.iter().map(|column| format!("{}\n", cell(&value_of(column), false))).collect::<String>()
            }
        };
        out.write_all(text.as_bytes()).map_err(|error| error.to_string())
    }

    /// A list (cliff's Lister).
    pub fn list(&self, out: &mut dyn Write, items: &[Value], columns: Vec<Column>) -> Result<(), String> {
        let columns = self.select(columns)?;
        let value_of = |item: &Value, column: &Column| item.get(&column.attribute).cloned().unwrap_or(Value::Null);
        let text = match self.format {
            Format::Table => {
                let mut table = new_table();
                table.set_header(columns.iter().map(|column| column.heading.clone()).collect::<Vec<_>>());
                for item in items {
                    table
                        .add_row(columns.iter().map(|column| cell(&value_of(item, column), false)).collect::<Vec<_>>());
                }
                if items.is_empty() { String::new() } else { format!("{table}\n") }
            }
            Format::Json | Format::Yaml => {
                let rows: Vec<Value> = items
                    .iter()
                    .map(|item| {
                        Value::Object(
                            columns.iter().map(|column| (column.heading.clone(), value_of(item, column))).collect(),
                        )
                    })
                    .collect();
                structured(self.format, &Value::Array(rows))
            }
            Format::Value => items
                .iter()
                .map(|item| {
                    let cells: Vec<String> =
                        columns.iter().map(|column| cell(&value_of(item, column), false)).collect();
                    format!("{}\n", cells.join(" "))
                })
                .collect(),
        };
        out.write_all(text.as_bytes()).map_err(|error| error.to_string())
    }
}

fn new_table() -> Table {
    let mut table = Table::new();
    table.load_style(CLIFF);
    table
}

/// A value in a cell: strings bare, null empty, structures as JSON (indented in a record).
fn cell(value: &Value, pretty: bool) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Bool(_) | Value::Number(_) => value.to_string(),
        _ if pretty => serde_json::to_string_pretty(value).unwrap_or_default(),
        _ => value.to_string(),
    }
}

fn structured(format: Format, value: &Value) -> String {
    match format {
        Format::Yaml => serde_yaml_ng::to_string(value).unwrap_or_default(),
        _ => format!("{}\n", serde_json::to_string_pretty(value).unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(format: Format, selected: &[&str], items: &[Value], columns: Vec<Column>) -> String {
        let printer = Printer { format, selected: selected.iter().map(|s| (*s).to_owned()).collect() };
        let mut out = Vec::new();
        printer.list(&mut out, items, columns).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lists_as_cliff_prints_them() {
        let items = [json!({"id": "a1", "operationState": "COMPLETED"}), json!({"id": "b22", "operationState": null})];
        let columns = || vec![Column::new("id"), Column::new("operationState")];
        assert_eq!(
            render(Format::Table, &[], &items, columns()),
            "+-----+-----------------+\n\
             | ID  | Operation State |\n\
             +-----+-----------------+\n\
             | a1  | COMPLETED       |\n\
             | b22 |                 |\n\
             +-----+-----------------+\n"
        );
        assert_eq!(render(Format::Value, &["ID"], &items, columns()), "a1\nb22\n");
        assert_eq!(render(Format::Value, &["operationState", "id"], &items, columns()), "COMPLETED a1\n b22\n");
        let json: Value = serde_json::from_str(&render(Format::Json, &[], &items, columns())).unwrap();
        assert_eq!(json[0]["Operation State"], "COMPLETED");
        assert!(render(Format::Yaml, &[], &items, columns()).contains("ID: a1"));
        let printer = Printer { format: Format::Table, selected: vec!["nope".into()] };
        assert!(
            printer
                .list(&mut Vec::new(), &items, columns())
                .unwrap_err()
                .contains("the columns are: ID, Operation State")
        );
    }

    #[test]
    fn headings() {
        assert_eq!(title_case("vnfProductName"), "Vnf Product Name");
        assert_eq!(title_case("id"), "Id");
        assert_eq!(title_case("_links"), "Links");
        assert_eq!(heading("vnfdId"), "VNFD ID");
        assert_eq!(heading("somethingNew"), "somethingNew");
    }
}
