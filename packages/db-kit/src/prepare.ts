import { databaseUrl, ensureDatabase } from "./database.js";
import { Migrator } from "./migrate.js";

export type PrepareOptions = {
  serverUrl: string;
  name: string;
  schemaPath: string;
  migrationsDir: string;
  migrate: boolean;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
};

/**
 * Start-up step of every service: create its database when missing and apply
 * pending migrations. Returns the database's connection URL.
 */
export async function prepareDatabase(options: PrepareOptions): Promise<string> {
  const url = databaseUrl(options.serverUrl, options.name);
  const created = await ensureDatabase(options.serverUrl, options.name);
  if (created === "created") options.log?.("database created", { database: options.name });
  if (options.migrate) {
    const migrator = await Migrator.open({ url, schemaPath: options.schemaPath, migrationsDir: options.migrationsDir });
    try {
      const applied = await migrator.deploy();
      if (applied.length > 0) options.log?.("migrations applied", { database: options.name, applied });
    } finally {
      await migrator.close();
    }
  }
  return url;
}
