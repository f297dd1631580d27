import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"

/** The repository's root, for the tests that read its own files. */
export const repositoryRoot = join(import.meta.dirname, "..", "..")

/** The files under `path` (or `path` itself) whose names match `names`, installed and built code left out. */
export const sourceFiles = (path: string, names: RegExp = /\.ts$/): ReadonlyArray<string> =>
  statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((entry) => entry !== "node_modules" && entry !== "dist")
        .flatMap((entry) => sourceFiles(join(path, entry), names))
    : names.test(path)
      ? [path]
      : []
