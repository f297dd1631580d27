import { describe, expect, it } from "@effect/vitest"
import { DateTime, Option } from "effect"
import { AccessLevel, accessRefusal, anyPermission, anyRole, needsPermissions } from "../../domain/Access.js"
import { Email, User, UserId } from "../../domain/User.js"

const user = (overrides: Partial<User> = {}) =>
  new User({
    id: UserId.make("0190f0c2-0000-7000-8000-000000000001"),
    email: Email.make("alice@example.com"),
    is_active: true,
    is_verified: false,
    is_superuser: false,
    created_at: DateTime.unsafeMake(0),
    roles: [],
    hashed_password: Option.none(),
    ...overrides
  })

const refused = (level: AccessLevel, who: User, permissions: ReadonlyArray<string> = []) =>
  Option.isSome(accessRefusal(level, who, permissions))

describe("accessRefusal", () => {
  it("admits every authenticated user at the authenticated level", () => {
    expect(refused(AccessLevel.Authenticated(), user())).toBe(false)
  })

  it("admits only verified users at the verified level, superusers included", () => {
    expect(accessRefusal(AccessLevel.Verified(), user(), [])).toEqual(Option.some("The email address is not verified."))
    expect(refused(AccessLevel.Verified(), user({ is_superuser: true }))).toBe(true)
    expect(refused(AccessLevel.Verified(), user({ is_verified: true }))).toBe(false)
  })

  it("admits only superusers at the superuser level, whatever their roles", () => {
    expect(refused(AccessLevel.Superuser(), user({ roles: ["admin", "superuser"], is_verified: true }))).toBe(true)
    expect(refused(AccessLevel.Superuser(), user({ is_superuser: true }))).toBe(false)
  })

  it("admits a user holding any one of the roles", () => {
    const level = anyRole("editor", "chief-editor")
    expect(refused(level, user())).toBe(true)
    expect(refused(level, user({ roles: ["reader"] }))).toBe(true)
    expect(refused(level, user({ roles: ["reader", "chief-editor"] }))).toBe(false)
    expect(refused(level, user({ roles: ["editor"] }))).toBe(false)
  })

  it("reads roles from the user, never from the permissions", () => {
    expect(refused(anyRole("editor"), user(), ["editor"])).toBe(true)
  })

  it("admits a user granted any one of the permissions", () => {
    const level = anyPermission("posts:publish", "posts:delete")
    expect(refused(level, user({ roles: ["editor"] }), [])).toBe(true)
    expect(refused(level, user({ roles: ["editor"] }), ["posts:read"])).toBe(true)
    expect(refused(level, user({ roles: ["editor"] }), ["posts:read", "posts:delete"])).toBe(false)
  })

  it("lets superusers pass role and permission levels without holding them", () => {
    const root = user({ is_superuser: true })
    expect(refused(anyRole("editor"), root)).toBe(false)
    expect(refused(anyPermission("posts:publish"), root)).toBe(false)
  })

  it("says which kind of requirement is missing, never which names would do", () => {
    const role = Option.getOrThrow(accessRefusal(anyRole("secret-role"), user(), []))
    const permission = Option.getOrThrow(accessRefusal(anyPermission("secret:permission"), user(), []))
    expect(role).toContain("role")
    expect(permission).toContain("permission")
    expect(role).not.toContain("secret")
    expect(permission).not.toContain("secret")
  })
})

describe("needsPermissions", () => {
  it("asks for the user's permissions only for a permission level and a user who is not a superuser", () => {
    expect(needsPermissions(anyPermission("posts:publish"), user())).toBe(true)
    expect(needsPermissions(anyPermission("posts:publish"), user({ is_superuser: true }))).toBe(false)
    expect(needsPermissions(anyRole("editor"), user())).toBe(false)
    expect(needsPermissions(AccessLevel.Verified(), user())).toBe(false)
  })
})

describe("anyRole and anyPermission", () => {
  it("refuse a malformed name at once, as a mistake in the deployment's code", () => {
    expect(() => anyRole("has space")).toThrow()
    expect(() => anyPermission("")).toThrow()
    expect(() => anyRole("x".repeat(65))).toThrow()
    expect(anyRole("ops.team:lead_1-a")).toEqual(AccessLevel.AnyRole({ roles: ["ops.team:lead_1-a"] as never }))
  })
})
