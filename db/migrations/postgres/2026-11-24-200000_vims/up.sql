-- The VIM registry (Tacker's /v1.0/vims): one row per registered VIM. `body` is the VIM
-- document with its credentials sealed; a project has at most one default VIM.
CREATE TABLE vims (
    id TEXT PRIMARY KEY NOT NULL,
    project TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    vim_type TEXT NOT NULL,
    is_default BOOLEAN NOT NULL DEFAULT FALSE,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
);
CREATE UNIQUE INDEX vims_name ON vims (project, name);
CREATE UNIQUE INDEX vims_default ON vims (project) WHERE is_default;
