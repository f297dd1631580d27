import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { DateTime, Effect, Option, Schedule } from "effect"
import { DevInbox, type KeptMail } from "../../application/ports/DevInbox.js"
import { isLoopbackHost } from "../../domain/Here.js"
import { escapeHtml, printable } from "../../domain/Text.js"
import { normaliseAddress } from "./clientAddress.js"
import { noRouteResponse } from "./middleware.js"

/** Where the development inbox (MAILER=dev) shows the mails it kept. */
export const DEV_INBOX_PATH = "/dev/inbox"
/**
 * The newest mail as plain text, `?to=` an address for the newest to it: for a terminal or a
 * script, which may ask right after the request that mails (whose answer may come first).
 */
export const DEV_INBOX_LATEST_PATH = "/dev/inbox/latest"

/**
 * The inbox's policy: no script at all; the mails' own inline styles and images; each HTML part
 * in a sandboxed frame of its own (srcdoc), whose links open a new tab.
 */
export const devInboxPolicy =
  "default-src 'none'; style-src 'unsafe-inline'; img-src * data:; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** Headers a proxy adds: a request that carries one came through something, whatever its socket says. */
const forwarding = ["forwarded", "x-forwarded-for", "x-real-ip", "x-forwarded-host"]

/**
 * Whether the request comes from this machine's own browser: a loopback peer and no proxy on the
 * way. A proxy on the same machine connects from loopback too; its forwarding headers tell it.
 */
const fromThisMachine = (request: HttpServerRequest.HttpServerRequest) => {
  const peer = Option.getOrUndefined(Option.flatMapNullable(request.remoteAddress, normaliseAddress))
  return peer !== undefined && isLoopbackHost(peer) && forwarding.every((name) => request.headers[name] === undefined)
}

/** A text part with its addresses made links (every other character escaped). */
const linked = (text: string) =>
  text
    .split(/(https?:\/\/[^\s<>"]+)/)
    .map((part, index) =>
      index % 2 === 1 ? `<a href="${escapeHtml(part)}">${escapeHtml(part)}</a>` : escapeHtml(part)
    )
    .join("")

const mailView = (mail: KeptMail) => `<article aria-labelledby="mail-${mail.id}">
  <h2 id="mail-${mail.id}">${escapeHtml(mail.subject)}</h2>
  <p class="meta">To ${escapeHtml(mail.to)} · ${escapeHtml(DateTime.formatIso(mail.at))}</p>
  <pre>${linked(mail.text)}</pre>
  ${
    mail.html === ""
      ? ""
      : `<details><summary>As HTML</summary><iframe title="${escapeHtml(mail.subject)} as HTML" sandbox="allow-popups allow-popups-to-escape-sandbox" srcdoc="${escapeHtml(`<base target="_blank">${mail.html}`)}"></iframe></details>`
  }
</article>`

const inboxPage = (product: string, mails: ReadonlyArray<KeptMail>) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>Inbox · ${escapeHtml(product)}</title>
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; padding: 0 1rem 2rem; max-width: 48rem; color: #1b1b1b; background: #f6f6f4; }
    article { background: #fff; border: 1px solid #ccc; border-radius: 6px; padding: 1rem 1.25rem; margin: 1rem 0; }
    h2 { font-size: 1.15rem; margin: 0; }
    .meta { color: #555; margin: 0.25rem 0 0.75rem; font-size: 0.9rem; }
    pre { white-space: pre-wrap; overflow-wrap: anywhere; font: inherit; margin: 0; }
    a { color: #005fcc; }
    iframe { width: 100%; height: 24rem; border: 1px solid #ccc; background: #fff; }
  </style>
</head>
<body>
  <h1>${escapeHtml(product)} · development inbox</h1>
  <p>Mails this process would have sent (MAILER=dev), newest first; reload for new ones. Nothing leaves this machine.</p>
  ${mails.length === 0 ? "<p>No mail yet.</p>" : mails.map(mailView).join("\n")}
</body>
</html>
`

/** The newest mail (to `to`, when named) as a terminal shows it: its headers, a blank line, its text. */
/** How long /dev/inbox/latest waits for a mail before it says there is none. */
const LATEST_WAIT = "5 seconds"

const latestText = (mails: ReadonlyArray<KeptMail>, to: string | undefined) => {
  const wanted = to?.trim().toLowerCase()
  const mail = mails.find((kept) => wanted === undefined || kept.to.toLowerCase() === wanted)
  return mail === undefined
    ? undefined
    : printable(
        `To:      ${mail.to}\nSubject: ${mail.subject}\nDate:    ${DateTime.formatIso(mail.at)}\n\n${mail.text.trimEnd()}\n`
      )
}

/**
 * /dev/inbox and /dev/inbox/latest, for this machine only: any other request is answered as a
 * path nothing serves.
 */
export const devInboxLayer = (product: string) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.flatMap(DevInbox, (inbox) =>
      Effect.zipRight(
        router.get(
          DEV_INBOX_PATH,
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            if (!fromThisMachine(request)) return yield* noRouteResponse
            const mails = yield* inbox.mails
            return HttpServerResponse.text(inboxPage(product, mails), {
              contentType: "text/html; charset=utf-8",
              headers: { "cache-control": "no-store" }
            })
          })
        ),
        router.get(
          DEV_INBOX_LATEST_PATH,
          Effect.gen(function* () {
            const request = yield* HttpServerRequest.HttpServerRequest
            if (!fromThisMachine(request)) return yield* noRouteResponse
            const to = new URL(request.url, "http://inbox").searchParams.get("to") ?? undefined
            // A mail may still be on its way when the request that sends it has answered: wait a little.
            const text = yield* inbox.mails.pipe(
              Effect.map((mails) => latestText(mails, to)),
              Effect.filterOrFail((found) => found !== undefined),
              Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo(LATEST_WAIT))),
              Effect.orElseSucceed(() => undefined)
            )
            return HttpServerResponse.text(text ?? "No mail yet.\n", {
              status: text === undefined ? 404 : 200,
              contentType: "text/plain; charset=utf-8",
              headers: { "cache-control": "no-store" }
            })
          })
        )
      )
    )
  )
