import { readFileSync } from "node:fs"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { everyGroupEnv } from "../support/everyGroup.js"
import { call } from "../support/flows.js"
import * as TestApp from "../support/TestApp.js"

/**
 * The README's route table against the OpenAPI document of a service with every group on: a
 * route the document has and the table lacks (GET /admin/audit was one) fails here.
 */

const env = everyGroupEnv()

const prefix = "/api/v1/auth"

/** The routes the table lists that are no API operation: the documents and the hosted pages. */
const besideTheApi = new Set([
  "GET /openapi.json",
  "GET /docs",
  "GET /verify-email",
  "GET /reset-password",
  "GET /confirm-email",
  "GET /sign-in",
  "GET /undo-email-change"
])

/**
 * "METHOD /path" for each path of each row of the README's table: paths relative to the auth
 * prefix unless marked "(at the root)", several in one cell split at commas, queries left out.
 */
const readmeRoutes = () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  const rows = readme.split("\n").filter((line) => /^\| (GET|POST|PUT|PATCH|DELETE) \|/.test(line))
  return rows.flatMap((row) => {
    const [, method = "", cell = ""] = row.split("|").map((part) => part.trim())
    return cell
      .replace(" (at the root)", "")
      .split(", ")
      .map((path) => `${method} ${path.replace(/\?.*$/, "")}`)
  })
}

/** "METHOD /path" for each operation of the document, the auth prefix taken off where it stands. */
const documentRoutes = (paths: Record<string, Record<string, unknown>>) =>
  Object.entries(paths).flatMap(([path, operations]) =>
    Object.keys(operations).map(
      (method) => `${method.toUpperCase()} ${path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : path}`
    )
  )

describe("the README's route table", () => {
  layer(TestApp.layer("memory:", env), { excludeTestServices: true })((it) => {
    it.effect("lists every operation of the OpenAPI document, and no route the service lacks", () =>
      Effect.gen(function* () {
        const document = (yield* call("GET", "/openapi.json")).body as {
          paths: Record<string, Record<string, unknown>>
        }
        const inDocument = documentRoutes(document.paths)
        const inReadme = readmeRoutes()
        expect(inDocument.length).toBeGreaterThan(30)
        expect(inDocument.filter((route) => !inReadme.includes(route))).toEqual([])
        expect(inReadme.filter((route) => !inDocument.includes(route) && !besideTheApi.has(route))).toEqual([])
        expect(new Set(inReadme).size).toBe(inReadme.length)
      })
    )
  })
})
