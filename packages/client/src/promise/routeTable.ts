/**
 * Every route of the service's API as the Promise client calls it: group, endpoint, "METHOD
 * path", the path after the auth prefix unless the group is served at the root. Made from the
 * HttpApi definition by test/package/route-table.test.ts (`-u` writes it anew), which fails
 * while this file and the definition differ: do not edit it by hand.
 */

/** AUTH_PREFIX unless the deployment names another. */
export const defaultPrefix = "/api/v1/auth"

/** The groups served at the root of the origin, not under the auth prefix. */
export const atRoot: ReadonlyArray<string> = ["health"]

export const routeTable: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  auth: {
    register: "POST /register",
    login: "POST /login",
    refresh: "POST /refresh",
    logout: "POST /logout"
  },
  profile: {
    me: "GET /me",
    verifiedMe: "GET /me/verified",
    updateMe: "PATCH /me",
    deleteMe: "DELETE /me",
    changePassword: "POST /change-password"
  },
  verify: {
    requestVerification: "POST /verify-email/request",
    confirmVerification: "POST /verify-email/confirm",
    requestPasswordReset: "POST /password-reset/request",
    confirmPasswordReset: "POST /password-reset/confirm"
  },
  sessions: {
    list: "GET /sessions",
    revoke: "DELETE /sessions/:family_id",
    revokeOthers: "POST /sessions/revoke-others"
  },
  admin: {
    assignRole: "POST /admin/assign-role",
    removeRole: "POST /admin/remove-role",
    assignPermission: "POST /admin/assign-permission",
    removePermission: "POST /admin/remove-permission",
    rolePermissions: "GET /admin/roles/:role/permissions",
    auditEvents: "GET /admin/audit"
  },
  oauth: {
    providers: "GET /oauth/providers",
    authorize: "GET /oauth/:provider/authorize",
    callback: "POST /oauth/:provider/callback",
    authorizeLink: "GET /oauth/:provider/link/authorize",
    link: "POST /oauth/:provider/link/callback",
    accounts: "GET /oauth/accounts",
    unlink: "DELETE /oauth/accounts/:provider"
  },
  passkey: {
    registerBegin: "POST /passkeys/register/begin",
    registerComplete: "POST /passkeys/register/complete",
    authenticateBegin: "POST /passkeys/authenticate/begin",
    authenticateComplete: "POST /passkeys/authenticate/complete",
    list: "GET /passkeys",
    delete: "DELETE /passkeys/:passkey_id"
  },
  oidc: {
    session: "POST /oauth2/session",
    mail: "POST /oauth2/email-sign-in",
    consent: "POST /oauth2/consent",
    apps: "GET /me/apps",
    withdraw: "DELETE /me/apps/:client_id"
  },
  emailSignIn: {
    request: "POST /email-sign-in/request",
    confirm: "POST /email-sign-in/confirm"
  },
  emailChange: {
    requestChange: "POST /me/email",
    confirmChange: "POST /me/email/confirm",
    undoChange: "POST /me/email/undo"
  },
  jwks: {
    jwks: "GET /.well-known/jwks.json"
  },
  health: {
    healthz: "GET /healthz",
    readyz: "GET /readyz"
  }
}
