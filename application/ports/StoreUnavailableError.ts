/** Ports fail with it; its definition is the domain's, where the HTTP definitions (and a client) read it too. */
export { StoreUnavailableError } from "../../domain/errors.js"
