import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { dotenvIgnored, parseDotenv, unsetIn } from "../../config/dotenv.js"

const variables = (text: string) => {
  const parsed = parseDotenv(text)
  if (Either.isLeft(parsed)) throw new Error(`expected the file to be accepted, got: ${parsed.left}`)
  return parsed.right
}

const fault = (text: string) => {
  const parsed = parseDotenv(text)
  if (Either.isRight(parsed)) throw new Error(`expected the file to be refused: ${JSON.stringify(text)}`)
  return parsed.left
}

describe("parseDotenv", () => {
  it("reads NAME=value lines, export prefixes, quotes, comments and values spanning lines", () => {
    const text = [
      "# the service",
      "SERVICE_PORT=9000",
      "",
      'export SERVICE_MAIL_FROM="Portcullis <no-reply@example.com>"',
      "SERVICE_JWT_PRIVATE_KEY='-----BEGIN KEY-----",
      "abc",
      "-----END KEY-----'",
      "SERVICE_LOG_LEVEL=debug # while trying it out",
      "  SERVICE_HOST = 0.0.0.0  "
    ].join("\n")
    expect(variables(text)).toEqual({
      SERVICE_PORT: "9000",
      SERVICE_MAIL_FROM: "Portcullis <no-reply@example.com>",
      SERVICE_JWT_PRIVATE_KEY: "-----BEGIN KEY-----\nabc\n-----END KEY-----",
      SERVICE_LOG_LEVEL: "debug",
      SERVICE_HOST: "0.0.0.0"
    })
    expect(variables("A=1\r\nB=2\r\n")).toEqual({ A: "1", B: "2" })
    expect(variables("")).toEqual({})
  })

  it("refuses a line that is not NAME=value, naming its number and never its text", () => {
    // Node's own parser would read this as a variable named "SERVICE_SECRET_KEY hunter2\\nSERVICE_PORT".
    const line = fault("SERVICE_LOG_LEVEL=info\nSERVICE_SECRET_KEY hunter2\nSERVICE_PORT=9000\n")
    expect(line).toBe(".env line 2 is not NAME=value or a # comment")
    expect(fault("1PORT=9000")).toBe(".env line 1 is not NAME=value or a # comment")
  })

  it("refuses a quoted value that never closes, naming the line it opens on", () => {
    expect(fault('SERVICE_PORT=9000\nSERVICE_MAIL_FROM="no-reply@example.com\nSERVICE_HOST=0.0.0.0\n')).toBe(
      '.env line 2 opens a "-quoted value that never closes'
    )
  })
})

describe("unsetIn", () => {
  it("keeps only the file's variables the environment leaves unset: a set one wins, even when empty", () => {
    const environment = { SERVICE_PORT: "9200", SERVICE_HOST: "" }
    const file = { SERVICE_PORT: "9000", SERVICE_HOST: "0.0.0.0", SERVICE_LOG_LEVEL: "debug" }
    expect(unsetIn(environment, file)).toEqual({ SERVICE_LOG_LEVEL: "debug" })
  })
})

describe("dotenvIgnored", () => {
  const ignored = (environment: Readonly<Record<string, string>>) => Either.getOrThrow(dotenvIgnored(environment))

  it("is true under PORTCULLIS_IGNORE_DOTENV as a true boolean, or NODE_ENV=test whatever the other says", () => {
    for (const value of ["1", "true", "YES", " 1 "]) expect(ignored({ PORTCULLIS_IGNORE_DOTENV: value })).toBe(true)
    expect(ignored({ NODE_ENV: "test" })).toBe(true)
    expect(ignored({ NODE_ENV: "test", PORTCULLIS_IGNORE_DOTENV: "0" })).toBe(true)
  })

  it("is false unset, empty, false, or under another NODE_ENV", () => {
    expect(ignored({})).toBe(false)
    expect(ignored({ PORTCULLIS_IGNORE_DOTENV: "" })).toBe(false)
    expect(ignored({ PORTCULLIS_IGNORE_DOTENV: "no" })).toBe(false)
    expect(ignored({ NODE_ENV: "production" })).toBe(false)
  })

  it("refuses a value that is no boolean, naming the variable and the forms it takes", () => {
    expect(dotenvIgnored({ PORTCULLIS_IGNORE_DOTENV: "skip" })).toEqual(
      Either.left('PORTCULLIS_IGNORE_DOTENV="skip" is not a boolean; expected true, false, 1, 0, yes or no')
    )
  })
})
