import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { lines, type Run, runCliInProcess, runProcess } from "../support/cliRun.js"
import { cleanEnv, cli, killAll, startServer, temporaryDatabase } from "../support/processes.js"

afterAll(killAll)

/** util-linux `script`, if installed, to run the CLI on a pseudo-terminal. */
const script = await runProcess("script", ["--version"]).catch(() => undefined)

const ansi = new RegExp(`${String.fromCharCode(27)}\\[`)

/** Every command with options of its own, by its path. */
const commands = [
  ["serve"],
  ["migrate"],
  ["create-superuser"],
  ["user", "list"],
  ["user", "update"],
  ["user", "set-password"],
  ["user", "roles", "add"],
  ["user", "roles", "remove"],
  ["role", "grant"],
  ["role", "list"],
  ["audit"],
  ["audit", "export"],
  ["client", "add"],
  ["resource", "add"],
  ["prune"],
  ["openapi"],
  ["check"],
  ["keygen"]
]

/** The library's own words for an option's type, which say nothing of what it is for. */
const placeholder =
  /^(A user-defined piece of text( that is confidential)?\.|One of the following: .*|This setting is optional\.|An integer\.|A true or false value\.|An existing file\.|This option has a default value: .*|This setting is optional\. Defaults to .*)$/

/** What @effect/cli says of a value's type, whatever the option is for. */
const typePlaceholder =
  /^(A user-defined piece of text( that is confidential)?|An integer|A floating point number|A true or false value)\.$/

/** The command paths of the top-level help's listing: each line's words before its options. */
const listedPaths = (help: string) =>
  lines(help.split("\nCOMMANDS\n")[1]?.split("\nGLOBAL OPTIONS\n")[0] ?? "")
    .filter((line) => /^\s*- /.test(line))
    .map((line) => {
      const words = line.replace(/^\s*- /, "").split(" ")
      const options = words.findIndex((word) => /^[-[<]/.test(word))
      return words.slice(0, options === -1 ? undefined : options).join(" ")
    })

/** The help text of each option block of OPTIONS and ARGUMENTS, but the built-in ones. */
const ownOptions = (help: string) => {
  const blocks = help.split(/\n(?=--|<|\(-h)/)
  return blocks
    .filter((block) => /^(--|<)/.test(block))
    .filter((block) => !/^--(completions|log-level|wizard|version)\b/.test(block))
    .map((block) => ({
      name: block.split("\n")[0] ?? "",
      text: lines(block)
        .slice(1)
        .map((line) => line.trim())
    }))
}

describe("portcullis --help", () => {
  /**
   * Each command's help, to a stream that is no terminal (as piped), run once for the tests
   * below; in this process, since the help is the program's answer (the terminal's colours, below,
   * are the process's).
   */
  const helps = new Map<string, Run>()
  beforeAll(async () => {
    for (const path of [[], ...commands]) helps.set(path.join(" "), await runCliInProcess([...path, "--help"], {}))
  }, 300_000)

  it("has no ANSI codes when piped, and shows each command's full path in its usage", () => {
    expect(helps.get("")?.stdout).not.toMatch(ansi)
    for (const path of commands) {
      const run = helps.get(path.join(" "))
      expect(run?.status, path.join(" ")).toBe(0)
      expect(run?.stdout, path.join(" ")).not.toMatch(ansi)
      expect(run?.stdout, path.join(" ")).toContain(`$ portcullis ${path.join(" ")}`)
    }
  })

  it("describes every command and every option in its own words; the stores' variables said once, at the top", () => {
    const top = helps.get("")?.stdout ?? ""
    for (const name of ["SERVICE_DATABASE_URL", "SERVICE_REDIS_URL", "SERVICE_USER_ID_TYPE"])
      expect(top).toContain(name)
    expect(top).not.toContain("Works on the stores serve uses")
    for (const path of commands) {
      const help = helps.get(path.join(" "))?.stdout ?? ""
      const description = help.split("DESCRIPTION")[1]?.split(/\n(OPTIONS|ARGUMENTS)\n/)[0] ?? ""
      expect(description.trim(), path.join(" ")).not.toBe("")
      expect(description, path.join(" ")).not.toContain("SERVICE_DATABASE_URL, SERVICE_REDIS_URL")
      for (const option of ownOptions(help)) {
        expect(
          option.text.filter((line) => !placeholder.test(line)),
          `${path.join(" ")} ${option.name}`
        ).not.toEqual([])
      }
    }
  })

  it("lists every command once, by its full path, no word doubled", () => {
    expect(listedPaths(helps.get("")?.stdout ?? "")).toEqual([
      "serve",
      "migrate",
      "create-superuser",
      "user",
      "user list",
      "user update",
      "user set-password",
      "user roles",
      "user roles add",
      "user roles remove",
      "role",
      "role grant",
      "role revoke",
      "role list",
      "audit",
      "audit export",
      "webhook",
      "webhook add",
      "webhook list",
      "webhook remove",
      "webhook test",
      "webhook retry",
      "client",
      "client add",
      "client list",
      "client show",
      "client remove",
      "client rotate-secret",
      "resource",
      "resource add",
      "resource list",
      "resource remove",
      "prune",
      "openapi",
      "check",
      "secret",
      "keygen"
    ])
  })

  it("names audit's values in its usage, the types in --type's text rather than in every line of the listing", () => {
    const help = helps.get("audit")?.stdout ?? ""
    expect(help).toContain("$ portcullis audit [--user ID] [--type TYPE] [--limit integer] [--cursor CURSOR]")
    expect(help).toContain("Only the events of this type: sign_in.succeeded, sign_in.failed,")
    expect(helps.get("")?.stdout).toContain("- audit [--user ID] [--type TYPE] [--limit integer] [--cursor CURSOR]\n")
  })

  it("keeps to 100 columns, without the library's built-in options, --log-level with the levels it takes", () => {
    for (const [path, run] of helps) {
      expect(
        run.stdout.split("\n").filter((line) => line.length > 100),
        path
      ).toEqual([])
      for (const noise of ["--wizard", "--completions", "--version", "This setting is optional."]) {
        expect(run.stdout, `${path}: ${noise}`).not.toContain(noise)
      }
      expect(run.stdout, path).toContain("\n--log-level trace | debug | info | warning | error | fatal | none\n")
    }
  })

  it("prints none of the library's placeholders for a value's type", () => {
    for (const [path, run] of helps) {
      expect(
        lines(run.stdout)
          .map((line) => line.trim())
          .filter((line) => typePlaceholder.test(line)),
        path
      ).toEqual([])
    }
  })

  /** The CLI on a pseudo-terminal, so that stdout is a TTY. */
  const onTerminal = async (args: string, vars: Readonly<Record<string, string>>) =>
    (await runProcess("script", ["-qec", `${process.execPath} ${cli} ${args}`, "/dev/null"], { env: cleanEnv(vars) }))
      .stdout

  it.skipIf(script?.status !== 0)(
    "keeps its colours on a terminal, but not with NO_COLOR",
    async () => {
      expect(await onTerminal("serve --help", {})).toMatch(ansi)
      expect(await onTerminal("serve --help", { NO_COLOR: "1" })).not.toMatch(ansi)
    },
    60_000
  )
})

describe("--log-level", () => {
  it("overrides SERVICE_LOG_LEVEL for serve, wherever it stands", async () => {
    const vars = { SERVICE_DATABASE_URL: temporaryDatabase(), SERVICE_LOG_LEVEL: "info" }
    const quiet = await startServer(vars, { args: ["--log-level", "error"] })
    await fetch(`${quiet.url}/healthz`)
    await quiet.stop()
    expect(quiet.output()).not.toContain("Listening")
    expect(quiet.output()).not.toContain("SERVICE_SECRET_KEY is not set")

    const loud = await startServer({ ...vars, SERVICE_LOG_LEVEL: "error" }, { args: ["--log-level=info"] })
    await loud.stop()
    expect(loud.output()).toContain("Listening")
  }, 90_000)

  it("shows an operator command's logs, which it keeps quiet otherwise; a bad level is refused", async () => {
    const vars = { SERVICE_DATABASE_URL: temporaryDatabase() }
    // Each command applies the migrations of a fresh database, and says so at info.
    const silent = await runCliInProcess(["create-superuser", "--email", "ops@example.com", "--password-stdin"], vars, {
      input: "correct horse battery staple\n"
    })
    expect(silent.status).toBe(0)
    expect(silent.stdout).not.toContain("migrations applied")
    const logged = await runCliInProcess(
      ["create-superuser", "--email", "ops@example.com", "--password-stdin", "--log-level", "info"],
      { SERVICE_DATABASE_URL: temporaryDatabase() },
      { input: "correct horse battery staple\n" }
    )
    expect(logged.status).toBe(0)
    expect(logged.stdout).toContain('"msg":"migrations applied"')

    // Only the levels the help and README name: `all`, the library's alias, is refused too.
    for (const level of ["loud", "all"]) {
      const bad = await runCliInProcess(["check", "--log-level", level], vars)
      expect(bad.status).toBe(1)
      expect(lines(bad.stderr)).toEqual(["--log-level must be one of trace, debug, info, warning, error, fatal, none"])
    }
  }, 90_000)
})
