/**
 * The service's repositories as files (the one place tests find them): every `*-repository.ts` under
 * src/domain, at any depth, with the domain module it belongs to (the first folder under src/domain).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const DOMAIN_DIR = fileURLToPath(new URL("../../src/domain", import.meta.url));

export interface RepositoryFile {
  /** The domain module: `invoices` for src/domain/invoices/collections/collection-repository.ts. */
  module: string;
  /** The path under src/domain. */
  path: string;
  /** The file's name alone. */
  name: string;
  source: string;
}

export function repositoryFiles(): RepositoryFile[] {
  const files: RepositoryFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith("-repository.ts")) {
        const path = relative(DOMAIN_DIR, full).split("\\").join("/");
        files.push({ module: path.split("/")[0] ?? "", path, name: entry.name, source: readFileSync(full, "utf8") });
      }
    }
  };
  walk(DOMAIN_DIR);
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
