import { Option } from "effect"
import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"
import { isShared, type StorageSettings } from "./storage.js"

/** Where and how the service listens: address, route prefix, public URL, workers, proxies, CORS. */
export const readServer = (read: SettingsReader, storage: StorageSettings) => {
  const apiPrefix = read.setting("API_PREFIX", F.pathPrefix, "/api/v1", {
    emptyIsValue: true,
    doc: "The API's route prefix; an empty value means none. The auth routes live under API_PREFIX followed by AUTH_ROUTER_PREFIX (`/api/v1/auth`)."
  })
  const authRouterPrefix = read.setting("AUTH_ROUTER_PREFIX", F.pathPrefix, "/auth", {
    emptyIsValue: true,
    doc: "The auth routes' prefix after API_PREFIX; an empty value means none."
  })
  const workers = read.setting("WORKERS", F.int(1, 64), 1, {
    doc: "Processes serving on one port (node:cluster). More than 1 needs REDIS_URL and a shared database (a SQLite file or PostgreSQL); the primary migrates once, shares one SECRET_KEY with its workers, replaces a worker that dies and stops them all on SIGTERM."
  })
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
  // HOST is not read without the prefix: zsh and some systems export it as the machine's name,
  // which would put the service on a network address.
  const host = read.setting("HOST", F.text, "127.0.0.1", {
    doc: "The address to listen on; `0.0.0.0` for every interface. `HOST` without the prefix is not read."
  })
  const port = read.setting("PORT", F.int(0, 65_535), 8000, {
    unprefixed: "PORT",
    doc: "The port to listen on. `PORT` without the prefix, which hosting platforms set, is read when this is unset; this one wins."
  })
  return {
    host,
    port,
    apiPrefix,
    authRouterPrefix,
    /** API_PREFIX followed by AUTH_ROUTER_PREFIX: where the auth routes live. */
    authPrefix: apiPrefix + authRouterPrefix,
    /** The service's public base: links in mails, HSTS when https. */
    // Unset, it follows PORT: a service moved to another port whose links and docs page still
    // named 8000 sent every mailed link to nothing (issue 42).
    publicUrl: read.setting("PUBLIC_URL", F.url("http:", "https:"), new URL(`http://localhost:${port}`), {
      shownDefault: "http://localhost:<PORT>/",
      doc: "The service's public base URL: the base of the links in mails and the docs page's server, and the origin cookie mode accepts; `https:` turns on HSTS. Unset, `http://localhost:` followed by the port the service listens on (PORT)."
    }),
    workers,
    trustedProxyHeaders: read
      .setting("TRUSTED_PROXY_HEADERS", F.list(F.text), [], {
        doc: "Headers the proxies in front of the service set (`x-forwarded-for`, `x-real-ip`, `forwarded`); without any, the client is the connection's peer."
      })
      .map((h) => h.toLowerCase()),
    trustedProxyCount: read.setting("TRUSTED_PROXY_COUNT", F.int(1, 32), 1, {
      doc: "How many proxies stand in front: the client is that many addresses from the right of the header."
    }),
    corsOrigins: read.setting("CORS_ORIGINS", F.list(F.origin), [], {
      doc: "Browser origins allowed to call the API, credentials included; no other origin gets CORS headers."
    }),
    /** Serve the demo page at /demo: a try-out, not for production. */
    demo: read.setting("DEMO", F.bool, false, {
      doc: "Serve the demo page at `/demo`: for trying the service out, not for production."
    }),
    /** Serve /verify-email and /reset-password, the pages the mailed links open. */
    hostedPages: read.setting("HOSTED_PAGES", F.bool, true, {
      doc: "Serve the pages the mailed links open, `/verify-email` and `/reset-password`; `false` for a deployment with its own front end at PUBLIC_URL."
    }),
    /**
     * Where the hosted pages send people back ("Back to PRODUCT_NAME") once a link is used or
     * found dead. Unset, the service's own page saying the flow is over and that this is the
     * setting to set (the root of the service's address answers no page).
     */
    appUrl: read.optional("APP_URL", F.url("http:", "https:"), {
      doc: "Where the hosted pages' \"Back to PRODUCT_NAME\" link leads once a link is used, e.g. the app's sign-in page; unset, a page of the service (`/hosted/done`) saying the flow is over and that this is what to set."
    }),
    /** An image the OpenID Provider's sign-in and consent pages show above PRODUCT_NAME. */
    logoUrl: read.optional("LOGO_URL", F.url("https:", "http:"), {
      doc: "An image (a logo) the OpenID Provider's sign-in and consent pages show above PRODUCT_NAME; their Content-Security-Policy allows images from its origin and no other."
    }),
    /** The name mails and hosted pages give the service. */
    productName: read.setting("PRODUCT_NAME", F.line, "Portcullis", {
      doc: "The name mails and hosted pages give the service."
    })
  }
}

export type ServerSettings = ReturnType<typeof readServer>
