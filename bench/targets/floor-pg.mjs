// The PostgreSQL + Redis floor: what Node can do for Portcullis's contract on the production
// stores, with no framework. Bare node:http, the drivers used as they are meant to be used: `pg`
// with named prepared statements (parsed once per connection), one round trip where the work
// allows one, Redis for the revoked token ids. GET /me verifies HS256 with node:crypto, asks Redis
// whether the token's id is revoked and, at once, reads the user, their roles and the session in
// one statement. POST /refresh rotates in one statement (spend the old digest, insert the new one:
// one transaction, committed durably as PostgreSQL does by default). Login and register hash with
// argon2id as every server of the run does.
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"
import { hash, verify } from "@node-rs/argon2"
import Redis from "ioredis"
import pg from "pg"
import { argon, digest, now, publicUser, readJson, send, signToken } from "./floorContract.mjs"

const port = Number(process.env.PORT ?? 8101)
const pool = new pg.Pool({ connectionString: process.env.FLOOR_PG_URL, max: 10 })
const redis = new Redis(process.env.FLOOR_REDIS_URL ?? "redis://127.0.0.1:6379")
const revokedKey = (jti) => `floor:${process.env.FLOOR_RUN ?? "0"}:revoked:${jti}`

await pool.query(`
  CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, email TEXT UNIQUE NOT NULL, hashed_password TEXT NOT NULL,
    is_active INTEGER NOT NULL, is_verified INTEGER NOT NULL, is_superuser INTEGER NOT NULL, created_at BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS user_roles (user_id TEXT NOT NULL, role TEXT NOT NULL, PRIMARY KEY (user_id, role));
  CREATE TABLE IF NOT EXISTS families (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE IF NOT EXISTS refresh_tokens (digest TEXT PRIMARY KEY, family_id TEXT NOT NULL, user_id TEXT NOT NULL,
    expires_at BIGINT NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
`)

/** A named statement: pg prepares it once on each connection, then sends only its name and values. */
const named = (name, text) => (values) => pool.query({ name, text, values })
const insertUser = named(
  "insert_user",
  "INSERT INTO users VALUES ($1, $2, $3, 1, 0, 0, $4) ON CONFLICT (email) DO UPDATE SET email = excluded.email"
)
const userByEmail = named(
  "user_by_email",
  "SELECT u.*, ARRAY(SELECT role FROM user_roles r WHERE r.user_id = u.id) AS roles FROM users u WHERE u.email = $1"
)
// A sign-in's session and its first refresh token, in one statement.
const startFamily = named(
  "start_family",
  `WITH family AS (INSERT INTO families (id, user_id) VALUES ($1, $2) RETURNING id, user_id)
   INSERT INTO refresh_tokens (digest, family_id, user_id, expires_at) SELECT $3, id, user_id, $4 FROM family`
)
// GET /me's whole look-up: the user, their roles, and whether the token's session still holds.
const meOf = named(
  "me_of",
  `SELECT u.*, ARRAY(SELECT role FROM user_roles r WHERE r.user_id = u.id) AS roles
   FROM users u JOIN families f ON f.id = $2 AND f.user_id = u.id AND f.revoked = 0
   WHERE u.id = $1 AND u.is_active = 1`
)
// The rotation: the old digest spent (once: compare-and-swap) while its session and user hold, the
// new one stored, in one statement.
const rotate = named(
  "rotate",
  `WITH spent AS (
     UPDATE refresh_tokens t SET revoked = 1 FROM families f, users u
     WHERE t.digest = $1 AND t.revoked = 0 AND t.expires_at > $4 AND f.id = t.family_id AND f.revoked = 0
       AND u.id = t.user_id AND u.is_active = 1
     RETURNING t.family_id, t.user_id)
   INSERT INTO refresh_tokens (digest, family_id, user_id, expires_at) SELECT $2, family_id, user_id, $3 FROM spent`
)

const secret = process.env.SECRET ?? "floor-secret-key-with-at-least-32-bytes!"
const key = new TextEncoder().encode(secret)

const hs256Header = Buffer.from(JSON.stringify({ alg: "HS256" })).toString("base64url")

/** An HS256 token's claims when its signature, header, issuer, expiry and type hold (node:crypto). */
const verifyToken = (token, type) => {
  const [header, body, signature, extra] = token.split(".")
  if (extra !== undefined || header !== hs256Header || body === undefined || signature === undefined) return undefined
  const expected = createHmac("sha256", secret).update(`${header}.${body}`).digest()
  const given = Buffer.from(signature, "base64url")
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  try {
    const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8"))
    return payload.type === type && payload.iss === "floor" && payload.exp > now() ? payload : undefined
  } catch {
    return undefined
  }
}

const pair = async (userId, familyId) => {
  const iat = now()
  const access = await signToken(key, { type: "access", family_id: familyId, roles: [] }, userId, iat, 900)
  const refresh = await signToken(key, { type: "refresh", family_id: familyId }, userId, iat, 30 * 86400)
  return { access, refresh, expiresAt: (iat + 30 * 86400) * 1000 }
}

const asRow = (user) => ({ ...user, created_at: Number(user.created_at) })
const rolesOf = (user) => user.roles.map((role) => ({ role }))

const routes = {
  "POST /register": async (request, response) => {
    const body = await readJson(request)
    if (typeof body?.email !== "string" || typeof body?.password !== "string") return send(response, 422, {})
    const hashed = await hash(body.password, argon)
    await insertUser([randomUUID(), body.email.trim().toLowerCase(), hashed, Date.now()])
    send(response, 202, { detail: "Check your mail." })
  },
  "POST /login": async (request, response) => {
    const body = await readJson(request)
    if (typeof body?.email !== "string" || typeof body?.password !== "string") return send(response, 422, {})
    const [user] = (await userByEmail([body.email.trim().toLowerCase()])).rows
    if (user === undefined || !(await verify(user.hashed_password, body.password))) return send(response, 401, {})
    const familyId = randomUUID()
    const tokens = await pair(user.id, familyId)
    await startFamily([familyId, user.id, digest(tokens.refresh), tokens.expiresAt])
    send(response, 200, {
      access_token: tokens.access,
      refresh_token: tokens.refresh,
      token_type: "bearer",
      expires_in: 900,
      user: publicUser(asRow(user), rolesOf(user))
    })
  },
  "GET /hello": async (_request, response) => send(response, 200, { ok: true }),
  "GET /me": async (request, response) => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1]
    const payload = token === undefined ? undefined : verifyToken(token, "access")
    if (payload === undefined) return send(response, 401, {})
    // The two stores at once: Redis for the revoked ids, PostgreSQL for the user and the session.
    const [revoked, found] = await Promise.all([
      redis.exists(revokedKey(payload.jti)),
      meOf([payload.sub, payload.family_id])
    ])
    const [user] = found.rows
    if (revoked !== 0 || user === undefined) return send(response, 401, {})
    send(response, 200, publicUser(asRow(user), rolesOf(user)))
  },
  "POST /refresh": async (request, response) => {
    const body = await readJson(request)
    const payload = typeof body?.refresh_token === "string" ? verifyToken(body.refresh_token, "refresh") : undefined
    if (payload === undefined) return send(response, 401, {})
    const tokens = await pair(payload.sub, payload.family_id)
    const rotated = await rotate([digest(body.refresh_token), digest(tokens.refresh), tokens.expiresAt, Date.now()])
    if (rotated.rowCount !== 1) return send(response, 401, {})
    send(response, 200, {
      access_token: tokens.access,
      refresh_token: tokens.refresh,
      token_type: "bearer",
      expires_in: 900
    })
  }
}

createServer((request, response) => {
  const route = routes[`${request.method} ${request.url}`]
  if (route === undefined) return send(response, 404, {})
  route(request, response).catch(() => send(response, 500, {}))
}).listen(port, "127.0.0.1", () => console.log(`floor (pg+redis) listening on ${port}`))
