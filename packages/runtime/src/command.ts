import { createPool, databaseUrl } from "@gateway/db-kit";
import { createLogger, type Logger } from "@gateway/logger";
import type pg from "pg";

type CommandEnv = { LOG_LEVEL: string; DATABASE_URL: string; DATABASE_NAME: string };

/**
 * A service's one-off maintenance command (the key rotation's `reencrypt-keys`):
 * `--help` prints `usage` and exits 0 before anything is read; otherwise the
 * service's own environment, a logger for `component`, and a small pool on its
 * database for `run`. `run` answers whether everything succeeded (exit code 0, else
 * 1); the database is closed in every case.
 */
export async function runCommand<E extends CommandEnv, P extends { $disconnect(): Promise<void> }>(options: {
  service: string;
  component: string;
  usage: string;
  loadEnv(source: NodeJS.ProcessEnv): E;
  createPrisma(pool: pg.Pool): P;
  run(c: { env: E; prisma: P; logger: Logger }): Promise<boolean>;
}): Promise<void> {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    console.log(options.usage);
    process.exit(0);
  }
  const env = options.loadEnv(process.env);
  const logger = createLogger({ service: options.service, level: env.LOG_LEVEL }).child({ component: options.component });
  const prisma = options.createPrisma(createPool(databaseUrl(env.DATABASE_URL, env.DATABASE_NAME), { poolSize: 2 }));
  try {
    process.exitCode = (await options.run({ env, prisma, logger })) ? 0 : 1;
  } finally {
    await prisma.$disconnect();
  }
}
