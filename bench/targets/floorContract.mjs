// What the floors do by hand, shared with the Effect references' lean login and register so that
// all do exactly the same work: the tables, argon2id's parameters, the stored token's digest,
// the signed tokens, the user as answered, and the JSON in and out with the security headers.
import { createHash, randomUUID } from "node:crypto"
import { Algorithm } from "@node-rs/argon2"
import { SignJWT } from "jose"

/** argon2id as every server in the run uses it: m=19 MiB, t=2, p=1. */
export const argon = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 }

export const schema = `
  CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, email TEXT UNIQUE NOT NULL, hashed_password TEXT NOT NULL,
    is_active INTEGER NOT NULL, is_verified INTEGER NOT NULL, is_superuser INTEGER NOT NULL, created_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS user_roles (user_id TEXT NOT NULL, role TEXT NOT NULL, PRIMARY KEY (user_id, role));
  CREATE TABLE IF NOT EXISTS refresh_tokens (digest TEXT PRIMARY KEY, family_id TEXT NOT NULL, user_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE IF NOT EXISTS families (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
`

export const digest = (token) => createHash("sha256").update(token).digest("hex")

export const now = () => Math.floor(Date.now() / 1000)

/** An HS256 token of `claims` for `subject`, issued at `iat` (seconds) and living `lifetime` seconds. */
export const signToken = (key, claims, subject, iat, lifetime) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(subject)
    .setJti(randomUUID())
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetime)
    .setIssuer("floor")
    .sign(key)

/** A users row and its roles' rows as the API shows them. */
export const publicUser = (user, roles) => ({
  id: user.id,
  email: user.email,
  is_active: user.is_active === 1,
  is_verified: user.is_verified === 1,
  is_superuser: user.is_superuser === 1,
  created_at: new Date(user.created_at).toISOString(),
  roles: roles.map((row) => row.role)
})

/** The headers every answer of the floors carries, as Portcullis's do. */
const securityHeaders = {
  "content-type": "application/json",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'"
}

/** A JSON answer with the security headers. */
export const send = (response, status, body) => {
  response.writeHead(status, securityHeaders)
  response.end(JSON.stringify(body))
}

/** A request's JSON body, undefined when it is none. */
export const readJson = (request) =>
  new Promise((resolve) => {
    const chunks = []
    request.on("data", (chunk) => chunks.push(chunk))
    request.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch {
        resolve(undefined)
      }
    })
  })
