import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { deploymentProblems, features } from "../../composition/features.js"
import { passwordPolicy } from "../../composition/policy.js"
import { notYetSupported } from "../../composition/startup.js"
import { type Deployment, profileRules } from "../../config/Deployment.js"
import { parseSettings } from "../../config/Settings.js"
import { servedFeatures } from "../../interfaces/http/server.js"

const settingsOf = (env: Record<string, string>) =>
  Either.getOrThrow(parseSettings({ SERVICE_SECRET_KEY: "x".repeat(40), ...env })).settings

const fields = { display_name: Schema.String, username: Schema.String }

describe("deploymentProblems", () => {
  it("accepts every option when well formed, and the empty deployment", () => {
    expect(deploymentProblems({})).toEqual([])
    expect(
      deploymentProblems({
        events: { after_register: () => {} },
        userFields: fields,
        registration: { accept: ["username"], require: ["display_name"] },
        protectedFields: ["username"],
        passwordPolicy: { min_length: 12, require_digit: true, blocked_passwords: ["hunter2"] },
        customClaims: () => ({}),
        routeGroups: ["auth", "profile"]
      })
    ).toEqual([])
  })

  it("refuses a value that is not an object and an unknown option", () => {
    expect(deploymentProblems(null)).toEqual(["the module's default export is not an object"])
    expect(deploymentProblems({ userFeilds: {} })[0]).toContain("userFeilds is not a deployment option")
  })

  it("refuses an unknown event and a handler that is not a function", () => {
    expect(deploymentProblems({ events: { after_regster: () => {} } })[0]).toContain("events.after_regster")
    expect(deploymentProblems({ events: { after_register: 1 } })).toEqual(["events.after_register is not a function"])
  })

  it("userFields: refuses non-schemas, bad names and built-in fields", () => {
    expect(deploymentProblems({ userFields: [] })).toEqual([])
    expect(deploymentProblems({ userFields: 3 })).toEqual(["userFields is not an object"])
    expect(deploymentProblems({ userFields: { nickname: "string" } })).toEqual([
      "userFields.nickname is not an Effect Schema"
    ])
    expect(deploymentProblems({ userFields: { "bad-name": Schema.String } })[0]).toContain("not a valid field name")
    expect(deploymentProblems({ userFields: { email: Schema.String } })).toEqual([
      "userFields.email is a built-in user field"
    ])
    expect(deploymentProblems({ userFields: { is_superuser: Schema.Boolean } })).toHaveLength(1)
  })

  it("registration and protectedFields: only declared fields", () => {
    expect(deploymentProblems({ userFields: fields, registration: { require: ["age"] } })).toEqual([
      "registration.require: age is not declared in userFields"
    ])
    expect(deploymentProblems({ userFields: fields, registration: { accept: "username" } })).toEqual([
      "registration.accept is not a list of field names"
    ])
    expect(deploymentProblems({ registration: { required: [] } })[0]).toContain("registration.required")
    expect(deploymentProblems({ registration: [] })).toEqual([])
    expect(deploymentProblems({ registration: "x" })).toEqual(["registration is not an object"])
    expect(deploymentProblems({ userFields: fields, protectedFields: ["tier"] })).toEqual([
      "protectedFields: tier is not declared in userFields"
    ])
  })

  it("passwordPolicy: the spec's options with their types", () => {
    expect(deploymentProblems({ passwordPolicy: { min_length: 0 } })).toEqual([
      "passwordPolicy.min_length is not a positive integer"
    ])
    expect(deploymentProblems({ passwordPolicy: { require_digit: "yes" } })).toEqual([
      "passwordPolicy.require_digit is not a boolean"
    ])
    expect(deploymentProblems({ passwordPolicy: { blocked_passwords: "x" } })).toEqual([
      "passwordPolicy.blocked_passwords is not a list of strings"
    ])
    expect(deploymentProblems({ passwordPolicy: { max_length: 10 } })[0]).toContain("passwordPolicy.max_length")
    expect(deploymentProblems({ passwordPolicy: 5 })).toEqual(["passwordPolicy is not an object"])
  })

  it("customClaims must be a function", () => {
    expect(deploymentProblems({ customClaims: { role: "x" } })).toEqual(["customClaims is not a function"])
  })

  it("routeGroups: known names, and auth cannot be left out", () => {
    expect(deploymentProblems({ routeGroups: ["auth", "billing"] })[0]).toContain("billing is not a route group")
    expect(deploymentProblems({ routeGroups: ["profile"] })).toEqual([
      "routeGroups must include auth (registration and sign-in)"
    ])
    expect(deploymentProblems({ routeGroups: "auth" })).toEqual(["routeGroups is not a list of route group names"])
    const exposedGroups = (deployment: Deployment) =>
      servedFeatures(features, settingsOf({}), deployment).map((feature) => feature.name)
    expect([...exposedGroups({})].sort()).toEqual(["admin", "auth", "email-change", "profile", "sessions", "verify"])
    expect([...exposedGroups({ routeGroups: ["auth"] })]).toEqual(["auth"])
  })
})

describe("deployment rules", () => {
  it("the password policy takes the stricter minimum and the setting's maximum", () => {
    const settings = settingsOf({ SERVICE_PASSWORD_MIN_LENGTH: "10" })
    expect(passwordPolicy(settings, { passwordPolicy: { min_length: 8, require_digit: true } })).toMatchObject({
      min_length: 10,
      max_length: 256,
      require_digit: true
    })
    expect(passwordPolicy(settings, { passwordPolicy: { min_length: 14 } }).min_length).toBe(14)
  })

  it("a custom login field is required at registration, unique, and editable unless protected", () => {
    const rules = profileRules("username", { userFields: fields })
    expect([...(rules.requiredFields ?? [])]).toEqual(["username"])
    expect([...(rules.uniqueFields ?? [])]).toEqual(["username"])
    expect(rules.editableFields.has("username")).toBe(true)
    expect(
      profileRules("username", { userFields: fields, protectedFields: ["username"] }).editableFields.has("username")
    ).toBe(false)
  })

  it("LOGIN_FIELD other than email needs the deployment to declare it, naming LOGIN_FIELD otherwise", () => {
    const settings = settingsOf({ SERVICE_LOGIN_FIELD: "username" })
    expect(notYetSupported(settings, { userFields: fields })).toEqual([])
    const refused = notYetSupported(settings, { userFields: { display_name: Schema.String } })
    expect(refused).toHaveLength(1)
    expect(refused[0]).toContain("SERVICE_LOGIN_FIELD")
  })
})

describe("the documented example deployment (docs/integrating.md)", () => {
  it("is a valid deployment", async () => {
    const readme = readFileSync(resolve("docs/integrating.md"), "utf8")
    const source = /```ts\n(\/\/ deployment\.ts:[\s\S]*?)```/.exec(readme)?.[1]
    expect(source).toBeDefined()
    // Inside the project, so that its `import ... from "effect"` resolves.
    const dir = resolve(".cache", "test-deployments", "readme")
    mkdirSync(dir, { recursive: true })
    const file = join(dir, "deployment.ts")
    writeFileSync(file, source ?? "")
    const module = (await import(pathToFileURL(file).href)) as { default: unknown }
    expect(deploymentProblems(module.default)).toEqual([])
    const rules = profileRules("email", module.default as Parameters<typeof profileRules>[1])
    expect([...(rules.requiredFields ?? [])]).toEqual(["display_name"])
    expect(rules.editableFields.has("plan")).toBe(false)
  })
})
