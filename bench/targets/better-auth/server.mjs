// better-auth 1.7 with email and password on better-sqlite3, its password hash set to the same
// argon2id as Portcullis (m=19 MiB, t=2, p=1), rate limits off as Portcullis's are in the run.
import { createServer } from "node:http"
import { Algorithm, hash, verify } from "@node-rs/argon2"
import { betterAuth } from "better-auth"
import { getMigrations } from "better-auth/db/migration"
import { toNodeHandler } from "better-auth/node"
import Database from "better-sqlite3"

const port = Number(process.env.PORT ?? 8300)
const database = new Database(process.env.BETTER_AUTH_DB ?? ":memory:")
database.pragma("journal_mode = WAL")
const argon = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 }

const auth = betterAuth({
  database,
  baseURL: `http://127.0.0.1:${port}`,
  secret: process.env.SECRET ?? "floor-secret-key-with-at-least-32-bytes!",
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
  emailAndPassword: {
    enabled: true,
    password: {
      hash: (password) => hash(password, argon),
      verify: ({ hash: stored, password }) => verify(stored, password)
    }
  }
})

const { runMigrations } = await getMigrations(auth.options)
await runMigrations()

createServer(toNodeHandler(auth)).listen(port, "127.0.0.1", () => console.log(`better-auth listening on ${port}`))
