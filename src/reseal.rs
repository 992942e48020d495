//! `solgate reseal`: after a key rotation, seals every stored secret with the current key
//! (`[secrets] key_file` or `SOLGATE_SECRET_KEY`), opening old values with
//! `previous_key_files`. Rows written meanwhile by a running server are left to the next
//! run (each write is guarded); the count of those is reported.

use solgate_core::secrets::{OpenError, SecretBox};
use solgate_db::repo::lcm::{self, LcmMajor};
use solgate_db::repo::list::ListSpec;
use solgate_db::repo::{fm_subscriptions, pkgm_subscriptions, vims, vnf_packages, vnfpm};
use solgate_db::{AnyConnection, Backend, Database, DbError};

const PAGE: i64 = 500;

type PmAll = fn(&mut AnyConnection) -> solgate_db::DbResult<Vec<vnfpm::PmRecord>>;
type PmUpdate = fn(&mut AnyConnection, &vnfpm::PmRecord) -> solgate_db::DbResult<bool>;

/// What a run changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Resealed {
    pub instances: usize,
    pub operations: usize,
    pub subscriptions: usize,
    pub packages: usize,
    /// Registered VIMs (their credentials).
    pub vims: usize,
    /// Rows another process changed while this one ran: run again.
    pub raced: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ResealError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("{what} {id}: {source}")]
    Open { what: &'static str, id: String, source: OpenError },
}

fn open_error(what: &'static str, id: &str) -> impl FnOnce(OpenError) -> ResealError {
    let id = id.to_owned();
    move |source| ResealError::Open { what, id, source }
}

pub fn run(database: &Database, secrets: &SecretBox) -> Result<Resealed, ResealError> {
    let mut conn = database.conn()?;
    let mut done = Resealed::default();
    for major in [LcmMajor::V1, LcmMajor::V2] {
        reseal_instances(&mut conn, secrets, major, &mut done)?;
        reseal_operations(&mut conn, database.backend(), secrets, major, &mut done)?;
        for mut subscription in lcm::all_subscriptions(&mut conn, major)? {
            let Some(authentication) = subscription.authentication.as_mut() else { continue };
            if secrets.reseal(authentication).map_err(open_error("subscription", &subscription.id))? {
                let stored = Some(&*authentication);
                if lcm::update_subscription_authentication(&mut conn, major, &subscription.id, stored)? {
                    done.subscriptions += 1;
                }
            }
        }
    }
    for mut subscription in pkgm_subscriptions::all(&mut conn)? {
        let Some(authentication) = subscription.authentication.as_mut() else { continue };
        if secrets.reseal(authentication).map_err(open_error("VNF package subscription", &subscription.id))? {
            let stored = Some(&*authentication);
            if pkgm_subscriptions::update_authentication(&mut conn, &subscription.id, stored)? {
                done.subscriptions += 1;
            }
        }
    }
    for mut subscription in fm_subscriptions::all(&mut conn)? {
        let Some(authentication) = subscription.authentication.as_mut() else { continue };
        if secrets.reseal(authentication).map_err(open_error("VNF FM subscription", &subscription.id))? {
            let stored = Some(&*authentication);
            if fm_subscriptions::update_authentication(&mut conn, &subscription.id, stored)? {
                done.subscriptions += 1;
            }
        }
    }
    // PM jobs and thresholds carry their callback's credentials as subscriptions do.
    for (what, all, update) in [
        ("PM job", vnfpm::all_jobs as PmAll, vnfpm::update_job as PmUpdate),
        ("threshold", vnfpm::all_thresholds, vnfpm::update_threshold),
    ] {
        for mut record in all(&mut conn)? {
            let Some(authentication) = record.authentication.as_mut() else { continue };
            if secrets.reseal(authentication).map_err(open_error(what, &record.id))? && update(&mut conn, &record)? {
                done.subscriptions += 1;
            }
        }
    }
    for mut vim in vims::list(&mut conn, &vims::VimFilter::default())? {
        if secrets.reseal(&mut vim.body).map_err(open_error("VIM", &vim.id))? && vims::update(&mut conn, &vim)? {
            done.vims += 1;
        }
    }
    let mut after = None;
    loop {
        let spec = ListSpec { after_id: after.clone(), limit: PAGE, ..ListSpec::default() };
        let page = vnf_packages::list(&mut conn, database.backend(), &spec)?;
        for mut package in page.iter().cloned() {
            let Some(source) = package.upload_source.as_mut() else { continue };
            if secrets.reseal(source).map_err(open_error("VNF package", &package.id))? {
                let version = package.row_version;
                if vnf_packages::update(&mut conn, &package, Some(version))? {
                    done.packages += 1;
                } else {
                    done.raced += 1;
                }
            }
        }
        match page.last() {
            Some(last) if page.len() as i64 == PAGE => after = Some(last.id.clone()),
            _ => break,
        }
    }
    Ok(done)
}

fn reseal_instances(
    conn: &mut AnyConnection,
    secrets: &SecretBox,
    major: LcmMajor,
    done: &mut Resealed,
) -> Result<(), ResealError> {
    for mut instance in lcm::all_instances(conn, major)? {
        if secrets.reseal(&mut instance.body).map_err(open_error("VNF instance", &instance.id))? {
            if lcm::update_instance(conn, major, &instance)? {
                done.instances += 1;
            } else {
                done.raced += 1;
            }
        }
    }
    Ok(())
}

fn reseal_operations(
    conn: &mut AnyConnection,
    backend: Backend,
    secrets: &SecretBox,
    major: LcmMajor,
    done: &mut Resealed,
) -> Result<(), ResealError> {
    let mut after = None;
    loop {
        let spec = ListSpec { after_id: after.clone(), limit: PAGE, ..ListSpec::default() };
        let page = lcm::list_ops(conn, backend, major, &spec)?;
        for mut op in page.iter().cloned() {
            let state = op.state().to_owned();
            if secrets.reseal(&mut op.body).map_err(open_error("VNF LCM operation occurrence", &op.id))? {
                let owner = op.owner.clone();
                if lcm::update_op_guarded(conn, major, &op, owner.as_deref(), &state)? {
                    done.operations += 1;
                } else {
                    done.raced += 1;
                }
            }
        }
        match page.last() {
            Some(last) if page.len() as i64 == PAGE => after = Some(last.id.clone()),
            _ => break,
        }
    }
    Ok(())
}
