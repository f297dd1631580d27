import { PREFIX, type SettingDescription } from "./reader.js"

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ")
/** Plain text that may hold `<path>`-like placeholders, which Markdown would take for HTML. */
const plain = (text: string) => cell(text).replaceAll("<", "&lt;").replaceAll(">", "&gt;")
const code = (text: string) => `\`${text}\``

const rows = (settings: ReadonlyArray<SettingDescription>) =>
  settings.map((setting) =>
    [
      code(setting.name),
      setting.shownDefault === undefined ? "unset" : code(setting.shownDefault),
      plain(setting.expected),
      cell(`${setting.doc ?? ""}${setting.secret ? " A secret: never echoed, redacted by `check`." : ""}`)
    ].join(" | ")
  )

/**
 * The configuration reference (docs/configuration.md), written from the settings' own
 * descriptions (config/sections/): names, defaults and accepted forms come from the code that
 * reads them, so the reference cannot drift from it (test/config/reference.test.ts).
 */
export const configurationReference = (settings: ReadonlyArray<SettingDescription>): string => {
  const sections = [...new Set(settings.map((setting) => setting.section))]
  return [
    "# Configuration reference",
    "",
    "<!-- Generated from config/sections/ by `npm run docs`; do not edit by hand. -->",
    "",
    `Every setting is an environment variable named \`${PREFIX}<NAME>\`, read from the process`,
    "environment. Booleans take `true/false/1/0/yes/no`; lists take CSV or a JSON array; an empty",
    "variable counts as unset, except the two route prefixes, where empty means no prefix. An",
    "invalid value stops start-up with exit code 1 and one line per problem naming the variable,",
    `the value's fault and the expected form; an unknown \`${PREFIX}\` variable (a typo) is reported`,
    "as a warning. `portcullis check` prints the resolved settings with secrets redacted.",
    "",
    "A `.env` file in the working directory adds its variables to those the environment leaves",
    "unset, except under `NODE_ENV=test` or `PORTCULLIS_IGNORE_DOTENV=1` (a boolean, as above),",
    "where the file is not read at all: the test suite sets the latter for every process it starts.",
    "",
    ...sections.flatMap((section) => [
      `## ${section}`,
      "",
      "| Variable | Default | Accepts | Meaning |",
      "|---|---|---|---|",
      ...rows(settings.filter((setting) => setting.section === section)).map((row) => `| ${row} |`),
      ""
    ])
  ].join("\n")
}
