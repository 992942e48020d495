//! Alarms (SOL003 clauses 7.4.2 and 7.4.3): one file per operation. An alarm belongs to its VNF
//! instance's project; another project's is 404 ([`solgate_core::tenancy`]).

pub mod list;
pub mod modify;
pub mod show;

use serde_json::Value;
use solgate_db::repo::alarms::AlarmRecord;

use crate::sol013::Negotiated;
use crate::state::AppState;

/// The Alarm a client sees: rendered for the negotiated version, `_links` absolute.
pub fn rendered(state: &AppState, negotiated: &Negotiated, record: &AlarmRecord) -> Value {
    let shown = solgate_core::fm::shown(&state.links, record);
    let mut rendered = negotiated.entry.dictionary.render("Alarm", &shown);
    crate::common::scrub::scrub(&mut rendered);
    rendered
}
