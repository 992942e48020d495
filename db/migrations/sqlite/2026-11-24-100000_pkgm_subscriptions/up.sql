-- VNF package management subscriptions (SOL005 v2.6.1 clause 9.4.8): shaped like the LCM
-- ones, without verbosity (PkgmSubscription has none).
CREATE TABLE pkgm_subscriptions (
    id TEXT PRIMARY KEY NOT NULL,
    callback_uri TEXT NOT NULL,
    body TEXT NOT NULL,
    authentication TEXT,
    dedup_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    project TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX pkgm_subscriptions_dedup ON pkgm_subscriptions (dedup_key);
CREATE INDEX pkgm_subscriptions_project ON pkgm_subscriptions (project, id);
-- One outbox for every API: a row names the API whose subscription table holds its
-- subscription (rows written before this migration are LCM notifications).
ALTER TABLE notifications ADD COLUMN api TEXT NOT NULL DEFAULT 'vnflcm';
