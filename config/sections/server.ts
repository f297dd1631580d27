import { Option } from "effect"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"
import { isShared, type StorageSettings } from "./storage.js"

/** Where and how the service listens: address, route prefix, public URL, workers, proxies, CORS. */
export const readServer = (read: SettingsReader, storage: StorageSettings) => {
  const apiPrefix = read.setting("API_PREFIX", F.pathPrefix, "/api/v1", { emptyIsValue: true })
  const authRouterPrefix = read.setting("AUTH_ROUTER_PREFIX", F.pathPrefix, "/auth", { emptyIsValue: true })
  const workers = read.setting("WORKERS", F.int(1, 64), 1)
  if (workers > 1) {
    if (!isShared(storage.databaseUrl)) {
      read.problem(
        `${PREFIX}WORKERS=${workers} needs a shared database; expected ${PREFIX}DATABASE_URL=postgres://… or sqlite:<path>`
      )
    }
    if (Option.isNone(storage.redisUrl)) {
      read.problem(`${PREFIX}WORKERS=${workers} needs shared state; expected ${PREFIX}REDIS_URL=redis://…`)
    }
  }
  return {
    host: read.setting("HOST", F.text, "127.0.0.1"),
    // PORT is the platforms' convention (Heroku, Cloud Run, Render...). HOST is not read: zsh
    // and some systems export it as the machine's name, which would listen on a network address.
    port: read.setting("PORT", F.int(0, 65_535), 8000, { unprefixed: "PORT" }),
    apiPrefix,
    authRouterPrefix,
    /** API_PREFIX followed by AUTH_ROUTER_PREFIX: where the auth routes live. */
    authPrefix: apiPrefix + authRouterPrefix,
    /** The service's public base: links in mails, HSTS when https. */
    publicUrl: read.setting("PUBLIC_URL", F.url("http:", "https:"), new URL("http://localhost:8000")),
    workers,
    trustedProxyHeaders: read.setting("TRUSTED_PROXY_HEADERS", F.list(F.text), []).map((h) => h.toLowerCase()),
    trustedProxyCount: read.setting("TRUSTED_PROXY_COUNT", F.int(1, 32), 1),
    corsOrigins: read.setting("CORS_ORIGINS", F.list(F.origin), []),
    /** Serve the demo page at /demo: a try-out, not for production. */
    demo: read.setting("DEMO", F.bool, false)
  }
}

export type ServerSettings = ReturnType<typeof readServer>
