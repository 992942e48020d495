DELETE FROM notifications WHERE api = 'vnfpm';
DROP INDEX pm_thresholds_v2_project;
DROP TABLE pm_thresholds_v2;
DROP INDEX pm_reports_v2_job;
DROP TABLE pm_reports_v2;
DROP INDEX pm_jobs_v2_project;
DROP TABLE pm_jobs_v2;
