import { Layer } from "effect"
import { ports } from "../../composition/adapters.js"
import { settingsFor, testSecretKey } from "./TestApp.js"

/**
 * The deployment's ports on the memory database, with `overrides` replacing some of them (a
 * counting hasher, a failing store, built over the store's own adapters and client): for use-case
 * tests that run without HTTP.
 */
export const memoryPorts = <A, E, R>(overrides: Layer.Layer<A, E, R>, env: Record<string, string> = {}) => {
  const settings = settingsFor({ SERVICE_DATABASE_URL: "memory:", SERVICE_SECRET_KEY: testSecretKey, ...env })
  return { settings, layer: Layer.provideMerge(overrides, ports(settings)) }
}
