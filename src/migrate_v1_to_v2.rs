//! `solgate migrate-v1-to-v2`: copies VNF instances of the v1 API (SOL003 v2.6.1 shapes,
//! `*_v1` tables) and their operation history into the v2 tables (v3.3.1 shapes), so that
//! NFVOs moving to v2 keep managing them. Instances with an operation in flight (or in
//! FAILED_TEMP) are skipped: finish or fail the operation first. Idempotent: instances
//! already in v2 are left alone. `--dry-run` reports and changes nothing.

use std::fmt;

use solgate_core::convert;
use solgate_db::repo::lcm::{self, LcmMajor, OpOccRecord};
use solgate_db::repo::list::ListSpec;
use solgate_db::{AnyConnection, Database, DbError, write_transaction};
use solgate_sol013::{ColumnPredicate, FilterOp, TypedValue};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Copied (or, in a dry run, would be).
    Copied {
        operations: usize,
        dry_run: bool,
    },
    AlreadyInV2,
    SkippedInFlight {
        operation: String,
        state: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub instance_id: String,
    pub name: String,
    pub state: String,
    pub outcome: Outcome,
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match &self.outcome {
            Outcome::Copied { operations, dry_run } => {
                format!("{} with {operations} operation occurrence(s)", if *dry_run { "would copy" } else { "copied" })
            }
            Outcome::AlreadyInV2 => "already in v2, unchanged".to_owned(),
            Outcome::SkippedInFlight { operation, state } => {
                format!("skipped: operation {operation} is {state}; finish or fail it first")
            }
        };
        write!(f, "{} {:<24} {:<17} {}", self.instance_id, self.name, self.state, what)
    }
}

fn operations_of(
    conn: &mut AnyConnection,
    backend: solgate_db::Backend,
    instance_id: &str,
) -> Result<Vec<OpOccRecord>, DbError> {
    let spec = ListSpec {
        predicates: vec![ColumnPredicate {
            column: "vnf_instance_id",
            op: FilterOp::Eq,
            values: vec![TypedValue::Text(instance_id.to_owned())],
        }],
        after_id: None,
        limit: i64::MAX,
        project: None,
    };
    lcm::list_ops(conn, backend, LcmMajor::V1, &spec)
}

/// Plans (and unless `dry_run`, performs) the migration; one line per v1 instance.
pub fn run(database: &Database, dry_run: bool) -> Result<Vec<Line>, DbError> {
    let mut conn = database.conn()?;
    let backend = database.backend();
    let mut lines = Vec::new();
    for instance in lcm::all_instances(&mut conn, LcmMajor::V1)? {
        let line = write_transaction(&mut conn, |conn| {
            let mut line = Line {
                instance_id: instance.id.clone(),
                name: instance.body["vnfInstanceName"].as_str().unwrap_or("-").to_owned(),
                state: instance.instantiation_state().to_owned(),
                outcome: Outcome::AlreadyInV2,
            };
            if lcm::find_instance(conn, LcmMajor::V2, &instance.id)?.is_some() {
                return Ok::<_, DbError>(line);
            }
            if let Some(op) = lcm::in_flight_op(conn, LcmMajor::V1, &instance.id)? {
                line.outcome = Outcome::SkippedInFlight {
                    operation: op.operation().map_or("", |operation| operation.name()).to_owned(),
                    state: op.state().to_owned(),
                };
                return Ok(line);
            }
            let operations = operations_of(conn, backend, &instance.id)?;
            line.outcome = Outcome::Copied { operations: operations.len(), dry_run };
            if !dry_run {
                let mut copy = instance.clone();
                copy.body = convert::instance_to_v2(&instance.body);
                lcm::insert_instance(conn, LcmMajor::V2, &copy)?;
                for op in operations {
                    let mut op = op;
                    op.body = convert::op_occ_to_v2(&op.body);
                    op.owner = None;
                    op.pending_action = None;
                    lcm::insert_op(conn, LcmMajor::V2, &op)?;
                }
            }
            Ok(line)
        })?;
        lines.push(line);
    }
    Ok(lines)
}
