import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The package's version, from the package.json above this module, in dist/ or not: the one place
 * `--version`, the OpenAPI document's `info.version` and the CHANGELOG's latest heading agree on.
 */
export const packageVersion = (() => {
  let folder = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
        name?: string
        version?: string
      }
      if (manifest.name === "portcullis" && manifest.version !== undefined) return manifest.version
    } catch {
      // No manifest here: look further up.
    }
    const parent = dirname(folder)
    if (parent === folder) return "0.0.0"
    folder = parent
  }
})()
