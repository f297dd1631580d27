/** The cookie cookie mode's double submit reads (not HttpOnly, Path=/), echoed in X-CSRF-Token. */
const CSRF_COOKIE = "portcullis_csrf"

/**
 * The CSRF cookie as the page sees it now, when in a browser page that can read it. Read at each
 * request, never kept: every rotation, in this tab or another, replaces it.
 */
export const csrfToken = (): string | undefined => {
  const cookies = typeof document === "undefined" ? "" : document.cookie
  for (const pair of cookies.split(";")) {
    const [name, ...value] = pair.trim().split("=")
    if (name === CSRF_COOKIE) {
      const token = decodeURIComponent(value.join("="))
      return token === "" ? undefined : token
    }
  }
  return undefined
}
