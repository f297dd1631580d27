import * as F from "../forms.js"
import { PREFIX, type SettingsReader } from "../reader.js"

/** How a session's tokens travel: in the body, or the refresh token in an HttpOnly cookie guarded by CSRF. */
export const readCookies = (read: SettingsReader) => {
  const tokenTransport = read.setting("TOKEN_TRANSPORT", F.oneOf("bearer", "cookie"), "bearer", {
    doc: "`bearer`: tokens in response bodies. `cookie`: the refresh token in an HttpOnly cookie guarded by a CSRF token."
  })
  const cookieSecure = read.setting("COOKIE_SECURE", F.bool, true, { doc: "The cookies' `Secure` attribute." })
  const cookieSameSite = read.setting("COOKIE_SAMESITE", F.oneOf("lax", "strict", "none"), "lax", {
    doc: "The cookies' `SameSite` attribute; `none` needs COOKIE_SECURE."
  })
  if (cookieSameSite === "none" && !cookieSecure) {
    read.problem(
      `${PREFIX}COOKIE_SAMESITE=none needs ${PREFIX}COOKIE_SECURE=true; browsers refuse such cookies otherwise`
    )
  }
  if (tokenTransport === "cookie" && !cookieSecure) {
    read.warn(`${PREFIX}COOKIE_SECURE=false: the refresh cookie travels over plain HTTP`)
  }
  return {
    tokenTransport,
    cookieSecure,
    cookieSameSite,
    cookieDomain: read.optional("COOKIE_DOMAIN", F.domain, {
      doc: "The cookies' `Domain` attribute; unset: the host that set them."
    })
  }
}

export type CookieSettings = ReturnType<typeof readCookies>
