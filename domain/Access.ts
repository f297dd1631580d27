import { Data, Option, Schema } from "effect"
import { RoleName, type User } from "./User.js"

/** A permission granted to roles: short, printable, no spaces (e.g. `posts:publish`). */
export const PermissionName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_.:-]{1,64}$/, {
    message: () => "must be 1 to 64 letters, digits or the characters _ . : -"
  }),
  Schema.brand("PermissionName")
).annotations({ identifier: "PermissionName" })
export type PermissionName = typeof PermissionName.Type

/** What a route demands of the signed-in user. */
export type AccessLevel = Data.TaggedEnum<{
  /** Any active user with a valid access token. */
  Authenticated: {}
  /** The user proved their email address. */
  Verified: {}
  Superuser: {}
  /** At least one of these roles. */
  AnyRole: { readonly roles: ReadonlyArray<RoleName> }
  /** At least one of these permissions, granted through any of the user's roles. */
  AnyPermission: { readonly permissions: ReadonlyArray<PermissionName> }
}>
export const AccessLevel = Data.taggedEnum<AccessLevel>()

/** Makes an AnyRole level; throws on a malformed name, which is a mistake in the deployment's code. */
export const anyRole = (...roles: readonly [string, ...Array<string>]): AccessLevel =>
  AccessLevel.AnyRole({ roles: roles.map((role) => Schema.decodeSync(RoleName)(role)) })

/** Makes an AnyPermission level; throws on a malformed name, which is a mistake in the deployment's code. */
export const anyPermission = (...permissions: readonly [string, ...Array<string>]): AccessLevel =>
  AccessLevel.AnyPermission({
    permissions: permissions.map((permission) => Schema.decodeSync(PermissionName)(permission))
  })

/**
 * Whether a level needs the user's permissions to be decided. Superusers pass role and
 * permission checks, so their permissions are never looked up.
 */
export const needsPermissions = (level: AccessLevel, user: User): boolean =>
  level._tag === "AnyPermission" && !user.is_superuser

/**
 * The access rule: none when the user may pass, else the sentence that says why not.
 * `permissions` are the user's permissions through their roles, as read from the store for
 * this request (only consulted when `needsPermissions`). Superusers pass role and permission
 * checks (they could grant themselves any role anyway), but not the verified check, which is
 * about the email address, not about power.
 */
export const accessRefusal = (
  level: AccessLevel,
  user: User,
  permissions: ReadonlyArray<string>
): Option.Option<string> =>
  AccessLevel.$match(level, {
    Authenticated: () => Option.none(),
    Verified: () => (user.is_verified ? Option.none() : Option.some("The email address is not verified.")),
    Superuser: () => (user.is_superuser ? Option.none() : Option.some("Superuser access is required.")),
    AnyRole: ({ roles }) =>
      user.is_superuser || roles.some((role) => user.roles.includes(role))
        ? Option.none()
        : Option.some("A role this route requires is missing."),
    AnyPermission: ({ permissions: required }) =>
      user.is_superuser || required.some((permission) => permissions.includes(permission))
        ? Option.none()
        : Option.some("A permission this route requires is missing.")
  })
