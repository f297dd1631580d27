/**
 * The claims a grant shows of its user (OIDC Core §5.4), in the ID token and at userinfo: `sub`
 * always, the rest by scope.
 */

/** The profile claims of OIDC Core §5.1, shown under `profile` when the user has them (custom fields of those names). */
export const profileClaims = [
  "name",
  "given_name",
  "family_name",
  "middle_name",
  "nickname",
  "preferred_username",
  "profile",
  "picture",
  "website",
  "gender",
  "birthdate",
  "zoneinfo",
  "locale"
] as const

/** What the claims are read from: the user as the store holds them. */
export interface ClaimSource {
  readonly id: string
  readonly email: string
  readonly is_verified: boolean
  readonly roles: ReadonlyArray<string>
  readonly permissions: ReadonlyArray<string>
  /** The deployment's custom fields; a string one named as a profile claim is shown under `profile`. */
  readonly fields: Readonly<Record<string, unknown>>
  /** Seconds since the epoch, for `updated_at`. */
  readonly updated_at: number | null
}

/** The claims of the user that the granted scopes show. */
export const claimsFor = (user: ClaimSource, scopes: ReadonlyArray<string>): Record<string, unknown> => {
  const claims: Record<string, unknown> = { sub: user.id }
  if (scopes.includes("profile")) {
    for (const name of profileClaims) {
      const value = user.fields[name]
      if (typeof value === "string" && value !== "") claims[name] = value
    }
    if (user.updated_at !== null) claims.updated_at = user.updated_at
  }
  if (scopes.includes("email")) {
    claims.email = user.email
    claims.email_verified = user.is_verified
  }
  if (scopes.includes("permissions")) {
    claims.roles = [...user.roles]
    claims.permissions = [...user.permissions]
  }
  return claims
}

/** A way the user signed in, as the browser session records it. */
export type SignInMethod =
  | { readonly kind: "password" }
  | { readonly kind: "passkey"; readonly userVerified: boolean }
  | { readonly kind: "mailed" }
  | { readonly kind: "provider" }

/**
 * Authentication method references (RFC 8176) of a sign-in: `pwd` for a password, `hwk` for a
 * passkey (with `user` when the authenticator verified the user), `otp` for a mailed link or
 * code, `fed` for a provider.
 */
export const amrOf = (method: SignInMethod): ReadonlyArray<string> => {
  switch (method.kind) {
    case "password":
      return ["pwd"]
    case "passkey":
      return method.userVerified ? ["hwk", "user"] : ["hwk"]
    case "mailed":
      return ["otp"]
    case "provider":
      return ["fed"]
  }
}

/**
 * Whether a grant issues a refresh token: with `openid` in the scope only when `offline_access`
 * is too (OIDC Core §11); a plain OAuth request (no `openid`, as MCP clients send) always gets one.
 */
export const issuesRefreshToken = (scopes: ReadonlyArray<string>): boolean =>
  !scopes.includes("openid") || scopes.includes("offline_access")
