/**
 * A route path (`/sessions/:family_id`) as a pattern over request paths: each parameter stands
 * for one segment, and letter case is ignored, as the router ignores it.
 */
export const routePattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_][A-Za-z0-9_]*/g, "[^/]+")}$`, "i")
