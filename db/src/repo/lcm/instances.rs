//! `vnf_instances_v*`: one implementation for the table of every major.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::cached::cached_update;
use crate::repo::lcm::family::InstanceTable;
use crate::repo::lcm::records::{InstanceIndex, InstanceRecord, RawDocument, RawInstance, Seen};
use crate::repo::list::ListSpec;
use crate::repo::now_text;
use crate::repo::table::{col, page, rows};

/// The instances of one major (see `lcm.rs` for what each does).
pub(crate) trait InstanceStore: Sync {
    fn insert(&self, conn: &mut AnyConnection, record: &InstanceRecord) -> DbResult<()>;
    fn find(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<InstanceRecord>>;
    fn find_raw(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<RawInstance>>;
    fn update(&self, conn: &mut AnyConnection, record: &InstanceRecord) -> DbResult<bool>;
    fn lock(&self, conn: &mut AnyConnection, id: &str) -> DbResult<bool>;
    fn lock_and_find_seen(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<(InstanceRecord, Seen)>>;
    fn delete(&self, conn: &mut AnyConnection, id: &str) -> DbResult<bool>;
    fn list_raw(&self, conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<RawDocument>>;
    fn list_versions(
        &self,
        conn: &mut AnyConnection,
        backend: Backend,
        spec: &ListSpec,
    ) -> DbResult<Vec<(String, i64)>>;
    fn raw_by_ids(&self, conn: &mut AnyConnection, ids: &[String]) -> DbResult<Vec<RawDocument>>;
    fn package_has_instances(&self, conn: &mut AnyConnection, pkg_id: &str) -> DbResult<bool>;
    fn all(&self, conn: &mut AnyConnection) -> DbResult<Vec<InstanceRecord>>;
}

type Row = (String, String, String, String, String, i64, String);

type Columns<T> = (
    <T as InstanceTable>::Id,
    <T as InstanceTable>::VnfPkgId,
    <T as InstanceTable>::Body,
    <T as InstanceTable>::CreatedAt,
    <T as InstanceTable>::UpdatedAt,
    <T as InstanceTable>::RowVersion,
    <T as InstanceTable>::Project,
);

fn columns<T: InstanceTable>() -> Columns<T> {
    Default::default()
}

fn from_row(row: Row) -> DbResult<InstanceRecord> {
    let (id, vnf_pkg_id, body, created_at, updated_at, row_version, project) = row;
    Ok(InstanceRecord {
        id,
        vnf_pkg_id,
        body: serde_json::from_str(&body)?,
        created_at,
        updated_at,
        row_version,
        project,
    })
}

/// What an instance row copies out of its document besides the instantiation state (for
/// filters and indexes; changed only by a modify or a package change).
type DescriptorColumns = (Option<String>, String, String, String, String, String, String);

fn descriptor_columns_of(record: &InstanceRecord) -> DescriptorColumns {
    let index = InstanceIndex::of(&record.body);
    let text = |member: Option<&str>| member.unwrap_or_default().to_owned();
    (
        index.vnf_instance_name.map(str::to_owned),
        text(index.vnfd_id),
        record.vnf_pkg_id.clone(),
        text(index.vnf_provider),
        text(index.vnf_product_name),
        text(index.vnf_software_version),
        text(index.vnfd_version),
    )
}

fn state_of(record: &InstanceRecord) -> String {
    InstanceIndex::of(&record.body).instantiation_state.unwrap_or_default().to_owned()
}

type DescriptorSelection<T> = (
    <T as InstanceTable>::VnfInstanceName,
    <T as InstanceTable>::VnfdId,
    <T as InstanceTable>::VnfPkgId,
    <T as InstanceTable>::VnfProvider,
    <T as InstanceTable>::VnfProductName,
    <T as InstanceTable>::VnfSoftwareVersion,
    <T as InstanceTable>::VnfdVersion,
);

/// On SQLite, whether the stored row's descriptor columns and state are those of the
/// record (`None`: no such row).
fn unchanged_columns<T: InstanceTable>(
    conn: &mut AnyConnection,
    record: &InstanceRecord,
    descriptor: &DescriptorColumns,
    state: &str,
) -> DbResult<Option<(bool, bool)>> {
    let stored = rows::<T>()
        .filter(col::<T::Id>().eq(&record.id))
        .select((DescriptorSelection::<T>::default(), col::<T::InstantiationState>()))
        .get_result::<(DescriptorColumns, String)>(conn)
        .optional()?;
    Ok(stored.map(|(stored_descriptor, stored_state)| (&stored_descriptor == descriptor, stored_state == state)))
}

impl<T: InstanceTable> InstanceStore for T {
    fn insert(&self, conn: &mut AnyConnection, record: &InstanceRecord) -> DbResult<()> {
        let (name, vnfd_id, vnf_pkg_id, provider, product_name, software_version, vnfd_version) =
            descriptor_columns_of(record);
        diesel::insert_into(T::default())
            .values((
                col::<T::Id>().eq(&record.id),
                col::<T::VnfInstanceName>().eq(name),
                col::<T::VnfdId>().eq(vnfd_id),
                col::<T::VnfPkgId>().eq(vnf_pkg_id),
                col::<T::VnfProvider>().eq(provider),
                col::<T::VnfProductName>().eq(product_name),
                col::<T::VnfSoftwareVersion>().eq(software_version),
                col::<T::VnfdVersion>().eq(vnfd_version),
                col::<T::InstantiationState>().eq(state_of(record)),
                col::<T::Body>().eq(record.body.to_string()),
                col::<T::CreatedAt>().eq(&record.created_at),
                col::<T::UpdatedAt>().eq(&record.updated_at),
                col::<T::RowVersion>().eq(record.row_version),
                col::<T::Project>().eq(&record.project),
            ))
            .execute(conn)?;
        Ok(())
    }

    // Lookups of one row use `get_result`, not `first`: the `LIMIT ?` of `first` has SQLite
    // prepare the cached statement again on every run (the planner looks at a bound LIMIT,
    // so binding it again expires the statement), which cost more than the query itself.
    fn find(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<InstanceRecord>> {
        rows::<T>()
            .filter(col::<T::Id>().eq(id))
            .select(columns::<T>())
            .get_result::<Row>(conn)
            .optional()?
            .map(from_row)
            .transpose()
    }

    fn find_raw(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<RawInstance>> {
        Ok(rows::<T>()
            .filter(col::<T::Id>().eq(id))
            .select((col::<T::Id>(), col::<T::Body>(), col::<T::RowVersion>(), col::<T::Project>()))
            .get_result::<(String, String, i64, String)>(conn)
            .optional()?
            .map(|(id, body, row_version, project)| RawInstance { id, body, row_version, project }))
    }

    fn update(&self, conn: &mut AnyConnection, record: &InstanceRecord) -> DbResult<bool> {
        let (descriptor, state) = (descriptor_columns_of(record), state_of(record));
        let by_id = col::<T::Id>().eq(&record.id);
        let body = record.body.to_string();
        let (updated_at, row_version) = (now_text(), col::<T::RowVersion>() + 1);
        // SQLite rewrites an index entry whenever its column is SET, same value or not: one
        // page more in the commit for each. Most updates (an LCM operation's result) change
        // only the document and perhaps the instantiation state, so SQLite is told only
        // those. PostgreSQL compares values itself (a HOT update), so it is spared the read.
        // `Some((descriptor unchanged, state unchanged))` on SQLite, `None` on PostgreSQL.
        let unchanged = if let AnyConnection::Sqlite(_) = conn {
            let Some(unchanged) = unchanged_columns::<T>(conn, record, &descriptor, &state)? else { return Ok(false) };
            Some(unchanged)
        } else {
            None
        };
        let document =
            (col::<T::Body>().eq(body), col::<T::UpdatedAt>().eq(updated_at), col::<T::RowVersion>().eq(row_version));
        let changed = match unchanged {
            Some((true, true)) => cached_update!(T::default(), by_id, document).execute(conn)?,
            Some((true, false)) => {
                let set = (col::<T::InstantiationState>().eq(state), document);
                cached_update!(T::default(), by_id, set).execute(conn)?
            }
            _ => {
                let (name, vnfd_id, vnf_pkg_id, provider, product_name, software_version, vnfd_version) = descriptor;
                let set = (
                    col::<T::VnfInstanceName>().eq(name),
                    col::<T::VnfdId>().eq(vnfd_id),
                    col::<T::VnfPkgId>().eq(vnf_pkg_id),
                    col::<T::VnfProvider>().eq(provider),
                    col::<T::VnfProductName>().eq(product_name),
                    col::<T::VnfSoftwareVersion>().eq(software_version),
                    col::<T::VnfdVersion>().eq(vnfd_version),
                    col::<T::InstantiationState>().eq(state),
                    document,
                );
                cached_update!(T::default(), by_id, set).execute(conn)?
            }
        };
        Ok(changed > 0)
    }

    fn lock(&self, conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
        let lock = (col::<T::RowVersion>().eq(col::<T::RowVersion>() + 1),);
        let locked = cached_update!(T::default(), col::<T::Id>().eq(id), lock).execute(conn)?;
        Ok(locked > 0)
    }

    fn lock_and_find_seen(&self, conn: &mut AnyConnection, id: &str) -> DbResult<Option<(InstanceRecord, Seen)>> {
        // SQLite answers in process: its two statements stay prepared, where an UPDATE with
        // RETURNING is compiled afresh on every call. PostgreSQL saves a round trip.
        if let AnyConnection::Sqlite(_) = conn {
            let instance = if self.lock(conn, id)? { self.find(conn, id)? } else { None };
            return Ok(instance.map(|instance| (instance, Seen { subscription_generation: None })));
        }
        let generation = diesel::dsl::sql::<Nullable<BigInt>>(T::SUBSCRIPTION_GENERATION);
        let Some((row, generation)) = diesel::update(rows::<T>().filter(col::<T::Id>().eq(id)))
            .set(col::<T::RowVersion>().eq(col::<T::RowVersion>() + 1))
            .returning((columns::<T>(), generation))
            .get_result::<(Row, Option<i64>)>(conn)
            .optional()?
        else {
            return Ok(None);
        };
        Ok(Some((from_row(row)?, Seen { subscription_generation: generation })))
    }

    fn delete(&self, conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
        Ok(diesel::delete(rows::<T>().filter(col::<T::Id>().eq(id))).execute(conn)? > 0)
    }

    fn list_raw(&self, conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<RawDocument>> {
        let query = rows::<T>().select((col::<T::Id>(), col::<T::RowVersion>(), col::<T::Body>())).into_boxed();
        Ok(page::<T, _, T::Id, T::Project>(query, backend, spec)
            .load::<(String, i64, String)>(conn)?
            .into_iter()
            .map(|(id, version, body)| RawDocument { id, stamp: version.to_string(), body })
            .collect())
    }

    fn list_versions(
        &self,
        conn: &mut AnyConnection,
        backend: Backend,
        spec: &ListSpec,
    ) -> DbResult<Vec<(String, i64)>> {
        let query = rows::<T>().select((col::<T::Id>(), col::<T::RowVersion>())).into_boxed();
        Ok(page::<T, _, T::Id, T::Project>(query, backend, spec).load(conn)?)
    }

    fn raw_by_ids(&self, conn: &mut AnyConnection, ids: &[String]) -> DbResult<Vec<RawDocument>> {
        let mut documents = Vec::with_capacity(ids.len());
        // SQLite binds one variable per id and allows 32,766 per statement; a list of all
        // records can miss more than that.
        for chunk in ids.chunks(500) {
            let rows = rows::<T>()
                .filter(col::<T::Id>().eq_any(chunk))
                .select((col::<T::Id>(), col::<T::RowVersion>(), col::<T::Body>()))
                .load::<(String, i64, String)>(conn)?;
            documents.extend(rows.into_iter().map(|(id, version, body)| RawDocument {
                id,
                stamp: version.to_string(),
                body,
            }));
        }
        Ok(documents)
    }

    fn package_has_instances(&self, conn: &mut AnyConnection, pkg_id: &str) -> DbResult<bool> {
        let using = rows::<T>().filter(col::<T::VnfPkgId>().eq(pkg_id));
        Ok(diesel::select(diesel::dsl::exists(using)).get_result(conn)?)
    }

    fn all(&self, conn: &mut AnyConnection) -> DbResult<Vec<InstanceRecord>> {
        rows::<T>()
            .select(columns::<T>())
            .order(col::<T::Id>().asc())
            .load::<Row>(conn)?
            .into_iter()
            .map(from_row)
            .collect()
    }
}
