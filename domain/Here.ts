/**
 * Where the service is: its pages under PUBLIC_URL, and whether a host is this machine itself.
 */

/**
 * A page of the service under PUBLIC_URL: `path` is taken relative to it, so that a PUBLIC_URL
 * with a path of its own (`https://example.com/auth`) keeps it.
 */
export const underPublicUrl = (publicUrl: URL, path: string): URL =>
  new URL(path.replace(/^\/+/, ""), publicUrl.href.endsWith("/") ? publicUrl : `${publicUrl.href}/`)

/** A loopback name or address (a setting's host, or a peer's address): only this machine reaches it. */
export const isLoopbackHost = (host: string): boolean =>
  host === "localhost" || /^127\./.test(host) || host === "::1" || host === "[::1]"
