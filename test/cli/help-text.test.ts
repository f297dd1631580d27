import { describe, expect, it } from "vitest"
import { HELP_WIDTH, ownHelp } from "../../interfaces/cli/helpText.js"

/** A help page as @effect/cli 0.77 prints it: built-in options, placeholders, a two-column listing. */
const libraryHelp = `portcullis

portcullis 0.2.0

USAGE

$ portcullis user update --email EMAIL|--id ID [--active true | false] [--verified true | false] [--superuser true | false]

DESCRIPTION

${"Change a user's flags and print the user; ".repeat(5)}

ARGUMENTS

<ROLE>

  A user-defined piece of text.

  A role name.

OPTIONS

--email EMAIL

  A user-defined piece of text.

  The user's email address.

  This setting is optional.

--completions sh | bash | fish | zsh

  One of the following: sh, bash, fish, zsh

  Generate a completion script for a specific shell.

--log-level all | trace | debug | info | warning | error | fatal | none

  Sets the minimum log level for a command.

(-h, --help)

  Show the help documentation for a command.

--wizard

  Start wizard mode for a command.

--version

  Show the version of the application.

COMMANDS

  - serve [--config file]${" ".repeat(100)}Serve the HTTP API.
  - audit [--user ID] [--limit integer] export --since WHEN${" ".repeat(70)}Print the audit log.
  - check [--json]${" ".repeat(107)}${"Print every SERVICE_ setting. ".repeat(5)}
`

describe("ownHelp", () => {
  const help = ownHelp(libraryHelp)

  it("leaves out the options the library adds to every command, and its placeholders", () => {
    for (const noise of [
      "--completions",
      "--wizard",
      "--version",
      "all |",
      "A user-defined",
      "This setting is optional"
    ]) {
      expect(help, noise).not.toContain(noise)
    }
    expect(help).toContain("--email EMAIL\n\n  The user's email address.")
    expect(help).toContain("<ROLE>\n\n  A role name.")
  })

  it("tells --log-level with the levels the CLI takes, and --help, once", () => {
    expect(help).toContain("GLOBAL OPTIONS\n\n--log-level trace | debug | info | warning | error | fatal | none\n")
    expect(help.match(/--log-level/g)).toHaveLength(1)
    expect(help).toContain("-h, --help")
  })

  it("keeps every line within the width, the listing's descriptions under their commands", () => {
    for (const line of help.split("\n")) expect(line.length, line).toBeLessThanOrEqual(HELP_WIDTH)
    expect(help).toContain("  - serve [--config file]\n      Serve the HTTP API.\n")
    expect(help).toContain("  - audit export --since WHEN\n      Print the audit log.\n")
    expect(help).toContain("$ portcullis user update --email EMAIL|--id ID [--active true | false]")
    expect(help).toMatch(/\n {4}\[--superuser true \| false\]\n/)
  })

  it("names the program once, in its version line", () => {
    expect(help.startsWith("portcullis 0.2.0\n\nUSAGE\n")).toBe(true)
  })

  it("drops an OPTIONS heading left with nothing under it", () => {
    const top = ownHelp("USAGE\n\n$ portcullis\n\nOPTIONS\n\n--wizard\n\n  Start wizard mode for a command.\n")
    expect(top).not.toMatch(/^OPTIONS$/m)
  })
})
