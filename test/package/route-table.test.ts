import { describe, expect, it } from "vitest"
import { defaultShape } from "../../interfaces/http/Api.js"
import { portcullisApi } from "../../interfaces/http/client.js"

/**
 * The Promise client carries no HttpApi definition at run time (it would bring Effect into every
 * browser bundle): it calls routes from a table, packages/client/src/promise/routeTable.ts, made
 * here from the definition the service serves. This test fails while the file and the definition
 * differ; `npx vitest run test/package/route-table.test.ts -u` writes the file anew.
 */

const prefix = defaultShape.authPrefix

/** The table's source, as the definition gives it: group → endpoint → "METHOD path". */
const tableSource = () => {
  const groups: Array<string> = []
  const atRoot: Array<string> = []
  for (const group of Object.values(portcullisApi(defaultShape).groups)) {
    const endpoints = Object.values(group.endpoints)
    const prefixed = endpoints.every((endpoint) => endpoint.path.startsWith(`${prefix}/`))
    if (!prefixed) atRoot.push(group.identifier)
    const lines = endpoints.map(
      (endpoint) =>
        `    ${endpoint.name}: "${endpoint.method} ${prefixed ? endpoint.path.slice(prefix.length) : endpoint.path}"`
    )
    groups.push(`  ${group.identifier}: {\n${lines.join(",\n")}\n  }`)
  }
  return `/**
 * Every route of the service's API as the Promise client calls it: group, endpoint, "METHOD
 * path", the path after the auth prefix unless the group is served at the root. Made from the
 * HttpApi definition by test/package/route-table.test.ts (\`-u\` writes it anew), which fails
 * while this file and the definition differ: do not edit it by hand.
 */

/** AUTH_PREFIX unless the deployment names another. */
export const defaultPrefix = ${JSON.stringify(prefix)}

/** The groups served at the root of the origin, not under the auth prefix. */
export const atRoot: ReadonlyArray<string> = ${JSON.stringify(atRoot)}

export const routeTable: Readonly<Record<string, Readonly<Record<string, string>>>> = {
${groups.join(",\n")}
}
`
}

describe("the Promise client's route table", () => {
  it("is the service's HttpApi definition: every group, endpoint, method and path", async () => {
    await expect(tableSource()).toMatchFileSnapshot("../../packages/client/src/promise/routeTable.ts")
  })
})
