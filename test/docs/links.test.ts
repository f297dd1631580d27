import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..")
const documents = ["README.md", ...readdirSync(join(root, "docs")).map((file) => join("docs", file))]

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replaceAll(" ", "-")

const anchorsOf = (text: string) => new Set([...text.matchAll(/^#{1,6} (.*)$/gm)].map((match) => slug(match[1] ?? "")))
const withoutCode = (text: string) => text.replace(/```[\s\S]*?```/g, "")

describe("the README and docs/", () => {
  it("link only to files and headings that exist", () => {
    const broken: Array<string> = []
    for (const document of documents) {
      const text = readFileSync(join(root, document), "utf8")
      for (const [, target = ""] of withoutCode(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?|mailto):/.test(target)) continue
        const [path = "", anchor] = target.split("#")
        const file = path === "" ? document : normalize(join(dirname(document), path))
        if (!existsSync(join(root, file))) broken.push(`${document}: ${target} (no such file)`)
        else if (anchor !== undefined && file.endsWith(".md")) {
          if (!anchorsOf(readFileSync(join(root, file), "utf8")).has(anchor)) {
            broken.push(`${document}: ${target} (no such heading)`)
          }
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("are all reachable from the README", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8")
    const unlinked = documents.filter((document) => document !== "README.md" && !readme.includes(`](${document}`))
    expect(unlinked).toEqual([])
  })
})
