DROP INDEX vims_default;
DROP INDEX vims_name;
DROP TABLE vims;
