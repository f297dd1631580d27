import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { describeSettings } from "../../config/Settings.js"
import { repositoryRoot } from "../support/sourceFiles.js"

/**
 * A setting in a shell snippet is read only under its SERVICE_ name: `MAILER=console` beside
 * `SERVICE_…` variables is silently ignored (the mail then goes nowhere). Prose may name a
 * setting short; a command must not.
 */
const settings = new Set(describeSettings().map((setting) => setting.name.replace(/^SERVICE_/, "")))
// PORT is read bare too (hosting platforms set it); README: Settings.
settings.delete("PORT")

const documents = [
  "README.md",
  ...readdirSync(join(repositoryRoot, "docs"))
    .filter((file) => file.endsWith(".md"))
    .map((file) => `docs/${file}`)
]

/** The lines of each fenced block whose language is a shell's (or none), with the block's file and line. */
const shellLines = (file: string) => {
  const text = readFileSync(join(repositoryRoot, file), "utf8").split("\n")
  const found: Array<{ readonly where: string; readonly line: string }> = []
  let shell = false
  let fenced = false
  for (const [index, line] of text.entries()) {
    const fence = /^\s*```(\w*)/.exec(line)
    if (fence !== null) {
      fenced = !fenced
      shell = fenced && ["", "sh", "bash", "shell", "console", "zsh"].includes(fence[1] ?? "")
      continue
    }
    if (shell) found.push({ where: `${file}:${index + 1}`, line })
  }
  return found
}

describe("the docs' shell snippets", () => {
  it("set every setting by its SERVICE_ name", () => {
    const bare = documents.flatMap((file) =>
      shellLines(file).flatMap(({ where, line }) =>
        [...line.matchAll(/(?:^|[\s;(])([A-Z][A-Z0-9_]*)=/g)]
          .map((match) => match[1] ?? "")
          .filter((name) => settings.has(name))
          .map((name) => `${where}: ${name}`)
      )
    )
    expect(bare).toEqual([])
  })
})
