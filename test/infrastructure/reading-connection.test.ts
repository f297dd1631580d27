import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { OidcClients } from "../../application/ports/OidcClients.js"
import { sqliteFileAdapters } from "../../composition/stores.js"
import { sqliteFileWithClient } from "../support/databases.js"

/** How this process holds the database file: the access mode of each descriptor open on it. */
const descriptorsOf = (file: string) =>
  readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== file) return []
      const flags = /flags:\s*([0-7]+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1] ?? "0"
      // O_ACCMODE: 0 read-only, 2 read and write.
      return [(Number.parseInt(flags, 8) & 3) === 0 ? "reading" : "writing"]
    } catch {
      return []
    }
  })

describe.skipIf(process.platform !== "linux")("a SQLite file's fast adapters", () => {
  it.effect("read through one shared connection that only reads, however many adapters read", () =>
    Effect.gen(function* () {
      // Answered by a read through the shared connection, so the file is surely open.
      yield* Effect.flatMap(OidcClients, (clients) => clients.find("nobody"))
      const file = readdirSync("/proc/self/fd")
        .map((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`)
          } catch {
            return ""
          }
        })
        .find((path) => path.includes("portcullis-sqlite-") && path.endsWith("portcullis.db"))
      expect(file).toBeDefined()
      const held = descriptorsOf(file ?? "")
      // Five adapters read (TokenHolders, OidcClients, AuthorizationCodes, OidcGrants, UserRepo).
      expect(held.filter((mode) => mode === "reading")).toEqual(["reading"])
      expect(held.filter((mode) => mode === "writing").length).toBeGreaterThan(0)
    }).pipe(Effect.provide(sqliteFileWithClient({}, sqliteFileAdapters)))
  )
})
