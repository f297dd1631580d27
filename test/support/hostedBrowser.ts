import { CookieJar } from "./OidcProvider.js"

/**
 * A browser on a running Portcullis's hosted pages, played on the JSON routes they call
 * (`/oauth2/session`, `/oauth2/consent`) under `authBase` (e.g. `http://127.0.0.1:8000/api/v1/auth`):
 * `authorize` follows an authorization request to where it sends the browser at last (the app's
 * redirect URI with its code), signing `user` in and consenting when asked. Cookies are kept
 * between authorizations, so only the first signs in and consents.
 */
export const hostedBrowser = (authBase: string, user: { readonly email: string; readonly password: string }) => {
  const jar = new CookieJar()
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const url = new URL(`${authBase}${path}`)
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: jar.header(url), ...headers },
      body: JSON.stringify(body)
    })
    jar.store(response)
    return new URL(((await response.json()) as { continue: string }).continue)
  }
  return {
    authorize: async (url: URL): Promise<URL> => {
      let at = new URL((await jar.fetch(url)).headers.get("location") ?? "")
      if (at.pathname.endsWith("/sign-in"))
        at = await post("/oauth2/session", { ...user, request: at.searchParams.get("request") })
      if (at.pathname.endsWith("/consent")) {
        const csrf = /portcullis_op_csrf=([^;]+)/.exec(jar.header(new URL(`${authBase}/oauth2/consent`)))?.[1] ?? ""
        at = await post(
          "/oauth2/consent",
          { request: at.searchParams.get("request"), approve: true },
          { "x-csrf-token": csrf }
        )
      }
      return at
    }
  }
}
