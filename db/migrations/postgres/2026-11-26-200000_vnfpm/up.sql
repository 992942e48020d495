-- VNF performance management (SOL003 clause 6, API major 2): PM jobs, their performance
-- reports and thresholds. `body` is the PmJob / Threshold document without `_links` (its
-- private part holds the job's report references and the threshold's crossing state);
-- `authentication` keeps the callback's credentials sealed, apart from what responses show.
CREATE TABLE pm_jobs_v2 (
    id TEXT PRIMARY KEY NOT NULL,
    object_type TEXT NOT NULL,
    callback_uri TEXT NOT NULL,
    body TEXT NOT NULL,
    authentication TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    row_version BIGINT NOT NULL DEFAULT 0,
    project TEXT NOT NULL DEFAULT ''
);
CREATE INDEX pm_jobs_v2_project ON pm_jobs_v2 (project, id);
-- One PerformanceReport (`{"entries": [...]}`) per row, of one PM job.
CREATE TABLE pm_reports_v2 (
    id TEXT PRIMARY KEY NOT NULL,
    job_id TEXT NOT NULL,
    ready_time TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX pm_reports_v2_job ON pm_reports_v2 (job_id, ready_time);
CREATE TABLE pm_thresholds_v2 (
    id TEXT PRIMARY KEY NOT NULL,
    object_type TEXT NOT NULL,
    object_instance_id TEXT NOT NULL,
    callback_uri TEXT NOT NULL,
    body TEXT NOT NULL,
    authentication TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    row_version BIGINT NOT NULL DEFAULT 0,
    project TEXT NOT NULL DEFAULT ''
);
CREATE INDEX pm_thresholds_v2_project ON pm_thresholds_v2 (project, id);
