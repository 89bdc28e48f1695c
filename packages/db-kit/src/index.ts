export { poolConfig, type AdapterOptions } from "./adapter.js";
export { assertDatabaseName, connectionConfig, databaseUrl, dropDatabase, ensureDatabase, ping } from "./database.js";
export { MigrationError, Migrator, migrationName, readMigrations, type MigrationStatus, type MigratorOptions } from "./migrate.js";
export { prepareDatabase, type PrepareOptions } from "./prepare.js";
export { isUniqueViolation } from "./errors.js";
export { createPool, poolAdapter } from "./pool.js";
export { GroupCommit, type GroupCommitOptions } from "./group-commit.js";
