// The floor: what Node can do for Portcullis's contract with no framework. A bare node:http
// server doing the same work by hand: argon2id (m=19 MiB, t=2, p=1), jose HS256 with the key
// imported once, better-sqlite3 prepared statements, refresh tokens stored as SHA-256 digests
// and rotated by compare-and-swap, and on GET /me the whole check: signature, blacklist,
// family revoked, user and roles lookups, security headers.
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import { hash, verify } from "@node-rs/argon2"
import Database from "better-sqlite3"
import { jwtVerify } from "jose"
import { argon, digest, now, publicUser, readJson, schema, send, signToken } from "./floorContract.mjs"

const port = Number(process.env.PORT ?? 8100)
const db = new Database(process.env.FLOOR_DB ?? ":memory:")
db.pragma("journal_mode = WAL")
db.pragma("synchronous = FULL")
db.exec(schema)
const insertUser = db.prepare(
  "INSERT INTO users VALUES (?, ?, ?, 1, 0, 0, ?) ON CONFLICT(email) DO UPDATE SET email = excluded.email"
)
const userByEmail = db.prepare("SELECT * FROM users WHERE email = ?")
const userById = db.prepare("SELECT * FROM users WHERE id = ?")
const rolesOf = db.prepare("SELECT role FROM user_roles WHERE user_id = ?")
const insertFamily = db.prepare("INSERT INTO families (id, user_id) VALUES (?, ?)")
const familyRevoked = db.prepare("SELECT revoked FROM families WHERE id = ?")
const insertRefresh = db.prepare(
  "INSERT INTO refresh_tokens (digest, family_id, user_id, expires_at) VALUES (?, ?, ?, ?)"
)
const spendRefresh = db.prepare("UPDATE refresh_tokens SET revoked = 1 WHERE digest = ? AND revoked = 0")
const rotate = db.transaction((oldDigest, newDigest, familyId, userId, expiresAt) => {
  if (spendRefresh.run(oldDigest).changes !== 1) return false
  insertRefresh.run(newDigest, familyId, userId, expiresAt)
  return true
})

const key = new TextEncoder().encode(process.env.SECRET ?? "floor-secret-key-with-at-least-32-bytes!")
const blacklist = new Set()
const publicUserOf = (user) => publicUser(user, rolesOf.all(user.id))

const pair = async (user, familyId) => {
  const iat = now()
  const access = await signToken(key, { type: "access", family_id: familyId, roles: [] }, user.id, iat, 900)
  const refresh = await signToken(key, { type: "refresh", family_id: familyId }, user.id, iat, 30 * 86400)
  return { access, refresh, expiresAt: (iat + 30 * 86400) * 1000 }
}

const verifyToken = async (token, type) => {
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"], issuer: "floor" })
    return payload.type === type ? payload : undefined
  } catch {
    return undefined
  }
}

const routes = {
  "POST /register": async (request, response) => {
    const body = await readJson(request)
    if (typeof body?.email !== "string" || typeof body?.password !== "string") return send(response, 422, {})
    const hashed = await hash(body.password, argon)
    insertUser.run(randomUUID(), body.email.trim().toLowerCase(), hashed, Date.now())
    send(response, 202, { detail: "Check your mail." })
  },
  "POST /login": async (request, response) => {
    const body = await readJson(request)
    if (typeof body?.email !== "string" || typeof body?.password !== "string") return send(response, 422, {})
    const user = userByEmail.get(body.email.trim().toLowerCase())
    if (user === undefined || !(await verify(user.hashed_password, body.password))) return send(response, 401, {})
    const familyId = randomUUID()
    insertFamily.run(familyId, user.id)
    const tokens = await pair(user, familyId)
    insertRefresh.run(digest(tokens.refresh), familyId, user.id, tokens.expiresAt)
    send(response, 200, {
      access_token: tokens.access,
      refresh_token: tokens.refresh,
      token_type: "bearer",
      expires_in: 900,
      user: publicUserOf(user)
    })
  },
  // Node's own cost of a request: the Effect references' static route, by hand.
  "GET /hello": async (_request, response) => send(response, 200, { ok: true }),
  "GET /me": async (request, response) => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1]
    const payload = token === undefined ? undefined : await verifyToken(token, "access")
    if (payload === undefined || blacklist.has(payload.jti)) return send(response, 401, {})
    if (familyRevoked.get(payload.family_id)?.revoked !== 0) return send(response, 401, {})
    const user = userById.get(payload.sub)
    if (user === undefined || user.is_active !== 1) return send(response, 401, {})
    send(response, 200, publicUserOf(user))
  },
  "POST /refresh": async (request, response) => {
    const body = await readJson(request)
    const payload =
      typeof body?.refresh_token === "string" ? await verifyToken(body.refresh_token, "refresh") : undefined
    if (payload === undefined) return send(response, 401, {})
    const user = userById.get(payload.sub)
    if (user === undefined || familyRevoked.get(payload.family_id)?.revoked !== 0) return send(response, 401, {})
    const tokens = await pair(user, payload.family_id)
    if (!rotate(digest(body.refresh_token), digest(tokens.refresh), payload.family_id, user.id, tokens.expiresAt)) {
      return send(response, 401, {})
    }
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
}).listen(port, "127.0.0.1", () => console.log(`floor listening on ${port}`))
