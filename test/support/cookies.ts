/** One Set-Cookie header, parsed: attribute names lower-cased, flags as `true`. */
export interface SetCookie {
  readonly name: string
  readonly value: string
  readonly attributes: ReadonlyMap<string, string | true>
}

/** Parses a Set-Cookie header as RFC 6265 section 5.2 reads it (no decoding of the value). */
export const parseSetCookie = (header: string): SetCookie => {
  const [pair = "", ...rest] = header.split(";")
  const equals = pair.indexOf("=")
  const attributes = new Map<string, string | true>()
  for (const part of rest) {
    const at = part.indexOf("=")
    if (at === -1) attributes.set(part.trim().toLowerCase(), true)
    else attributes.set(part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim())
  }
  return { name: pair.slice(0, equals).trim(), value: pair.slice(equals + 1).trim(), attributes }
}

/** Every cookie a response sets, by name. */
export const setCookies = (reply: { readonly headers: Headers }): ReadonlyMap<string, SetCookie> =>
  new Map(
    reply.headers.getSetCookie().map((header) => {
      const cookie = parseSetCookie(header)
      return [cookie.name, cookie] as const
    })
  )

/** A Cookie request header for these name/value pairs. */
export const cookieHeader = (cookies: Record<string, string>) =>
  Object.entries(cookies)
    .map(([name, value]) => `${name}=${value}`)
    .join("; ")
