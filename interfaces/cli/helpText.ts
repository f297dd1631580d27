import { stripVTControlCharacters } from "node:util"
import { LOG_LEVELS } from "./logLevel.js"

/** The widest line a help page prints: readable in a terminal of 100 columns, and in a pager. */
export const HELP_WIDTH = 100

/**
 * What @effect/cli 0.77 says of a value's type above each option's and argument's own text
 * (internal/options.ts and args.ts put it there unconditionally; no setting leaves it out). The
 * usage line shows the type already, and its brackets show what is optional. "One of the
 * following: …" and a path's "An existing file." say more than the type and stay.
 */
const placeholders = new Set([
  "A user-defined piece of text.",
  "A user-defined piece of text that is confidential.",
  "An integer.",
  "A floating point number.",
  "A true or false value.",
  "This setting is optional."
])

/**
 * The options @effect/cli adds to every command. `--wizard` and `--completions` are no part of
 * this CLI's story, `--version` is for the top level only, and `--log-level` is read by the entry
 * point (logLevel.ts) with values of its own: the library's text for it would list a level the
 * CLI refuses. What is left is told once, in globalOptions.
 */
const builtIn = /^(--completions|--log-level|--wizard|--version|\(-h, --help\))(\s|$)/

const globalOptions = [
  "GLOBAL OPTIONS",
  "",
  `--log-level ${LOG_LEVELS.join(" | ")}`,
  "",
  "  The least level a command logs, over SERVICE_LOG_LEVEL; anywhere on the command line.",
  "",
  "-h, --help",
  "",
  "  Show the help of a command: portcullis user roles add --help.",
  ""
]

/**
 * A command two groups down, in the listing of the top-level help: @effect/cli 0.77 prefixes it
 * with its group's path twice ("- user user roles add", internal/commandDescriptor.ts appends
 * the group's full usage to the words before it).
 */
const doubledPath = /^(\s*- )((?:[a-z][a-z-]* )+)\2/

/**
 * A subcommand of a command with options of its own, in the same listing: its parent's options
 * stand between the two names ("- audit [--user ID] … export --since WHEN").
 */
const parentOptions = /^(\s*- [a-z][a-z-]*) (?:\[[^\]]+\] )+(?=[a-z][a-z-]*(?: |$))/

const undoubled = (line: string) => {
  const match = doubledPath.exec(line)
  const once = match === null ? line : `${match[1] ?? ""}${match[2] ?? ""}${line.slice(match[0].length)}`
  return once.replace(parentOptions, "$1 ")
}

const visible = (text: string) => stripVTControlCharacters(text)
const isHeading = (line: string) => /^[A-Z][A-Z ]+$/.test(visible(line).trim())

/** Words up to `width` columns a line, each line after the first indented by `indent`. */
const wrap = (line: string, indent: string, width = HELP_WIDTH): ReadonlyArray<string> => {
  if (visible(line).length <= width) return [line]
  const lead = /^\s*/.exec(line)?.[0] ?? ""
  const out: Array<string> = []
  let current = lead
  for (const word of line.slice(lead.length).split(" ")) {
    const prefix = out.length === 0 ? lead : indent
    if (current !== prefix && visible(`${current} ${word}`).length > width) {
      out.push(current)
      current = indent + word
    } else current = current === prefix ? current + word : `${current} ${word}`
  }
  out.push(current)
  return out
}

/**
 * One line of the command listing ("  - usage<padding>description", padded to the widest usage)
 * becomes the usage, then the description on lines of its own.
 */
const listing = (line: string): ReadonlyArray<string> => {
  const match = /^(\s*- .*?\S) {2,}(\S.*)$/.exec(line)
  if (match === null) return wrap(line, "      ")
  return [...wrap(match[1] ?? "", "        "), ...wrap(`      ${match[2] ?? ""}`, "      "), ""]
}

/** OPTIONS or ARGUMENTS less the built-in options' blocks and the placeholders (each with its blank line). */
const ownOptions = (section: ReadonlyArray<string>) => {
  const kept: Array<string> = []
  let skipping = false
  for (const [at, line] of section.entries()) {
    const text = visible(line)
    if (text !== "" && !text.startsWith(" ")) skipping = builtIn.test(text)
    const afterPlaceholder = text.trim() === "" && placeholders.has(visible(section[at - 1] ?? "").trim())
    if (!skipping && !placeholders.has(text.trim()) && !afterPlaceholder) kept.push(line)
  }
  return kept
}

/** A line wrapped under its own indentation; a usage line's rest under its command. */
const indented = (line: string) => wrap(line, visible(line).startsWith("$ ") ? "    " : (/^\s*/.exec(line)?.[0] ?? ""))

/** The library's title line ("portcullis"), said again by the version line below it ("portcullis 0.2.0"). */
const withoutTitle = (lines: ReadonlyArray<string>) => {
  const title = visible(lines[0] ?? "").trim()
  const next = lines.slice(1).find((line) => visible(line).trim() !== "")
  return /^[a-z-]+$/.test(title) && visible(next ?? "").startsWith(`${title} `) ? lines.slice(2) : lines
}

/**
 * A help text in this CLI's own words: no built-in options but the two that matter (told once,
 * at the end), no type placeholders, no doubled paths, and no line over HELP_WIDTH columns.
 */
export const ownHelp = (text: string) => {
  const sections: Array<{ heading: string; lines: Array<string> }> = [{ heading: "", lines: [] }]
  for (const line of withoutTitle(text.replace(/\s+$/, "").split("\n"))) {
    if (isHeading(line)) sections.push({ heading: visible(line).trim(), lines: [line] })
    else sections.at(-1)?.lines.push(line)
  }
  const out: Array<string> = []
  for (const { heading, lines } of sections) {
    if (heading === "OPTIONS" || heading === "ARGUMENTS") {
      const own = ownOptions(lines.slice(1))
      if (own.some((line) => visible(line).trim() !== "")) out.push(lines[0] ?? "", ...own.flatMap(indented))
    } else if (heading === "COMMANDS") out.push(...lines.map(undoubled).flatMap(listing))
    else out.push(...lines.flatMap(indented))
  }
  const body = out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/\s+$/, "")
  return `${body}\n\n${globalOptions.flatMap((line) => wrap(line, "  ")).join("\n")}`
}
